"""Verified edits on a real gopls through the Python binding: an EditSet
stages a breaking change, its check names the dependent file's error,
a discard leaves the disk untouched, and apply writes."""

import asyncio
import os
import tempfile

from tests.support import LeakCheckedTestCase, find_gopls, idebridge
from idebridge import aio

FILES = {
    "go.mod": "module example.com/m\n\ngo 1.22\n",
    "calc/a.go": "package calc\n\n// Add adds.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n",
    "calc/b.go": "package calc\n\n// Twice doubles.\nfunc Twice(x int) int { return Add(x, x) }\n",
    "app/c.go": 'package app\n\nimport "example.com/m/calc"\n\n// Sum sums.\nfunc Sum() int { return calc.Add(1, 2) }\n',
}


def make_module(prefix: str):
    """A temporary directory holding FILES, and its real path."""
    tmp = tempfile.TemporaryDirectory(prefix=prefix)
    root = os.path.realpath(tmp.name)
    for name, text in FILES.items():
        p = os.path.join(root, name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)
    return tmp, root


class EditSetTest(LeakCheckedTestCase):
    def setUp(self) -> None:
        super().setUp()
        self._tmp, self.dir = make_module("idebridge-edit-")
        self.a = os.path.join(self.dir, "calc", "a.go")
        self.b = os.path.join(self.dir, "calc", "b.go")
        self.c = os.path.join(self.dir, "app", "c.go")
        self.config = {"gopls": {"command": find_gopls(), "extensionToLanguage": {".go": "go"}}}
        self.breaking = {"file": self.a, "old_string": "func Add(a, b int) int {\n\treturn a + b", "new_string": "func Add(a, b, c int) int {\n\treturn a + b + c"}

    def tearDown(self) -> None:
        self._tmp.cleanup()
        super().tearDown()

    def tree(self) -> dict:
        out = {}
        for name in FILES:
            with open(os.path.join(self.dir, name)) as f:
                out[name] = f.read()
        return out

    def test_stage_check_discard_apply(self) -> None:
        with idebridge.LSPManager(self.config, self.dir) as mgr, mgr.edit_set() as es:
            self.assertIsInstance(es, idebridge.EditSet)
            with self.assertRaises(TypeError):
                idebridge.EditSet()
            before = self.tree()
            with self.assertRaises(idebridge.ArgumentError) as cm:
                es.stage([{"file": self.a, "old_string": "Add"}])
            self.assertIn("edits_json: edit 1: old_string needs new_string", str(cm.exception))
            self.assertTrue(str(cm.exception).startswith("EditSet.stage: "), str(cm.exception))
            with self.assertRaises(idebridge.ArgumentError) as cm:
                es.stage("{not json")
            self.assertIn("not a JSON array of edits", str(cm.exception))

            self.assertEqual(es.stage([self.breaking], timeout=120), [self.a])
            check = es.check()
            self.assertIsInstance(check, idebridge.EditCheck)
            dep = [f for f in check.files if f.path == self.c]
            self.assertEqual(len(dep), 1, check.text)
            self.assertFalse(dep[0].edited)
            self.assertIsInstance(dep[0].introduced[0], idebridge.Diagnostic)
            self.assertIn("not enough arguments in call to calc.Add", dep[0].introduced[0].message)
            self.assertIn("app/c.go: 1 introduced", check.text)
            self.assertIn("+func Add(a, b, c int) int {", es.diff())
            src = mgr.symbol_source(path=self.a, symbol="Add")
            self.assertIsInstance(src, idebridge.SymbolSource)
            self.assertEqual((src.line, src.end_line), (4, 6))
            self.assertTrue(src.text.startswith("func Add(a, b, c int) int {"), src.text)

            es.discard()
            self.assertEqual(self.tree(), before, "the check or the discard wrote files")
            self.assertEqual(es.diff(), "")

            es.stage([self.breaking])
            es.stage([
                {"file": self.b, "old_string": "Add(x, x)", "new_string": "Add(x, x, 0)"},
                {"file": self.c, "old_string": "calc.Add(1, 2)", "new_string": "calc.Add(1, 2, 0)"},
            ])
            self.assertEqual(es.check().introduced, 0)
            self.assertEqual(self.tree(), before, "staging wrote files")
            applied = es.apply()
            self.assertIsInstance(applied, idebridge.EditApplied)
            self.assertEqual(applied.written, [self.a, self.b, self.c])
            self.assertIsNotNone(applied.check)
            assert applied.check is not None
            self.assertEqual(applied.check.introduced, 0)
            self.assertTrue(applied.text.startswith("written: calc/a.go, calc/b.go, app/c.go\n"), applied.text)
            after = self.tree()
            self.assertIn("func Add(a, b, c int) int {", after["calc/a.go"])
            self.assertIn("calc.Add(1, 2, 0)", after["app/c.go"])
        self.assertEqual(es.handle, 0)
        with self.assertRaises(idebridge.ClosedError):
            es.diff()

    def test_code_actions(self) -> None:
        with idebridge.LSPManager(self.config, self.dir) as mgr, mgr.edit_set() as es:
            es.stage([{"file": self.b, "old_string": "return Add(x, x) }", "new_string": "return Add(x, x) }\n\n// Up shouts.\nfunc Up(s string) string { return strings.ToUpper(s) }"}])
            acts = mgr.code_actions(path=self.b, line=7)
            self.assertIsInstance(acts, idebridge.CodeActions)
            self.assertIsInstance(acts.actions[0], idebridge.CodeAction)
            self.assertTrue(acts.actions[0].title.startswith("Add import"), acts.actions)
            self.assertEqual(acts.actions[0].fixes, ["undefined: strings"])
            es.stage([{"file": self.b, "line": 7, "fix": "Add import"}])
            self.assertEqual(es.check().introduced, 0)
        with open(self.b) as f:
            self.assertEqual(f.read(), FILES["calc/b.go"])

    def test_asyncio(self) -> None:
        async def run() -> None:
            async with aio.LSPManager(self.config, self.dir) as mgr:
                async with mgr.edit_set() as es:
                    self.assertIsInstance(es, aio.EditSet)
                    self.assertEqual(await es.stage([self.breaking]), [self.a])
                    check = await es.check()
                    self.assertIn("app/c.go: 1 introduced", check.text)
                    await es.discard()
                self.assertEqual(es.handle, 0)

        before = self.tree()
        asyncio.run(run())
        self.assertEqual(self.tree(), before)


class DiagnoseTest(LeakCheckedTestCase):
    """LSPManager.diagnose answers a file's diagnostics whole on every
    call, whatever drain delivered between, and says which files no
    server serves."""

    def setUp(self) -> None:
        super().setUp()
        self._tmp, self.dir = make_module("idebridge-diagnose-")
        self.a = os.path.join(self.dir, "calc", "a.go")
        self.b = os.path.join(self.dir, "calc", "b.go")
        self.config = {"gopls": {"command": find_gopls(), "extensionToLanguage": {".go": "go"}}}

    def tearDown(self) -> None:
        self._tmp.cleanup()
        super().tearDown()

    def test_diagnose(self) -> None:
        with open(self.b, "w") as f:
            f.write("package calc\n\nfunc Twice(x int) int { var s string = x; return Add(x, x) }\n")
        with idebridge.LSPManager(self.config, self.dir) as mgr:
            for _ in range(2):
                d = mgr.diagnose(["calc/b.go", "go.sum"])
                self.assertIsInstance(d, idebridge.Diagnosis)
                self.assertEqual([f.path for f in d.files], [self.b, os.path.join(self.dir, "go.sum")])
                self.assertEqual(d.files[0].server, "gopls")
                self.assertEqual(d.files[0].settle.status, "complete")
                self.assertTrue(d.files[1].no_server, d.files[1])
                self.assertIsNone(d.files[1].settle)
                self.assertIsNotNone(d.attachment)
                msgs = sorted(x.message for x in d.attachment.files[0].diagnostics)
                self.assertEqual(len(msgs), 2, d.attachment.render())
                self.assertIn("cannot use x", msgs[0])
                self.assertIn("declared and not used: s", msgs[1])
                mgr.drain()  # takes what is new to the manager: diagnose is not affected
            with self.assertRaises(idebridge.ArgumentError):
                mgr.diagnose([])

    def test_asyncio(self) -> None:
        async def run() -> None:
            async with aio.LSPManager(self.config, self.dir) as mgr:
                d = await mgr.diagnose([self.a])
                self.assertIsNone(d.attachment)
                self.assertEqual(d.files[0].settle.status, "complete")

        asyncio.run(run())

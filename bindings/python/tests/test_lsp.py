"""The LSP manager with a real gopls through the Python binding."""

import json
import os
import tempfile
import time
import unittest

from tests.support import REPO, LeakCheckedTestCase, find_gopls, idebridge

BROKEN = "package main\n\nfunc main() {\n\tundefinedThing()\n}\n"
FIXED = "package main\n\nfunc main() {\n}\n"


class LSPTest(LeakCheckedTestCase):
    def setUp(self) -> None:
        super().setUp()
        self._tmp = tempfile.TemporaryDirectory(prefix="idebridge-lsp-")
        self.dir = os.path.realpath(self._tmp.name)
        with open(os.path.join(self.dir, "go.mod"), "w") as f:
            f.write("module example.com/m\n\ngo 1.22\n")
        self.main_go = os.path.join(self.dir, "main.go")
        with open(self.main_go, "w") as f:
            f.write(BROKEN)
        self.config = {"gopls": {"command": find_gopls(), "extensionToLanguage": {".go": "go"}}}

    def tearDown(self) -> None:
        self._tmp.cleanup()
        super().tearDown()

    def settle_and_drain(self, mgr: "idebridge.LSPManager", want: str) -> dict:
        """Settles and drains until an attachment contains want (30 s at most)
        and returns that attachment: gopls may publish a file's first type
        errors after the progress settle saw ended."""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            mgr.settle(self.main_go, timeout=2)
            att = mgr.drain()
            if att is not None and want in json.dumps(att.raw):
                return att
            time.sleep(0.1)
        self.fail("no attachment contained %r" % want)

    def test_gopls_round_trip(self) -> None:
        with idebridge.LSPManager(self.config, self.dir) as mgr:
            mgr.open(self.main_go)
            result = mgr.settle(self.main_go, timeout=30)
            self.assertEqual(result.server, "gopls")
            self.assertEqual(result.path, self.main_go)
            self.assertGreaterEqual(result.version, 1)
            self.assertIsInstance(result.freshness, idebridge.Freshness)
            self.assertGreater(result.elapsed, 0)
            self.assertLess(result.elapsed, 30)
            att = self.settle_and_drain(mgr, "undefined: undefinedThing")
            self.assertEqual(att.servers, ["gopls"])
            self.assertEqual(att.files[0].path, self.main_go)
            self.assertEqual(att.files[0].diagnostics[0].severity, idebridge.Severity.ERROR)
            text = idebridge.render_attachment(att, project_dir=self.dir)
            self.assertIn("main.go:", text)
            self.assertIn("undefined: undefinedThing", text)
            servers = mgr.servers()
            self.assertEqual([s.name for s in servers], ["gopls"])
            pid = servers[0].pid
            self.assertGreater(pid, 0)

            mgr.change(self.main_go, FIXED)
            mgr.settle(self.main_go, timeout=30)
            later = mgr.drain()
            self.assertNotIn("undefinedThing", json.dumps(later.raw if later else None))
            mgr.save(self.main_go)
            mgr.close_file(self.main_go)
            with self.assertRaises(idebridge.NotFoundError):
                mgr.settle(self.main_go, timeout=1)
            notes = os.path.join(self.dir, "notes.txt")
            with open(notes, "w") as f:
                f.write("x")
            with self.assertRaises(idebridge.NotFoundError) as cm:
                mgr.open(notes)
            self.assertIn("no language server", str(cm.exception))
        # Leaving the with block shut gopls down.
        with self.assertRaises(ProcessLookupError):
            os.kill(pid, 0)
        with self.assertRaises(idebridge.ClosedError):
            mgr.drain()

    def test_config_errors(self) -> None:
        with self.assertRaises(idebridge.ArgumentError) as cm:
            idebridge.LSPManager({"x": {"extensionToLanguage": {".go": "go"}}}, self.dir)
        self.assertIn("command", str(cm.exception))
        with self.assertRaises(idebridge.ArgumentError):
            idebridge.LSPManager("{not json", self.dir)
        with self.assertRaises(idebridge.ArgumentError):
            idebridge.LSPManager({}, self.dir, max_open_documents="many")  # type: ignore[arg-type]

    def test_shutdown_is_idempotent(self) -> None:
        mgr = idebridge.LSPManager(config={}, project_dir=self.dir, max_open_documents=3)
        mgr.shutdown(timeout=5)
        mgr.shutdown()
        mgr.close()
        self.assertEqual(mgr.handle, 0)



FIXTURES = os.path.join(REPO, "lsp", "testdata", "conformance")


def find_npm_server(name: str) -> str:
    """Returns an npm-installed language server: $LSP_BIN (make sets it),
    then the repository's tools/lsp (`make lsp-servers` installs the pinned
    versions there)."""
    dirs = [d for d in (os.environ.get("LSP_BIN"), os.path.join(REPO, "tools", "lsp", "node_modules", ".bin")) if d]
    for d in dirs:
        p = os.path.join(d, name)
        if os.path.isfile(p):
            return p
    raise RuntimeError("%s not found in %s: run `make lsp-servers`" % (name, dirs))


def build_scriptls(dest_dir: str) -> str:
    """Builds package lsp's scripted language server into dest_dir."""
    import subprocess

    out = os.path.join(dest_dir, "scriptls")
    subprocess.run(["go", "build", "-o", out, "./lsp/testdata/scriptls"], cwd=REPO, check=True)
    return out


def copy_fixture(lang: str, dest: str) -> str:
    import shutil

    d = os.path.join(dest, lang)
    shutil.copytree(os.path.join(FIXTURES, lang), d)
    return d


class LSPFreshnessTest(LeakCheckedTestCase):
    """What settle says, read from Python: the freshness and its fresh flag
    for real servers that take their time (pyright, typescript-language-
    server), and for a server that never publishes."""

    def setUp(self) -> None:
        super().setUp()
        self._tmp = tempfile.TemporaryDirectory(prefix="idebridge-fresh-")
        self.dir = os.path.realpath(self._tmp.name)

    def tearDown(self) -> None:
        self._tmp.cleanup()
        super().tearDown()

    def check_server(self, lang: str, command: str, ext: str, broken: str, clean: str, wants: list) -> None:
        d = copy_fixture(lang, self.dir)
        config = {lang: {"command": command, "args": ["--stdio"], "extensionToLanguage": {ext: lang}}}
        with idebridge.LSPManager(config, d, settle_timeout=120) as mgr:
            b, c = os.path.join(d, broken), os.path.join(d, clean)
            mgr.open(b)
            mgr.open(c)
            for path in (b, c):
                res = mgr.settle(path)
                self.assertTrue(res.fresh, res)
                self.assertIn(res.freshness, ("pulled", "published", "quiet", "progress-ended"), res)
                self.assertTrue(res.freshness.fresh, res)
                self.assertTrue(res.reason, res)
            att = mgr.drain()
            self.assertIsNotNone(att)
            self.assertEqual(att.notes, [])
            files = {f.path: f.diagnostics for f in att.files}
            self.assertNotIn(c, files)
            got = sorted((d.range.start.line, d.range.start.character, d.message) for d in files[b])
            self.assertEqual(len(got), len(wants), got)
            for (line, char, msg), (wline, wchar, wmsg) in zip(got, wants):
                self.assertEqual((line, char), (wline, wchar), got)
                self.assertIn(wmsg, msg)

    def test_pyright(self) -> None:
        # The undefined name comes after an emoji: character 21, not the
        # UTF-16 column 22 pyright sends.
        self.check_server("python", find_npm_server("pyright-langserver"), ".py", "broken.py", "clean.py",
                          [(1, 21, '"undefined_name" is not defined'), (2, 11, 'Type "str" is not assignable to return type "int"')])

    def test_typescript(self) -> None:
        # Character 29; typescript-language-server sends UTF-16 column 30.
        self.check_server("typescript", find_npm_server("typescript-language-server"), ".ts", "broken.ts", "clean.ts",
                          [(1, 29, "Cannot find name 'nowhereDefined'."), (3, 13, "Type 'string' is not assignable to type 'number'.")])

    def test_never_publishes(self) -> None:
        bin = build_scriptls(self.dir)
        path = os.path.join(self.dir, "a.s")
        with open(path, "w") as f:
            f.write("ERROR\n")
        config = {"mute": {"command": bin, "args": ["-never-publish"], "extensionToLanguage": {".s": "s"}}}
        with idebridge.LSPManager(config, self.dir, settle_timeout=0.7) as mgr:
            mgr.open(path)
            res = mgr.settle(path)
            self.assertEqual(res.freshness, idebridge.Freshness.TIMED_OUT)
            self.assertFalse(res.fresh)
            self.assertIn("no publish for it from mute", res.reason)
            att = mgr.drain()
            self.assertIsNotNone(att, "silence must not read as no errors")
            self.assertEqual(att.files, [])
            self.assertEqual(len(att.notes), 1)
            self.assertIn("a.s: diagnostics unknown: mute has not reported any for it", att.notes[0])

    def test_negative_options(self) -> None:
        for kwargs, field in (({"max_open_documents": -1}, "MaxOpenDocuments"), ({"settle_timeout": -1}, "SettleTimeout"),
                              ({"quiet_period": -1}, "QuietPeriod")):
            with self.assertRaises(idebridge.ArgumentError) as cm:
                idebridge.LSPManager({}, self.dir, **kwargs)
            self.assertIn(field + " is negative", str(cm.exception))


if __name__ == "__main__":
    unittest.main()

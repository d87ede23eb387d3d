"""Navigation on a real gopls through the Python binding."""

import json
import os
import shutil
import tempfile

from tests.support import REPO, LeakCheckedTestCase, find_gopls, idebridge


class NavTest(LeakCheckedTestCase):
    def setUp(self) -> None:
        super().setUp()
        self._tmp = tempfile.TemporaryDirectory(prefix="idebridge-nav-")
        self.dir = os.path.realpath(self._tmp.name)
        src = os.path.join(REPO, "lsp", "testdata", "nav", "go")
        for name in os.listdir(src):
            shutil.copy(os.path.join(src, name), self.dir)
        self.use = os.path.join(self.dir, "use.go")
        self.shapes = os.path.join(self.dir, "shapes.go")
        self.config = {"gopls": {"command": find_gopls(), "extensionToLanguage": {".go": "go"}}}

    def tearDown(self) -> None:
        self._tmp.cleanup()
        super().tearDown()

    def test_navigation(self) -> None:
        with idebridge.LSPManager(self.config, self.dir) as mgr:
            refs = mgr.references(path=self.use, line=7, symbol="total", occurrence=2, include_declaration=True, timeout=60)
            self.assertEqual(refs.op, "references")
            self.assertFalse(refs.incomplete)
            self.assertIsInstance(refs, idebridge.NavLocations)
            self.assertIsInstance(refs.locations[0], idebridge.NavLocation)
            got = ["%s:%d:%d" % (os.path.basename(l.path), l.line, l.column) for l in refs.locations]
            self.assertEqual(got, ["use.go:5:2", "use.go:7:3", "use.go:7:11", "use.go:9:9"])
            self.assertIn("use.go:9:9: return total\n", refs.text)

            # Column 22 in characters, after two emoji (column 24 in UTF-16).
            d = mgr.definition(path=self.use, line=15, column=22)
            self.assertEqual([(l.path, l.line, l.column) for l in d.locations], [(self.use, 4, 6)])

            h = mgr.hover(path=self.use, line=4, symbol="Total")
            self.assertIn("func Total(shapes []Shape) float64", h.markdown)
            syms = mgr.document_symbols(path=self.shapes)
            self.assertEqual([s.name for s in syms.symbols], ["Shape", "Square", "(Square).Area", "Circle", "(Circle).Area"])
            calls = mgr.incoming_calls(path=self.use, line=4, symbol="Total")
            self.assertEqual([c.item.name for c in calls.calls], ["Report"])
            self.assertEqual((calls.total, calls.offset), (1, 0))
            impl = mgr.implementation(path=self.shapes, line=5, symbol="Area")
            self.assertEqual(len(impl.locations), 2)
            self.assertEqual((impl.total, impl.offset), (2, 0))

            sub = mgr.subtypes(path=self.shapes, line=4, symbol="Shape")
            self.assertIsInstance(sub, idebridge.NavTypeHierarchy)
            self.assertIsInstance(sub.types[0], idebridge.NavTypeItem)
            self.assertEqual(sub.op, "subtypes")
            self.assertEqual([i.name for i in sub.items], ["Shape"])
            self.assertEqual([(t.name, t.location.line) for t in sub.types], [("Square", 9), ("Circle", 15)])
            second = mgr.subtypes(path=self.shapes, line=4, symbol="Shape", offset=1, limit=1)
            self.assertEqual(([t.name for t in second.types], second.total, second.offset), (["Circle"], 2, 1))
            sup = mgr.supertypes(path=self.shapes, line=9, symbol="Square")
            self.assertEqual([t.name for t in sup.types], ["Shape"])
            self.assertEqual([i.name for i in mgr.prepare_type_hierarchy(path=self.shapes, line=9, symbol="Square").items], ["Square"])

            page = mgr.references(path=self.use, line=7, symbol="total", occurrence=2, include_declaration=True, offset=1, limit=2)
            self.assertEqual((page.total, page.offset), (4, 1))
            self.assertEqual(["%d:%d" % (l.line, l.column) for l in page.locations], ["7:3", "7:11"])
            self.assertIn("showing 2-3 of 4", page.text)

            with self.assertRaises(idebridge.ArgumentError) as cm:
                mgr.references(path=self.use, line=7, symbol="total")
            self.assertIn('"total" occurs 2 times on line 7', str(cm.exception))
            with self.assertRaises(idebridge.IdebridgeError) as cm:
                mgr.declaration(path=self.use, line=7, symbol="Area")
            self.assertIn("gopls does not offer declaration", str(cm.exception))

            with open(self.use) as f:
                before = f.read()
            proposal = mgr.rename(path=self.use, line=18, symbol="label", new_name="tag")
            self.assertEqual([f.path for f in proposal.files], [self.use])
            self.assertIn("+func tag(prefix string, v float64) string {", proposal.diff)
            with open(self.use) as f:
                self.assertEqual(f.read(), before, "rename wrote the file")
            applied = mgr.apply_rename(proposal)
            self.assertEqual(applied.written, 1)
            self.assertEqual(applied.files[0].status, "written")
            with open(self.use) as f:
                self.assertEqual(f.read(), proposal.files[0].new_text)
            with self.assertRaises(idebridge.IdebridgeError) as cm:
                mgr.apply_rename(proposal)
            self.assertIn("edit of %s not written: the file changed on disk" % self.use, str(cm.exception))
            with open(self.use) as f:
                self.assertEqual(f.read(), proposal.files[0].new_text)

    def test_apply_rename_all_or_nothing(self) -> None:
        """Issue 19, row 3: a rename of two files, one changed on disk after
        the proposal: neither is written, and the error names that one."""
        with idebridge.LSPManager(self.config, self.dir) as mgr:
            proposal = mgr.rename(path=self.shapes, line=5, symbol="Area", new_name="Size", timeout=60)
            self.assertEqual([f.path for f in proposal.files], [self.shapes, self.use])
            before = {}
            for p in (self.shapes, self.use):
                with open(p) as f:
                    before[p] = f.read()
            with open(self.use, "a") as f:
                f.write("\n// changed after the proposal\n")
            before[self.use] += "\n// changed after the proposal\n"
            with self.assertRaises(idebridge.IdebridgeError) as cm:
                mgr.apply_rename(proposal)
            self.assertIn("edit of %s not written" % self.use, str(cm.exception))
            self.assertIn("none of the 2 files was written", str(cm.exception))
            for p in (self.shapes, self.use):
                with open(p) as f:
                    self.assertEqual(f.read(), before[p], "%s was written" % p)

    def test_apply_rename_outside_roots(self) -> None:
        """Issue 19, row 2: a rename reaching a file outside the manager's
        roots is refused whole."""
        sub = os.path.join(self.dir, "sub")
        os.mkdir(sub)
        with idebridge.LSPManager(self.config, self.dir, roots=[sub]) as mgr:
            proposal = mgr.rename(path=self.shapes, line=5, symbol="Area", new_name="Size", timeout=60)
            with self.assertRaises(idebridge.IdebridgeError) as cm:
                mgr.apply_rename(proposal)
            self.assertIn("2 files lie outside %s" % sub, str(cm.exception))
            with open(self.shapes) as f:
                self.assertNotIn("Size", f.read())

    def test_required_arguments(self) -> None:
        # Required arguments are required by Python itself: nothing reaches
        # the library, and a type checker flags the call.
        with idebridge.LSPManager(self.config, self.dir) as mgr:
            with self.assertRaises(TypeError):
                mgr.definition(line=1, column=1)  # type: ignore[call-arg]
            with self.assertRaises(TypeError):
                mgr.hover(path=self.use)  # type: ignore[call-arg]
            with self.assertRaises(TypeError):
                mgr.workspace_symbols(path=self.use)  # type: ignore[call-arg]
            with self.assertRaises(TypeError):
                mgr.rename(path=self.use, line=18, symbol="label")  # type: ignore[call-arg]
            self.assertEqual(mgr.servers()[0].pid, 0, "a server was started")

    def test_config_file(self) -> None:
        # A .lsp.json is named by its path (config_file); its text is config.
        lsp_json = os.path.join(self.dir, "servers.lsp.json")
        with open(lsp_json, "w") as f:
            json.dump(self.config, f)
        with idebridge.LSPManager({}, self.dir, config_file=lsp_json) as mgr:
            self.assertEqual([s.name for s in mgr.servers()], ["gopls"])
        with self.assertRaises(idebridge.ArgumentError) as cm:
            idebridge.LSPManager(lsp_json, self.dir)
        self.assertIn("configFile", str(cm.exception))
        self.assertNotIn("idb_", str(cm.exception))

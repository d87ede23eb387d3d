"""The LSP manager with a real gopls through the Python binding."""

import json
import os
import tempfile
import time
import unittest

from tests.support import LeakCheckedTestCase, find_gopls, idebridge

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


if __name__ == "__main__":
    unittest.main()

"""Discovery and a real IDE round trip through the Python binding."""

import os
import threading
import time
import unittest

from tests.support import HeadlessIDE, LeakCheckedTestCase, idebridge


class IDETest(LeakCheckedTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.ide = HeadlessIDE()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.ide.close()

    def connect(self, **kw) -> "idebridge.IDEClient":
        kw.setdefault("cwd", self.ide.workspace)
        kw.setdefault("env", self.ide.env())
        kw.setdefault("timeout", 10)
        return idebridge.IDEClient.connect(**kw)

    def test_discover(self) -> None:
        cands = idebridge.discover(cwd=self.ide.workspace, env=self.ide.env())
        self.assertEqual(len(cands), 1, cands)
        c = cands[0]
        self.assertIsInstance(c, idebridge.Candidate)
        self.assertTrue(c.valid, c)
        self.assertEqual(c.port, self.ide.port)
        self.assertEqual(c.transport, "ws")
        self.assertEqual(c.ide_name, "ideserve")
        self.assertEqual(c.path, self.ide.lockfile)
        self.assertNotIn("authToken", c.raw)
        elsewhere = idebridge.discover(cwd="/", env=self.ide.env())
        self.assertFalse(elsewhere[0].valid)
        self.assertIn("workspace_mismatch", elsewhere[0].reasons)

    def test_round_trip(self) -> None:
        path = os.path.join(self.ide.workspace, "main.go")
        with open(path, "w") as f:
            f.write("package main\n")
        with self.connect(port=self.ide.port) as ide:
            self.assertEqual(ide.info().protocol_version, "2024-11-05")
            names = {t.name for t in ide.tools()}
            self.assertTrue({"openFile", "openDiff", "getWorkspaceFolders"} <= names, names)
            res = ide.call("getWorkspaceFolders")
            # The keyword names are part of the API.
            self.assertEqual(ide.call(name="getWorkspaceFolders", args={}, timeout=5), res)
            self.assertIn(self.ide.workspace, res.texts[0].replace("\\/", "/"))
            res = ide.call(
                "openDiff",
                {"old_file_path": path, "new_file_path": path, "new_file_contents": "package main // new\n", "tab_name": "t"},
                timeout=10,
            )
            self.assertEqual(res.texts, ["FILE_SAVED", "package main // new\n"])
            with self.assertRaises(idebridge.ToolError) as cm:
                ide.call("noSuchTool", {})
            self.assertIn("noSuchTool", str(cm.exception))
            self.assertNotIn("idb_", str(cm.exception))
            self.assertEqual(cm.exception.status, idebridge.IDB_ERR_TOOL)
            self.assertEqual(cm.exception.code, -32601)
            self.assertEqual(cm.exception.function, "idb_ide_call")
            with self.assertRaises(idebridge.ArgumentError):
                ide.call("openFile", "[1]")

    def test_notifications(self) -> None:
        with self.connect() as ide:
            self.assertIsNone(ide.next_notification())
            self.assertIsNone(ide.next_notification(0.02))
            params = {"text": "héllo", "filePath": "/x.go", "selection": None}
            self.ide.notify("selection_changed", params)
            note = ide.next_notification(10)
            self.assertEqual(note, idebridge.Notification("selection_changed", params))
            self.ide.notify("at_mentioned", {"filePath": "/y.go", "lineStart": 1})
            self.assertEqual(ide.next_notification(10).method, "at_mentioned")

    def test_errors_and_closing(self) -> None:
        with self.assertRaises(idebridge.NotFoundError) as cm:
            self.connect(port=1)
        self.assertIn("no IDE lockfile for port 1", str(cm.exception))
        # The message names what the user called, not the C function.
        self.assertTrue(str(cm.exception).startswith("IDEClient.connect: "), str(cm.exception))
        self.assertEqual(cm.exception.function, "idb_ide_connect")  # the C name stays, for the curious
        with self.assertRaises(idebridge.NotFoundError) as cm:
            self.connect(cwd="/")
        self.assertNotIn("idb_", str(cm.exception))
        with self.assertRaises(idebridge.TimeoutError):
            self.connect(cwd="/", wait=True, timeout=0.3)
        with self.assertRaises(TypeError):
            idebridge.IDEClient()
        ide = self.connect(url=self.ide.url, auth_token=self.ide.auth_token)
        ide.close()
        ide.close()
        with self.assertRaises(idebridge.ClosedError):
            ide.tools()

    def test_os_environ_is_sent_when_env_is_omitted(self) -> None:
        saved = os.environ.get("CLAUDE_CONFIG_DIR")
        os.environ["CLAUDE_CONFIG_DIR"] = self.ide.config_dir
        try:
            idebridge.IDEClient.connect(port=self.ide.port, cwd=self.ide.workspace, timeout=10).close()
        finally:
            if saved is None:
                del os.environ["CLAUDE_CONFIG_DIR"]
            else:
                os.environ["CLAUDE_CONFIG_DIR"] = saved

    def test_close_releases_a_waiting_thread(self) -> None:
        ide = self.connect()
        result = []

        def wait() -> None:
            try:
                result.append(ide.next_notification(-1))
            except idebridge.IdebridgeError as e:
                result.append(e)

        t = threading.Thread(target=wait)
        t.start()
        time.sleep(0.05)
        ide.close()
        t.join(10)
        self.assertFalse(t.is_alive(), "close did not release the waiting thread")
        self.assertIsInstance(result[0], (idebridge.ClosedError, idebridge.HandleError))

    def test_threads_shared_and_own(self) -> None:
        problems = []
        with self.connect() as shared:

            def worker() -> None:
                try:
                    with self.connect() as own:
                        for _ in range(10):
                            for c in (shared, own):
                                if not c.call("getWorkspaceFolders").texts:
                                    problems.append("no content")
                except Exception as e:  # noqa: BLE001 - reported below
                    problems.append(repr(e))

            threads = [threading.Thread(target=worker) for _ in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        self.assertEqual(problems, [])


if __name__ == "__main__":
    unittest.main()

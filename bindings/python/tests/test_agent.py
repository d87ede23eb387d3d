"""The agent API through the Python binding: edit review, diagnostics
around an edit, auto-connect, the asyncio API and Ctrl-C, against a real
headless IDE (cabi/test/ideserve)."""

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

from tests.support import HeadlessIDE, LeakCheckedTestCase, idebridge

from idebridge import aio


def wait_until(cond, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met within %s s" % timeout)
        time.sleep(0.01)


def diag(line: int, message: str, severity: str = "Error") -> dict:
    return {
        "message": message,
        "severity": severity,
        "source": "compiler",
        "range": {"start": {"line": line, "character": 1}, "end": {"line": line, "character": 4}},
    }


class ReviewTest(LeakCheckedTestCase):
    """Accepting and rejecting IDEs, and edits without one."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.accept = HeadlessIDE(diff="accept")
        cls.reject = HeadlessIDE(diff="reject")

    @classmethod
    def tearDownClass(cls) -> None:
        cls.accept.close()
        cls.reject.close()

    def connect(self, ide: HeadlessIDE) -> "idebridge.IDEClient":
        return idebridge.IDEClient.connect(cwd=ide.workspace, env=ide.env(), timeout=10, call_timeout=5.5)

    def test_accepted(self) -> None:
        path = os.path.join(self.accept.workspace, "main.go")
        with open(path, "w") as f:
            f.write("package main\n")
        with self.connect(self.accept) as ide:
            res = ide.propose_edit(path, "package main // new\n", tab_name="t-accept")
        self.assertIsInstance(res, idebridge.EditResult)
        self.assertEqual(res.status, idebridge.EditStatus.ACCEPTED)
        self.assertEqual(res.status, "accepted")
        self.assertTrue(res.written)
        self.assertTrue(res.via_ide)
        self.assertFalse(res.user_modified)
        self.assertEqual(res.text, "package main // new\n")
        self.assertEqual(res.tab_name, "t-accept")
        with open(path) as f:
            self.assertEqual(f.read(), "package main // new\n")
        self.assertIn("t-accept", self.accept.tabs()["closed"])

    def test_rejected(self) -> None:
        path = os.path.join(self.reject.workspace, "keep.txt")
        with open(path, "w") as f:
            f.write("keep\n")
        with self.connect(self.reject) as ide:
            res = ide.propose_edit(path, b"lose\n")
            self.assertEqual(res.status, idebridge.EditStatus.REJECTED)
            self.assertFalse(res.written)
            self.assertFalse(res.cancelled)
            self.assertEqual(ide.cancel_all_edits(), 0)
        with open(path) as f:
            self.assertEqual(f.read(), "keep\n")

    def test_conflicts_and_apply(self) -> None:
        path = os.path.join(self.accept.workspace, "conflict.txt")
        with open(path, "w") as f:
            f.write("v1\n")
        base = idebridge.file_state(path)
        self.assertIsInstance(base, idebridge.FileState)
        self.assertTrue(base.exists)
        self.assertEqual(base.size, 3)
        with open(path, "w") as f:
            f.write("changed\n")
        with self.connect(self.accept) as ide:
            with self.assertRaises(idebridge.ConflictError) as cm:
                ide.propose_edit(path, "v2\n", base=base)
        self.assertEqual(cm.exception.result.status, idebridge.EditStatus.ACCEPTED)
        self.assertFalse(cm.exception.result.written)
        self.assertEqual(cm.exception.result.text, "v2\n")
        self.assertIn("changed on disk", str(cm.exception))
        self.assertEqual(cm.exception.conflict.actual.size, 8)
        with open(path) as f:
            self.assertEqual(f.read(), "changed\n")
        # Without an IDE: applied, then the same base is stale.
        fresh = idebridge.file_state(path)
        res = idebridge.apply_edit(path, "v3\n", base=fresh)
        self.assertEqual(res.status, idebridge.EditStatus.APPLIED)
        self.assertFalse(res.via_ide)
        with self.assertRaises(idebridge.ConflictError):
            idebridge.apply_edit(path, "v4\n", base=fresh)
        with open(path) as f:
            self.assertEqual(f.read(), "v3\n")

    def test_edit_diagnostics(self) -> None:
        path = os.path.join(self.accept.workspace, "diag.go")
        with open(path, "w") as f:
            f.write("a\nb\n")
        self.accept.set_diagnostics(path, [diag(1, "old problem")])
        with self.connect(self.accept) as ide:
            got = ide.get_diagnostics(path)
            self.assertEqual([f.path for f in got], [path])
            self.assertEqual(got[0].diagnostics[0].severity, idebridge.Severity.ERROR)
            snap = ide.snapshot_diagnostics(path)
            self.assertIsInstance(snap, idebridge.DiagnosticsSnapshot)
            self.assertEqual(snap.text, "a\nb\n")
            self.assertEqual([d.message for d in snap.diagnostics], ["old problem"])
            res = ide.propose_edit(path, "top\na\nb\n")
            self.assertTrue(res.written)
            self.accept.set_diagnostics(path, [diag(2, "old problem"), diag(0, "new problem", "Warning")])
            news = ide.new_diagnostics(snap, project_dir=self.accept.workspace)
        self.assertIsInstance(news, idebridge.NewDiagnostics)
        self.assertEqual([d.message for d in news.diagnostics], ["new problem"])
        self.assertEqual(news.diagnostics[0].severity, idebridge.Severity.WARNING)
        self.assertEqual(news.moved, 1)
        self.assertTrue(news.rendered.startswith("<new-diagnostics>"), news.rendered)
        self.assertIn("diag.go:", news.rendered)
        self.assertNotIn("old problem", news.rendered)

    def test_auto_connect(self) -> None:
        self.assertFalse(idebridge.should_auto_connect(env={}))
        decision = idebridge.should_auto_connect(env={"CLAUDE_CODE_SSE_PORT": str(self.accept.port)})
        self.assertTrue(decision)
        self.assertIn("CLAUDE_CODE_SSE_PORT", decision.why)
        self.assertFalse(idebridge.should_auto_connect(requested=True, env={"CLAUDE_CODE_AUTO_CONNECT_IDE": "0"}))
        found = idebridge.wait_for_ide(cwd=self.accept.workspace, env=self.accept.env(), timeout=5, poll_interval=0.05)
        self.assertEqual(found.candidate.port, self.accept.port)
        self.assertTrue(found.candidate.valid)
        with tempfile.TemporaryDirectory() as empty:
            t0 = time.monotonic()
            with self.assertRaises(idebridge.NotFoundError) as cm:
                idebridge.wait_for_ide(cwd=empty, lockfile_dirs=[empty], timeout=0.3, poll_interval=0.05)
            self.assertGreaterEqual(time.monotonic() - t0, 0.25)
            self.assertIn(empty, str(cm.exception))
            with self.assertRaises(idebridge.NotFoundError) as cm:
                idebridge.IDEClient.connect(cwd=empty, lockfile_dirs=[empty])
            self.assertIn("no IDE lockfile found in " + empty, str(cm.exception))
            junk = os.path.join(empty, "7.lock")
            with open(junk, "w") as f:
                f.write("{broken")
            self.assertEqual(idebridge.remove_stale(lockfile_dirs=[empty]), [junk])
            self.assertFalse(os.path.exists(junk))


class AsyncTest(LeakCheckedTestCase):
    """idebridge.aio against an IDE whose user never decides."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.ide = HeadlessIDE(diff="hold")

    @classmethod
    def tearDownClass(cls) -> None:
        cls.ide.close()

    def test_cancel_mid_review(self) -> None:
        path = os.path.join(self.ide.workspace, "async.txt")
        with open(path, "w") as f:
            f.write("keep\n")

        async def main() -> None:
            async with await aio.IDEClient.connect(cwd=self.ide.workspace, env=self.ide.env(), timeout=10) as ide:
                self.assertIsInstance(ide, aio.IDEClient)
                review = asyncio.ensure_future(ide.propose_edit(path, "lose\n", tab_name="async-tab"))
                # The loop stays free while the review is pending.
                for _ in range(1000):
                    if "async-tab" in self.ide.tabs()["opened"]:
                        break
                    await asyncio.sleep(0.01)
                self.assertFalse(review.done())
                t0 = time.monotonic()
                review.cancel()
                with self.assertRaises(asyncio.CancelledError):
                    await review
                self.assertLess(time.monotonic() - t0, 5)
                # The tab was closed before CancelledError arrived.
                self.assertIn("async-tab", self.ide.tabs()["closed"])
                # The same client keeps working.
                res = await ide.call("getWorkspaceFolders")
                self.assertIn(self.ide.workspace, res.texts[0].replace("\\/", "/"))
                # Several calls at once, on one loop, without threads.
                tools, folders, none = await asyncio.gather(
                    ide.tools(), ide.call("getWorkspaceFolders"), ide.next_notification(0.05)
                )
                self.assertIn("openDiff", {t.name for t in tools})
                self.assertIsNone(none)
                with self.assertRaises(idebridge.ToolError) as cm:
                    await ide.call("noSuchTool")
                self.assertEqual(cm.exception.code, -32601)
                # cancel_all_edits is the user's ESC: the review returns
                # rejected and cancelled.
                review = asyncio.ensure_future(ide.propose_edit(path, "lose\n", tab_name="esc-tab"))
                for _ in range(1000):
                    if "esc-tab" in self.ide.tabs()["opened"]:
                        break
                    await asyncio.sleep(0.01)
                self.assertEqual(await ide.cancel_all_edits(), 1)
                res = await review
                self.assertEqual(res.status, idebridge.EditStatus.REJECTED)
                self.assertTrue(res.cancelled)
                # A raw openDiff cancelled by a timeout closes its tab too.
                args = {"old_file_path": path, "new_file_path": path, "new_file_contents": "x", "tab_name": "raw-tab"}
                with self.assertRaises(idebridge.TimeoutError):
                    await ide.call("openDiff", args, timeout=0.2)
                self.assertIn("raw-tab", self.ide.tabs()["closed"])

        asyncio.run(main())
        with open(path) as f:
            self.assertEqual(f.read(), "keep\n")

    def test_functions(self) -> None:
        async def main() -> None:
            cands = await aio.discover(cwd=self.ide.workspace, env=self.ide.env())
            self.assertEqual([c.port for c in cands], [self.ide.port])
            found = await aio.wait_for_ide(cwd=self.ide.workspace, env=self.ide.env(), timeout=5)
            self.assertEqual(found.candidate.port, self.ide.port)
            # A connect cancelled while it waits for an IDE ends at once
            # (this one waits for an IDE that never comes).
            with tempfile.TemporaryDirectory() as empty:
                task = asyncio.ensure_future(aio.IDEClient.connect(cwd=empty, env={"CLAUDE_CONFIG_DIR": empty}, wait=True, timeout=10))
                await asyncio.sleep(0.1)
                self.assertFalse(task.done())
                t0 = time.monotonic()
                task.cancel()
                with self.assertRaises(asyncio.CancelledError):
                    await task
                self.assertLess(time.monotonic() - t0, 2)
            # A connect to the IDE cancelled right after it started leaves
            # no client behind; the connection may also have been made
            # before the cancellation arrived (it takes about a
            # millisecond), and then the client is the caller's.
            task = asyncio.ensure_future(aio.IDEClient.connect(cwd=self.ide.workspace, env=self.ide.env(), timeout=10))
            await asyncio.sleep(0)
            task.cancel()
            try:
                client = await task
            except asyncio.CancelledError:
                pass
            else:
                client.close()
            # close() closes at once, and may be awaited (twice too).
            ide = await aio.IDEClient.connect(cwd=self.ide.workspace, env=self.ide.env(), timeout=10)
            await ide.close()
            await ide.close()
            with self.assertRaises(idebridge.ClosedError):
                await ide.tools()
            ide = await aio.IDEClient.connect(cwd=self.ide.workspace, env=self.ide.env(), timeout=10)
            ide.close()
            with self.assertRaises(idebridge.ClosedError):
                await ide.tools()
            # What does not block is the package's own.
            self.assertIs(aio.Registry, idebridge.Registry)
            self.assertIs(aio.render_attachment, idebridge.render_attachment)

        asyncio.run(main())
        wait_until(lambda: idebridge.handle_count() == self._handles_before)


class InterruptTest(unittest.TestCase):
    """Ctrl-C interrupts a blocking call: it is cancelled, its tab closed."""

    def test_ctrl_c_cancels_a_pending_review(self) -> None:
        with HeadlessIDE(diff="hold") as ide:
            script = textwrap.dedent(
                """
                import faulthandler, signal, sys, idebridge
                # Python raises KeyboardInterrupt on SIGINT only when it did
                # not start with SIGINT ignored, as a job started with & by
                # a non-interactive shell (a CI runner) does: an agent that
                # wants Ctrl-C sets the handler, as this one does.
                signal.signal(signal.SIGINT, signal.default_int_handler)
                # A hang shows where it is: every thread's traceback on
                # stderr, and the process ends (the test allows 10 seconds).
                faulthandler.dump_traceback_later(20, exit=True)
                ide = idebridge.IDEClient.connect(cwd=sys.argv[1], env={"CLAUDE_CONFIG_DIR": sys.argv[2]}, timeout=10)
                print("connected", flush=True)
                try:
                    ide.propose_edit(sys.argv[1] + "/ctrl-c.txt", "x", tab_name="ctrl-c-tab")
                    print("not interrupted", flush=True)
                except KeyboardInterrupt:
                    print("interrupted", flush=True)
                print("after", len(ide.tools()) > 0, flush=True)
                ide.close()
                """
            )
            env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(idebridge.__file__)))
            proc = subprocess.Popen(
                [sys.executable, "-c", script, ide.workspace, ide.config_dir],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
            )
            try:
                self.assertEqual(proc.stdout.readline().strip(), "connected")
                wait_until(lambda: "ctrl-c-tab" in ide.tabs()["opened"])
                t0 = time.monotonic()
                proc.send_signal(signal.SIGINT)
                out, err = proc.communicate(timeout=30)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
            self.assertEqual(out.split("\n")[:2], ["interrupted", "after True"], "stdout:\n%s\nstderr:\n%s" % (out, err))
            self.assertEqual(proc.returncode, 0)
            self.assertLess(time.monotonic() - t0, 10)
            self.assertIn("ctrl-c-tab", ide.tabs()["closed"])


class LSPAgentTest(LeakCheckedTestCase):
    def test_reload_and_safe_mode(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            one = {"a": {"command": "true", "extensionToLanguage": {".a": "a"}}}
            two = dict(one, b={"command": "true", "extensionToLanguage": {".b": "b", ".a": "a"}})
            with idebridge.LSPManager(one, d, quiet_period=0.05, settle_timeout=2.5) as mgr:
                problems = mgr.reload(two)
                self.assertEqual(len(problems), 1, problems)
                self.assertIn(".a", problems[0])
                self.assertEqual(sorted(s.name for s in mgr.servers()), ["a", "b"])
                self.assertEqual(mgr.reload(one), [])
            f = os.path.join(d, "x.a")
            with open(f, "w") as fh:
                fh.write("x")
            with idebridge.LSPManager(one, d, safe_mode=True) as mgr:
                with self.assertRaises(idebridge.NotFoundError) as cm:
                    mgr.open(f)
                self.assertIn("safe mode", str(cm.exception))

            async def main() -> None:
                async with aio.LSPManager(one, d) as mgr:
                    self.assertEqual(await mgr.reload(one), [])

            asyncio.run(main())


if __name__ == "__main__":
    unittest.main()

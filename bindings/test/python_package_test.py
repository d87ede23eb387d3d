"""The idebridge Python package as a user gets it.

bindings/test/run.sh pip-installs the package into a fresh virtual
environment outside the checkout and runs this script from another
directory, with $IDEBRIDGE_CMD the installed `idebridge` command (its `ide
serve` is the headless IDE) and $GOPLS. Each IDE gets its own Go module and
its own CLAUDE_CONFIG_DIR in a temporary directory.

It checks: discovery and connection, propose_edit accepted and rejected,
the new-diagnostics block after an edit (gopls behind ide serve), an LSP
manager on gopls, the README's quickstart, and an asyncio propose_edit
cancelled mid-review on a prompting IDE fed through a pty (the tab closes,
and the next review on the same client is accepted by answering y).
"""

import asyncio
import json
import os
import pty
import subprocess
import sys
import tempfile
import threading
import time

import idebridge
from idebridge import aio

IDEBRIDGE = os.environ["IDEBRIDGE_CMD"]
GOPLS = os.environ["GOPLS"]
HERE = os.path.dirname(os.path.abspath(__file__))

CLEAN = "package main\n\nfunc main() {\n}\n"
BROKEN = "package main\n\nfunc main() {\n\tfromTest()\n}\n"


def check(cond: bool, what: str) -> None:
    if not cond:
        raise AssertionError(what)
    print("ok  ", what, flush=True)


class Serve:
    """`idebridge ide serve` in a fresh Go module, its lockfile in a fresh
    CLAUDE_CONFIG_DIR; stderr is collected as it comes."""

    def __init__(self, tmp: str, name: str, *args: str, tty: bool = False) -> None:
        self.workspace = os.path.join(tmp, name)
        os.mkdir(self.workspace)
        self.config = os.path.join(tmp, name + "-config")
        with open(os.path.join(self.workspace, "go.mod"), "w") as f:
            f.write("module example.com/%s\n\ngo 1.22\n" % name)
        self.main_go = os.path.join(self.workspace, "main.go")
        with open(self.main_go, "w") as f:
            f.write(CLEAN)
        env = dict(os.environ, CLAUDE_CONFIG_DIR=self.config)
        self.master = None
        stdin = subprocess.DEVNULL
        if tty:
            self.master, slave = pty.openpty()
            stdin = slave
        self.proc = subprocess.Popen(
            [IDEBRIDGE, "ide", "serve", *args], cwd=self.workspace, env=env, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        if tty:
            os.close(slave)
        self.info = json.loads(self.proc.stdout.readline())
        self.lines = []
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        # Chunks, not lines: the prompt ("Apply? ...: ") ends no line.
        fd = self.proc.stderr.fileno()
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                return
            with self.cond:
                self.lines.append(chunk.decode("utf-8", "replace"))
                self.cond.notify_all()

    def env(self) -> dict:
        return {"CLAUDE_CONFIG_DIR": self.config}

    def stderr(self) -> str:
        with self.cond:
            return "".join(self.lines)

    def wait_stderr(self, text: str, start: int = 0, timeout: float = 30) -> int:
        """Waits until text appears in stderr after offset start and returns
        the offset just past it."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                all_ = "".join(self.lines)
                i = all_.find(text, start)
                if i >= 0:
                    return i + len(text)
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError("ide serve never wrote %r; it wrote:\n%s" % (text, all_))
                self.cond.wait(left)

    async def await_stderr(self, text: str, start: int = 0, timeout: float = 30) -> int:
        """wait_stderr for coroutines: the event loop keeps running."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                return self.wait_stderr(text, start, 0)
            except AssertionError:
                if time.monotonic() > deadline:
                    raise
            await asyncio.sleep(0.01)

    def answer(self, line: str) -> None:
        os.write(self.master, line.encode() + b"\n")

    def close(self) -> None:
        self.proc.terminate()  # SIGTERM: ide serve removes its lockfile
        self.proc.wait(timeout=30)
        check(not os.path.exists(self.info["lockfile"]), "ide serve removed its lockfile")
        if self.master is not None:
            os.close(self.master)


def settled_attachment(mgr: "idebridge.LSPManager", path: str, want: str) -> "idebridge.Attachment":
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        mgr.settle(path, timeout=5)
        att = mgr.drain()
        if att is not None and want in att.render():
            return att
        time.sleep(0.1)
    raise AssertionError("gopls never reported %r" % want)


def main() -> None:
    check("site-packages" in idebridge.__file__, "idebridge is the installed package (%s)" % idebridge.__file__)
    check("IDEBRIDGE_LIB" not in os.environ, "no IDEBRIDGE_LIB: the library is the package's own")
    check(os.path.exists(idebridge._library_path()) and "site-packages" in idebridge._library_path(), "the library is inside the package")
    print("idebridge", idebridge.version())
    with tempfile.TemporaryDirectory(prefix="idebridge-pytest-") as tmp:
        tmp = os.path.realpath(tmp)
        accept = Serve(tmp, "accept", "--diff", "accept")
        reject = Serve(tmp, "reject", "--diff", "reject")
        prompt = Serve(tmp, "prompt", "--diff", "prompt", "-v", tty=True)
        try:
            # Discovery and connection.
            cands = idebridge.discover(cwd=accept.workspace, env=accept.env())
            check(len(cands) == 1 and cands[0].valid and cands[0].port == accept.info["port"], "discover finds the headless IDE")
            with idebridge.IDEClient.connect(cwd=accept.workspace, env=accept.env(), timeout=10) as ide:
                check(ide.info().server_info.name != "", "connected to %s" % ide.info().server_info.name)
                # Accepted, with the new diagnostics the edit introduced.
                before = ide.snapshot_diagnostics(accept.main_go)
                res = ide.propose_edit(accept.main_go, BROKEN)
                check(res.status == idebridge.EditStatus.ACCEPTED and res.written, "propose_edit accepted: %s" % res.status)
                with open(accept.main_go) as f:
                    check(f.read() == BROKEN, "the accepted text was written")
                news = ide.new_diagnostics(before, project_dir=accept.workspace)
                check(
                    news.rendered.startswith("<new-diagnostics>") and "undefined: fromTest" in news.rendered,
                    "the new-diagnostics block after the edit:\n" + news.rendered,
                )
                check(any(d.severity == idebridge.Severity.ERROR for d in news.diagnostics), "typed diagnostics")
            # The README's quickstart, as written, from the workspace.
            with open(accept.main_go, "w") as f:
                f.write(CLEAN)
            env = dict(os.environ, CLAUDE_CONFIG_DIR=accept.config)
            out = subprocess.run([sys.executable, os.path.join(HERE, "quickstart.py")], cwd=accept.workspace, env=env,
                                 capture_output=True, text=True, timeout=120)
            check(out.returncode == 0 and out.stdout.startswith("accepted True\n<new-diagnostics>") and "undefined: fromPython" in out.stdout,
                  "the Python quickstart works as written:\n" + out.stdout + out.stderr)

            # Rejected.
            with idebridge.IDEClient.connect(cwd=reject.workspace, env=reject.env(), timeout=10) as ide:
                res = ide.propose_edit(reject.main_go, BROKEN)
                check(res.status == idebridge.EditStatus.REJECTED and not res.written, "propose_edit rejected")
            with open(reject.main_go) as f:
                check(f.read() == CLEAN, "the rejected edit left the file alone")

            # An LSP manager on gopls.
            config = {"gopls": {"command": GOPLS, "extensionToLanguage": {".go": "go"}}}
            with open(reject.main_go, "w") as f:
                f.write(BROKEN)
            with idebridge.LSPManager(config, reject.workspace) as mgr:
                mgr.open(reject.main_go)
                att = settled_attachment(mgr, reject.main_go, "undefined: fromTest")
                check(att.files[0].path == reject.main_go, "an LSP manager on gopls reports the error")
                # An edit set: the fix checked before it is written, then
                # discarded (the disk untouched), then applied.
                with mgr.edit_set() as es:
                    es.stage([{"file": reject.main_go, "new_text": CLEAN}])
                    chk = es.check()
                    check(chk.resolved == 1 and "undefined: fromTest" in chk.files[0].resolved[0].message, "an edit set checks the fix:\n" + chk.text)
                    es.discard()
                    with open(reject.main_go) as f:
                        check(f.read() == BROKEN, "the check and the discard left the file alone")
                    es.stage([{"file": reject.main_go, "new_text": CLEAN}])
                    applied = es.apply()
                    check(applied.written == [reject.main_go], "the edit set wrote the file")
                with open(reject.main_go) as f:
                    check(f.read() == CLEAN, "the applied text is on disk")

            # asyncio: a review cancelled mid-way on a prompting IDE.
            asyncio.run(cancel_mid_review(prompt))
        finally:
            for s in (accept, reject, prompt):
                s.close()
    print("python package test: ok")


async def cancel_mid_review(prompt: Serve) -> None:
    async with await aio.IDEClient.connect(cwd=prompt.workspace, env=prompt.env(), timeout=10) as ide:
        review = asyncio.ensure_future(ide.propose_edit(prompt.main_go, BROKEN, tab_name="py-cancel"))
        at = await prompt.await_stderr("Apply? ")
        check(not review.done(), "the review waits for the user")
        review.cancel()
        try:
            await review
            raise AssertionError("the cancelled review returned")
        except asyncio.CancelledError:
            pass
        check(True, "cancelling the task raised CancelledError")
        closed = await prompt.await_stderr("(closed)", at)
        # -v logs what the IDE received: the close_tab call and the
        # cancellation, in either order (stderr may trail the cancellation).
        await prompt.await_stderr('"method":"notifications/cancelled"', at)
        await prompt.await_stderr('"method":"tools/call"', at)
        check(True, "the IDE saw the cancel and a close_tab")
        with open(prompt.main_go) as f:
            check(f.read() == CLEAN, "the cancelled review left the file alone")
        # The same client: a new review, accepted by answering y.
        review = asyncio.ensure_future(ide.propose_edit(prompt.main_go, BROKEN, tab_name="py-accept"))
        await prompt.await_stderr("[py-accept]", closed)
        prompt.answer("y")
        res = await asyncio.wait_for(review, 30)
        check(res.status == idebridge.EditStatus.ACCEPTED and res.written, "the next review on the same client is accepted")


if __name__ == "__main__":
    main()

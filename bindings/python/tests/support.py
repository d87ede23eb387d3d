"""Shared helpers of the idebridge binding tests."""

import os
import sys
import unittest

# Import the package from this source tree, whatever the working directory.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import idebridge  # noqa: E402


class LeakCheckedTestCase(unittest.TestCase):
    """Fails a test that leaves library handles behind."""

    def setUp(self) -> None:
        self._handles_before = idebridge.handle_count()

    def tearDown(self) -> None:
        after = idebridge.handle_count()
        self.assertEqual(
            after,
            self._handles_before,
            "the test left %d handle(s) live" % (after - self._handles_before),
        )


# cabi/testdata: the publish sequence and the Go API's golden output.
TESTDATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "cabi", "testdata")


def read_publishes():
    """Returns the (server, params JSON text) pairs of publishes.tsv."""
    with open(os.path.join(TESTDATA, "publishes.tsv"), encoding="utf-8") as f:
        return [tuple(line.rstrip("\n").split("\t", 1)) for line in f if line.strip()]


def read_golden(name: str) -> bytes:
    """Returns a golden file without its final newline."""
    with open(os.path.join(TESTDATA, name), "rb") as f:
        data = f.read()
    assert data.endswith(b"\n")
    return data[:-1]


REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))


class HeadlessIDE:
    """A real headless IDE (cabi/test/ideserve: the Go ideserver kit) in a
    temporary workspace, its lockfile in a temporary CLAUDE_CONFIG_DIR.

    IDEBRIDGE_TEST_IDE names a prebuilt ideserve binary (make abi-test
    builds one); without it the IDE is started with `go run`.
    """

    def __init__(self, config_dir: str = "", diff: str = "accept") -> None:
        import json
        import subprocess
        import tempfile

        self._tmp = tempfile.TemporaryDirectory(prefix="idebridge-ide-")
        root = os.path.realpath(self._tmp.name)
        self.workspace = os.path.join(root, "workspace")
        os.mkdir(self.workspace)
        self.config_dir = config_dir or os.path.join(root, "config")
        binary = os.environ.get("IDEBRIDGE_TEST_IDE")
        cmd = [binary] if binary else ["go", "run", "./cabi/test/ideserve"]
        cmd += ["-workspace", self.workspace, "-lockfile-dir", os.path.join(self.config_dir, "ide"), "-diff", diff]
        self.proc = subprocess.Popen(cmd, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait(timeout=30)
            raise RuntimeError("ideserve exited with %s before listening" % self.proc.returncode)
        status = json.loads(line)
        self.port = status["port"]
        self.lockfile = status["lockfile"]
        self.url = status["url"]
        self.auth_token = status["authToken"]

    def env(self) -> dict:
        return {"CLAUDE_CONFIG_DIR": self.config_dir}

    def command(self, line: str) -> str:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return self.proc.stdout.readline().strip()

    def tabs(self) -> dict:
        """The diff tabs openDiff opened and close_tab closed so far."""
        import json

        return json.loads(self.command("tabs"))

    def set_diagnostics(self, path: str, diagnostics: list) -> None:
        """Makes getDiagnostics answer diagnostics for path."""
        import json

        answer = self.command("diagnostics %s %s" % (path, json.dumps(diagnostics)))
        if answer != "ok":
            raise RuntimeError("ideserve: " + answer)

    def notify(self, method: str, params) -> None:
        import json

        answer = self.command("notify %s %s" % (method, json.dumps(params)))
        if answer != "ok":
            raise RuntimeError("ideserve: " + answer)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=30)
            except Exception:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()
        self._tmp.cleanup()

    def __enter__(self) -> "HeadlessIDE":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def find_gopls() -> str:
    """Returns gopls: $GOPLS (make sets it), PATH, or $(go env GOPATH)/bin."""
    import shutil
    import subprocess

    path = os.environ.get("GOPLS") or shutil.which("gopls")
    if not path:
        gopath = subprocess.run(["go", "env", "GOPATH"], capture_output=True, text=True).stdout.strip()
        candidate = os.path.join(gopath, "bin", "gopls")
        path = candidate if os.path.exists(candidate) else ""
    if not path:
        raise RuntimeError("gopls not found: run `make tools` or set GOPLS")
    return path

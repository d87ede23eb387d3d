"""Version, errors, lockfile parsing and threads through the Python binding."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest

from tests.support import LeakCheckedTestCase, idebridge


class CoreTest(LeakCheckedTestCase):
    def test_version(self) -> None:
        v = idebridge.version()
        self.assertIsInstance(v, str)
        self.assertRegex(v, r"^\d+\.\d+\.\d+")

    def test_parse_lockfile_json(self) -> None:
        data = '{"workspaceFolders":["\\/home\\/me\\/p"],"pid":42,"ideName":"VS Code","transport":"ws","authToken":"t"}'
        lf = idebridge.parse_lockfile("/tmp/ide/12345.lock", data)
        self.assertIsInstance(lf, idebridge.Lockfile)
        self.assertEqual(lf.port, 12345)
        self.assertEqual(lf.workspace_folders, ["/home/me/p"])
        self.assertEqual(lf.pid, 42)
        self.assertEqual(lf.ide_name, "VS Code")
        self.assertEqual(lf.transport, "ws")
        self.assertEqual(lf.path, "/tmp/ide/12345.lock")

    def test_parse_lockfile_legacy_bytes(self) -> None:
        lf = idebridge.parse_lockfile("80.lock", b"/a\r\n\n/b \n")
        self.assertEqual(lf.workspace_folders, ["/a", "/b"])
        self.assertTrue(lf.legacy)
        self.assertEqual(lf.transport, "sse")

    def test_parse_lockfile_unicode(self) -> None:
        lf = idebridge.parse_lockfile("81.lock", json.dumps({"workspaceFolders": ["/home/zoë/프로젝트"]}))
        self.assertEqual(lf.workspace_folders, ["/home/zoë/프로젝트"])

    def test_parse_lockfile_errors(self) -> None:
        with self.assertRaises(idebridge.IdebridgeError) as cm:
            idebridge.parse_lockfile("notes.txt", "{}")
        self.assertEqual(cm.exception.status, idebridge.IDB_ERROR)
        self.assertEqual(cm.exception.function, "idb_parse_lockfile")
        self.assertIn("not a lockfile name", str(cm.exception))
        with self.assertRaises(idebridge.IdebridgeError) as cm:
            idebridge.parse_lockfile("1.lock", b"/a\x00\x01")
        self.assertIn("binary", str(cm.exception))
        # None reaches C as NULL: an argument error from the library.
        with self.assertRaises(idebridge.ArgumentError) as cm:
            idebridge.parse_lockfile(None, "{}")  # type: ignore[arg-type]
        self.assertIn("name is NULL", str(cm.exception))
        self.assertEqual(cm.exception.status, idebridge.IDB_ERR_ARGUMENT)

    def test_error_hierarchy(self) -> None:
        for cls in (
            idebridge.HandleError,
            idebridge.TimeoutError,
            idebridge.NotFoundError,
            idebridge.ArgumentError,
            idebridge.ClosedError,
            idebridge.ToolError,
            idebridge.InternalError,
            idebridge.CancelledError,
            idebridge.ConflictError,
        ):
            self.assertTrue(issubclass(cls, idebridge.IdebridgeError), cls)
        self.assertTrue(issubclass(idebridge.TimeoutError, TimeoutError))

    def test_errors_per_thread(self) -> None:
        """8 threads fail at once; each sees its own message."""
        barrier = threading.Barrier(8)
        problems = []

        def worker(i: int) -> None:
            for rnd in range(50):
                name = "t%d-r%d.lock" % (i, rnd)
                try:
                    idebridge.parse_lockfile(name, "{}")
                    problems.append("%s parsed" % name)
                except idebridge.IdebridgeError as e:
                    if name not in str(e):
                        problems.append("thread %d got %r" % (i, str(e)))
                if rnd == 0:
                    barrier.wait()

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(problems, [])


class LibraryLookupTest(unittest.TestCase):
    """The package finds the library through IDEBRIDGE_LIB or next to itself."""

    def run_python(self, cwd: str, env: dict) -> subprocess.CompletedProcess:
        code = "import idebridge; print(idebridge.version())"
        return subprocess.run(
            [sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
        )

    def test_next_to_package(self) -> None:
        lib = idebridge._library_path()
        with tempfile.TemporaryDirectory() as tmp:
            pkg = os.path.join(tmp, "idebridge")
            shutil.copytree(os.path.dirname(idebridge.__file__), pkg, ignore=shutil.ignore_patterns("__pycache__"))
            shutil.copy(lib, os.path.join(pkg, "libidebridge.so"))
            env = {k: v for k, v in os.environ.items() if k != "IDEBRIDGE_LIB"}
            r = self.run_python(tmp, env)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.strip(), idebridge.version())

    def test_missing_library_is_an_error(self) -> None:
        env = dict(os.environ, IDEBRIDGE_LIB="/nonexistent/libidebridge.so")
        r = self.run_python(os.path.dirname(os.path.dirname(idebridge.__file__)), env)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("/nonexistent/libidebridge.so", r.stderr)

    def test_library_of_another_build_is_refused(self) -> None:
        """A library lacking exports the package calls is refused at load,
        naming what it lacks and what to do, not with ctypes' own error."""
        cwd = os.path.dirname(os.path.dirname(idebridge.__file__))
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "old.c")
            with open(src, "w") as f:
                f.write(
                    "#include <stdlib.h>\n"
                    "int idb_version(void **out) { *out = 0; return 0; }\n"
                    "void idb_free(void *p) { free(p); }\n"
                    "char *idb_last_error(void) { return 0; }\n"
                )
            old = os.path.join(tmp, "libold.so")
            subprocess.run(["gcc", "-shared", "-fPIC", "-o", old, src], check=True, timeout=60)
            r = self.run_python(cwd, dict(os.environ, IDEBRIDGE_LIB=old))
            self.assertNotEqual(r.returncode, 0)
            want = "%s is older than this package: it lacks %d of the %d functions" % (
                old,
                len(idebridge._EXPORTS) - 3,
                len(idebridge._EXPORTS),
            )
            self.assertIn(want, r.stderr)
            self.assertIn("idb_handle_count", r.stderr)
            self.assertIn("IDEBRIDGE_LIB", r.stderr)
            self.assertNotIn("undefined symbol", r.stderr)

        r = self.run_python(cwd, dict(os.environ, IDEBRIDGE_LIB="libm.so.6"))
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("libm.so.6 is not libidebridge: it has no idb_version", r.stderr)


if __name__ == "__main__":
    unittest.main()

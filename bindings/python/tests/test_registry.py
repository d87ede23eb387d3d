"""The diagnostics registry, rendering and path conversion through the Python binding."""

import ctypes
import json
import random
import threading
import unittest

from tests.support import LeakCheckedTestCase, idebridge, read_golden, read_publishes


def diag(line: int, message: str, severity: int = 1) -> dict:
    return {
        "range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 1}},
        "severity": severity,
        "message": message,
    }


class RegistryTest(LeakCheckedTestCase):
    def test_drain_matches_go_byte_for_byte(self) -> None:
        with idebridge.Registry() as reg:
            for server, params in read_publishes():
                reg.publish(server, params)
            # The raw bytes the C function returns, before any decoding.
            lib = idebridge._load()
            out = ctypes.c_void_p()
            self.assertEqual(lib.idb_registry_drain(reg.handle, ctypes.byref(out)), idebridge.IDB_OK)
            try:
                raw = ctypes.string_at(out.value)
            finally:
                lib.idb_free(out.value)
            self.assertEqual(raw, read_golden("drain.golden.json"))
            self.assertIsNone(reg.drain(), "everything was delivered")

    def test_decoded_drain_and_render(self) -> None:
        with idebridge.Registry() as reg:
            for server, params in read_publishes():
                # Publish dicts this time: the binding encodes them.
                reg.publish(server, json.loads(params))
            att = reg.drain()
        self.assertIsInstance(att, idebridge.Attachment)
        self.assertEqual(att.raw, json.loads(read_golden("drain.golden.json")))
        self.assertEqual(att.count(), sum(len(f.diagnostics) for f in att.files))
        text = idebridge.render_attachment(att, project_dir="/p")
        self.assertEqual(att.render(project_dir="/p"), text)
        # The JSON as a dict renders the same.
        self.assertEqual(idebridge.render_attachment(att.raw, project_dir="/p"), text)
        self.assertEqual(text.encode("utf-8"), read_golden("render.golden.txt"))
        short = idebridge.render_attachment(att, project_dir="/p", max_chars=200, tag="diags")
        self.assertTrue(short.startswith("<diags>"), short)
        self.assertLessEqual(len(short), 200)

    def test_options_dedup_reset_and_versions(self) -> None:
        params = {"uri": "file:///a.go", "version": 5, "diagnostics": [diag(1, "e1"), diag(2, "e2"), diag(3, "h", 4)]}
        with idebridge.Registry(max_per_file=5, min_severity="Warning") as reg:
            reg.publish(server="srv", params=params)
            att = reg.drain()
            self.assertEqual([d.message for d in att.files[0].diagnostics], ["e1", "e2"])
            self.assertEqual([d.severity for d in att.files[0].diagnostics], [idebridge.Severity.ERROR] * 2)
            reg.publish("srv", params)
            self.assertIsNone(reg.drain(), "an identical set is deduplicated")
            reg.reset("file:///a.go")
            reg.publish("srv", params)
            self.assertIsNotNone(reg.drain(), "reset(uri) forgets what was delivered")
            reg.reset()
            reg.set_version("file:///a.go", 6)
            reg.publish("srv", params)
            self.assertIsNone(reg.drain(), "a publish for version 5 < 6 is stale")
            stats = reg.stats()
            self.assertEqual(stats["stale"], 1)
            self.assertEqual(stats["attachments"], 2)

    def test_errors(self) -> None:
        with self.assertRaises(idebridge.ArgumentError) as cm:
            idebridge.Registry(min_severity="loud")
        self.assertIn("severity", str(cm.exception))
        with idebridge.Registry() as reg:
            with self.assertRaises(idebridge.ArgumentError) as cm:
                reg.publish("srv", {"uri": "file:///a", "diagnostics": {"message": 3}})
            self.assertIn("malformed diagnostics", str(cm.exception))
            with self.assertRaises(idebridge.ArgumentError):
                reg.publish("srv", "{not json")
        with self.assertRaises(idebridge.ArgumentError):
            idebridge.render_attachment("{")

    def test_invalid_diagnostics_dropped_and_noted(self) -> None:
        with idebridge.Registry() as reg:
            bad = dict(diag(2, "bad"), severity=-3)
            reg.publish("srv", {"uri": "file:///a.go", "diagnostics": [diag(1, "kept"), bad, {"message": 3}]})
            att = reg.drain()
            self.assertEqual([d.message for d in att.files[0].diagnostics], ["kept"])
            self.assertEqual(
                att.notes,
                ["/a.go: 2 invalid diagnostics from srv were dropped (diagnostics[1].severity: number -3 is not a severity (1 to 4))"],
            )
            self.assertEqual(reg.stats()["invalid"], 2)

    def test_count_not_shown_is_true(self) -> None:
        # 5,000 in one publish: the cap keeps 1,000, the block shows 10 and
        # counts the other 4,990, the cap's drops included.
        with idebridge.Registry() as reg:
            reg.publish("srv", {"uri": "file:///big.go", "diagnostics": [diag(i, "e%d" % i) for i in range(5000)]})
            att = reg.drain()
            self.assertEqual(len(att.files[0].diagnostics), 10)
            self.assertEqual(att.cut, 4990)
            self.assertIn("… 4990 more not shown", idebridge.render_attachment(att))

    def test_closed_stale_random_and_wrong_handles(self) -> None:
        reg = idebridge.Registry()
        h = reg.handle
        reg.close()
        reg.close()  # idempotent
        self.assertEqual(reg.handle, 0)
        with self.assertRaises(idebridge.ClosedError):
            reg.drain()
        rng = random.Random(7)
        for bad in [0, h, 1, 12345, rng.getrandbits(64), h ^ (1 << 60)]:
            with self.assertRaises(idebridge.HandleError) as cm:
                idebridge._idb_registry_drain(bad)
            self.assertIn("bad handle", str(cm.exception))
            self.assertEqual(cm.exception.status, idebridge.IDB_ERR_HANDLE)
            with self.assertRaises(idebridge.HandleError):
                idebridge._idb_registry_free(bad)

    def test_garbage_collected_registry_is_freed(self) -> None:
        before = idebridge.handle_count()
        reg = idebridge.Registry()
        self.assertEqual(idebridge.handle_count(), before + 1)
        del reg
        self.assertEqual(idebridge.handle_count(), before)

    def test_threads_shared_and_own(self) -> None:
        problems = []
        # No total limit, so that every drain of the shared registry delivers
        # all that is pending however the threads interleave.
        with idebridge.Registry(max_total=1000000) as shared:

            def worker(g: int) -> None:
                try:
                    with idebridge.Registry() as own:
                        for i in range(100):
                            p = {"uri": "file:///g%d/%d.go" % (g, i), "diagnostics": [diag(0, "m")]}
                            shared.publish("srv%d" % g, p)
                            own.publish("srv%d" % g, p)
                            att = own.drain()
                            if att is None or att.files[0].uri != p["uri"]:
                                problems.append("thread %d drained %r" % (g, att))
                            if i % 10 == 0:
                                shared.drain()
                except Exception as e:  # noqa: BLE001 - reported below
                    problems.append(repr(e))

            threads = [threading.Thread(target=worker, args=(g,)) for g in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            shared.drain()
            stats = shared.stats()
        self.assertEqual(problems, [])
        self.assertEqual(stats["published"], 800)
        self.assertEqual(stats["delivered"], 800)


class PathTest(unittest.TestCase):
    def test_wsl_paths(self) -> None:
        self.assertEqual(idebridge.path_to_local("C:\\Users\\me\\p\\main.go", distro="Ubuntu"), "/mnt/c/Users/me/p/main.go")
        self.assertEqual(idebridge.path_to_local("\\\\wsl$\\Ubuntu\\home\\me\\x.go", distro="Ubuntu"), "/home/me/x.go")
        self.assertEqual(idebridge.path_to_ide("/home/me/x.go", distro="Ubuntu"), "\\\\wsl$\\Ubuntu\\home\\me\\x.go")
        self.assertEqual(idebridge.path_to_ide("/m/d/x", mount_root="/m"), "D:\\x")
        self.assertEqual(idebridge.path_to_local("relative"), "relative")
        with self.assertRaises(idebridge.ArgumentError):
            idebridge.path_to_local(None)  # type: ignore[arg-type]


if __name__ == "__main__":
    unittest.main()

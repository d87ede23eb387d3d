"""Per-call overhead of the Python binding, in the units the C benchmark uses.

Run after `make lib` (make bench-abi runs it beside the Go, C and Node
figures):

    IDEBRIDGE_LIB=build/libidebridge.so python3 bindings/python/bench.py

Each figure is the median of 9 samples of a timed loop, in microseconds
(us) or nanoseconds (ns) per call. The asynchronous forms are measured on a
trivial blocking export (idb_discover with no lockfile directory: about
10 us of work in Go) against the same export called directly through
ctypes, in interleaved batches, and reported as the median difference.
"""

import asyncio
import ctypes
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import idebridge  # noqa: E402
from idebridge import aio  # noqa: E402

TESTDATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "cabi", "testdata")


def report(name: str, ns: float, note: str) -> None:
    unit, value = ("us", ns / 1000) if ns >= 10000 else ("ns", ns)
    print("python  %-44s %10.1f %s/call (%s)" % (name, value, unit, note))


def bench(name: str, fn, iters: int) -> float:
    for _ in range(iters // 10):
        fn()
    samples = []
    for _ in range(9):
        t0 = time.perf_counter_ns()
        for _ in range(iters):
            fn()
        samples.append((time.perf_counter_ns() - t0) / iters)
    median = statistics.median(samples)
    report(name, median, "median of 9 x %d" % iters)
    return median


def interleaved(name: str, base, form, iters: int, rounds: int = 15) -> None:
    """Reports form's time and its median difference from base, measured in
    alternating batches so that load elsewhere affects both alike."""
    for _ in range(iters):
        base()
        form()
    bs, fs, ds = [], [], []
    for _ in range(rounds):
        t0 = time.perf_counter_ns()
        for _ in range(iters):
            base()
        t1 = time.perf_counter_ns()
        for _ in range(iters):
            form()
        t2 = time.perf_counter_ns()
        b, f = (t1 - t0) / iters, (t2 - t1) / iters
        bs.append(b)
        fs.append(f)
        ds.append(f - b)
    report(name, statistics.median(fs), "median of %d x %d; base %.1f us, added %.1f us" % (
        rounds, iters, statistics.median(bs) / 1000, statistics.median(ds) / 1000))


def main() -> None:
    lib = idebridge._load()
    n = ctypes.c_uint64()
    count = lib.idb_handle_count

    def raw_trivial() -> None:
        count(ctypes.byref(n))

    bench("ctypes idb_handle_count (trivial, raw)", raw_trivial, 200000)
    bench("idebridge.handle_count() (trivial)", idebridge.handle_count, 200000)
    bench("idebridge.version() (string out, freed)", idebridge.version, 200000)

    with open(os.path.join(TESTDATA, "publish10.json"), encoding="utf-8") as f:
        params = f.read().strip()
    with idebridge.Registry() as reg:
        bench("Registry.publish (10 diagnostics, str)", lambda: reg.publish("plugin:go:gopls", params), 5000)

        def turn() -> None:
            reg.publish("plugin:go:gopls", params)
            reg.drain()
            reg.reset()

        bench("Registry publish+drain+reset (10, decoded)", turn, 5000)

    # The asynchronous forms, on a trivial blocking export.
    opts = b'{"lockfileDirs":[],"env":{}}'
    out = ctypes.c_void_p()

    def direct() -> None:
        if lib.idb_discover(opts, 0, ctypes.byref(out)) != 0:
            raise RuntimeError("idb_discover failed")
        lib.idb_free(out)

    def sync_call() -> None:
        idebridge._idb_discover(opts, 0)

    interleaved("discover, blocking form (a call, waited)", direct, sync_call, 1000)

    loop = asyncio.new_event_loop()

    async def many(k: int) -> None:
        for _ in range(k):
            await aio._await(idebridge._start_idb_discover(opts, 0))

    def async_batch() -> None:
        loop.run_until_complete(many(100))

    def direct_batch() -> None:
        for _ in range(100):
            direct()

    for _ in range(3):
        async_batch()
        direct_batch()
    bs, fs, ds = [], [], []
    for _ in range(15):
        t0 = time.perf_counter_ns()
        direct_batch()
        t1 = time.perf_counter_ns()
        async_batch()
        t2 = time.perf_counter_ns()
        bs.append((t1 - t0) / 100)
        fs.append((t2 - t1) / 100)
        ds.append((t2 - t1 - (t1 - t0)) / 100)
    report("discover, asyncio form (awaited on the loop)", statistics.median(fs), "median of 15 x 100; base %.1f us, added %.1f us" % (
        statistics.median(bs) / 1000, statistics.median(ds) / 1000))
    loop.close()


if __name__ == "__main__":
    main()

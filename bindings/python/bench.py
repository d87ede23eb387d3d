"""Per-call overhead of the Python binding, in the units the C benchmark uses.

Run after `make lib`:

    IDEBRIDGE_LIB=build/libidebridge.so python3 bindings/python/bench.py

Each figure is the median of 9 samples of a timed loop, in microseconds
(us) or nanoseconds (ns) per call.
"""

import ctypes
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import idebridge  # noqa: E402

TESTDATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "cabi", "testdata")


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
    unit, value = ("us", median / 1000) if median >= 10000 else ("ns", median)
    print("%-46s %10.1f %s/call (median of 9 x %d)" % (name, value, unit, iters))
    return median


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


if __name__ == "__main__":
    main()

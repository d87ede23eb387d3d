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

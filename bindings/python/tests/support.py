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

"""CPU per run of a unittest test with subtests: through pytest's protocol vs run as unittest runs it.

    python benchmarks/unittest_direct.py [--subtests 27] [--rounds 10] [--runs 50]

A scratch test file holds one ``unittest.TestCase`` test looping over ``--subtests`` subtests, one of
them (about the middle one) failing, as a real library's error-code test does. It is collected once
(:class:`regrow._checks._pytest_runner.Suite`) and run three ways, interleaved round by round: through
pytest's setup/call/teardown protocol (each subtest reported through every plugin's hooks), directly
(``TestCase(name).run(result)``: what the engine does for a verdict, docs/engine.md "Throughput on real
suites"), and directly with ``failfast`` (the first failed subtest ends the test, as while candidates
are screened). Printed: the fastest round's CPU per run of each (on a loaded machine the minimum is
the cost itself) and each direct way's ratio to the protocol's. All three must agree on the verdict.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from regrow._checks._pytest_runner import Suite

TEST = '''\
import unittest


def code_of(n):
    return n if n != {bad} else -1


class Codes(unittest.TestCase):
    def test_every_code(self):
        for n in range({count}):
            with self.subTest(code=n):
                self.assertEqual(code_of(n), n)
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subtests", type=int, default=27)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--runs", type=int, default=50)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="regrow-bench-unittest-") as folder:
        Path(folder, "test_codes.py").write_text(TEST.format(bad=options.subtests // 2, count=options.subtests))
        sys.path.insert(0, folder)
        suite = Suite([str(Path(folder, "test_codes.py"))], Path(folder))
        try:
            nodeid = suite.ids[0]
            ways = {"protocol": lambda: suite._run_protocol(nodeid),
                    "direct": lambda: suite.run(nodeid),
                    "direct, failfast": lambda: suite.run(nodeid, failfast=True)}
            verdicts = {name: way().passed for name, way in ways.items()}
            assert set(verdicts.values()) == {False}, f"the three ways disagree: {verdicts}"
            best = {name: float("inf") for name in ways}
            for _ in range(options.rounds):
                for name, way in ways.items():
                    started = time.process_time()
                    for _ in range(options.runs):
                        way()
                    best[name] = min(best[name], (time.process_time() - started) / options.runs)
        finally:
            suite.close()
    print(f"one unittest test with {options.subtests} subtests (one failing); CPU per run, fastest of "
          f"{options.rounds} rounds of {options.runs}; Python {sys.version.split()[0]}")
    for name, seconds in best.items():
        print(f"  {name:18s} {seconds * 1000:6.2f} ms   {best['protocol'] / seconds:5.1f}x cheaper than the protocol"
              if name != "protocol" else f"  {name:18s} {seconds * 1000:6.2f} ms")


if __name__ == "__main__":
    main()

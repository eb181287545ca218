"""Evidence costs: capture + redaction of a typical failure (10 locals, a 200-record log buffer), and
the log ring buffer's cost per record, each against a baseline measured in the same run.

Targets (issue 14): capture <= 5 ms; the ring buffer <= 2 us per record over a bare logging handler.
"""

from __future__ import annotations

import logging
import statistics
import time
from typing import Any

import regrow
from regrow._evidence._failure import capture_exception


class _Bare(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        pass


def _per_record(n: int = 50_000) -> float:
    log = logging.getLogger("bench.records")
    log.setLevel(logging.INFO)
    log.propagate = True
    started = time.perf_counter()
    for i in range(n):
        log.info("record %d of %s", i, "bench")
    return (time.perf_counter() - started) / n


def ring_buffer() -> tuple[float, float]:
    root = logging.getLogger()
    bare = _Bare()
    root.addHandler(bare)
    baseline = min(_per_record() for _ in range(3))
    regrow.enable_log_capture(size=200, level=logging.INFO)
    armed = min(_per_record() for _ in range(3))
    regrow.disable_log_capture()
    root.removeHandler(bare)
    return baseline, armed


def failing(order: dict[str, Any], user: str, api_key: str, items: list[int], rate: float) -> float:
    total = sum(items)
    discount = 0.1
    currency = "EUR"
    note = "token=abcdefghijklmnop1234"
    count = len(items)
    return total / (count - count) * rate * discount


def capture_cost(rounds: int = 200) -> tuple[float, float]:
    regrow.enable_log_capture(size=200, level=logging.INFO)
    log = logging.getLogger("bench.capture")
    log.setLevel(logging.INFO)
    for i in range(200):
        log.info("step %d password=%s", i, "hunter2")
    args = ({"id": 7, "lines": list(range(50))}, "ann", "sk-abcdefghijklmnopqrstuvwx", list(range(100)), 1.5)
    times, bare = [], []
    for _ in range(rounds):
        try:
            failing(*args)
        except ZeroDivisionError as exc:
            started = time.perf_counter()
            capture_exception(exc, failing, args, {})  # type: ignore[arg-type]
            times.append(time.perf_counter() - started)
            started = time.perf_counter()
            exc.__traceback__ and repr(exc)  # the baseline: what an except clause that logs the error does
            bare.append(time.perf_counter() - started)
    regrow.disable_log_capture()
    return statistics.median(bare), statistics.median(times)


def main() -> None:
    baseline, armed = ring_buffer()
    print(f"log record, bare handler: {baseline * 1e6:.2f} us; with the ring buffer armed too: {armed * 1e6:.2f} us "
          f"(+{(armed - baseline) * 1e6:.2f} us per record; target <= 2 us)")
    bare, captured = capture_cost()
    print(f"capture + redaction of a failure (10 locals, 200-record buffer): {captured * 1e3:.2f} ms median "
          f"(baseline repr of the exception {bare * 1e6:.1f} us; target <= 5 ms)")


if __name__ == "__main__":
    main()

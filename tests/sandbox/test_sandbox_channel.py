"""The channel and the host are bounded: what a hostile child sends can neither crash, grow nor deceive the host.

Each case writes to the result pipe itself, as a candidate that found it (it is an inherited pipe
fd above 2): a forged frame, a header that promises gigabytes, frames that decode to far more than
their size, a reason of 12 MiB, terminal escape sequences. Every one ends as a failed outcome (a
refusal for anything malformed), ``call`` never raises, and what reaches a log is capped and clean.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import stat
import subprocess
import sys
import textwrap
import time
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import regrow
from regrow._candidate import Candidate
from regrow._sandbox import ForkSandbox, Limits, Outcome, _channel, _process, _seccomp
from regrow._sandbox._channel import HEADER, encode

pytestmark = pytest.mark.skipif(sys.platform != "linux" or _seccomp.machine() is None, reason="Linux guards")

LIMITS = Limits(timeout=5.0, memory_bytes=512 << 20)
ESCAPES = "\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[2J\x1b[31mred\r\x08\u202e"


@pytest.fixture(scope="module")
def box() -> Iterator[ForkSandbox]:
    with ForkSandbox(LIMITS) as sandbox:
        yield sandbox


def pipes() -> list[int]:
    """The child's pipe fds above stderr: its result pipe."""
    found = []
    for fd in range(3, 1024):  # (the test process may hold many descriptors: the pipe may be numbered high)
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode):
                found.append(fd)
        except OSError:
            pass
    return found


def forging(*frames: bytes) -> Callable[[], None]:
    def job() -> None:
        for fd in pipes():
            for frame in frames:
                with contextlib.suppress(OSError):
                    os.write(fd, frame)
        os._exit(0)

    return job


def test_a_forged_result_without_a_verdict_is_refused_and_nothing_raises(box: ForkSandbox) -> None:
    from regrow._verdict import Verdict

    forged = encode({"kind": "result", "status": "ok", "value": {"check": "all", "reason": "", "passed": ["x"]}}, 1024)
    outcome = box.call(forging(forged))
    verdict = Verdict.from_outcome(outcome)
    assert not verdict.ok and verdict.check == "sandbox" and "malformed" in verdict.reason, verdict
    for frame in ({"kind": "result", "status": "bogus"}, {"kind": "result", "status": "error", "error": 7},
                  {"kind": "result", "status": "error", "error": {"type": 1, "message": "m"}}):
        outcome = box.call(forging(encode(frame, 1024)))
        assert outcome.status == "refused" and "malformed result" in outcome.detail, (frame, outcome)
    two = box.call(forging(encode({"kind": "result", "status": "ok", "value": 1}, 64) * 2))
    assert two.status == "refused" and "results" in two.detail, two


def test_a_header_that_promises_gigabytes_is_refused_before_anything_is_buffered(box: ForkSandbox) -> None:
    started = time.monotonic()
    outcome = box.call(forging(HEADER.pack(0xFFFFFFF0) + b"x" * 4096))
    assert outcome.status == "refused" and "exceeds the" in outcome.detail, outcome
    assert time.monotonic() - started < 2.0


def test_frames_over_a_small_configured_limit_are_refused(box: ForkSandbox) -> None:
    small = Limits(timeout=5.0, result_bytes=4096)
    assert box.call(lambda: "x" * 100, limits=small).value == "x" * 100
    too_big = box.call(lambda: "x" * 10_000, limits=small)
    assert too_big.status == "error" and "too large" in too_big.reason(), too_big
    forged = box.call(forging(encode({"kind": "violation", "reason": "y" * 8000}, 1 << 20)), limits=small)
    assert forged.status == "refused" and "4096-byte limit" in forged.detail, forged


def test_frames_that_decode_to_far_more_than_their_size_are_refused_unread(box: ForkSandbox) -> None:
    dense = ("[" + ",".join(["{}"] * 300_000) + "]").encode()  # 0.9 MB that would decode to ~20 MB
    outcome = box.call(forging(HEADER.pack(len(dense)) + dense), limits=Limits(timeout=5.0, result_bytes=1 << 20))
    assert outcome.status == "refused" and "to decode" in outcome.detail, outcome
    flood = encode({"kind": "violation", "reason": "z" * 300}, 1024)
    many = box.call(forging(flood * 40_000), limits=Limits(timeout=5.0, result_bytes=1 << 16))
    assert many.status == "refused" and len(many.violations) <= 102, (many.status, len(many.violations))


_AMPLIFIER = textwrap.dedent('''
    import json, os, resource, stat, sys
    sys.path.insert(0, sys.argv[1])
    from regrow._sandbox import ForkSandbox, Limits
    from regrow._sandbox._channel import HEADER

    def hwm():
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024

    def flood():
        fds = [fd for fd in range(3, 1024) if os.path.exists(f"/proc/self/fd/{fd}")
               and stat.S_ISFIFO(os.fstat(fd).st_mode)]
        shapes = ['{"a":{}}', '[[]]', '"ab"', '1.5', '{}']
        for round in range(40):  # as much as the child can write: each frame just under the limit
            item = shapes[round % len(shapes)]
            body = ("[" + ",".join([item] * ((16 << 20) // (len(item) + 1) - 2)) + "]").encode()
            for fd in fds:
                try:
                    os.write(fd, HEADER.pack(len(body)) + body)
                except OSError:
                    pass
        os._exit(0)

    box = ForkSandbox(Limits(timeout=20, memory_bytes=None))
    assert box.call(lambda: 5).value == 5
    before = hwm()
    outcome = box.call(flood)
    print(json.dumps({"status": outcome.status, "detail": outcome.detail[:300], "before": before, "after": hwm()}))
''')


def test_the_hosts_memory_stays_bounded_under_frame_amplification(tmp_path: Path) -> None:
    src = str(Path(__file__).resolve().parents[2] / "src")
    done = subprocess.run([sys.executable, "-c", _AMPLIFIER, src], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    grown = (report["after"] - report["before"]) / (1 << 20)
    print(f"host peak RSS grew by {grown:.1f} MiB under frame amplification")  # reported by -s
    assert report["status"] == "refused", report
    # One frame of 16 MiB is buffered and weighed, never decoded: far from the ~1.4 GB it used to take.
    assert grown < 96, f"the host's peak RSS grew by {grown:.0f} MiB: {report}"


def test_a_12_mib_reason_and_escape_sequences_reach_no_log_unescaped(box: ForkSandbox) -> None:
    def raises() -> None:
        raise ValueError(ESCAPES + "r" * (12 << 20))

    forged_error = encode({"kind": "result", "status": "error",
                           "error": {"type": "E" + ESCAPES, "message": ESCAPES + "m" * (12 << 20), "traceback": ""}},
                          16 << 20)
    for outcome in (box.call(raises), box.call(forging(forged_error)),
                    box.call(forging(encode({"kind": "violation", "reason": ESCAPES * 1000}, 1 << 20)))):
        text = " ".join([outcome.reason(), outcome.detail, str(outcome.error or ""), *outcome.violations])
        assert len(outcome.reason()) <= 2001, len(outcome.reason())
        assert "\x1b" not in text and "\x07" not in text and "\r" not in text and "\u202e" not in text, outcome
        assert outcome.error is None or len(outcome.error.message) <= 2001


class Fixed:
    def __init__(self, source: str) -> None:
        self.name = "redteam"
        self.source = source

    def propose(self, request: Any) -> Iterator[Candidate]:
        yield Candidate(self.source, origin="redteam")


PARSE = "def parse_price(text):\n    return float(text[2:])\n"


def check_dollars(fn: Callable[[str], float]) -> None:
    assert fn("$12.99") == 12.99


@pytest.mark.parametrize("payload", [
    # a forged result frame without "ok", on the result pipe
    "import contextlib as c\n    import json\n    os = c.os\n"
    "    body = json.dumps({'kind': 'result', 'status': 'ok', 'value': {'check': 'all', 'reason': ''}}).encode()\n"
    "    for fd in range(3, 1024):\n        try:\n            os.write(fd, len(body).to_bytes(4, 'big') + body)\n"
    "        except OSError:\n            pass\n    os._exit(0)",
    # a 12 MiB reason full of terminal escapes
    f"raise ValueError({ESCAPES!r} * 3 + 'x' * (12 << 20))",
])
def test_through_repair_a_hostile_channel_ends_in_a_short_clean_log(
    payload: str, make_module: Callable[[str], types.ModuleType], caplog: pytest.LogCaptureFixture
) -> None:
    module = make_module(PARSE)
    candidate = f"def parse_price(text):\n    {payload}\n    return float(text[1:])\n"
    caplog.set_level(logging.DEBUG, logger="regrow")
    result = regrow.repair(module.parse_price, ("$12.99",), tests=[check_dollars], proposers=[Fixed(candidate)],
                           sandbox="fork", max_candidates=1, timeout=20)
    assert not result.ok and result.installed is None, result.ledger()
    assert module.parse_price("$12.99") != 12.99  # still the user's code
    logged = [record.getMessage() for record in caplog.records]
    assert logged and all(len(line) < 20_000 for line in logged), [len(line) for line in logged]
    assert not any("\x1b" in line or "\x07" in line or "\r" in line for line in logged)
    assert all(len(a.verdict.reason) <= 2001 and "\x1b" not in a.verdict.reason for a in result.history)


def test_no_exception_leaves_call_and_the_child_never_outlives_it(box: ForkSandbox,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[int] = []

    def exploding_run(self: Any, deadline: float, until: Any) -> bool:
        started.extend(int(name) for name in os.listdir("/proc") if name.isdigit())
        raise MemoryError

    monkeypatch.setattr(_channel.Collector, "run", exploding_run)
    # Children of the box's earlier calls may still be dying (killed, reaped later: seen on a loaded machine).
    before = set(_fork_children())
    outcome = box.call(time.sleep, 30)  # the host runs out of memory reading the child: the child's doing
    assert isinstance(outcome, Outcome) and outcome.status == "refused" and "MemoryError" in outcome.detail
    monkeypatch.undo()
    assert started  # the child was running when the host failed
    leftovers = [pid for pid in _fork_children() if pid not in before]
    assert not leftovers, f"children left running: {leftovers}"
    monkeypatch.setattr(_process._hostcalls, "pipe", lambda: (_ for _ in ()).throw(OSError(24, "Too many open files")))
    failed = box.call(lambda: 1)
    assert failed.status == "crashed" and "Too many open files" in failed.detail, failed
    monkeypatch.undo()
    monkeypatch.setattr(_process._guard, "plan", lambda *args: (_ for _ in ()).throw(MemoryError()))
    short = box.call(lambda: 1)
    assert short.status == "crashed" and "MemoryError" in short.detail, short


def _fork_children() -> list[int]:
    """Processes whose parent is this one and that are not zombies already reaped by the test."""
    mine = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as source:
                fields = source.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid() and fields[0] not in (b"Z", b"X"):
            mine.append(int(name))
    return mine


def test_the_module_reader_refuses_what_it_was_told(box: ForkSandbox) -> None:
    reader = _channel.FrameReader(1024)
    assert reader.budget == _channel.budget_for(1024)
    with pytest.raises(_channel.ChannelError, match="to decode"):
        reader.feed(encode(["{}"] * 10, 1024) * 10_000)
    assert _process.OUTPUT_LIMIT == 64 << 10


def test_a_whole_frame_read_at_once_is_judged_as_one_read_in_pieces() -> None:
    """The reader's shortcut for the common read (exactly one whole frame) keeps every rule of the slow path."""
    frame = encode({"kind": "result", "status": "ok", "value": [1, "two", None]}, 1024)
    whole, pieces = _channel.FrameReader(1024), _channel.FrameReader(1024)
    assert whole.feed(frame) == pieces.feed(frame[:3]) + pieces.feed(frame[3:]) == [frame[_channel.HEADER.size:]]
    assert whole.spent == pieces.spent > 0 and whole.pending == pieces.pending == 0
    big = encode("x" * 2000, 1 << 20)
    for piece in (big, big[:10]):  # refused whole, and refused from its header alone
        with pytest.raises(_channel.ChannelError, match="exceeds the 1024-byte limit"):
            _channel.FrameReader(1024).feed(piece)
    heavy = encode([{}] * 300, 1 << 20)  # small on the wire, heavy to decode
    with pytest.raises(_channel.ChannelError, match="to decode"):
        _channel.FrameReader(1 << 20, budget=10_000).feed(heavy)

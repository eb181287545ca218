"""Per-test time limits while the engine screens candidates (issue 24): a candidate that hangs costs its
test's own limit (a multiple of that test's time on the original, with a floor), not the candidate's."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import regrow
from regrow._checks._spectrum import FAILING_CPU_FLOOR, TEST_CPU_FLOOR, TEST_FLOOR, Run, Spectrum
from regrow._checks._test_limits import TestOverrun, limited, per_test_limits
from regrow._events import Event
from regrow._proposers._engine import Engine
from regrow._sandbox import _warm_child as _serve

fork_only = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def run(check: str, passed: bool, duration: float, timed_out: bool = False, cpu: float = 0.0,
        lines: frozenset[int] = frozenset()) -> Run:
    return Run(check, passed, lines, duration, [], timed_out=timed_out, cpu=cpu)


def test_each_check_gets_a_multiple_of_its_time_and_a_failing_one_the_longest_of_those_running_the_target() -> None:
    target = frozenset({3})  # the lines of the target each ran
    spectrum = Spectrum([run("quick", True, 0.001, lines=target), run("slow", True, 0.2, lines=target),
                         run("fails", False, 0.0001), run("fails-slowly", False, 0.5),
                         run("hangs", False, 1.0, timed_out=True)])
    limits = spectrum.test_limits(ceiling=2.0, floor=0.25, factor=5.0)
    assert limits == {"quick": 0.25, "slow": 1.0, "fails": 1.0, "fails-slowly": 2.0, "hangs": 1.0}
    # no passing check ran the target: the failing ones get their own multiple and the floor, nothing more
    unrelated = Spectrum([run("slow", True, 0.2), run("fails", False, 0.0001), run("fails-slowly", False, 0.1),
                          run("hangs", False, 1.0, timed_out=True)])
    assert unrelated.test_limits(ceiling=2.0, floor=0.25, factor=5.0) == {
        "slow": 1.0, "fails": 0.25, "fails-slowly": 0.5, "hangs": 0.25}
    assert Spectrum([run("hangs", False, 1.0, timed_out=True)]).test_limits(ceiling=3.0) == {"hangs": 3.0}
    assert Spectrum([run("quick", True, 0.0)]).test_limits(ceiling=0.1) == {"quick": 0.1}  # never past the ceiling
    assert Spectrum([run("x", True, 0.3), run("y", True, 0.0)]).test_limits(ceiling=5.0) == {"x": 1.5, "y": TEST_FLOOR}
    assert TEST_FLOOR == 1.0  # the defaults docs/engine.md gives: 5x a test's own time, at least 1 s


def test_cpu_limits_come_from_cpu_times_and_a_check_that_did_not_finish_gets_the_passing_ones() -> None:
    spectrum = Spectrum([run("quick", True, 0.5, cpu=0.001, lines=frozenset({3})),
                         run("busy", True, 0.5, cpu=0.1, lines=frozenset({3})),
                         run("fails", False, 0.5, cpu=0.0001), run("fails-busily", False, 0.9, cpu=0.4),
                         run("hangs", False, 1.0, timed_out=True, cpu=0.6)])
    limits = spectrum.test_limits(ceiling=5.0, floor=TEST_CPU_FLOOR, factor=5.0, cpu=True)
    # wall times play no part; the failing ones get the longest passing limit, the hanging one too (not a multiple
    # of the CPU it burnt until it was stopped: before, it got none, and each candidate hanging in it as the original
    # did cost the whole wall-clock limit and a killed worker)
    assert limits == {"quick": TEST_CPU_FLOOR, "busy": 0.5, "fails": 0.5, "fails-busily": 2.0, "hangs": 0.5}
    hanging = Spectrum([run("quick", True, 0.01, cpu=0.001, lines=frozenset({3})),
                        run("hangs", False, 1.0, timed_out=True)])
    assert hanging.test_limits(ceiling=5.0, floor=TEST_CPU_FLOOR, cpu=True, failing_floor=FAILING_CPU_FLOOR) == {
        "quick": TEST_CPU_FLOOR, "hangs": FAILING_CPU_FLOOR}
    # no test passed: nothing says how long it may take, no CPU limit
    alone = Spectrum([run("hangs", False, 1.0, timed_out=True)])
    assert alone.test_limits(ceiling=5.0, floor=TEST_CPU_FLOOR, cpu=True) == {}
    assert TEST_CPU_FLOOR == 0.03  # docs/engine.md: at least 0.03 s of CPU
    plain = run("busy", True, 0.5, cpu=0.25).to_plain()
    assert Run.from_plain(plain).cpu == 0.25
    with pytest.raises(ValueError, match="cpu must be numbers"):
        Run.from_plain({**plain, "cpu": "0.25"})


def test_a_failing_check_s_cpu_limit_has_a_floor_of_its_own() -> None:
    # passing tests that take a millisecond say little of a failing one that, once fixed, goes on past its
    # failed assert (cachetools' TLRU test_clear): the right fix was rejected at the passing tests' 0.03 s
    spectrum = Spectrum([run("quick", True, 0.01, cpu=0.001, lines=frozenset({3})),
                         run("fails", False, 0.01, cpu=0.0005, lines=frozenset({3}))])
    limits = spectrum.test_limits(ceiling=5.0, floor=TEST_CPU_FLOOR, cpu=True, failing_floor=FAILING_CPU_FLOOR)
    assert limits == {"quick": TEST_CPU_FLOOR, "fails": FAILING_CPU_FLOOR}
    assert FAILING_CPU_FLOOR == 0.1  # docs/engine.md: a failing test's at least 0.1 s of CPU


def test_a_failing_check_s_limit_comes_from_the_passing_checks_that_ran_the_target() -> None:
    # a slow test that never calls the target says nothing of how long the failing one takes once fixed
    spectrum = Spectrum([run("slow-elsewhere", True, 0.8, cpu=0.8),
                         run("calls-it", True, 0.5, cpu=0.03, lines=frozenset({3})),
                         run("fails", False, 0.01, cpu=0.01, lines=frozenset({3}))])
    assert spectrum.test_limits(ceiling=5.0, floor=0.1, cpu=True) == {"slow-elsewhere": 4.0, "calls-it": 0.15,
                                                                       "fails": 0.15}
    assert spectrum.test_limits(ceiling=5.0, floor=1.0)["fails"] == 2.5  # wall-clock limits alike


def _spin(seconds: float) -> str:
    """Work for ``seconds`` of this thread's CPU (the limits count the whole process's, ``ITIMER_PROF``: by the
    process's clock a spin beside another busy thread of pytest's would end sooner than its own work says)."""
    until = time.thread_time() + seconds
    while time.thread_time() < until:
        pass
    return "done"


def alone(body: Callable[[], None]) -> None:
    """Runs ``body`` in a forked child with one thread, as a worker's child is: a CPU limit counts the whole
    process, and pytest's own process may have other tests' threads still running beside it."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(read)
        status = 0
        try:
            _serve._in_child = True
            body()
        except BaseException:
            import traceback
            os.write(write, traceback.format_exc().encode())
            status = 1
        os._exit(status)
    os.close(write)
    with os.fdopen(read, "rb") as reader:
        said = reader.read().decode()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, said


@fork_only
def test_a_cpu_limit_stops_a_busy_loop_but_not_a_wait() -> None:
    alone(_busy_loop_not_wait)


def _busy_loop_not_wait() -> None:
    with pytest.raises(_serve.Overrun), _serve.cpu_limit(0.05):
        _spin(20)
    with _serve.cpu_limit(0.05):
        time.sleep(0.3)  # waiting (as a loaded machine makes a process wait) costs no CPU
    with pytest.raises(_serve.Overrun), _serve.time_limit(30), _serve.cpu_limit(0.05):
        _spin(20)  # beside a wall-clock limit, the CPU one strikes first
    assert signal.getitimer(signal.ITIMER_PROF)[0] == 0 and signal.getitimer(signal.ITIMER_REAL)[0] == 0


@fork_only
def test_a_test_over_its_cpu_limit_fails_as_an_overrun_while_one_that_waits_passes() -> None:
    alone(_overrun_not_wait)


def _overrun_not_wait() -> None:
    with per_test_limits({"test:spins": 30.0, "test:waits": 30.0}, _serve.time_limit,
                         {"test:spins": 0.05, "test:waits": 0.05}, _serve.cpu_limit):
        assert limited("test:spins", lambda: _spin(0.2)) == "done"  # its first run is free
        with pytest.raises(TestOverrun, match=r"test:spins did not finish in 0.05s of CPU \(its own limit"):
            limited("test:spins", lambda: _spin(20))
        for _ in range(2):
            assert limited("test:waits", lambda: time.sleep(0.2) or "slept") == "slept"


@pytest.fixture
def in_child(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """time_limit as a worker's child has it (SIGALRM on the main thread, which pytest's is)."""
    monkeypatch.setattr(_serve, "_in_child", True)
    yield
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.setitimer(signal.ITIMER_PROF, 0)


def test_a_limit_inside_another_strikes_first_and_the_outer_one_keeps_counting(in_child: None) -> None:
    with pytest.raises(_serve.Overrun), _serve.time_limit(30):
        with pytest.raises(_serve.Overrun), _serve.time_limit(0.05):
            time.sleep(20)
        left, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 0 < left < 30  # the outer limit is armed again with what was left of it
        with _serve.time_limit(0.5):
            pass
        signal.setitimer(signal.ITIMER_REAL, 0.05)  # as if the outer limit ran out now
        time.sleep(20)
    assert signal.getitimer(signal.ITIMER_REAL)[0] == 0


def test_an_inner_limit_longer_than_what_is_left_of_the_outer_strikes_with_the_outer(in_child: None) -> None:
    with pytest.raises(_serve.Overrun), _serve.time_limit(0.05), _serve.time_limit(30):
        time.sleep(20)


def test_a_test_s_first_run_in_a_process_is_not_limited_its_later_runs_are(in_child: None) -> None:
    calls: list[str] = []

    def slow() -> str:
        calls.append("ran")
        time.sleep(0.3)
        return "done"

    with per_test_limits({"test:first-run-free": 0.05}, _serve.time_limit):
        assert limited("test:first-run-free", slow) == "done"  # warm-up: its own time may not show it
        with pytest.raises(TestOverrun, match=r"test:first-run-free did not finish in 0.05s"):
            limited("test:first-run-free", slow)
        assert limited("test:no-limit", slow) == "done" and limited("test:no-limit", slow) == "done"
    assert limited("test:first-run-free", slow) == "done"  # outside: no limits at all
    assert len(calls) == 5


def test_a_directly_called_test_s_first_run_is_limited_at_a_multiple_of_its_limits(in_child: None) -> None:
    # no fixtures to set up, only a fresh fork's first touch of memory: a candidate that loops there costs
    # a few times the test's limit, not the candidate's
    with per_test_limits({"test:direct": 30.0}, _serve.time_limit, {"test:direct": 0.05}, _serve.cpu_limit):
        assert limited("test:direct", lambda: _spin(0.06), warmup=False) == "done"  # within 3x 0.05 s of CPU
        with pytest.raises(TestOverrun, match=r"test:direct did not finish in 0.05s of CPU"):
            # the later runs: 0.05 s. A loop, not 0.06 s of work: the kernel samples the CPU timer at its ticks,
            # and on a loaded machine it may count a few ms less than the thread's own clock by then
            limited("test:direct", lambda: _spin(20), warmup=False)
    with per_test_limits({"test:direct-loop": 30.0}, _serve.time_limit, {"test:direct-loop": 0.05},
                         _serve.cpu_limit), pytest.raises(TestOverrun, match=r"did not finish in 0.15s of CPU"):
        limited("test:direct-loop", lambda: _spin(20), warmup=False)  # first run, looping: 3x 0.05 s


def digit_sum(n: int) -> int:
    total = 0
    while n > 0:
        total += n % 10
        n //= 10
    return total if total < 15 else total - 1  # the bug: digit sums from 15 on come out one short


def _slow_tests() -> list[Callable[[Callable[[int], int]], None]]:
    # Each takes ~30 ms, so the candidate's limit (a multiple of all of them) is seconds, a test's the 1 s floor.
    def test_four_digits(f: Callable[[int], int]) -> None:
        time.sleep(0.03)
        assert f(1234) == 10

    def test_one_digit(f: Callable[[int], int]) -> None:
        time.sleep(0.03)
        assert f(7) == 7

    def test_zero(f: Callable[[int], int]) -> None:
        time.sleep(0.03)
        assert f(0) == 0

    def test_nines(f: Callable[[int], int]) -> None:
        time.sleep(0.03)
        assert f(99) == 18

    return [test_four_digits, test_one_digit, test_zero, test_nines]


@fork_only
def test_a_candidate_that_hangs_fails_at_its_test_s_own_limit_not_the_candidate_s() -> None:
    events: list[Event] = []
    engine = Engine()
    original = digit_sum.__code__
    try:
        result = regrow.repair(digit_sum, (99,), tests=_slow_tests(), proposers=[engine], install=False,
                               on_event=events.append)
    finally:
        digit_sum.__code__ = original
    assert result.ok, result.reason
    reasons = [e.verdict.reason for e in events if e.verdict is not None and not e.verdict.ok]
    limit = engine.last_stats.candidate_timeout
    assert limit > 1.0  # the candidate's limit: 20x the four tests' time (they wait, with CPU time to spare)
    hung = [reason for reason in reasons if re.search(r"did not finish in 0\.0\ds of CPU \(its own limit", reason)]
    assert len(hung) >= 3, reasons  # `while n >= 0`, `n //= 1`, `n *= 10`, ...
    # a hang costs the whole candidate limit at most once per judging child (a test's first run there)
    assert sum("timed out after" in reason for reason in reasons) <= engine.last_stats.forks, reasons


HANGING = '''\
def digit_sum(n):
    total = 0
    while n > 0:
        total += n % 10
        n //= 10
    return total if total < 15 else total - 1
'''
HANGING_TESTS = '''\
import time

from digits import digit_sum


def test_four_digits():
    time.sleep(0.03)
    assert digit_sum(1234) == 10


def test_one_digit():
    time.sleep(0.03)
    assert digit_sum(7) == 7


def test_nines():
    time.sleep(0.03)
    assert digit_sum(99) == 18
'''


def test_regrow_heal_screens_each_pytest_test_under_its_own_limit(tmp_path: Path) -> None:
    (tmp_path / "digits.py").write_text(HANGING)
    (tmp_path / "test_digits.py").write_text(HANGING_TESTS)
    done = subprocess.run([sys.executable, "-m", "regrow", "heal", "digits.py::digit_sum", "--test", "test_digits.py",
                           "-v"], cwd=tmp_path, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    hung = r"test_digits\.py::test_\w+ did not finish in 0\.0\ds of CPU \(its own limit"
    assert re.search(hung, done.stdout), done.stdout


def slow_when_right(text: str) -> float:
    return float(text.strip()) + 1  # the bug: one too many


def _checks_slow_when_right() -> list[Callable[[Callable[[str], float]], None]]:
    def test_price(f: Callable[[str], float]) -> None:
        value = f(" 12.5 ")
        if value == 12.5:
            time.sleep(0.5)  # the right value takes longer than the candidate's limit when screened
        assert value == 12.5

    return [test_price]


@fork_only
def test_when_every_candidate_failed_those_only_out_of_time_are_judged_again_with_more() -> None:
    # a loaded machine stalls a right fix as it stalls a hanging one: before the engine gives up, the
    # candidates that failed by a time limit alone are judged again under a longer one
    events: list[Event] = []
    engine = Engine(time_floor=0.2, time_ceiling=0.2)
    original = slow_when_right.__code__
    try:
        result = regrow.repair(slow_when_right, (" 12.5 ",), tests=_checks_slow_when_right(), proposers=[engine],
                               install=False, on_event=events.append, timeout=60)
    finally:
        slow_when_right.__code__ = original
    assert result.ok, result.reason
    right = "    return float(text.strip())  #"
    assert right in result.fix.source
    assert engine.last_stats.again >= 1 and engine.last_stats.candidate_timeout == 0.2
    verdicts = [e.verdict for e in events if e.verdict is not None and e.candidate is not None
                and right in e.candidate.source]
    assert verdicts[0] is not None and not verdicts[0].ok and "timed out after 0.2s" in verdicts[0].reason
    assert verdicts[-1] is not None and verdicts[-1].ok
    out_of_time = [e for e in events if e.type == "verdict" and e.verdict is not None and not e.verdict.ok
                   and "timed out after" in e.verdict.reason]
    assert engine.last_stats.out_of_time >= 1  # counted in the stats the bench reports
    assert engine.last_stats.out_of_time + engine.last_stats.again >= len(out_of_time)


def test_the_cpu_limiters_interrupt_is_the_tests_overrun_even_before_the_clock_shows_the_limit() -> None:
    # The kernel's CPU timer charges whole ticks: on a loaded machine it strikes while time.process_time()
    # still shows well under the limit (3.10 CI under load). Its interrupt is the test's overrun all the same;
    # a wall-clock interrupt that is not the test's own (its candidate's limit) goes on up.
    def strikes(interrupt: BaseException) -> Callable[[], None]:
        def run() -> None:
            raise interrupt
        return run

    with per_test_limits({"test:t": 30.0}, _serve.time_limit, {"test:t": 30.0}, _serve.cpu_limit):
        with pytest.raises(TestOverrun, match=r"test:t did not finish in [0-9]+s of CPU"):
            limited("test:t", strikes(_serve._CpuOverrun()), warmup=False)
        with pytest.raises(_serve.Overrun) as outer:
            limited("test:t", strikes(_serve.Overrun()))
        assert not isinstance(outer.value, TestOverrun) and not outer.value.cpu
    with per_test_limits({"test:u": 30.0}, _serve.time_limit), pytest.raises(_serve.Overrun):
        limited("test:u", strikes(_serve._CpuOverrun()), warmup=False)  # no CPU limit of its own: not its overrun


def test_a_passing_check_slower_than_a_second_is_measured_not_taken_for_a_hang(make_module) -> None:
    """Localizing ran each check on the original under 1 s: a passing test of 1.2 s counted as one that hangs, every
    candidate's limit fell to 0.2 s, and the right fix timed out with all the others (no fix, whatever
    --candidate-timeout said). A check now gets the candidates' ceiling (5 s) there."""
    mod = make_module('''
        import time

        def f(a, b):
            return a - b

        def test_f(fn):
            assert fn(2, 3) == 5

        def test_slow(fn):
            time.sleep(1.2)
            assert fn(0, 0) == 0
    ''')
    result = regrow.repair(mod.f, (2, 3), tests=[mod.test_f, mod.test_slow], install=False, timeout=120)
    assert result.ok and result.fix is not None and "a + b" in result.fix.source, result.reason
    assert Engine().localize_timeout == Engine().time_ceiling == 5.0

"""The engine's warm worker: plain-data replies only, and a guarded child for candidate code."""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import socket
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from regrow._checks._oracles import PytestTests, TestCallable
from regrow._checks._spectrum import Run, record, split_checks, trace_job
from regrow._evidence._failure import check_failure
from regrow._proposers._engine import Engine
from regrow._proposers._engine._search import judge
from regrow._proposers._proposer import Request
from regrow._sandbox._channel import ChannelError
from regrow._sandbox._warm import Worker
from regrow._target._target import Target

fork_only = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def double(x: int) -> int:
    return x + x + 1  # the bug


def double_checks() -> list[TestCallable]:
    def test_two(fn: Callable[[int], int]) -> None:
        assert fn(2) == 4

    def test_five(fn: Callable[[int], int]) -> None:
        assert fn(5) == 10

    return [TestCallable(test_two), TestCallable(test_five)]


FIX = "def double(x: int) -> int:\n    return x + x\n"


def candidate(body: str) -> str:
    """A candidate for ``double`` that runs ``body`` first and then returns the right answer."""
    return "def double(x: int) -> int:\n" + textwrap.indent(textwrap.dedent(body), "    ") + "    return x + x\n"


@pytest.fixture
def engine_worker() -> Iterator[tuple[Worker, Target]]:
    """The engine's own worker for ``double`` (trace, judge, vary, behaviour), as ``Engine.propose`` makes it."""
    target = Target.of(double)
    request = Request(target, check_failure("test", target.func, "failing"), [], double_checks(), 1,
                      time.monotonic() + 30)
    with Engine()._worker(request) as worker:
        yield worker, target


# -- plain data only ------------------------------------------------------------------------------


@pytest.mark.parametrize("fork", [pytest.param(True, marks=fork_only), False])
def test_a_result_that_is_not_plain_data_is_a_clear_error(fork: bool) -> None:
    with Worker({"set": lambda: {1, 2}, "run": lambda: Run("c", True, frozenset(), 0.0, []),
                 "plain": lambda: {"a": [1, "b", None]}}, fork=fork) as worker:
        status, message = worker.call("set", timeout=5)
        assert status == "error"
        assert message == "TypeError: return value is not plain data: set"  # as the fork sandbox says it
        status, message = worker.call("run", timeout=5)
        assert status == "error" and "not plain data: regrow._checks._spectrum.Run" in message
        assert worker.call("plain", timeout=5) == ("ok", {"a": [1, "b", None]})
        with pytest.raises(ChannelError, match="not plain data: object"):
            worker.call("plain", object(), timeout=5)


@fork_only
def test_a_reply_of_the_wrong_shape_kills_the_worker() -> None:
    def read(data: Any) -> int:
        if type(data) is not int:
            raise ValueError("expected an int")
        return data

    with Worker({"text": lambda: "seven", "seven": lambda: 7}) as worker:
        assert worker.call("seven", timeout=5, read=read) == ("ok", 7)
        assert worker.call("text", timeout=5, read=read) == ("crashed", "malformed reply to 'text': expected an int")
        assert worker.call("seven", timeout=5, read=read) == ("ok", 7)
        assert worker.forks == 2


@fork_only
def test_an_oversized_or_garbled_reply_is_refused_as_the_fork_sandbox_refuses_it_and_the_host_goes_on() -> None:
    def claim_a_huge_frame() -> None:
        for fd in range(3, 256):
            with contextlib.suppress(OSError):
                os.write(fd, (1 << 31).to_bytes(4, "big"))
        time.sleep(5)

    def garble() -> None:
        for fd in range(3, 256):
            with contextlib.suppress(OSError):
                os.write(fd, b"\x00\x00\x00\x05}{][!")

    with Worker({"huge": claim_a_huge_frame, "garble": garble, "one": lambda: 1}) as worker:
        started = time.monotonic()
        status, reason = worker.call("huge", timeout=10)
        assert status == "refused" and reason.startswith("refused a malformed result channel: ")
        assert "exceeds the" in reason and time.monotonic() - started < 3
        status, reason = worker.call("garble", timeout=10)
        assert status == "refused" and reason.startswith("refused a malformed result channel: malformed frame")
        assert worker.call("one", timeout=5) == ("ok", 1)
        assert worker.forks == 3


@fork_only
def test_trace_results_cross_as_plain_data_and_a_trusted_job_gets_an_unguarded_child() -> None:
    target = Target.of(double)
    checks = double_checks()
    jobs = {"trace": trace_job(target, checks, 1.0), "settrace": _candidate_calling("sys.settrace(None)")}
    with Worker(jobs, trusted={"trace"}) as worker:
        first = record(checks, worker)
        assert [run.passed for run in first.runs] == [False, False]
        assert [call.open().args for call in first.calls()] == [(2,), (5,)]
        assert worker.forks == 1
        status, reason = worker.call("settrace", timeout=5)  # a fresh child, guarded from its start
        assert status == "refused" and "sys.settrace" in reason
        assert worker.forks == 2
        again = record(checks, worker)  # needs sys.settrace: a fresh, unguarded child
        assert again.runs[0].lines == first.runs[0].lines and again.runs[0].lines
        assert worker.forks == 3


def _candidate_calling(statement: str) -> Callable[[], None]:
    """A function compiled as the engine compiles a candidate (under a ``<regrow ...>`` filename)."""
    namespace: dict[str, Any] = {"sys": sys}
    exec(compile(f"def candidate():\n    {statement}\n", "<regrow tests.double #1>", "exec"), namespace)
    return namespace["candidate"]  # type: ignore[no-any-return]


def _tests_tracing() -> int:
    """What a test that counts the lines it runs does: trace, call, restore."""
    seen: list[int] = []

    def tracer(frame: Any, event: str, arg: object) -> Any:
        if event == "line" and frame.f_code is double.__code__:
            seen.append(frame.f_lineno)
        return tracer

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        double(2)
    finally:
        sys.settrace(previous)
    profiled: list[str] = []
    sys.setprofile(lambda frame, event, arg: profiled.append(event))
    sys.setprofile(None)
    return len(seen)


@fork_only
def test_the_tests_may_trace_and_profile_in_a_guarded_child_but_a_candidate_may_not() -> None:
    jobs = {"tests": _tests_tracing, "settrace": _candidate_calling("sys.settrace(lambda *args: None)"),
            "setprofile": _candidate_calling("sys.setprofile(None)")}
    with Worker(jobs) as worker:
        assert worker.call("tests", timeout=10) == ("ok", 1)  # the line of double, seen by the test's own tracer
        for job in ("settrace", "setprofile"):
            status, reason = worker.call(job, timeout=10)
            assert status == "refused" and f"sys.{job} (from the candidate's own code)" in reason
        assert worker.call("tests", timeout=10) == ("ok", 1)


def test_runs_are_checked_when_they_come_back() -> None:
    run = Run("c", False, frozenset({3, 4}), 0.5, [], failing_line=4, reason="boom")
    assert Run.from_plain(run.to_plain()) == run
    for broken in ({**run.to_plain(), "lines": ["3"]}, {**run.to_plain(), "calls": [{"blob": 1}]},
                   {**run.to_plain(), "extra": 1}, [run.to_plain()]):
        with pytest.raises(ValueError):
            Run.from_plain(broken)


# -- hostile candidates through the engine's judge job --------------------------------------------


class Trap:
    """Unpickling this makes a folder: proof that the host ran code sent by a child."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.mkdir, (self.marker,))


@fork_only
def test_a_candidate_writing_crafted_pickles_to_every_fd_leaves_the_host_alone(
        engine_worker: tuple[Worker, Target], tmp_path: Path) -> None:
    worker, target = engine_worker
    marker = tmp_path / "pwned"
    crafted = pickle.dumps(("ok", Trap(str(marker))))
    with open(tmp_path / "host.log", "w+") as host_file:  # open in the host when the worker forks
        judge(worker, target, FIX, 2.0)
        hostile = candidate(f"""
            import os
            crafted = {crafted!r}
            for fd in range(1024):
                for data in (len(crafted).to_bytes(4, "big") + crafted, crafted, b"\\xff garbage \\x00" * 64):
                    try:
                        os.write(fd, data)
                    except OSError:
                        pass
        """)
        verdict = judge(worker, target, hostile, 2.0)
        assert os.fstat(host_file.fileno()).st_size == 0
    assert verdict["ok"] is False and verdict["check"] == "sandbox"
    assert verdict["reason"].startswith("refused a malformed result channel")
    assert not marker.exists()
    assert double(2) == 5  # the live function is untouched
    assert judge(worker, target, FIX, 2.0)["ok"] is True  # a fresh worker serves the next candidate


@fork_only
def test_a_candidate_cannot_read_the_hosts_api_key(
        engine_worker: tuple[Worker, Target], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdef")
    monkeypatch.setenv("INNOCENT_SETTING", "kept")
    worker, target = engine_worker
    leak = candidate("""
        import os
        found = os.environ.get("OPENAI_API_KEY", "no key") + " / " + os.environ.get("INNOCENT_SETTING", "none")
        raise ValueError(found)
    """)
    verdict = judge(worker, target, leak, 2.0)
    assert verdict["ok"] is False
    assert "ValueError: no key / kept" in verdict["reason"]
    assert "sk-test" not in verdict["reason"]
    proc = candidate("""
        with open("/proc/self/environ", "rb") as environ:
            raise ValueError(environ.read())
    """)
    verdict = judge(worker, target, proc, 2.0)
    assert verdict["ok"] is False and "sk-test" not in verdict["reason"]
    assert verdict["reason"].startswith("refused open of a secret-bearing file: /proc/self/environ")
    assert os.environ["OPENAI_API_KEY"] == "sk-test-0123456789abcdef"


@fork_only
def test_a_candidate_connecting_to_localhost_is_refused_even_if_it_catches_that(
        engine_worker: tuple[Worker, Target]) -> None:
    worker, target = engine_worker
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.setblocking(False)
        port = server.getsockname()[1]
        sneaky = candidate(f"""
            import socket
            try:
                client = socket.socket()
                client.settimeout(1)
                client.connect(("127.0.0.1", {port}))
                client.sendall(b"stolen")
            except Exception:
                pass
        """)
        verdict = judge(worker, target, sneaky, 2.0)
        with pytest.raises(BlockingIOError):
            server.accept()
    assert verdict["ok"] is False and verdict["check"] == "sandbox"
    assert verdict["reason"].startswith("refused socket.__new__ AF_INET")
    assert judge(worker, target, FIX, 2.0)["ok"] is True  # the same worker goes on


@fork_only
def test_tests_that_write_temp_files_still_pass(engine_worker: tuple[Worker, Target]) -> None:
    worker, target = engine_worker
    writes = candidate("""
        import tempfile
        with tempfile.NamedTemporaryFile("w+", suffix=".txt") as scratch:
            scratch.write("ok")
            scratch.flush()
            with open(scratch.name) as again:
                assert again.read() == "ok"
        with open(tempfile.gettempdir() + "/kept.txt", "w") as kept:
            kept.write("stays in scratch")
    """)
    assert judge(worker, target, writes, 2.0) == {"ok": True, "check": "all", "reason": ""}
    child = worker._child
    # seen through the worker's own root: as root its scratch is a tmpfs in a mount namespace of its own
    assert child is not None and os.path.exists(f"/proc/{child.pid}/root{child.scratch}/kept.txt")
    worker.close()
    assert not os.path.exists(child.scratch)  # the scratch folder goes with the worker
    escape = candidate("""
        open("/tmp/regrow-escape-attempt.txt", "w").write("no")
    """)
    assert judge(worker, target, escape, 2.0)["reason"].startswith("refused open for writing outside the scratch")
    assert not os.path.exists("/tmp/regrow-escape-attempt.txt")


@fork_only
def test_pytest_tmp_path_works_in_a_guarded_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "halving.py").write_text("def half(n):\n    return n // 3\n")
    (tmp_path / "test_halving.py").write_text(textwrap.dedent("""
        from halving import half

        def test_half(tmp_path):
            (tmp_path / "n.txt").write_text(str(half(8)))
            assert (tmp_path / "n.txt").read_text() == "4"
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    target = Target.from_ref(f"{tmp_path / 'halving.py'}::half")
    tests = PytestTests([str(tmp_path / "test_halving.py")], rootdir=tmp_path)
    request = Request(target, check_failure("test", target.func, "failing"), [], [tests], 1, time.monotonic() + 30)
    with Engine()._worker(request) as worker:
        spectrum = record(split_checks([tests]), worker, timeout=30.0)  # generous: a loaded machine is slow
        assert [run.passed for run in spectrum.runs] == [False]
        assert "4" in spectrum.runs[0].reason or "assert" in spectrum.runs[0].reason
        verdict = judge(worker, target, "def half(n):\n    return n // 2\n", 5.0)
        assert verdict == {"ok": True, "check": "all", "reason": ""}
        assert judge(worker, target, "def half(n):\n    return n // 4\n", 5.0)["check"] == tests.name


@fork_only
def test_renewing_a_worker_many_times_leaves_no_descriptor_open_in_the_host() -> None:
    def open_fds() -> int:
        return len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 0

    with Worker({"one": lambda: 1}) as worker:
        assert worker.call("one", timeout=5) == ("ok", 1)
        before = open_fds()
        for _ in range(20):
            worker.renew()
            assert worker.call("one", timeout=5) == ("ok", 1)
        assert worker.forks == 21
        assert open_fds() == before


@fork_only
def test_a_judging_child_collects_while_its_jobs_run_over_a_frozen_heap() -> None:
    # docs/engine.md: the collector runs while the tests do, but the heap the child was forked with is frozen
    with Worker({"frozen": gc.get_freeze_count, "enabled": gc.isenabled}) as worker:
        frozen = worker.call("frozen", timeout=30)
        enabled = worker.call("enabled", timeout=30)
    assert frozen[0] == "ok" and frozen[1] > 0
    assert enabled == ("ok", True)


@fork_only
def test_a_renewed_workers_old_children_are_killed_at_once_and_reaped_at_the_latest_on_close() -> None:
    # A worker does not wait for a killed child to die before forking the next (a copy of a large host takes
    # milliseconds); each is reaped, its scratch folder removed, by the next kill or by close().
    def unreaped(pid: int) -> bool:
        try:
            return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None or \
                os.waitpid(pid, os.WNOHANG)[0] == 0  # a zombie, or still dying: not reaped
        except ChildProcessError:
            return False

    with Worker({"pid": os.getpid, "scratch": os.getcwd}) as worker:
        pids, scratches = [], []
        for _ in range(5):
            pids.append(worker.call("pid", timeout=5)[1])
            scratches.append(worker.call("scratch", timeout=5)[1])
            worker.renew()
        assert len(set(pids)) == 5 and all(pid != os.getpid() for pid in pids)
        assert len(set(scratches)) == 5 and os.getcwd() not in scratches  # each child works in a folder of its own
        for pid in pids:  # each was sent SIGKILL when renewed: none answers or runs on
            deadline = time.monotonic() + 30
            while Path(f"/proc/{pid}/stat").exists() and \
                    Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X"):
                assert time.monotonic() < deadline, f"child {pid} still runs after it was killed"
                time.sleep(0.01)
    assert not any(unreaped(pid) for pid in pids)  # close() reaped every one
    assert not any(os.path.exists(folder) for folder in scratches)

"""The sandbox modes in normal use, and the result channel they share."""

from __future__ import annotations

import math
import os
import signal
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from regrow._sandbox import (
    ErrorInfo,
    ForkSandbox,
    InProcessSandbox,
    Limits,
    Outcome,
    PoolSandbox,
    Sandbox,
    _guard,
    default_sandbox,
    make_sandbox,
)
from regrow._sandbox._channel import (
    HEADER,
    ChannelError,
    Collector,
    FrameReader,
    check_plain,
    decode,
    encode,
    function_ref,
    outcome_from_data,
    outcome_to_data,
    resolve_ref,
    write_frame,
)
from regrow._sandbox._process import describe_exit

needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="the fork and pool modes need os.fork")
LIMITS = Limits(timeout=2.0, memory_bytes=512 << 20)
STATE = {"version": "original"}


def add(a: int, b: int) -> int:
    return a + b


def fail(message: str) -> None:
    raise ValueError(message)


def read_state() -> str:
    return STATE["version"]


def shout_and_return(text: str) -> str:
    print(text)
    return text.upper()


# -- the result channel -----------------------------------------------------------------------


def test_frames_round_trip_plain_data() -> None:
    value = {"a": [1, 2.5, "x", None, True], "b": {"nested": []}, "t": (1, 2)}
    frame = encode(value, 1 << 10)
    assert HEADER.unpack_from(frame)[0] == len(frame) - HEADER.size
    assert decode(frame[HEADER.size :]) == {"a": [1, 2.5, "x", None, True], "b": {"nested": []}, "t": [1, 2]}


def test_frames_split_across_reads_reassemble() -> None:
    stream = encode("first", 64) + encode([1, 2, 3], 64)
    reader = FrameReader(64)
    bodies = [body for i in range(len(stream)) for body in reader.feed(stream[i : i + 1])]
    assert [decode(body) for body in bodies] == ["first", [1, 2, 3]]
    assert reader.pending == 0


def test_an_oversized_frame_header_is_refused_before_buffering() -> None:
    with pytest.raises(ChannelError, match="exceeds the 100-byte limit"):
        FrameReader(100).feed(HEADER.pack(1 << 30) + b"x")


def test_a_malformed_frame_body_is_refused() -> None:
    with pytest.raises(ChannelError, match="malformed frame"):
        decode(b"\x80\x04\x95 not json")  # e.g. a pickle


def test_deep_nesting_in_a_frame_is_refused_not_a_crash() -> None:
    with pytest.raises(ChannelError, match="malformed frame"):
        decode(b"[" * 100_000 + b"]" * 100_000)


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ({1, 2}, "not plain data: set"),
        ({1: "a"}, "dict key is not a str: int"),
        (b"bytes", "not plain data: bytes"),
        (ErrorInfo("x", "y"), "not plain data: regrow._sandbox._base.ErrorInfo"),
        ([[[[[]]]]], None),
    ],
)
def test_only_plain_data_is_encodable(value: Any, reason: str | None) -> None:
    if reason is None:
        check_plain(value)
        return
    with pytest.raises(ChannelError, match=reason):
        encode(value, 1 << 10)


def test_plain_data_nested_too_deep_is_refused() -> None:
    value: list[Any] = []
    for _ in range(200):
        value = [value]
    with pytest.raises(ChannelError, match="nested deeper"):
        check_plain(value)


def test_a_value_over_the_size_limit_is_refused() -> None:
    with pytest.raises(ChannelError, match="exceeds the 10-byte limit"):
        encode("x" * 100, 10)


def test_the_collector_reads_frames_and_caps_output() -> None:
    result_r, result_w = os.pipe()
    output_r, output_w = os.pipe()
    write_frame(result_w, encode({"kind": "result"}, 64))
    os.write(output_w, b"y" * 100)
    os.close(result_w)
    os.close(output_w)
    collector = Collector(result_r, output_r, 64, 10)
    try:
        assert collector.run(time.monotonic() + 2, lambda c: not c.result_open)
        collector.drain_output()
        assert collector.frames == [{"kind": "result"}]
        assert collector.output().startswith("y" * 10) and "90 more bytes" in collector.output()
    finally:
        collector.close()
        os.close(result_r)
        os.close(output_r)


def test_a_stream_cut_inside_a_frame_is_reported() -> None:
    result_r, result_w = os.pipe()
    os.write(result_w, encode("whole", 64)[:-2])
    os.close(result_w)
    collector = Collector(result_r, None, 64, 0)
    try:
        with pytest.raises(ChannelError, match="cut inside a frame"):
            collector.run(time.monotonic() + 2, lambda c: not c.result_open)
    finally:
        collector.close()
        os.close(result_r)


def test_outcomes_round_trip_and_reject_wrong_types() -> None:
    outcome = Outcome("error", error=ErrorInfo("ValueError", "bad", "tb"), detail="d", output="o", violations=("v",))
    assert outcome_from_data(decode(encode(outcome_to_data(outcome), 1 << 10)[HEADER.size :])) == outcome
    with pytest.raises(ChannelError):
        outcome_from_data({"status": "ok", "duration": "soon"})
    with pytest.raises(ChannelError):
        outcome_from_data({"status": "pwned"})


def test_function_refs_name_importable_functions_only() -> None:
    assert function_ref(math.sqrt) == "math:sqrt"
    assert resolve_ref(function_ref(add)) is add
    with pytest.raises(ValueError, match="lambda or closure"):
        function_ref(lambda: 1)

    def local() -> None: ...

    with pytest.raises(ValueError, match="lambda or closure"):
        function_ref(local)
    with pytest.raises(ValueError, match="not a 'module:qualname'"):
        resolve_ref("math.sqrt")


def test_exit_statuses_are_described() -> None:
    hint = "memory limit, CPU limit, or killed from outside"
    assert describe_exit(signal.SIGKILL) == ("crashed", f"killed by SIGKILL ({hint})")
    assert describe_exit(signal.SIGXCPU)[0] == "timeout"
    assert describe_exit(3 << 8) == ("crashed", "exited with status 3 before returning a result (os._exit?)")


def test_secrets_are_found_by_name_and_by_value() -> None:
    env = {"OPENAI_API_KEY": "x", "GITHUB_TOKEN": "x", "DB_PASSWORD": "x", "HOME": "/root", "PATH": "/bin",
           "DATABASE_URL": "postgres://user:pw@host/db", "INNOCENT": "ghp_abcdef", "LANG": "C.UTF-8"}  # fmt: skip
    assert _guard.scrubbed_environ(env) == {"HOME": "/root", "PATH": "/bin", "LANG": "C.UTF-8"}


# -- in-process -------------------------------------------------------------------------------


def test_inprocess_returns_values_and_errors() -> None:
    box = InProcessSandbox(LIMITS)
    try:
        outcome = box.call(add, 2, 3)
        assert outcome == Outcome("ok", value=5, duration=outcome.duration)
        outcome = box.call(fail, "nope")
        assert outcome.status == "error" and outcome.error == ErrorInfo("ValueError", "nope", outcome.error.traceback)
    finally:
        box.close()


def test_inprocess_times_out_an_endless_loop() -> None:
    def spin() -> None:
        while True:
            pass

    box = InProcessSandbox()
    try:
        started = time.monotonic()
        assert box.call(spin, limits=Limits(timeout=0.3)).status == "timeout"
        assert time.monotonic() - started < 1.0
        assert box.call(add, 1, 1).value == 2  # and it still serves calls afterwards
    finally:
        box.close()


# -- fork -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fork() -> Iterator[ForkSandbox]:
    with ForkSandbox(LIMITS) as box:
        yield box


@needs_fork
def test_fork_returns_plain_values(fork: ForkSandbox) -> None:
    outcome = fork.call(add, 2, 3)
    assert outcome == Outcome("ok", value=5, duration=outcome.duration)
    assert fork.call(lambda: {"t": (1, 2)}).value == {"t": [1, 2]}  # tuples arrive as lists


@needs_fork
def test_fork_sees_state_created_just_now_and_leaves_the_host_alone(fork: ForkSandbox) -> None:
    fresh = {"items": [1, 2]}

    def mutate() -> list[int]:
        fresh["items"].append(3)
        return fresh["items"]

    assert fork.call(mutate).value == [1, 2, 3]
    assert fresh == {"items": [1, 2]}  # the child's change stayed in the child


@needs_fork
def test_fork_errors_come_back_as_error_info(fork: ForkSandbox) -> None:
    outcome = fork.call(fail, "broken")
    assert outcome.status == "error" and outcome.error is not None
    assert (outcome.error.type, outcome.error.message) == ("ValueError", "broken")
    assert "in fail" in outcome.error.traceback
    assert isinstance(outcome.error.exception(), ValueError)
    assert outcome.reason() == "ValueError: broken"


@needs_fork
def test_fork_times_out(fork: ForkSandbox) -> None:
    started = time.monotonic()
    outcome = fork.call(time.sleep, 10, limits=Limits(timeout=0.3))
    assert outcome.status == "timeout" and time.monotonic() - started < 1.0


@needs_fork
def test_fork_captures_output(fork: ForkSandbox) -> None:
    outcome = fork.call(shout_and_return, "hi")
    assert outcome.value == "HI" and outcome.output == "hi\n"


@needs_fork
def test_fork_child_writes_freely_in_its_scratch_directory(fork: ForkSandbox) -> None:
    def use_scratch() -> str:
        import tempfile

        with tempfile.NamedTemporaryFile("w+", delete=True) as handle:
            handle.write("data")
            handle.flush()
            handle.seek(0)
            return handle.read()

    assert fork.call(use_scratch).value == "data"


@needs_fork
def test_fork_refuses_non_plain_results_with_the_type(fork: ForkSandbox) -> None:
    outcome = fork.call(object)
    assert outcome.status == "error" and outcome.error is not None
    assert outcome.error.message == "return value is not plain data: object"


@needs_fork
def test_fork_server_runs_refs_from_a_pristine_copy() -> None:
    with ForkSandbox(LIMITS, server=True) as box:
        assert box.call_ref("math:sqrt", 16).value == 4.0
        assert box.call(read_state).value == "original"
        STATE["version"] = "changed after the server started"
        try:
            assert box.call(read_state).value == "original"  # it forks from the state it was made with
        finally:
            STATE["version"] = "original"
        assert box.call(lambda: 1).status == "refused"
        assert box.call_ref("math:sqrt", {1, 2}).status == "refused"
        assert box.call_ref("time:sleep", 5, limits=Limits(timeout=0.3)).status == "timeout"
        assert box.call_ref("no_such_module:f").error is not None


# -- pool -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pool() -> Iterator[PoolSandbox]:
    with PoolSandbox(workers=2, limits=LIMITS) as box:
        yield box


@needs_fork
def test_pool_runs_refs_and_importable_functions(pool: PoolSandbox) -> None:
    assert pool.call_ref("math:sqrt", 9).value == 3.0
    assert pool.call(add, 2, 3).value == 5
    outcome = pool.call(shout_and_return, "hey")
    assert outcome.value == "HEY" and outcome.output == "hey\n"


@needs_fork
def test_pool_refuses_closures_and_non_plain_arguments(pool: PoolSandbox) -> None:
    outcome = pool.call(lambda: 1)
    assert outcome.status == "refused" and "lambda or closure" in outcome.detail
    assert pool.call_ref("math:sqrt", object()).status == "refused"


@needs_fork
def test_pool_errors_come_back_as_error_info(pool: PoolSandbox) -> None:
    outcome = pool.call(fail, "bad")
    assert outcome.error is not None and (outcome.error.type, outcome.error.message) == ("ValueError", "bad")


@needs_fork
def test_pool_replaces_a_crashed_worker() -> None:
    with PoolSandbox(workers=1, limits=LIMITS) as box:
        first = box.call_ref("os:getpid").value
        crash = box.call_ref("os:_exit", 9)
        assert crash.status == "crashed" and "exited with status 9" in crash.detail
        second = box.call_ref("os:getpid")
        assert second.ok and second.value != first


@needs_fork
def test_pool_replaces_a_worker_that_overran() -> None:
    with PoolSandbox(workers=1, limits=LIMITS) as box:
        first = box.call_ref("os:getpid").value
        assert box.call_ref("time:sleep", 10, limits=Limits(timeout=0.3, memory_bytes=512 << 20)).status == "timeout"
        assert box.call_ref("os:getpid").value not in (None, first)


@needs_fork
def test_pool_recycles_workers_after_max_calls() -> None:
    with PoolSandbox(workers=1, limits=LIMITS, max_calls=2) as box:
        workers = [box.call_ref("os:getppid").value for _ in range(4)]  # each call runs in a child of its worker
    assert workers[0] == workers[1] and workers[2] == workers[3] and workers[0] != workers[2]


@needs_fork
def test_pool_workers_are_guarded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REGROW_POOL_SECRET_TOKEN", "hunter2")
    monkeypatch.setenv("REGROW_POOL_PLAIN", "visible")
    with PoolSandbox(workers=1, limits=LIMITS) as box:
        outcome = box.call_ref("os:system", "true")
        assert outcome.status == "refused" and "os.system" in outcome.detail
        assert box.call_ref("os:getenv", "REGROW_POOL_SECRET_TOKEN").value is None
        assert box.call_ref("os:getenv", "REGROW_POOL_PLAIN").value == "visible"


# -- choosing a mode --------------------------------------------------------------------------


def test_make_sandbox_builds_each_mode_and_rejects_others() -> None:
    for name in ("inprocess", "fork", "pool"):
        if name != "inprocess" and not hasattr(os, "fork"):
            continue
        box = make_sandbox(name, LIMITS)
        try:
            assert box.name == name and isinstance(box, Sandbox)
        finally:
            box.close()
    with pytest.raises(ValueError, match="unknown sandbox mode"):
        make_sandbox("docker")


def test_default_sandbox_forks_where_it_can() -> None:
    box = default_sandbox()
    try:
        assert box.name == ("fork" if hasattr(os, "fork") else "inprocess")
    finally:
        box.close()


# -- the kernel layers, without the audit hook ------------------------------------------------


def _in_child(check: Any) -> int:
    """Run ``check`` in a bare forked child; its exit code (0 = the check held)."""
    pid = os.fork()
    if pid == 0:
        try:
            os._exit(0 if check() else 1)
        except BaseException:
            os._exit(2)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


@pytest.mark.skipif(sys.platform != "linux", reason="Landlock is a Linux feature")
def test_landlock_alone_stops_writes_outside_scratch(tmp_path: Any) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    if _in_child(lambda: _guard.landlock(str(scratch), allow_exec=False) > 0) != 0:
        pytest.skip("this kernel has no Landlock")

    def check() -> bool:
        _guard.landlock(str(scratch), allow_exec=False)
        (scratch / "inside").write_text("fine")
        try:
            (tmp_path / "outside").write_text("no")
        except PermissionError:
            return True
        return False

    assert _in_child(check) == 0
    assert (scratch / "inside").exists() and not (tmp_path / "outside").exists()


@pytest.mark.skipif(sys.platform != "linux", reason="network namespaces are a Linux feature")
def test_the_empty_network_namespace_alone_cuts_loopback() -> None:
    fd = _guard.prepare()
    if fd is None:
        pytest.skip("no permission to make a network namespace (not root)")
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]

        def check() -> bool:
            assert _guard.enter_netns(fd)
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
            except OSError:
                return True
            return False

        assert _in_child(check) == 0


SCRATCH_PROGRAM = """
import os, sys
from regrow._sandbox import ForkSandbox, PoolSandbox, default_sandbox

fork, pool, shared = ForkSandbox(), PoolSandbox(workers=1), default_sandbox()
assert fork.call(len, "abc").value == 3 and pool.call(len, "abcd").value == 4 and shared.call(len, "ab").value == 2
made = sorted(os.listdir(os.environ["TMPDIR"]))
pid = os.fork()
if pid == 0:  # a forked child that exits normally runs the exit hooks: it must not remove its parent's folders
    sys.exit(0)
os.waitpid(pid, 0)
assert sorted(os.listdir(os.environ["TMPDIR"])) == made, made
assert fork.call(len, "abcde").value == 5
print(" ".join(made))
"""  # and then the process exits without closing any of them


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the fork and pool sandboxes")
def test_sandboxes_left_open_leave_no_folder_behind_when_the_process_exits(tmp_path: Path) -> None:
    import subprocess

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    done = subprocess.run([sys.executable, "-c", SCRATCH_PROGRAM], env={**os.environ, "TMPDIR": str(scratch)},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    made = done.stdout.split()
    assert any(name.startswith("regrow-sandbox-") for name in made)
    assert any(name.startswith("regrow-pool-") for name in made)
    assert os.listdir(scratch) == []

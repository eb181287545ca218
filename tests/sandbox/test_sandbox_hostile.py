"""Hostile candidates under the fork sandbox: each ends as a failed outcome, and the host is untouched.

Every test runs one candidate and then, through the autouse ``host`` fixture, checks that the
host's files, environment, network, process and standard streams are as they were.
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import ctypes
import dataclasses
import gc
import importlib
import multiprocessing
import os
import pathlib
import pickle
import resource
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from regrow._sandbox import ForkSandbox, Limits, Outcome

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the hostile corpus exercises Linux guards")

LIMITS = Limits(timeout=1.5, memory_bytes=512 << 20, file_size_bytes=1 << 20)
SECRET = "sk-regrow-test-0123456789abcdef"


class Host:
    """What a candidate must not change: a file and a folder, the environment, a listening socket."""

    def __init__(self, root: pathlib.Path) -> None:
        self.outside = root / "outside.txt"  # must never appear
        self.victim = root / "victim.txt"  # must survive, unchanged
        self.victim.write_text("precious")
        self.folder = root / "folder"
        self.folder.mkdir()
        (self.folder / "inner.txt").write_text("inner")
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.listener.setblocking(False)
        self.port = self.listener.getsockname()[1]
        self.atexit_count = atexit._ncallbacks()

    def assert_untouched(self) -> None:
        assert not self.outside.exists(), "a file outside scratch appeared"
        assert self.victim.read_text() == "precious"
        assert (self.folder / "inner.txt").read_text() == "inner"
        assert os.environ["REGROW_TEST_API_KEY"] == SECRET
        assert os.environ["REGROW_SENTINEL"] == "unchanged"
        with pytest.raises(BlockingIOError):
            self.listener.accept()  # no connection ever reached the host's socket
        os.kill(os.getpid(), 0)  # the host is alive and signalable
        os.fstat(1)
        os.fstat(2)
        assert atexit._ncallbacks() == self.atexit_count


@pytest.fixture(scope="module")
def sandbox() -> Iterator[ForkSandbox]:
    with ForkSandbox(LIMITS) as box:
        yield box


@pytest.fixture(autouse=True)
def host(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Host]:
    monkeypatch.setenv("REGROW_TEST_API_KEY", SECRET)
    monkeypatch.setenv("REGROW_SENTINEL", "unchanged")
    state = Host(tmp_path)
    try:
        yield state
        state.assert_untouched()
    finally:
        state.listener.close()


def run(sandbox: ForkSandbox, job: Any, *args: Any, limits: Limits = LIMITS) -> Outcome:
    started = time.monotonic()
    outcome = sandbox.call(job, *args, limits=limits)
    assert time.monotonic() - started < limits.timeout + 1.0, "the sandbox overran the call's limit"
    assert not outcome.ok, f"a hostile candidate ended ok: {outcome}"
    return outcome


def assert_refused(outcome: Outcome, *words: str) -> None:
    assert outcome.status == "refused", outcome
    assert all(word in outcome.detail for word in words), outcome.detail


# -- files ------------------------------------------------------------------------------------


def test_writing_outside_scratch_is_refused(sandbox: ForkSandbox, host: Host) -> None:
    assert_refused(run(sandbox, lambda: host.outside.write_text("x")), "open for writing outside", str(host.outside))


def test_low_level_create_outside_scratch_is_refused(sandbox: ForkSandbox, host: Host) -> None:
    flags = os.O_WRONLY | os.O_CREAT
    assert_refused(run(sandbox, lambda: os.open(str(host.outside), flags)), "open for writing outside")


def test_deleting_a_host_file_is_refused(sandbox: ForkSandbox, host: Host) -> None:
    assert_refused(run(sandbox, os.remove, str(host.victim)), "os.remove outside the scratch directory")


def test_deleting_a_host_folder_is_refused(sandbox: ForkSandbox, host: Host) -> None:
    assert_refused(run(sandbox, shutil.rmtree, str(host.folder)), "outside the scratch directory")


def test_renaming_a_host_file_is_refused(sandbox: ForkSandbox, host: Host) -> None:
    assert_refused(run(sandbox, os.rename, str(host.victim), str(host.outside)), "os.rename")


def test_a_symlink_out_of_scratch_is_refused(sandbox: ForkSandbox, host: Host) -> None:
    def escape() -> None:
        link = os.path.join(os.environ["TMPDIR"], "link")
        os.symlink(host.victim, link)
        pathlib.Path(link).write_text("overwritten")

    assert_refused(run(sandbox, escape), "os.symlink")


def test_an_inherited_host_fd_is_closed_in_the_child(sandbox: ForkSandbox, host: Host) -> None:
    with open(host.victim, "a") as handle:
        fd = handle.fileno()
        outcome = run(sandbox, os.write, fd, b"corrupted")
    assert outcome.status == "error" and outcome.error is not None
    assert outcome.error.type == "OSError" and "Bad file descriptor" in outcome.error.message


def test_reading_the_process_environment_from_proc_is_refused(sandbox: ForkSandbox) -> None:
    assert_refused(run(sandbox, lambda: pathlib.Path("/proc/self/environ").read_bytes()), "secret-bearing")


# -- environment ------------------------------------------------------------------------------


def test_api_keys_are_gone_from_the_environment(sandbox: ForkSandbox) -> None:
    outcome = run(sandbox, lambda: os.environ["REGROW_TEST_API_KEY"])
    assert outcome.error is not None and outcome.error.type == "KeyError"


@pytest.mark.parametrize("value", ["1", "ab"])
def test_removing_a_short_secret_changes_nothing_else_in_the_child(sandbox: ForkSandbox, monkeypatch, value) -> None:
    """A secret's value is wiped in place in the child, and CPython shares one bytes object per byte value:
    wiping ``SECRET=1`` turned every ``b"1"`` the child made into a NUL byte (a real suite failed every candidate)."""
    monkeypatch.setenv("REGROW_TEST_SECRET", value)

    def made() -> list[object]:
        return [*(b.decode("latin-1") for b in (bytes([49]), b"1"[:1], b"%d" % 1, bytes([97, 98]))),
                os.getenv("REGROW_TEST_SECRET")]

    outcome = sandbox.call(made, limits=LIMITS)
    assert outcome.ok, outcome
    assert outcome.value == ["1", "1", "1", "ab", None]  # the secret is gone; the bytes everyone shares are not


def test_the_returned_environment_carries_no_secret(sandbox: ForkSandbox) -> None:
    outcome = sandbox.call(lambda: [dict(os.environ), os.getenv("REGROW_TEST_API_KEY")], limits=LIMITS)
    assert outcome.ok
    environ, key = outcome.value
    assert key is None and SECRET not in repr(environ)
    assert environ["REGROW_SENTINEL"] == "unchanged"  # only secrets go, the rest is the host's environment


# -- network ----------------------------------------------------------------------------------


def test_tcp_connect_to_loopback_is_refused(sandbox: ForkSandbox, host: Host) -> None:
    def connect() -> None:
        with socket.socket() as sock:
            sock.connect(("127.0.0.1", host.port))

    assert_refused(run(sandbox, connect), "socket.__new__ AF_INET")


def test_udp_send_is_refused(sandbox: ForkSandbox, host: Host) -> None:
    def send() -> None:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sock.sendto(b"exfiltrate", ("127.0.0.1", host.port))

    assert_refused(run(sandbox, send), "socket.__new__ AF_INET")


def test_binding_a_server_is_refused(sandbox: ForkSandbox) -> None:
    def serve() -> None:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))

    assert_refused(run(sandbox, serve), "socket.__new__ AF_INET")


def test_dns_lookup_is_refused(sandbox: ForkSandbox) -> None:
    assert_refused(run(sandbox, socket.getaddrinfo, "example.com", 443), "socket.getaddrinfo")


# -- processes --------------------------------------------------------------------------------


def test_subprocess_run_is_refused(sandbox: ForkSandbox, host: Host) -> None:
    assert_refused(run(sandbox, subprocess.run, ["touch", str(host.outside)]), "subprocess.Popen")


def test_os_system_is_refused(sandbox: ForkSandbox, host: Host) -> None:
    assert_refused(run(sandbox, os.system, f"touch {host.outside}"), "os.system")


def test_exec_is_refused(sandbox: ForkSandbox, host: Host) -> None:
    assert_refused(run(sandbox, os.execv, "/usr/bin/touch", ["touch", str(host.outside)]), "os.exec")


def test_posix_spawn_is_refused(sandbox: ForkSandbox, host: Host) -> None:
    argv = ["touch", str(host.outside)]
    assert_refused(run(sandbox, os.posix_spawn, "/usr/bin/touch", argv, {}), "os.posix_spawn")


def test_a_fork_loop_is_refused(sandbox: ForkSandbox) -> None:
    def bomb() -> None:
        while True:
            os.fork()

    assert_refused(run(sandbox, bomb), "os.fork")


def test_multiprocessing_is_refused(sandbox: ForkSandbox) -> None:
    def spawn() -> None:
        process = multiprocessing.get_context("fork").Process(target=time.sleep, args=(5,))
        process.start()

    assert_refused(run(sandbox, spawn), "os.fork")


def test_a_signal_to_the_parent_is_refused(sandbox: ForkSandbox) -> None:
    assert_refused(run(sandbox, lambda: os.kill(os.getppid(), signal.SIGKILL)), "os.kill", str(os.getpid()))


def test_a_signal_to_the_parents_group_is_refused(sandbox: ForkSandbox) -> None:
    assert_refused(run(sandbox, lambda: os.killpg(os.getpgid(os.getppid()), signal.SIGTERM)), "os.killpg")


# -- resources --------------------------------------------------------------------------------


def test_a_memory_bomb_ends_with_memory_error(sandbox: ForkSandbox) -> None:
    def bomb() -> list[bytes]:
        hoard = []
        while True:
            hoard.append(b"x" * (64 << 20))

    # the memory limit ends it, not the clock: filling 512 MB takes a loaded machine more than the usual 1.5 s
    outcome = run(sandbox, bomb, limits=dataclasses.replace(LIMITS, timeout=60))
    assert outcome.error is not None and outcome.error.type == "MemoryError", outcome


def test_an_endless_loop_times_out(sandbox: ForkSandbox) -> None:
    def spin() -> None:
        while True:
            pass

    outcome = run(sandbox, spin, limits=Limits(timeout=0.5))
    assert outcome.status == "timeout" and "killed" in outcome.detail


def test_a_long_c_call_times_out(sandbox: ForkSandbox) -> None:
    outcome = run(sandbox, time.sleep, 60, limits=Limits(timeout=0.5))
    assert outcome.status == "timeout"


def test_cpu_limit_kills_a_busy_loop(sandbox: ForkSandbox) -> None:
    def spin() -> None:
        while True:
            pass

    # The wall-clock limit is far above the CPU limit: on a loaded machine one CPU second can take many.
    outcome = run(sandbox, spin, limits=Limits(timeout=120.0, cpu_seconds=1))
    assert outcome.status == "timeout" and "SIGXCPU" in outcome.detail


def _dive(depth: int) -> int:
    return _dive(depth + 1) + 1


def test_deep_recursion_is_an_error(sandbox: ForkSandbox) -> None:
    outcome = run(sandbox, _dive, 0)
    assert outcome.error is not None and outcome.error.type == "RecursionError"


def test_deep_recursion_past_a_raised_limit_ends_within_the_limit(sandbox: ForkSandbox) -> None:
    def deep() -> int:
        sys.setrecursionlimit(10**8)
        return _dive(0)

    outcome = run(sandbox, deep)
    # Depending on the version: the C stack overflows (SIGSEGV), frames fill memory, or time runs out.
    assert (
        (outcome.status == "crashed" and "SIGSEGV" in outcome.detail)
        or (outcome.error is not None and outcome.error.type in ("RecursionError", "MemoryError"))
        or outcome.status == "timeout"
    ), outcome


def test_a_huge_file_hits_the_file_size_limit(sandbox: ForkSandbox) -> None:
    def fill() -> None:
        with open(os.path.join(os.environ["TMPDIR"], "big"), "wb") as handle:
            handle.write(b"x" * (4 << 20))

    outcome = run(sandbox, fill)
    assert outcome.error is not None and "File too large" in outcome.error.message


# -- standard streams and the result channel --------------------------------------------------


def test_closing_stdout_and_stderr_only_affects_the_child(sandbox: ForkSandbox) -> None:
    def close_streams() -> None:
        os.close(1)
        os.close(2)
        print("into the void")

    outcome = run(sandbox, close_streams)
    assert outcome.error is not None and outcome.error.type == "OSError"


def test_garbage_on_every_fd_is_a_malformed_channel(sandbox: ForkSandbox) -> None:
    def scribble() -> None:
        for fd in range(1, 1024):
            with contextlib.suppress(OSError):
                os.write(fd, b"\xff\xff\xff\x00garbage")
        os._exit(0)

    outcome = run(sandbox, scribble)
    assert outcome.status == "refused" and "malformed result channel" in outcome.detail, outcome


class _Boom:
    """Unpickling this runs ``touch`` in whoever unpickles it."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, (f"touch {self.path}",))


def test_a_crafted_pickle_on_stdout_is_never_unpickled(sandbox: ForkSandbox, host: Host) -> None:
    payload = pickle.dumps(_Boom(str(host.outside)))

    def smuggle() -> None:
        os.write(1, payload)
        os._exit(0)

    outcome = run(sandbox, smuggle)
    assert outcome.status == "crashed" and "exited with status 0" in outcome.detail
    assert "touch" in outcome.output  # it came back as text, and only as text


# -- ways around the guard --------------------------------------------------------------------


def test_ctypes_is_refused(sandbox: ForkSandbox, host: Host) -> None:
    def native() -> int:
        return int(ctypes.CDLL(None).system(f"touch {host.outside}".encode()))

    assert_refused(run(sandbox, native), "ctypes")


def test_ctypes_memory_access_is_refused(sandbox: ForkSandbox) -> None:
    assert_refused(run(sandbox, lambda: ctypes.string_at(id(sandbox), 64)), "ctypes")


def test_importlib_does_not_reach_around_the_hook(sandbox: ForkSandbox, host: Host) -> None:
    assert_refused(run(sandbox, lambda: importlib.import_module("os").system(f"touch {host.outside}")), "os.system")


def test_dunder_import_does_not_reach_around_the_hook(sandbox: ForkSandbox, host: Host) -> None:
    argv = ["touch", str(host.outside)]
    assert_refused(run(sandbox, lambda: __import__("subprocess").run(argv)), "subprocess.Popen")


def test_the_builtins_dict_does_not_reach_around_the_hook(sandbox: ForkSandbox, host: Host) -> None:
    def trick() -> None:
        sneaky = builtins.__dict__["__import__"]("o" + "s")
        sneaky.system(f"touch {host.outside}")

    assert_refused(run(sandbox, trick), "os.system")


def test_string_built_attribute_names_do_not_reach_around_the_hook(sandbox: ForkSandbox, host: Host) -> None:
    name = "".join(["sys", "tem"])
    assert_refused(run(sandbox, lambda: getattr(os, name)(f"touch {host.outside}")), "os.system")


def test_catching_the_refusal_still_ends_refused(sandbox: ForkSandbox, host: Host) -> None:
    def sly() -> str:
        with contextlib.suppress(BaseException):
            host.outside.write_text("x")
        return "all fine, nothing to see"

    assert_refused(run(sandbox, sly), "open for writing outside")


def test_adding_a_permissive_audit_hook_is_refused(sandbox: ForkSandbox, host: Host) -> None:
    def tamper() -> None:
        with contextlib.suppress(BaseException):
            sys.addaudithook(lambda event, args: None)  # hooks only add up; none can lift another's refusal
        os.system(f"touch {host.outside}")

    outcome = run(sandbox, tamper)
    assert_refused(outcome, "sys.addaudithook")
    assert any("os.system" in violation for violation in outcome.violations)


def test_raising_resource_limits_is_refused(sandbox: ForkSandbox) -> None:
    infinite = resource.RLIM_INFINITY
    assert_refused(run(sandbox, resource.setrlimit, resource.RLIMIT_AS, (infinite, infinite)), "resource.setrlimit")


def test_walking_the_heap_for_the_hook_is_refused(sandbox: ForkSandbox) -> None:
    assert_refused(run(sandbox, lambda: len(gc.get_objects())), "gc.get_objects")


# -- ways out of the call ---------------------------------------------------------------------


def test_a_thread_that_outlives_the_call_is_reported_and_dies(sandbox: ForkSandbox, host: Host) -> None:
    def later() -> None:
        time.sleep(0.5)
        host.outside.write_text("x")  # would be refused anyway; the child is gone before it tries

    def leave_behind() -> int:
        threading.Thread(target=later, name="straggler").start()
        return 1

    outcome = run(sandbox, leave_behind)
    assert outcome.error is not None and "straggler" in outcome.error.message
    time.sleep(0.6)  # the host fixture then shows the thread never wrote anything


def test_an_atexit_handler_never_runs(sandbox: ForkSandbox, host: Host) -> None:
    def register() -> None:
        atexit.register(host.outside.write_text, "x")
        sys.exit(0)

    outcome = run(sandbox, register)
    assert outcome.error is not None and outcome.error.type == "SystemExit"


def test_sys_exit_is_an_error_not_an_exit(sandbox: ForkSandbox) -> None:
    outcome = run(sandbox, sys.exit, 3)
    assert outcome.error is not None and outcome.error.type == "SystemExit" and outcome.error.message == "3"


def test_os_exit_is_a_crash(sandbox: ForkSandbox) -> None:
    outcome = run(sandbox, os._exit, 7)
    assert outcome.status == "crashed" and "exited with status 7" in outcome.detail


def test_keyboard_interrupt_is_an_error(sandbox: ForkSandbox) -> None:
    def interrupt() -> None:
        raise KeyboardInterrupt

    outcome = run(sandbox, interrupt)
    assert outcome.error is not None and outcome.error.type == "KeyboardInterrupt"


class Escape(BaseException):
    """A custom BaseException that broad ``except Exception`` handlers would miss."""


def test_a_custom_base_exception_is_an_error(sandbox: ForkSandbox) -> None:
    def escape() -> None:
        raise Escape("out")

    outcome = run(sandbox, escape)
    assert outcome.error is not None and outcome.error.type.endswith("Escape") and outcome.error.message == "out"


def test_a_self_kill_is_a_crash_with_the_signal_named(sandbox: ForkSandbox) -> None:
    outcome = run(sandbox, lambda: os.kill(os.getpid(), signal.SIGSEGV))
    assert outcome.status == "crashed" and "SIGSEGV" in outcome.detail


# -- what comes back --------------------------------------------------------------------------


def test_a_huge_return_value_is_refused_by_size(sandbox: ForkSandbox) -> None:
    limits = Limits(timeout=1.5, memory_bytes=512 << 20, result_bytes=1 << 20)
    outcome = run(sandbox, lambda: "x" * (4 << 20), limits=limits)
    assert outcome.error is not None and "too large" in outcome.error.message


def test_an_unpicklable_return_value_is_not_plain_data(sandbox: ForkSandbox) -> None:
    outcome = run(sandbox, lambda: (lambda: None))
    assert outcome.error is not None and "return value is not plain data: function" in outcome.error.message


def test_a_value_with_a_hostile_repr_is_not_plain_data(sandbox: ForkSandbox, host: Host) -> None:
    class Sneaky(str):
        def __repr__(self) -> str:
            host.outside.write_text("x")
            return "sneaky"

    outcome = run(sandbox, lambda: {"key": Sneaky("v")})
    assert outcome.error is not None and "not plain data" in outcome.error.message


def test_endless_output_is_capped_and_times_out(sandbox: ForkSandbox) -> None:
    def shout() -> None:
        while True:
            print("x" * 1000)

    outcome = run(sandbox, shout, limits=Limits(timeout=0.5))
    assert outcome.status == "timeout"
    assert len(outcome.output) < 70_000 and "dropped" in outcome.output

"""The fork sandbox's kernel boundary: session, capabilities, shared memory and the seccomp filter.

Most cases run twice: with the whole guard (``box``), where the audit hook usually refuses first
and names the action, and with the audit hook replaced by one that allows everything (``bare``),
as after a candidate that found its way around it. Either way the detector sits outside the
child: the host's priority, affinity, limits and shared memory, a marker process, a file's
metadata, a pseudo-terminal, a listening socket.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import mmap
import multiprocessing
import os
import pathlib
import resource
import select
import signal
import socket
import struct
import subprocess
import sys
import termios
import textwrap
import threading
import time
import tty
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from regrow._sandbox import ForkSandbox, Limits, Outcome, PoolSandbox, _guard, _seccomp

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or _seccomp.machine() is None, reason="the seccomp filter is for Linux on x86_64/aarch64"
)

LIMITS = Limits(timeout=3.0, memory_bytes=512 << 20, file_size_bytes=1 << 20)
PROCESSES = Limits(timeout=3.0, memory_bytes=512 << 20, processes=None)
HOST = os.getpid()
root_only = pytest.mark.skipif(os.geteuid() != 0, reason="capabilities and namespaces need root")


def _importable(name: str) -> bool:
    try:
        __import__(name)
    except ImportError:
        return False
    return True


SUBINTERPRETERS = next((name for name in ("_xxsubinterpreters", "_interpreters") if _importable(name)), None)


@pytest.fixture(scope="module")
def sandbox() -> Iterator[ForkSandbox]:
    with ForkSandbox(LIMITS) as box:
        yield box


@pytest.fixture
def box(sandbox: ForkSandbox) -> ForkSandbox:
    return sandbox


@pytest.fixture
def bare(sandbox: ForkSandbox, monkeypatch: pytest.MonkeyPatch) -> ForkSandbox:
    """The same sandbox with an audit hook that allows everything: only the kernel stands in the way."""
    monkeypatch.setattr(_guard, "make_audit_hook", lambda *args: (lambda event, arguments: None))
    monkeypatch.setattr(_guard, "unplug_subinterpreters", lambda: None)
    return sandbox


@pytest.fixture(params=["box", "bare"])
def guarded(request: pytest.FixtureRequest) -> ForkSandbox:
    return request.getfixturevalue(request.param)  # type: ignore[no-any-return]


def refused(outcome: Outcome, *words: str) -> None:
    assert outcome.status == "refused", outcome
    assert outcome.value is None and outcome.violations, outcome
    assert all(word in outcome.detail for word in words), outcome.detail


def killed(outcome: Outcome) -> None:
    refused(outcome, "SIGSYS", "seccomp")


def alive(pid: int) -> bool:
    """Whether a process exists and has not exited (a zombie nobody reaped counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except (OSError, IndexError):
        return False


@pytest.fixture
def marker() -> Iterator[subprocess.Popen[bytes]]:
    """A process of the same user in a group of its own: a target for signals the child must not send."""
    process = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        yield process
        assert process.poll() is None, "the marker process was killed"
    finally:
        process.kill()
        process.wait()


# -- what the child is -----------------------------------------------------------------------


def _status() -> dict[str, str]:
    with open("/proc/self/status") as status:
        return dict(line.split(":\t", 1) for line in status.read().splitlines() if ":\t" in line)


def _session() -> list[Any]:
    try:
        os.close(os.open("/dev/tty", os.O_RDONLY))
        terminal = "opened"
    except OSError as exc:
        terminal = errno.errorcode.get(exc.errno or 0, str(exc.errno))
    return [os.getsid(0) == os.getpid(), os.getpgrp() == os.getpid(), terminal]


def test_the_child_leads_a_session_of_its_own_without_a_terminal(box: ForkSandbox) -> None:
    session, group = os.getsid(0), os.getpgrp()
    outcome = box.call(_session)
    assert outcome.ok, outcome
    assert outcome.value[:2] == [True, True] and outcome.value[2] in ("ENXIO", "ENOENT")
    # the host's own session and group are untouched (a CI container may run in session 0)
    assert (os.getsid(0), os.getpgrp()) == (session, group)


def _credentials() -> dict[str, str]:
    status = _status()
    return {key: status[key].strip() for key in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs",
                                                  "Seccomp", "Uid")}


def test_the_child_has_no_capabilities_and_no_new_privileges(box: ForkSandbox) -> None:
    outcome = box.call(_credentials)
    assert outcome.ok, outcome
    caps = outcome.value
    assert all(int(caps[key], 16) == 0 for key in ("CapInh", "CapPrm", "CapEff", "CapAmb")), caps
    assert caps["NoNewPrivs"] == "1" and caps["Seccomp"] == "2", caps
    assert caps["Uid"].split()[0] == str(os.getuid())  # root stays uid 0, only without CAP_*
    with_processes = box.call(_credentials, limits=PROCESSES)
    assert with_processes.ok and int(with_processes.value["CapBnd"], 16) == 0  # it may exec: no bounding set
    if os.geteuid() == 0:
        assert int(_credentials()["CapEff"], 16) != 0  # the host keeps its own


@root_only
def test_without_capabilities_root_cannot_read_the_hosts_proc_entries(guarded: ForkSandbox) -> None:
    def peek() -> str:
        with open(f"/proc/{HOST}/fd/0", "rb"):
            return "opened the host's fd"

    outcome = guarded.call(peek)
    assert outcome.status == "error" and outcome.error is not None and "Permission denied" in outcome.error.message


def test_secrets_cannot_be_read_relative_to_a_directory_fd(box: ForkSandbox, tmp_path: pathlib.Path) -> None:
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "id_rsa").write_text("PRIVATE KEY")
    home = str(tmp_path)

    def read(directory: str, name: str) -> str:
        fd = os.open(name, os.O_RDONLY, dir_fd=os.open(directory, os.O_RDONLY | os.O_DIRECTORY))
        return os.read(fd, 100).decode(errors="replace")

    refused(box.call(read, "/proc/self", "environ"), "secret-bearing", "relative to a directory")
    refused(box.call(read, home, ".ssh/id_rsa"), "secret-bearing")
    assert box.call(read, home, ".ssh/../.ssh/../.ssh/id_rsa").status == "refused"


# -- network ---------------------------------------------------------------------------------


@pytest.mark.parametrize("family", [socket.AF_INET, socket.AF_INET6, socket.AF_UNIX, socket.AF_NETLINK])
def test_no_socket_of_any_family_can_be_made(bare: ForkSandbox, family: int) -> None:
    killed(bare.call(socket.socket, family, socket.SOCK_DGRAM if family == socket.AF_NETLINK else socket.SOCK_STREAM))


def test_the_hook_names_the_socket_it_refuses(box: ForkSandbox) -> None:
    refused(box.call(socket.socket, socket.AF_INET6), "socket.__new__ AF_INET6")


def test_a_datagram_to_a_host_unix_socket_never_arrives(guarded: ForkSandbox, tmp_path: pathlib.Path) -> None:
    path = str(tmp_path / "host.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as host:
        host.bind(path)
        host.setblocking(False)

        def send() -> str:
            try:
                with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
                    sock.sendto(b"stolen", path)
            except OSError:
                pass
            try:
                left, _right = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
                left.sendmsg([b"stolen"], [], 0, path)
            except OSError:
                pass
            return "nothing to see"

        outcome = guarded.call(send)
        with pytest.raises(BlockingIOError):
            host.recv(64)
    assert outcome.status == "refused", outcome


def test_a_stream_socketpair_cannot_send_elsewhere(bare: ForkSandbox, tmp_path: pathlib.Path) -> None:
    path = str(tmp_path / "host.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as host:
        host.bind(path)
        host.setblocking(False)

        def send() -> str:
            left, right = socket.socketpair()
            left.sendall(b"inside")
            try:
                left.sendto(b"stolen", path)
            except OSError as exc:
                return f"{right.recv(16)!r} {errno.errorcode[exc.errno or 0]}"
            return "sent"

        outcome = bare.call(send)
        with pytest.raises(BlockingIOError):
            host.recv(64)
    assert outcome.ok and outcome.value == "b'inside' EISCONN", outcome


def test_asyncio_still_runs_in_the_child(box: ForkSandbox) -> None:
    async def main() -> int:
        await asyncio.sleep(0.01)
        return 7

    assert box.call(lambda: asyncio.run(main())).value == 7


def test_a_candidate_that_catches_the_denial_is_still_refused(guarded: ForkSandbox) -> None:
    def sly() -> str:
        with contextlib.suppress(BaseException):
            socket.socket().connect(("127.0.0.1", 9))
        with contextlib.suppress(BaseException):
            os.setsid()
        return "all fine"

    refused(guarded.call(sly))


def test_a_denial_in_another_thread_is_refused_too(bare: ForkSandbox) -> None:
    def threaded() -> str:
        thread = threading.Thread(target=lambda: contextlib.suppress(OSError) and socket.socket())
        thread.start()
        thread.join()
        return "all fine"

    killed(bare.call(threaded))


def test_ignoring_sigsys_does_not_help(bare: ForkSandbox) -> None:
    def ignore() -> None:
        signal.signal(signal.SIGSYS, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGSYS})
        socket.socket()

    killed(bare.call(ignore))


# -- other processes: priority, affinity, scheduler, limits, signals ---------------------------


def test_the_hosts_priority_cannot_be_lowered(guarded: ForkSandbox) -> None:
    before = os.getpriority(os.PRIO_PROCESS, 0)
    killed(guarded.call(os.setpriority, os.PRIO_PROCESS, HOST, 19))
    killed(guarded.call(os.setpriority, os.PRIO_USER, 0, 19))  # every process of the user, the host among them
    killed(guarded.call(os.setpriority, os.PRIO_PGRP, os.getpgrp(), 19))
    assert os.getpriority(os.PRIO_PROCESS, 0) == before
    level = max(before, 5)  # raising its own priority back needs a capability the child has not: under `nice 19`, 19
    own = guarded.call(lambda: [os.setpriority(os.PRIO_PROCESS, 0, level), os.getpriority(os.PRIO_PROCESS, 0)])
    assert own.ok and own.value == [None, level]


def test_the_hosts_affinity_and_scheduler_cannot_be_changed(guarded: ForkSandbox) -> None:
    affinity, policy = os.sched_getaffinity(0), os.sched_getscheduler(0)
    killed(guarded.call(os.sched_setaffinity, HOST, {min(affinity)}))
    killed(guarded.call(os.sched_setscheduler, HOST, os.SCHED_IDLE, os.sched_param(0)))
    killed(guarded.call(os.sched_setparam, HOST, os.sched_param(0)))
    assert os.sched_getaffinity(0) == affinity and os.sched_getscheduler(0) == policy
    own = guarded.call(lambda: os.sched_setaffinity(0, {min(affinity)}) or sorted(os.sched_getaffinity(0)))
    assert own.ok and own.value == [min(affinity)]


def test_the_hosts_limits_cannot_be_changed(guarded: ForkSandbox) -> None:
    before = resource.getrlimit(resource.RLIMIT_NOFILE)
    outcome = guarded.call(resource.prlimit, HOST, resource.RLIMIT_NOFILE, (16, 16))
    refused(outcome)
    assert resource.getrlimit(resource.RLIMIT_NOFILE) == before
    assert guarded.call(resource.getrlimit, resource.RLIMIT_NOFILE).ok  # its own: prlimit64 on pid 0


def test_no_signal_reaches_another_process(guarded: ForkSandbox, marker: subprocess.Popen[bytes]) -> None:
    refused(guarded.call(os.kill, marker.pid, signal.SIGTERM))
    refused(guarded.call(os.killpg, marker.pid, signal.SIGTERM))
    refused(guarded.call(os.kill, HOST, 0))
    refused(guarded.call(lambda: signal.pidfd_send_signal(os.pidfd_open(marker.pid), signal.SIGTERM)))
    time.sleep(0.05)
    assert marker.poll() is None


def test_signals_to_itself_still_work(guarded: ForkSandbox) -> None:
    def self_signal() -> list[int]:
        seen: list[int] = []
        signal.signal(signal.SIGUSR1, lambda signum, frame: seen.append(signum))
        os.kill(os.getpid(), signal.SIGUSR1)
        signal.raise_signal(signal.SIGUSR1)  # tgkill on its own thread
        os.kill(os.getpid(), 0)
        return seen

    outcome = guarded.call(self_signal)
    assert outcome.ok and outcome.value == [signal.SIGUSR1, signal.SIGUSR1], outcome


def test_a_new_session_or_process_group_is_refused(guarded: ForkSandbox) -> None:
    killed(guarded.call(os.setsid))
    killed(guarded.call(os.setpgid, 0, 0))


def test_tracing_and_reading_other_processes_is_refused(bare: ForkSandbox) -> None:
    import ctypes  # the hook is off here: ctypes is how a candidate reaches syscalls Python has no wrapper for

    def trace() -> int:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.ptrace(16, HOST, 0, 0))  # PTRACE_ATTACH

    killed(bare.call(trace))

    def unshare() -> int:
        return int(ctypes.CDLL(None, use_errno=True).unshare(0x10000000))  # CLONE_NEWUSER

    killed(bare.call(unshare))


# -- processes -------------------------------------------------------------------------------


def test_no_process_can_be_started_when_none_is_allowed(bare: ForkSandbox) -> None:
    killed(bare.call(os.fork))
    killed(bare.call(subprocess.run, ["true"]))


def test_nothing_the_child_starts_outlives_the_verdict(box: ForkSandbox) -> None:
    def spawn() -> list[int]:
        detached = subprocess.Popen(["sleep", "30"], start_new_session=True)  # its setsid: killed by seccomp
        plain = subprocess.Popen(["sleep", "30"])
        pid = os.fork()
        if pid == 0:  # a forked grandchild that tries to leave the group, then lingers
            with contextlib.suppress(BaseException):
                os.setpgid(0, 0)
            time.sleep(30)
            os._exit(0)
        lingering = os.fork()
        if lingering == 0:
            time.sleep(30)
            os._exit(0)
        return [detached.pid, plain.pid, pid, lingering]

    outcome = box.call(spawn, limits=PROCESSES)
    assert outcome.ok, outcome
    deadline = time.monotonic() + 2.0
    while any(alive(pid) for pid in outcome.value) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not any(alive(pid) for pid in outcome.value), [pid for pid in outcome.value if alive(pid)]


def test_a_grandchild_outlives_neither_a_crash_nor_a_timeout(box: ForkSandbox, tmp_path: pathlib.Path) -> None:
    def spawn_then(end: Callable[[], object]) -> Callable[[], object]:
        def job() -> object:
            plain = subprocess.Popen(["sleep", "30"])
            os.write(1, f"{plain.pid}\n".encode())
            return end()

        return job

    for end, status in ((lambda: os._exit(3), "crashed"), (lambda: time.sleep(30), "timeout")):
        limits = Limits(timeout=1.0, memory_bytes=512 << 20, processes=None)
        outcome = box.call(spawn_then(end), limits=limits)
        assert outcome.status == status, outcome
        pid = int(outcome.output.split()[0])
        deadline = time.monotonic() + 2.0
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not alive(pid)


def test_a_thread_started_without_threading_is_caught(box: ForkSandbox) -> None:
    import _thread

    def leave() -> int:
        _thread.start_new_thread(time.sleep, (5,))
        return 1

    outcome = box.call(leave)
    assert outcome.status == "error" and outcome.error is not None
    assert "started without threading" in outcome.error.message


# -- files: metadata and ioctls --------------------------------------------------------------


def _make_victim(path: pathlib.Path) -> os.stat_result:
    path.write_text("precious")
    os.chmod(path, 0o640)
    os.utime(path, (1_000_000, 1_000_000))
    return os.stat(path)


def _assert_untouched(path: pathlib.Path, before: os.stat_result, times: bool = True) -> None:
    after = os.stat(path)
    assert (after.st_mode, after.st_uid, after.st_gid) == (before.st_mode, before.st_uid, before.st_gid)
    assert not times or after.st_mtime == before.st_mtime, "the host file's times changed"
    assert path.read_text() == "precious"
    with contextlib.suppress(OSError):  # a file system without xattrs has none to compare
        assert os.listxattr(path) == []


@pytest.fixture
def victim(tmp_path: pathlib.Path) -> Iterator[pathlib.Path]:
    path = tmp_path / "victim.txt"
    before = _make_victim(path)
    yield path
    _assert_untouched(path, before)


def test_file_metadata_cannot_be_changed(guarded: ForkSandbox, victim: pathlib.Path) -> None:
    name = str(victim)
    refused(guarded.call(os.chmod, name, 0o777))
    refused(guarded.call(lambda: os.chmod(os.open(name, os.O_RDONLY), 0o777)))  # through a read-only fd
    refused(guarded.call(os.chown, name, 4321, 4321))
    refused(guarded.call(os.utime, name, (0, 0)))
    refused(guarded.call(lambda: os.utime(os.open(name, os.O_RDONLY), ns=(0, 0))))
    refused(guarded.call(os.setxattr, name, "user.regrow", b"1"))
    refused(guarded.call(lambda: os.setxattr(os.open(name, os.O_RDONLY), "user.regrow", b"1")))


def test_touching_a_host_file_is_refused_by_the_hook(box: ForkSandbox, victim: pathlib.Path) -> None:
    refused(box.call(os.utime, str(victim)), "os.utime outside the scratch directory")
    refused(box.call(lambda: pathlib.Path(victim).touch()), "os.utime outside the scratch directory")
    refused(box.call(lambda: os.utime(os.open(str(victim), os.O_RDONLY))), "outside the scratch directory")


def test_without_the_hook_a_touch_is_the_one_change_the_kernel_lets_through(
        bare: ForkSandbox, tmp_path: pathlib.Path) -> None:
    path = tmp_path / "touched.txt"
    before = _make_victim(path)
    outcome = bare.call(lambda: pathlib.Path(path).touch())  # utimensat(..., times=NULL): to now
    assert outcome.ok, outcome
    _assert_untouched(path, before, times=False)  # mode, owner, content and attributes hold


def test_touch_works_in_scratch(box: ForkSandbox) -> None:
    def touch() -> bool:
        path = pathlib.Path(os.environ["TMPDIR"], "new.txt")
        path.touch()
        path.touch()  # the second bumps the time of an existing file
        os.utime(path)
        return path.exists()

    assert box.call(touch).value is True


def test_metadata_changes_are_refused_in_scratch_too(box: ForkSandbox) -> None:
    def inside() -> None:
        path = os.path.join(os.environ["TMPDIR"], "mine")
        open(path, "w").close()
        os.chmod(path, 0o600)

    refused(box.call(inside), "os.chmod", "scratch included")


FS_IOC_GETFLAGS, FS_IOC_SETFLAGS, FS_IMMUTABLE_FL = 0x80086601, 0x40086602, 0x10


def test_the_immutable_flag_cannot_be_set(guarded: ForkSandbox, victim: pathlib.Path) -> None:
    def chattr() -> None:
        fd = os.open(str(victim), os.O_RDONLY)
        fcntl.ioctl(fd, FS_IOC_SETFLAGS, struct.pack("i", FS_IMMUTABLE_FL))

    refused(guarded.call(chattr))
    with contextlib.suppress(OSError):  # where the file system keeps flags, the host's file has none set
        flags = fcntl.ioctl(os.open(str(victim), os.O_RDONLY), FS_IOC_GETFLAGS, struct.pack("i", 0))
        assert not struct.unpack("i", flags)[0] & FS_IMMUTABLE_FL
    with victim.open("a") as handle:
        handle.write("")  # still writable by the host


def test_nothing_can_be_typed_into_a_terminal(guarded: ForkSandbox) -> None:
    master, slave = os.openpty()
    try:
        tty.setraw(slave)
        name = os.ttyname(slave)

        def inject() -> str:
            fd = os.open(name, os.O_RDONLY | os.O_NOCTTY)
            for char in b"echo pwned\n":
                with contextlib.suppress(OSError):
                    fcntl.ioctl(fd, termios.TIOCSTI, bytes([char]))
            return "typed"

        refused(guarded.call(inject))
        assert select.select([slave], [], [], 0.2)[0] == [], "input reached the terminal"
    finally:
        os.close(master)
        os.close(slave)


def test_harmless_ioctls_still_work(box: ForkSandbox) -> None:
    def harmless() -> list[object]:
        reader, writer = os.pipe()
        os.set_inheritable(reader, True)  # FIONCLEX
        os.write(writer, b"abc")
        pending = struct.unpack("i", fcntl.ioctl(reader, termios.FIONREAD, struct.pack("i", 0)))[0]
        return [os.isatty(reader), os.get_inheritable(reader), pending]

    assert box.call(harmless).value == [False, True, 3]


# -- shared memory ---------------------------------------------------------------------------


def test_a_shared_value_changed_in_the_child_stays_unchanged_in_the_host(guarded: ForkSandbox) -> None:
    value = multiprocessing.Value("i", 7)

    def write() -> int:
        value.value = 99
        return int(value.value)

    outcome = guarded.call(write)
    assert outcome.ok and outcome.value == 99  # the child saw its own write...
    assert value.value == 7  # ...which never reached the host


def test_a_shared_lock_held_by_the_child_stays_free_in_the_host(guarded: ForkSandbox) -> None:
    value = multiprocessing.Value("i", 0)

    def hold() -> bool:
        return bool(value.get_lock().acquire(timeout=1))

    assert guarded.call(hold).value is True
    lock = value.get_lock()
    assert lock.acquire(timeout=1), "the child's acquire held the host's lock"
    lock.release()


def test_shared_mappings_of_memory_and_files_stay_the_hosts(guarded: ForkSandbox, tmp_path: pathlib.Path) -> None:
    anonymous = mmap.mmap(-1, 4096)
    anonymous[:5] = b"hello"
    path = tmp_path / "mapped.bin"
    path.write_bytes(b"file!" + bytes(4091))
    with path.open("r+b") as handle:
        mapped = mmap.mmap(handle.fileno(), 4096)

    def scribble() -> list[str]:
        anonymous[:5] = b"CHILD"
        mapped[:5] = b"CHILD"
        return [anonymous[:5].decode(), mapped[:5].decode()]

    outcome = guarded.call(scribble)
    assert outcome.ok and outcome.value == ["CHILD", "CHILD"]
    assert anonymous[:5] == b"hello" and mapped[:5] == b"file!" and path.read_bytes()[:5] == b"file!"
    mapped.close()
    anonymous.close()


# -- subinterpreters -------------------------------------------------------------------------

needs_subinterpreters = pytest.mark.skipif(SUBINTERPRETERS is None, reason="needs _xxsubinterpreters or _interpreters")


@needs_subinterpreters
def test_creating_a_subinterpreter_is_refused(box: ForkSandbox) -> None:
    refused(box.call(lambda: __import__(str(SUBINTERPRETERS)).create()), "subinterpreters")


@needs_subinterpreters
def test_the_kernel_holds_inside_a_subinterpreter(bare: ForkSandbox) -> None:
    before = resource.getrlimit(resource.RLIMIT_NOFILE)

    def inside(code: str) -> Callable[[], None]:
        def run() -> None:
            module: Any = __import__(str(SUBINTERPRETERS))
            module.run_string(module.create(), textwrap.dedent(code))

        return run

    killed(bare.call(inside("import socket; socket.socket()")))
    killed(bare.call(inside(f"import resource; resource.prlimit({HOST}, resource.RLIMIT_NOFILE, (16, 16))")))
    assert resource.getrlimit(resource.RLIMIT_NOFILE) == before


# -- the other runners that share the guard --------------------------------------------------


def test_the_fork_server_pool_and_engine_worker_refuse_what_the_kernel_refuses() -> None:
    from regrow._sandbox._warm import Worker

    with ForkSandbox(LIMITS, server=True) as server:
        killed(server.call_ref("os:setsid"))
        assert server.call_ref("operator:add", 2, 3).value == 5
    with PoolSandbox(workers=1, limits=LIMITS) as pool:
        killed(pool.call_ref("os:setsid"))
        assert pool.call_ref("operator:add", 2, 3).value == 5  # a fresh worker
    with Worker({"setsid": os.setsid, "add": lambda a, b: a + b}) as worker:
        status, reason = worker.call("setsid", timeout=5)
        assert status == "refused" and "SIGSYS" in reason, (status, reason)
        assert worker.call("add", 2, 3, timeout=5) == ("ok", 5)

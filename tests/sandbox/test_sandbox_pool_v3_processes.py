"""Pool workers after a call (issue 19): what the call started is gone, the worker itself serves on.

The per-call child of the pool's worker, seen from outside: the processes a call started (and the
locks they held) are gone when its verdict is out, the worker outlives calls that overran or crashed,
a call gets its own CPU limit, a stopped worker is killed with everything in its session, a call cannot
open the worker's pipes through /proc, and scratch is empty again whatever tree a call left there.
"""

from __future__ import annotations

import fcntl
import os
import signal
import struct
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from regrow._sandbox import Limits, PoolSandbox

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the pool's per-call children and /proc are Linux's")

LIMITS = Limits(timeout=30.0, memory_bytes=512 << 20)


@pytest.fixture
def pool() -> Iterator[PoolSandbox]:
    with PoolSandbox(workers=1, limits=LIMITS) as box:
        yield box


@pytest.fixture
def user_file(tmp_path: Path) -> Path:
    path = tmp_path / "report.txt"
    path.write_text("the user's data\n")
    return path


def fork_a_lock_holder(path: str) -> int:
    """Start a process that takes an flock on ``path`` and sleeps for a minute; its pid."""
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        fd = os.open(path, os.O_RDONLY)
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(ready_w, b"1")
        time.sleep(60)
        os._exit(0)
    os.read(ready_r, 1)
    return pid


def hold_a_lock_and_hang(path: str) -> None:
    fork_a_lock_holder(path)  # a grandchild of the worker: no die-with-parent of its own
    time.sleep(60)


def open_the_workers_fds() -> list[str]:
    """What this call could open of its worker's fds through /proc: the worker's pipes to the host among them."""
    opened = []
    worker = os.getppid()
    for name in os.listdir(f"/proc/{worker}/fd"):
        try:
            os.close(os.open(f"/proc/{worker}/fd/{name}", os.O_RDONLY | os.O_NONBLOCK))
            opened.append(name)
        except OSError:
            continue
    return opened


def build_deep_tree(levels: int) -> str:
    """A chain of ``levels`` nested folders in scratch (made through dir fds: no path grows long)."""
    fd = os.open(".", os.O_RDONLY)
    for _ in range(levels):
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(fd)
    return "built"


def spin() -> None:
    while True:
        pass


def session_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat", "rb") as stat:
        return int(stat.read().rsplit(b")", 1)[1].split()[3])


def parent_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat", "rb") as stat:
        return int(stat.read().rsplit(b")", 1)[1].split()[1])


def running(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie (one whose parent died waits for pid 1 to reap it)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


def others_in_session(sid: int) -> list[int]:
    """The running processes of session ``sid`` other than its leader (the worker): what its calls left."""
    found = []
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            if int(name) != sid and session_of(int(name)) == sid and running(int(name)):
                found.append(int(name))
        except (OSError, ValueError, IndexError):
            continue
    return found


def test_processes_a_call_started_are_gone_when_it_returns(user_file: Path) -> None:
    with PoolSandbox(workers=1, limits=Limits(timeout=30.0, processes=4)) as box:
        worker = box.call_ref("os:getppid").value
        started = box.call(fork_a_lock_holder, str(user_file))
        assert started.ok, started
        with open(user_file, "rb") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert not running(started.value)
        assert others_in_session(worker) == []
        assert box.call_ref("os:getppid").value == worker  # the same worker serves on


def test_the_worker_outlives_a_call_that_overran_or_crashed() -> None:
    with PoolSandbox(workers=1, limits=Limits(timeout=30.0)) as box:
        worker = box.call_ref("os:getppid").value
        assert box.call_ref("time:sleep", 60, limits=Limits(timeout=0.5)).status == "timeout"
        crashed = box.call_ref("os:_exit", 9)
        assert crashed.status == "crashed" and "exited with status 9" in crashed.detail
        assert box.call_ref("os:getppid").value == worker
        assert others_in_session(worker) == []


def test_a_call_gets_its_own_cpu_limit() -> None:
    with PoolSandbox(workers=1, limits=Limits(timeout=60.0, cpu_seconds=1)) as box:
        outcome = box.call(spin)
    assert outcome.status == "timeout" and "CPU" in outcome.detail, outcome


def test_a_worker_that_stops_answering_is_killed_with_all_its_call_started(user_file: Path) -> None:
    # Long enough that the call's own time limit cannot end it before the worker is stopped on a loaded
    # machine (then the worker, not the host, would end it, and this would test nothing).
    limits = Limits(timeout=6.0, processes=4)
    with PoolSandbox(workers=1, limits=limits) as box:
        worker = box.call_ref("os:getppid").value
        outcomes: list[Any] = []
        caller = threading.Thread(target=lambda: outcomes.append(box.call(hold_a_lock_and_hang, str(user_file))))
        caller.start()
        deadline = time.monotonic() + 30
        while len(children := others_in_session(worker)) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert parent_of(worker) == os.getpid()  # the pool's worker, not this process: stop it, nothing else
        os.kill(worker, signal.SIGSTOP)  # the worker can no longer end the call itself: the host must
        caller.join(60)
        assert outcomes and outcomes[0].status == "timeout", outcomes
        assert len(children) == 2 and not any(running(pid) for pid in children)
        with open(user_file, "rb") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert box.call_ref("os:getppid").value not in (None, worker)  # a new worker


def test_a_call_cannot_open_its_workers_pipes_through_proc(pool: PoolSandbox) -> None:
    outcome = pool.call(open_the_workers_fds)
    assert (outcome.status, outcome.value) == ("ok", []), outcome


def send_a_frame_that_is_not_json() -> str:
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            if fd > 2 and os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:"):
                os.write(fd, struct.pack(">I", 5) + b"{nope")
        except OSError:
            continue
    return "sent"


def test_a_frame_that_is_not_json_is_refused_by_the_worker_which_serves_on(pool: PoolSandbox) -> None:
    worker = pool.call_ref("os:getppid").value
    outcome = pool.call(send_a_frame_that_is_not_json)
    assert outcome.status == "refused" and "not JSON" in outcome.detail, outcome
    assert pool.call_ref("os:getppid").value == worker
    assert pool.call_ref("operator:add", 2, 3).value == 5


def test_a_deep_folder_tree_a_call_left_in_scratch_is_gone_for_the_next() -> None:
    with PoolSandbox(workers=1, limits=LIMITS) as box:
        worker, scratch = box.call_ref("os:getppid").value, box.call_ref("os:getcwd").value
        assert box.call(build_deep_tree, 1100).value == "built"  # deeper than shutil.rmtree's recursion reaches
        assert box.call_ref("os:listdir", ".").value == []
        assert box.call_ref("os:getppid").value == worker
    assert scratch.startswith(tempfile.gettempdir()) and not os.path.exists(scratch)

"""Pool workers are fresh after every call: nothing one call leaves behind acts in the next (issue 19).

Each test runs a hostile call A and then an honest call B in a one-worker pool, so B lands in the
same worker as A. The detectors sit outside the worker: this test process takes the locks A took,
opens the file A leased, looks for processes that hold A's file open, and reads B's outcome.
The hostile functions below run inside the pool (they are importable from this module).
"""

from __future__ import annotations

import fcntl
import gc
import importlib.abc
import importlib.util
import operator
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from regrow._sandbox import Limits, PoolSandbox
from regrow._sandbox._channel import HEADER, encode

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the pool's per-call children and /proc are Linux's")

LIMITS = Limits(timeout=30.0, memory_bytes=512 << 20)
STATE = {"mode": "clean"}
_KEPT: list[Any] = []  # what a hostile call keeps alive in its process after it returns
_F_SETLEASE = 1024  # fcntl.F_SETLEASE (Linux; not exported on 3.10)


@pytest.fixture
def pool() -> Iterator[PoolSandbox]:
    with PoolSandbox(workers=1, limits=LIMITS) as box:
        yield box


# -- what hostile calls do inside the pool ----------------------------------------------------------


def take_lock(path: str, kind: str) -> str:
    """Take an flock, a POSIX read lock or a read lease on ``path``, and keep it: the fd stays open."""
    fd = os.open(path, os.O_RDONLY)
    if kind == "flock":
        fcntl.flock(fd, fcntl.LOCK_EX)
    elif kind == "posix":
        fcntl.lockf(fd, fcntl.LOCK_SH)  # a read lock: enough to keep any writer's lock out
    else:
        fcntl.fcntl(fd, _F_SETLEASE, fcntl.F_RDLCK)  # a writer's open now waits for the lease to break (45 s)
    _KEPT.append(fd)
    return kind


def keep_open(path: str) -> str:
    _KEPT.append(open(path, "rb"))  # noqa: SIM115 - kept open on purpose
    return "open"


def _writable_pipes() -> list[int]:
    """The pipes this process may write to besides stdout/stderr: where a result frame would go."""
    found = []
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            if fd > 2 and os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:") and \
                    fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY:
                found.append(fd)
        except OSError:
            continue
    return found


def _call_id(frame: Any) -> int | None:
    """The id of the call running now, found on the stack (a worker echoes it in its result frame)."""
    while frame is not None:
        for name in ("call_id", "request"):
            value = frame.f_locals.get(name)
            if type(value) is int:
                return value
            if type(value) is dict and type(value.get("id")) is int:
                return value["id"]  # type: ignore[no-any-return]
        frame = frame.f_back
    return None


def forge_result(frame: Any = None) -> None:
    """Write a result frame that says the running call returned "forged", on every pipe that could carry it."""
    forged = {"kind": "result", "status": "ok", "value": "forged", "duration": 0.0, "leftovers": False}
    call_id = _call_id(frame)
    if call_id is not None:
        forged["id"] = call_id
    for fd in _writable_pipes():
        try:
            os.write(fd, encode(forged, 1 << 20))
        except OSError:
            continue


def arm_forging_timer() -> str:
    signal.signal(signal.SIGALRM, lambda signum, frame: forge_result(frame))
    signal.setitimer(signal.ITIMER_REAL, 0.2, 0.05)
    return "armed"


def patch_the_worker() -> str:
    """Replace what produces a result frame in every regrow module this process loaded."""
    for name, module in list(sys.modules.items()):
        if name.startswith("regrow._sandbox") and hasattr(module, "run_job"):
            module.run_job = lambda *args, **kwargs: encode(
                {"kind": "result", "status": "ok", "value": "forged", "id": kwargs.get("id"), "duration": 0.0}, 1 << 20)
    return "patched"


def poison_module_state() -> str:
    STATE["mode"] = "poisoned"
    operator.add = lambda a, b: "forged"  # type: ignore[assignment]
    return "poisoned"


def read_state() -> str:
    return STATE["mode"]


def hook_imports() -> str:
    """A finder first in ``sys.meta_path`` that serves a forged copy of this module from now on."""

    class Loader(importlib.abc.Loader):
        def create_module(self, spec: Any) -> None:
            return None

        def exec_module(self, module: Any) -> None:
            module.honest = lambda value: "forged"

    class Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
            return importlib.util.spec_from_loader(name, Loader()) if name == __name__ else None

    sys.meta_path.insert(0, Finder())
    del sys.modules[__name__]
    return "hooked"


def honest(value: str) -> str:
    return value


def slow_honest(value: str, seconds: float) -> str:
    time.sleep(seconds)
    return value


def neuter_audit_hook() -> str:
    """Point the worker's audit hook at "" as its scratch folder (every absolute path is then inside it)
    and at no fd for its reports (a refusal then goes unreported)."""
    from regrow._sandbox import _guard, _hook

    for allow_processes in (False, True):
        _hook_fn, place = _guard._prebuilt(_hook.make_audit_hook, allow_processes)
        place[:] = ["", -1]
    return "neutered"


def write_outside(path: str) -> str:
    with open(path, "w") as handle:
        handle.write("escaped")
    return "written"


def send_huge_frame() -> str:
    """One 48 MiB frame on every pipe that could carry a result (what fits now; the call then returns)."""
    body = b'"' + b"x" * (48 << 20) + b'"'
    for fd in _writable_pipes():
        os.set_blocking(fd, False)
        try:
            os.write(fd, HEADER.pack(len(body)) + body)
        except OSError:
            continue
    return "sent"


def forge_then_flood() -> str:
    """A forged result for this call, then the 48 MiB frame: a reader that stops at the forged result leaves
    the 48 MiB in the pipe, for the next call to find."""
    forge_result(sys._getframe())
    return send_huge_frame()


class _Starter:
    """Garbage in a cycle whose finalizer starts a thread: it runs whenever the collector gets to it."""

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        def act() -> None:
            time.sleep(0.2)
            STATE["mode"] = "poisoned by a thread"
            forge_result()

        threading.Thread(target=act, daemon=True).start()


def leave_a_thread_for_later() -> str:
    gc.disable()  # not collected during the call (where the call's own check would see the thread) ...
    _Starter()
    gc.set_threshold(1)  # ... but at the first allocation once the collector is back on, in whoever runs then
    return "left"


def pids_holding(path: Path) -> list[int]:
    """Every process on the machine with ``path`` open (read from /proc, outside the worker)."""
    holders = []
    target = str(path)
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") == target:
                    holders.append(int(pid))
            except OSError:
                continue
    return holders


# -- the tests ----------------------------------------------------------------------------------------


@pytest.fixture
def user_file(tmp_path: Path) -> Path:
    path = tmp_path / "report.txt"
    path.write_text("the user's data\n")
    return path


@pytest.mark.parametrize("kind", ["flock", "posix", "lease"])
def test_a_lock_or_lease_a_call_took_is_gone_when_it_returns(pool: PoolSandbox, user_file: Path, kind: str) -> None:
    assert pool.call(take_lock, str(user_file), kind).value == kind
    # each fails at once (BlockingIOError) while the lock or lease is held by anyone
    if kind == "flock":
        with open(user_file, "rb") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    elif kind == "posix":
        with open(user_file, "r+b") as handle:
            fcntl.lockf(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    else:
        os.close(os.open(user_file, os.O_WRONLY | os.O_NONBLOCK))


def test_no_process_keeps_a_file_a_call_opened(pool: PoolSandbox, user_file: Path) -> None:
    assert pool.call(keep_open, str(user_file)).value == "open"
    assert pids_holding(user_file) == []


def test_an_interval_timer_left_by_a_call_cannot_forge_the_next_result(pool: PoolSandbox) -> None:
    assert pool.call(arm_forging_timer).value == "armed"
    for _ in range(3):
        outcome = pool.call(slow_honest, "mine", 0.5)
        assert (outcome.status, outcome.value) == ("ok", "mine"), outcome


def test_a_patched_run_job_does_not_answer_the_next_call(pool: PoolSandbox) -> None:
    pool.call(patch_the_worker)
    outcome = pool.call(honest, "mine")
    assert (outcome.status, outcome.value) == ("ok", "mine"), outcome


def test_module_state_a_call_changed_is_fresh_for_the_next(pool: PoolSandbox) -> None:
    assert pool.call(poison_module_state).value == "poisoned"
    assert pool.call(read_state).value == "clean"
    assert pool.call_ref("operator:add", 2, 3).value == 5


def test_an_import_hook_a_call_set_does_not_reach_the_next(pool: PoolSandbox) -> None:
    assert pool.call(hook_imports).value == "hooked"
    outcome = pool.call(honest, "mine")
    assert (outcome.status, outcome.value) == ("ok", "mine"), outcome


def test_an_audit_hook_a_call_neutered_guards_the_next_call(pool: PoolSandbox, tmp_path: Path) -> None:
    pool.call(neuter_audit_hook)
    outcome = pool.call(write_outside, str(tmp_path / "escaped.txt"))
    assert outcome.status == "refused", outcome
    assert not (tmp_path / "escaped.txt").exists()


@pytest.mark.parametrize("hostile", [send_huge_frame, forge_then_flood])
def test_a_48_mib_frame_is_refused_and_the_next_call_is_judged_on_its_own(pool: PoolSandbox, hostile: Any) -> None:
    first = pool.call(hostile)
    assert first.value != "sent", first  # never judged as if it had just returned
    if hostile is send_huge_frame:
        assert first.status == "refused" and "exceeds the 16777216-byte limit" in first.detail, first
    for value in ("first", "second"):
        outcome = pool.call(slow_honest, value, 0.3)
        assert (outcome.status, outcome.value) == ("ok", value), outcome


def test_a_thread_a_call_left_for_later_does_not_act_in_the_next(pool: PoolSandbox) -> None:
    pool.call(leave_a_thread_for_later)
    for _ in range(2):
        outcome = pool.call(slow_honest, "mine", 0.5)
        assert (outcome.status, outcome.value) == ("ok", "mine"), outcome
    assert pool.call(read_state).value == "clean"

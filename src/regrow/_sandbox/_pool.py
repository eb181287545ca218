"""The pool sandbox: warm worker processes, for the CLI, the pytest plugin and benchmarks.

Each worker is a fresh interpreter (``python -I``) that confines itself once and then serves as a
zygote (:mod:`._zygote`): for each call it forks a child that puts on the per-call guard (the
seccomp filter, the audit hook, a CPU limit), runs the call and exits. The worker itself never runs
a call, so nothing a call leaves behind (locks, leases, timers, threads, fds, patched functions,
module state) reaches the next one. Closures cannot cross a spawn boundary, so a job is named by
reference (``"package.module:qualname"``) and its arguments are plain data; it is imported in the
call's child. The worker answers each call with a ``done`` frame followed by the child's frames,
which the host checks as the fork sandbox checks a child's. A worker that breaks that protocol,
dies, outlives the call's time limit by more than a grace, or cannot clean up after a call is
killed with everything in its session and replaced.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from .._frames import PACKAGE_DIR
from . import _guard
from ._base import Limits, Outcome, clean, masked, scratch_folder
from ._channel import ChannelError, Collector, encode, write_frame
from ._process import OUTPUT_LIMIT, assemble, importable, unplain
from ._zygote import DONE_ROOM, empty_folder, worker_main

__all__ = ["PoolSandbox", "guard_key", "worker_main"]

_STARTUP_TIMEOUT = 30.0  # seconds a new worker has to import regrow and guard itself
_GRACE = 5.0  # seconds a worker may take beyond the call's time limit to end the call and answer
_BOOT = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from regrow._sandbox._zygote import worker_main; worker_main(int(sys.argv[2]), int(sys.argv[3]))"
)
_SRC_ROOT = os.path.dirname(PACKAGE_DIR)  # the folder that holds the package regrow

GuardKey = tuple[int | None, int | None, int | None, tuple[str, ...]]  # the limits a worker fixes for its whole life


def guard_key(limits: Limits) -> GuardKey:
    return (limits.memory_bytes, limits.file_size_bytes, limits.processes, tuple(limits.environ_keep))


# -- in the host ------------------------------------------------------------------------------


class _Worker:
    """The host's handle on one worker process."""

    def __init__(self, limits: Limits, netns: int | None) -> None:
        self.key = guard_key(limits)
        self.calls = 0
        self.scratch = scratch_folder(self, "regrow-pool-")
        request_r, self._request_w = os.pipe()
        result_r, result_w = os.pipe()
        passed = (request_r, result_w) + ((netns,) if netns is not None else ())
        env = _guard.scrubbed_environ(os.environ, limits.environ_keep) | {"TMPDIR": self.scratch}
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-c", _BOOT, _SRC_ROOT, str(request_r), str(result_w)],
            pass_fds=passed,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,  # its own process group: killed as one, and Ctrl-C is for the host
        )
        os.close(request_r)
        os.close(result_w)
        self._result_r = result_r
        assert self.process.stdout is not None
        self._collector = Collector(result_r, self.process.stdout.fileno(), limits.result_bytes, OUTPUT_LIMIT)
        setup = {"sys_path": sys.path, "scratch": self.scratch, "limits": dataclasses.asdict(limits), "netns_fd": netns}
        write_frame(self._request_w, encode(setup, 1 << 24))
        self._ready = False

    def alive(self) -> bool:
        return self.process.poll() is None

    def stale(self) -> bool:
        """Whether the worker died or wrote between calls (it writes only to answer one): not to be used."""
        return not self.alive() or (self._ready and self._collector.readable())

    def run(self, call_id: int, ref: str, args: list[Any], limits: Limits) -> tuple[Outcome, bool]:
        """The call's outcome and whether the worker is still fit to serve the next one."""
        if not self._ready:
            failure = self._await_ready()
            if failure is not None:
                return failure, False
        if self.stale():  # the pool does not hand out such a worker; this is the last line
            return Outcome("crashed", detail="the worker died or wrote between calls"), False
        # this call's frame limit (the worker's done frame fits whatever it is), and a fresh decode budget
        self._collector.reset(max(limits.result_bytes, DONE_ROOM))
        self.calls += 1
        request = {"id": call_id, "ref": ref, "args": args, "result_bytes": limits.result_bytes,
                   "timeout": limits.timeout, "cpu_seconds": limits.cpu_seconds}
        started = time.monotonic()
        try:
            write_frame(self._request_w, encode(request, 1 << 30))
            answered = self._collector.run(
                started + limits.timeout + _GRACE, lambda c: _answered(c, call_id) or not c.result_open
            )
            if not answered or not _answered(self._collector, call_id):  # it overran its grace, or it died
                return self._ended(limits, started, timed_out=not answered), False
        except (OSError, ChannelError, MemoryError) as exc:
            return self._ended(limits, started, broken=str(exc) or type(exc).__name__), False
        done, *frames = self._collector.frames
        self._collector.drain_output()  # the child wrote its output before it exited, and the worker answers after
        output = self._collector.output()
        outcome = assemble(frames, done["status"], limits, done["timed_out"], done["broken"], output, started)
        return outcome, done["clean"]

    def _await_ready(self) -> Outcome | None:
        deadline = time.monotonic() + _STARTUP_TIMEOUT
        try:
            self._collector.run(deadline, lambda c: any(_kind(f) in ("ready", "setup") for f in c.frames))
        except ChannelError as exc:
            return Outcome("crashed", detail=f"the worker did not start: {exc}")
        if not any(_kind(f) == "ready" for f in self._collector.frames):
            setup = [f.get("reason") for f in self._collector.frames if _kind(f) == "setup"]
            reason = setup[0] if setup else self._collector.output()[-500:] or "no reason given"
            return Outcome("crashed", detail=f"the worker did not start: {reason}")
        self._ready = True
        return None

    def _ended(self, limits: Limits, started: float, timed_out: bool = False, broken: str = "") -> Outcome:
        """Kill the worker and say how the call ended: it ran over, died, or broke the channel. What the worker
        sent for this call is not read: without its done frame nothing says which of it is the child's."""
        status = self._terminate()
        self._collector.drain_output()
        outcome = assemble([], status, limits, timed_out, broken, self._collector.output(), started)
        self.close()
        return outcome

    def kill(self) -> None:
        self._terminate()
        self.close()

    def _terminate(self) -> int:
        """End the worker and everything in its session (a call's child has a process group of its own in
        it, and nothing under the filter can leave it); the worker's wait status."""
        with contextlib.suppress(OSError):  # already gone
            os.killpg(self.process.pid, signal.SIGKILL)
        kill_session(self.process.pid)  # before the worker is reaped: until then its session id is not reused
        code = self.process.wait()
        return -code if code < 0 else code << 8  # back to a raw wait status, as describe_exit reads it

    def close(self) -> None:
        """Close the pipes (the worker exits when its request pipe ends) and the scratch directory."""
        if self._request_w < 0:
            return
        self._collector.close()
        os.close(self._request_w)
        os.close(self._result_r)
        self._request_w = -1
        if self.process.stdout is not None:
            self.process.stdout.close()
        empty_folder(self.scratch)  # whatever a call left there: shutil.rmtree fails on a deep enough tree
        with contextlib.suppress(OSError):
            os.rmdir(self.scratch)

    def stop(self) -> None:
        self.close()
        try:
            self.process.wait(1.0)
        except subprocess.TimeoutExpired:
            self.kill()


def _kind(frame: Any) -> Any:
    return frame.get("kind") if type(frame) is dict else None


_DONE_FIELDS = {"frames": (int,), "status": (int,), "timed_out": (bool,), "broken": (str,), "clean": (bool,)}


def _answered(collector: Collector, call_id: int) -> bool:
    """Whether the worker's answer to this call is all in: its done frame first, then exactly as many frames as
    it says. ``ChannelError`` for anything else (the worker is then replaced)."""
    if not collector.frames:
        return False
    done = collector.frames[0]
    if _kind(done) != "done" or done.get("id") != call_id:
        raise ChannelError("the worker's answer does not begin with its done frame for this call")
    for name, kinds in _DONE_FIELDS.items():
        if type(done.get(name)) not in kinds:
            raise ChannelError(f"the worker's done frame has no proper {name}")
    promised: int = done["frames"]
    if not 0 <= promised < 1 << 20 or not 0 <= done["status"] < 1 << 16:
        raise ChannelError("the worker's done frame says what cannot be")
    if len(collector.frames) > 1 + promised:
        raise ChannelError("the worker sent more frames than its done frame promised")
    return len(collector.frames) == 1 + promised


def kill_session(sid: int, grace: float = 1.0) -> None:
    """SIGKILL to every process of session ``sid`` until none is left but zombies (which hold no files or
    locks any more), for at most ``grace`` seconds (Linux: read from /proc; elsewhere nothing to find)."""
    deadline = time.monotonic() + grace
    while (members := _session_members(sid)) and time.monotonic() < deadline:
        for pid in members:
            with contextlib.suppress(OSError):  # gone meanwhile
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.001)


def _session_members(sid: int) -> list[int]:
    """The processes of session ``sid`` that are not zombies."""
    try:
        pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []
    members = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()  # fields[0] is the state, [3] the session
            if int(fields[3]) == sid and fields[0] not in (b"Z", b"X"):
                members.append(pid)
        except (OSError, ValueError, IndexError):  # gone meanwhile, or not ours to read
            continue
    return members


class PoolSandbox:
    """Runs importable functions in warm, guarded worker processes.

    ``call_ref("pkg.mod:func", *plain_args)`` is the native form; ``call(fn, *args)`` accepts a
    function defined at module level of an importable module and refuses closures and lambdas.
    Memory, file-size and process limits are fixed when a worker starts; a call with other
    limits gets a worker started with them. The time limit is per call.
    """

    name = "pool"

    def __init__(self, workers: int = 2, limits: Limits | None = None, *, max_calls: int | None = None) -> None:
        if workers < 1:
            raise ValueError("a pool needs at least one worker")
        self.limits = limits or Limits()
        self.size = workers
        self.max_calls = max_calls
        self._netns = _guard.prepare()
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(workers)
        self._ids = itertools.count(1)
        self._idle = [_Worker(self.limits, self._netns) for _ in range(workers)]  # they boot in parallel
        self._count = workers
        self._closed = False

    def call(self, fn: Callable[..., Any], /, *args: Any, limits: Limits | None = None) -> Outcome:
        ref = importable(fn, "the pool")
        return ref if isinstance(ref, Outcome) else self.call_ref(ref, *args, limits=limits)

    def call_ref(self, ref: str, /, *args: Any, limits: Limits | None = None) -> Outcome:
        """Run the function named ``"module:qualname"`` in a worker with plain-data arguments."""
        limits = limits or self.limits
        refused = unplain(args)
        if refused is not None:
            return refused
        with self._slots:
            worker = self._take(limits)
            try:
                outcome, fit = worker.run(next(self._ids), ref, list(args), limits)
            except Exception as exc:  # a failure in the host while it watched the worker: nothing escapes call
                outcome, fit = Outcome("crashed", detail=clean(f"the pool failed in the host: {exc!r}")), False
            self._give_back(worker, fit, limits)
        module = sys.modules.get(ref.partition(":")[0])  # its secrets, where the host has it loaded
        return masked(outcome, getattr(module, "__dict__", None))

    def _take(self, limits: Limits) -> _Worker:
        key = guard_key(limits)
        with self._lock:
            if self._closed:
                raise RuntimeError("the pool is closed")
            for worker in self._idle:
                if worker.key == key and not worker.stale():
                    self._idle.remove(worker)
                    return worker
            # none fits (or all died idle): retire one, so there are never more than `size` workers
            retired = self._idle.pop(0) if self._idle and self._count >= self.size else None
            self._count += 0 if retired else 1
        if retired is not None:
            retired.stop()
        return _Worker(limits, self._netns)

    def _give_back(self, worker: _Worker, fit: bool, limits: Limits) -> None:
        if not fit or (self.max_calls is not None and worker.calls >= self.max_calls):
            worker.kill()
            worker = _Worker(limits, self._netns)  # the replacement boots while the caller moves on
        with self._lock:
            if not self._closed:
                self._idle.append(worker)
                return
        worker.stop()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.stop()

    def __enter__(self) -> PoolSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

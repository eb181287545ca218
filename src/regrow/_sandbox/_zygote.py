"""A pool worker's side: a warm, guarded zygote that forks one child per call and never runs a call itself.

The worker is a fresh ``python -I`` that confines itself once (limits, secrets, network, scratch,
Landlock, no privileges: :func:`._guard.confine`) and then, for each request, forks a child. The
child takes a process group of its own, dies with the worker, gets the call's CPU limit, puts on
the seccomp filter and the audit hook (:func:`._guard.watch`), runs the job (:func:`._child.run_job`),
sends its frames on a pipe of its own and exits. The worker reads that pipe under the call's time
limit with the channel's reader (each frame capped, the decode budget kept), kills the child's
process group, reaps it and everything it started (the worker is their subreaper), empties the
scratch folder, and only then answers the host: one ``done`` frame that says how the child ended
and how many of its frames follow, then those frames, byte for byte as the child wrote them.

So whatever a call leaves behind — a lock, a lease, an interval timer, a thread, an open fd, a
patched function, a module global, an import hook — has died with its child before the host hears
the verdict, and the next call starts from the same pristine worker. Only the worker writes the
host's result pipe: the child closes it before anything of the call runs. The host still trusts
nothing the worker sends (:mod:`._pool` checks every frame as the fork sandbox does).
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import math
import os
import resource
import select
import sys
import time
from typing import Any, NoReturn

from . import _guard, _hook, _kernel, _seccomp
from ._base import Limits
from ._channel import HEADER, ChannelError, FrameReader, budget_for, decode, encode, resolve_ref, write_frame
from ._child import close_all_but, flush_stdio, run_job
from ._process import kill_group, wait

DONE_ROOM = 4096  # of a call's decode budget, kept for the worker's own done frame
_PR_SET_DUMPABLE, _PR_SET_CHILD_SUBREAPER = 4, 36
_REAP_GRACE = 1.0  # seconds the processes a call started (all sent SIGKILL) may take to be gone
_RESULT_PREFIX = b'{"status":'  # how run_job's result frame begins: the child's last act before it exits
_DECODE_LIMIT = 1 << 20  # bytes of a frame without that beginning the worker decodes to see whether it is the result


def worker_main(request_fd: int, result_fd: int) -> None:
    """A worker's life: read its setup, confine itself, then answer calls until the host closes the pipe."""
    requests = _frames(request_fd, FrameReader(1 << 30))
    setup = next(requests)
    sys.path[:] = setup["sys_path"]
    limits = Limits(**setup["limits"])
    plan = _guard.Plan(setup["scratch"], limits, setup["netns_fd"], _guard.mapped_bytes(),
                        _guard.secret_names(limits.environ_keep), False)
    try:
        _guard.confine(plan)
        if plan.netns_fd is not None:
            os.close(plan.netns_fd)
        _warm(limits)
    except BaseException as exc:
        write_frame(result_fd, encode({"kind": "setup", "reason": f"{type(exc).__name__}: {exc}"}, 1 << 16))
        os._exit(70)
    write_frame(result_fd, encode({"kind": "ready"}, 64))
    for request in requests:
        write_frame(result_fd, answer(request, plan))


def _frames(fd: int, reader: FrameReader) -> Any:
    while data := os.read(fd, 1 << 16):
        yield from (decode(body) for body in reader.feed(data))


def _warm(limits: Limits) -> None:
    """Make once here what each child would otherwise make for itself: the filter's program and the
    audit hook (a child pays for every page it touches). Become the reaper of what calls start, and
    out of their reach."""
    allow_processes = limits.processes is None or limits.processes > 0
    _seccomp.build(allow_processes)
    _guard._prebuilt(_hook.make_audit_hook, allow_processes)
    handle = _kernel.libc()
    if handle is not None:
        handle.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)  # orphans of a call come back here, to be reaped
        # Not dumpable: /proc/<worker>/fd, mem, environ need CAP_SYS_PTRACE, which no call has. Without it a call
        # with the worker's (dropped) capabilities could open the worker's pipes there and forge requests or answers.
        handle.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    gc.collect()
    gc.freeze()  # as CPython advises before forking: a full collection in a child leaves this heap's pages alone


# -- one call -----------------------------------------------------------------------------------


def answer(request: dict[str, Any], plan: _guard.Plan) -> bytes:
    """Run one call in a child of its own; the done frame and the child's frames, once nothing of it is left."""
    limit = request["result_bytes"]
    read_end, write_end = os.pipe()
    flush_stdio()  # nothing of this process's buffers may be written again by the child
    pid = os.fork()
    if pid == 0:
        _call(request, plan, write_end)
    os.close(write_end)
    try:
        bodies, ended, timed_out, broken = _collect(read_end, limit, time.monotonic() + request["timeout"])
    finally:
        os.close(read_end)
    status = _end(pid, ended)
    clean = _reap_orphans() and _empty(plan.scratch)
    done = {"kind": "done", "id": request["id"], "frames": len(bodies), "status": status,
            "timed_out": timed_out, "broken": broken, "clean": clean}
    return encode(done, DONE_ROOM) + b"".join(HEADER.pack(len(body)) + body for body in bodies)


def _call(request: dict[str, Any], plan: _guard.Plan, result_fd: int) -> NoReturn:
    """The per-call child: its own group, the per-call guard, the job, its result frame, and out."""
    try:
        try:
            os.setpgid(0, 0)  # the worker kills the group whole; the call's own kill(0, ...) reaches only it
            close_all_but({0, 1, 2, result_fd})  # above all the host's pipes: only the worker answers the host
            _kernel.die_with_parent()
            cpu = request["cpu_seconds"] or math.ceil(request["timeout"]) + 1
            _guard.set_rlimits(((resource.RLIMIT_CPU, cpu, cpu + 1),))  # CPU time is per call here: a fresh process
            _guard.watch(plan, result_fd)  # last: nothing after it may use ctypes
        except BaseException as exc:  # a guard that fails to apply: never run the job unguarded
            reason = f"{type(exc).__name__}: {exc}"[:2000]
            write_frame(result_fd, encode({"kind": "setup", "reason": reason}, 1 << 16))
            os._exit(70)
        ref, args = request["ref"], request["args"]
        write_frame(result_fd, run_job(lambda: resolve_ref(ref)(*args), request["result_bytes"], threads=1,
                                       id=request["id"]))
    finally:
        os._exit(0)


def _collect(fd: int, limit: int, deadline: float) -> tuple[list[bytes], bool, bool, str]:
    """The child's frames, read until its result, the end of its pipe, a broken frame or the deadline:
    (frame bodies, whether the child closed its pipe, whether it ran out of time, why the channel broke)."""
    reader = FrameReader(limit, budget_for(limit) - DONE_ROOM)
    bodies: list[bytes] = []
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return bodies, False, True, ""
        if not poller.poll(math.ceil(remaining * 1000)):
            continue
        data = os.read(fd, 1 << 16)
        if not data:
            cut = f"result stream cut inside a frame ({reader.pending} bytes)" if reader.pending else ""
            return bodies, True, False, cut
        try:
            fresh = reader.feed(data)
        except ChannelError as exc:  # oversized, or more than the call may decode: the host is not asked to
            return bodies, False, False, str(exc)
        for body in fresh:
            kind = _kind_of(body)
            if kind is None:  # refused here, so the host's reader never meets it (and the worker serves on)
                return bodies, False, False, "a frame that is not JSON"
            bodies.append(body)
            if kind == "result":  # a forged one only ends its own call sooner
                return bodies, False, False, ""


def _kind_of(body: bytes) -> str | None:
    """"result" for run_job's result, the child's last act (known by its usual beginning, else decoded if the frame
    is small: waiting for the end of the pipe would wait for whatever the call started and left holding it);
    None for a small frame that is not JSON; "other" for the rest."""
    if body.startswith(_RESULT_PREFIX):
        return "result"
    if len(body) > _DECODE_LIMIT:
        return "other"
    try:
        frame = decode(body)
    except ChannelError:
        return None
    return "result" if type(frame) is dict and frame.get("kind") == "result" else "other"


def _end(pid: int, ended: bool) -> int:
    """The child's wait status once it and its process group are gone. A child that closed its pipe is
    let finish (how it exits may be the verdict) until the grace runs out; any other is killed now."""
    if ended:
        status = wait(pid, time.monotonic() + _REAP_GRACE)  # kills the rest of its group before reaping
        if status is not None:
            return status
    kill_group(pid)
    return os.waitpid(pid, 0)[1]


def _reap_orphans() -> bool:
    """Reap what the call started and left behind (reparented here, already sent SIGKILL with the group);
    False if any is still alive after the grace (the worker is then replaced)."""
    deadline = time.monotonic() + _REAP_GRACE
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return True  # none left: the common case, one system call
        if pid == 0:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.001)


def _empty(scratch: str) -> bool:
    """Leave the scratch folder empty for the next call (one ``scandir`` when the call wrote nothing); False if
    it is not."""
    with os.scandir(scratch) as entries:
        if next(entries, None) is None:
            return True
    return empty_folder(scratch)


def empty_folder(path: str, passes: int = 1 << 20) -> bool:
    """Remove everything inside ``path``, whatever the tree's shape: no recursion and two fds at a time.

    Each pass removes the files and empty folders at the top and moves what the folders there hold up to
    the top, so a chain of 10,000 nested folders takes 10,000 short passes, where a recursive removal
    (``shutil.rmtree``) runs out of stack. Whether ``path`` is empty at the end.
    """
    try:
        top = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return False
    moved = itertools.count()
    try:
        for _ in range(passes):
            names = os.listdir(top)
            if not names:
                return True
            for name in names:
                with contextlib.suppress(OSError):  # gone meanwhile, or cannot be: the last pass tells
                    _peel(top, name, moved)
        return not os.listdir(top)
    finally:
        os.close(top)


def _peel(top: int, name: str, moved: Any) -> None:
    """Remove ``name`` from the folder ``top`` if it is a file or an empty folder, else move its entries up."""
    try:
        inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=top)
    except OSError:  # not a folder (a file, a link, a fifo: never opened as one): a name to unlink
        os.unlink(name, dir_fd=top)
        return
    try:
        entries = os.listdir(inner)
        for entry in entries:
            os.rename(entry, f".regrow-peeled-{next(moved)}", src_dir_fd=inner, dst_dir_fd=top)
    finally:
        os.close(inner)
    if not entries:
        os.rmdir(name, dir_fd=top)

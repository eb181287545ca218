"""The runtime guard a sandboxed process puts on itself before it runs a candidate.

Layers, outermost first (each one is applied where the platform allows and skipped otherwise):

* resource limits: CPU seconds, address space, file size, no core dumps;
* secrets removed from the environment (by name and by value shape);
* the kernel's layers (:mod:`._kernel`, Linux): an empty network namespace (root), Landlock,
  private copies of inherited shared memory, no capabilities, ``no_new_privs`` and, with the audit
  hook, a seccomp filter (:mod:`._seccomp`) whose every denial kills the child with SIGSYS;
* an audit hook (``sys.addaudithook``, cannot be removed) that refuses sockets, process starts,
  ``ctypes``, writes outside scratch, file metadata changes, ioctls outside the filter's
  allowlist, signals to other processes, subinterpreters, reading the process environment from
  ``/proc`` or well-known credential files, and the introspection that would reach the hook
  itself. Every refusal is also reported on the result channel, so a candidate that catches the
  exception still ends as ``refused``; the hook names what the kernel would otherwise refuse
  without a word.

The audit hook is a tripwire, not a wall: code in the same interpreter can in principle get past
Python-level checks (PEP 578 says as much). The kernel layers are what hold against code that
does. ``docs/sandbox.md`` spells out the trust model.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # getsignal without the enums signal wraps it in
import dataclasses
import functools
import math
import os
import resource
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Collection, Mapping
from types import EllipsisType
from typing import Any

from .._redact import is_secret_variable
from . import _hostcalls, _kernel, _views
from ._base import Limits
from ._hook import (
    SUBINTERPRETER_MODULES,
    AuditHook,
    SandboxViolation,
    guard_at_fork,
    make_audit_hook,
    seal,
    secret_paths,
    unplug_subinterpreters,
)
from ._kernel import enter_netns, landlock

__all__ = [
    "SUBINTERPRETER_MODULES", "Plan", "SandboxViolation", "confine", "enter_netns", "harden",
    "landlock", "leftover_threads", "make_audit_hook", "plan", "prepare", "scrubbed_environ", "watch",
]  # fmt: skip

# -- environment ------------------------------------------------------------------------------


def is_secret(name: str, value: str) -> bool:
    """Whether an environment variable looks like a credential, by its name or its value
    (the rules of :func:`regrow._redact.is_secret_variable`, shared with the redaction of evidence)."""
    return is_secret_variable(name, value)


def scrubbed_environ(environ: Mapping[str, str], keep: Collection[str] = ()) -> dict[str, str]:
    """A copy of ``environ`` without the variables that look like secrets, but those named in ``keep``."""
    return {name: value for name, value in environ.items() if name in keep or not is_secret(name, value)}


_judged: dict[tuple[bytes, bytes], bool] = {}  # (name, value) -> secret? (judging takes ~10 us a variable)


def secret_names(keep: Collection[str] = ()) -> list[str]:
    """Names of the variables in this process's environment that look like secrets, but those in ``keep``
    (the configuration the function reads, :attr:`Limits.environ_keep`)."""
    found = [os.fsdecode(name) for name in _secret_keys(_environ_data())]
    return [name for name in found if name not in keep] if keep else found


def _environ_data() -> dict[bytes, bytes]:
    data: Any = getattr(os.environ, "_data", None)  # posix.environ: bytes to bytes, what os.environ reads
    if type(data) is dict:
        return data
    return {os.fsencode(name): os.fsencode(value) for name, value in os.environ.items()}


def _secret_keys(data: dict[bytes, bytes]) -> list[bytes]:
    if len(_judged) > 4096:
        _judged.clear()
    found = []
    for item in data.items():
        secret = _judged.get(item)
        if secret is None:
            secret = _judged[item] = is_secret(os.fsdecode(item[0]), os.fsdecode(item[1]))
        if secret:
            found.append(item[0])
    return found


def environ_for(scratch: str, secrets: list[str]) -> Any:
    """The child's C-level environment made in the host: every variable but ``secrets``, ``TMPDIR`` on scratch."""
    skip = {os.fsencode(name) for name in secrets} | {b"TMPDIR"}
    entries = [name + b"=" + value for name, value in _environ_data().items() if name not in skip]
    return _kernel.environ_array([*entries, b"TMPDIR=" + os.fsencode(scratch)])


def scrub_environ(names: list[str], scratch: str | None = None, made: Any = None) -> None:
    """Remove these variables from ``os.environ`` and the C-level environment, and forget the rest of
    the host's environment block (:func:`._kernel.forget_environ`); ``TMPDIR`` is ``scratch``, if given.

    The names are found in the parent, where the environment's pages are warm: every object a
    forked child touches costs it a copy-on-write page fault.
    """
    data: Any = getattr(os.environ, "_data", None)  # posix.environ: bytes to bytes, what os.environ reads
    if type(data) is dict and data:
        encoding = sys.getfilesystemencoding()
        if scratch is not None:
            data[b"TMPDIR"] = scratch.encode(encoding, "surrogateescape")
        if _kernel.forget_environ(data, [name.encode(encoding, "surrogateescape") for name in names], made):
            return
    for name in names:
        os.environ.pop(name, None)
    if scratch is not None:
        os.environ["TMPDIR"] = scratch


# -- resource limits --------------------------------------------------------------------------


def mapped_bytes() -> int:
    """Address space this process has mapped now (Linux; 0 where unknown)."""
    try:  # from a descriptor kept open, keeping the interpreter lock (._hostcalls)
        return _hostcalls.statm_pages() * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


_PAGE = resource.getpagesize()


def apply_rlimits(limits: Limits, baseline: int, per_call: bool = True) -> None:
    """Lower this process's limits; hard limits too, so the call cannot raise them back.

    CPU time adds up over a process's life, so it is limited only for a process that serves one
    call (``per_call``); a pool worker relies on the host's wall-clock kill instead.
    """
    set_rlimits(rlimits(limits, baseline, per_call))


def rlimits(limits: Limits, baseline: int, per_call: bool = True) -> tuple[tuple[int, int, int], ...]:
    """The ``(resource, soft, hard)`` limits :func:`apply_rlimits` sets, never above the current hard ones
    (worked out in the parent: it has the same limits as the child it forks)."""
    wanted = [(resource.RLIMIT_CORE, 0, 0)]
    if per_call:
        cpu = limits.cpu_seconds if limits.cpu_seconds is not None else math.ceil(limits.timeout) + 1
        # soft < hard: SIGXCPU first (reported as a CPU overrun), SIGKILL a second later if it is caught
        wanted.append((resource.RLIMIT_CPU, cpu, cpu + 1))
    if limits.memory_bytes is not None:
        wanted.append((resource.RLIMIT_AS, baseline + limits.memory_bytes, baseline + limits.memory_bytes))
    if limits.file_size_bytes is not None:
        wanted.append((resource.RLIMIT_FSIZE, limits.file_size_bytes, limits.file_size_bytes))
    clamped = []
    for which, soft, hard in wanted:
        try:
            ceiling = resource.getrlimit(which)[1]
        except (ValueError, OSError):  # e.g. RLIMIT_AS on macOS: not available there
            continue
        if ceiling == resource.RLIM_INFINITY:
            ceiling = hard
        clamped.append((which, min(soft, ceiling), min(hard, ceiling)))
    return tuple(clamped)


def set_rlimits(planned: tuple[tuple[int, int, int], ...]) -> None:
    for which, soft, hard in planned:
        try:  # noqa: SIM105  # not contextlib.suppress: 3 calls of Python a limit, each page touched a copy
            resource.setrlimit(which, (soft, hard))
        except (ValueError, OSError):
            pass


_RESET_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM, signal.SIGCHLD)


def signal_resets() -> tuple[tuple[int, Any], ...]:
    """The signal dispositions a child must change: the host's handlers are not the candidate's, Ctrl-C
    raises KeyboardInterrupt, and an oversized write fails with EFBIG (a clear error) instead of killing.
    Worked out in the parent, so a child whose dispositions are already right makes no call at all."""
    wanted: dict[int, Any] = dict.fromkeys(_RESET_SIGNALS, signal.SIG_DFL)
    wanted |= {signal.SIGINT: signal.default_int_handler, signal.SIGXFSZ: signal.SIG_IGN}
    return tuple((signum, handler) for signum, handler in wanted.items() if signal.getsignal(signum) is not handler)


_RAW_SIGNALS = (*_RESET_SIGNALS, signal.SIGINT, signal.SIGXFSZ)


def _dispositions() -> tuple[Any, ...]:
    """The host's handlers of the signals :func:`signal_resets` looks at, as ``_signal`` gives them (no enums)."""
    return tuple(map(_signal.getsignal, _RAW_SIGNALS))


# -- putting it together ----------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class Plan:
    """What the parent works out before it forks, so the child does as little as possible."""

    scratch: str
    limits: Limits
    netns_fd: int | None
    baseline: int
    secrets: list[str]
    per_call: bool = True
    shared: tuple[_kernel.Region, ...] = ()  # MAP_SHARED mappings to replace by private copies
    rlimits: tuple[tuple[int, int, int], ...] | None = None  # None: work them out in the child
    signals: tuple[tuple[int, Any], ...] | None = None  # dispositions to set; None: work them out in the child
    environ: Any = None  # the child's C-level environment, made in the host (None: made in the child)
    mount: tuple[bytes, bytes] | None = None  # the scratch tmpfs's mount arguments, made in the host


def plan(scratch: str, limits: Limits, netns_fd: int | None, per_call: bool = True) -> Plan:
    """What a child forked now needs, worked out here. The last plan made for the same folder and limits
    serves again while what it was made from is unchanged (the host's mapped size, environment, signal
    dispositions, hard limits and shared mappings): a host pays a page fault for every page it writes
    after a fork, and a fresh plan (the environment array above all) writes many."""
    key = (scratch, limits, netns_fd, per_call)
    baseline, environ, shared = mapped_bytes(), _environ_data(), _kernel.shared_regions()
    state = (_dispositions(), _hard_limits(), shared)
    try:
        cached, keep = _plans.get(key), True
    except TypeError:  # limits rebuilt from plain data (lists for tuples): not kept
        cached, keep = None, False
    if cached is not None and cached[0] == state and cached[1] == environ:
        if cached[2].baseline == baseline:
            return cached[2]
        made = dataclasses.replace(cached[2], baseline=baseline, rlimits=rlimits(limits, baseline, per_call))
    else:
        secrets = secret_names(limits.environ_keep)
        made = Plan(scratch, limits, netns_fd, baseline, secrets, per_call, shared,
                    rlimits(limits, baseline, per_call), signal_resets(), environ_for(scratch, secrets),
                    _kernel.scratch_mount(scratch, limits.scratch_bytes) if limits.scratch_bytes else None)
    if keep:
        if len(_plans) >= _PLANS_KEPT:
            _plans.clear()
        _plans[key] = (state, dict(environ), made)
    return made


_plans: dict[tuple[Any, ...], tuple[tuple[Any, ...], dict[bytes, bytes], Plan]] = {}
_PLANS_KEPT = 16  # folders x limits; a sandbox whose folders are on disk uses a new folder per call
_LIMITED = (resource.RLIMIT_CORE, resource.RLIMIT_CPU, resource.RLIMIT_AS, resource.RLIMIT_FSIZE)


def _hard_limits() -> tuple[int, ...]:
    """The host's hard limits that :func:`rlimits` clamps to (-2 where one is not available)."""
    found = []
    for which in _LIMITED:
        try:
            found.append(resource.getrlimit(which)[1])
        except (ValueError, OSError):
            found.append(-2)
    return tuple(found)


def prepare() -> int | None:
    """The host's one-time preparation (libc, seccomp programs, audit hooks, network namespace); the
    namespace fd. What a child would otherwise make for itself costs it page faults on the host's heap."""
    secret_paths()
    for allow_processes in (False, True):
        _prebuilt(make_audit_hook, allow_processes)
    return _kernel.prepare()


@functools.lru_cache(maxsize=4)
def _prebuilt(factory: Callable[..., AuditHook], allow_processes: bool) -> tuple[AuditHook, list[Any]]:
    """A hook made once per process (and factory, which tests replace), with the place it reads from."""
    place: list[Any] = ["/nonexistent/no scratch yet", -1]
    return factory(place[0], place[1], allow_processes, place), place


def harden(plan: Plan, report_fd: int) -> None:
    """Apply every guard to this (child) process. Ends with the audit hook: nothing after it may use ctypes."""
    confine(plan)
    watch(plan, report_fd)


def private_scratch(plan: Plan) -> bool:
    """Make the scratch folder a private, size-limited, ``noexec`` tmpfs (:func:`._kernel.private_scratch`)
    where ``Limits.scratch_bytes`` asks for one and the kernel allows it, and mount the throwaway views of
    ``Limits.views`` (:mod:`._views`). First of the guards: whatever the child makes in scratch must be
    made in the tmpfs, and Landlock's rules must be on the views, not on the real folders."""
    size = plan.limits.scratch_bytes
    if size is None or not _kernel.private_scratch(plan.scratch, size, plan.mount):
        return False
    if plan.limits.views:
        _views.mount(plan.limits.views, plan.scratch)
    return True


def confine(plan: Plan, scratch_ready: bool = False, netns_fd: int | EllipsisType | None = ...) -> None:
    """Every guard but the syscall filter and the audit hook: the private scratch (unless ``scratch_ready``:
    made already), limits, secrets, network, scratch as the working directory and the temp folder,
    Landlock, private shared memory, no privileges. The process must be in its own session.
    ``netns_fd``: the namespace's fd where it is not ``plan.netns_fd`` (a child that renumbered its fds;
    cheaper than a copy of the plan, whose every page the child would copy)."""
    scratch, limits = plan.scratch, plan.limits
    if not scratch_ready:
        private_scratch(plan)
    _kernel.die_with_parent()
    _kernel.enter_netns(plan.netns_fd if netns_fd is ... else netns_fd)
    _kernel.privatize(plan.shared)  # before the address-space limit: it holds a copy of each mapping for a moment
    set_rlimits(plan.rlimits if plan.rlimits is not None else rlimits(limits, plan.baseline, plan.per_call))
    scrub_environ(plan.secrets, scratch, plan.environ)
    # Relative entries of sys.path name folders of the cwd, which is about to change (a fork needs POSIX:
    # an absolute path starts with "/").
    if any([isinstance(entry, str) and entry[:1] != "/" for entry in sys.path]):
        cwd = os.getcwd()
        sys.path[:] = [os.path.join(cwd, entry) if isinstance(entry, str) and not os.path.isabs(entry) else entry
                       for entry in sys.path]
    os.chdir(scratch)  # what a call writes to a relative path lands in scratch, as it would land in the cwd
    tempfile.tempdir = scratch
    sys.dont_write_bytecode = True  # importing must not try (and be refused) to write __pycache__
    for signum, handler in plan.signals if plan.signals is not None else signal_resets():
        signal.signal(signum, handler)
    processes = limits.processes is None or limits.processes > 0
    _kernel.landlock(scratch, allow_exec=processes, views=_views.mounted())
    _kernel.no_new_privs()
    _kernel.drop_capabilities(bounding=processes)


def watch(plan: Plan, report_fd: int) -> None:
    """Install the seccomp filter and the audit hook, both for good. Nothing after them may use ctypes,
    start a session or a process group, or do anything else either of them refuses."""
    allow_processes = _allows_processes(plan.limits)
    _kernel.filter_syscalls(allow_processes)
    hook, place = _prebuilt(make_audit_hook, allow_processes)
    # Nothing the candidate can call returns this hook or its place: the place is sealed (the hook reads
    # a tuple of its own from now on) and the cache that handed them out is emptied.
    seal(place, plan.scratch, report_fd, _views.mounted())
    sys.addaudithook(hook)
    # The other variant is kept, not freed: freeing a hook frees each of its ~50 closure cells, a page
    # copied for most of them. It was never installed here, so what a candidate does to it changes nothing.
    _retired.append(_prebuilt(make_audit_hook, not allow_processes))
    _prebuilt.cache_clear()
    del hook, place
    unplug_subinterpreters()
    guard_at_fork()


_retired: list[Any] = []  # in a child: the prebuilt hook it did not install


def _allows_processes(limits: Limits) -> bool:
    return limits.processes is None or limits.processes > 0


def leftover_threads(before: set[threading.Thread]) -> list[str]:
    """Names of threads started during the call that are still running after a short grace."""
    fresh = [thread for thread in threading.enumerate() if thread not in before]
    for thread in fresh:
        thread.join(0.05)
    return [thread.name for thread in fresh if thread.is_alive()]

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

import contextlib
import dataclasses
import functools
import io
import math
import os
import re
import resource
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping
from typing import Any

from . import _kernel
from ._base import Limits
from ._hook import (
    SUBINTERPRETER_MODULES,
    AuditHook,
    SandboxViolation,
    make_audit_hook,
    secret_paths,
    unplug_subinterpreters,
)
from ._kernel import enter_netns, landlock

__all__ = [
    "SUBINTERPRETER_MODULES", "Plan", "SandboxViolation", "confine", "enter_netns", "fresh_stdio", "harden",
    "landlock", "leftover_threads", "make_audit_hook", "plan", "prepare", "scrubbed_environ", "watch",
]  # fmt: skip

_SECRET_NAME = re.compile(
    r"KEY|TOKEN|SECRET|PASSW|PASSPHRASE|CREDENTIAL|AUTH|COOKIE|SESSION|PRIVATE|SIGNATURE|_PAT$|DSN$", re.IGNORECASE
)
_SECRET_VALUE = re.compile(
    r"^(sk-|sk_|rk_|ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|xox[abprs]-|AKIA|ASIA|AIza|ya29\.|hf_|npm_|pypi-)"
    r"|://[^/\s:@]+:[^/\s@]+@"  # credentials inside a URL
)
# -- environment ------------------------------------------------------------------------------


def is_secret(name: str, value: str) -> bool:
    """Whether an environment variable looks like a credential, by its name or its value."""
    return bool(_SECRET_NAME.search(name) or _SECRET_VALUE.search(value))


def scrubbed_environ(environ: Mapping[str, str]) -> dict[str, str]:
    """A copy of ``environ`` without the variables that look like secrets."""
    return {name: value for name, value in environ.items() if not is_secret(name, value)}


def secret_names() -> list[str]:
    """Names of the variables in this process's environment that look like secrets."""
    return [name for name, value in os.environ.items() if is_secret(name, value)]


def scrub_environ(names: list[str]) -> None:
    """Remove these variables from ``os.environ`` and the C-level environment.

    The names are found in the parent, where the environment's pages are warm: every object a
    forked child touches costs it a copy-on-write page fault.
    """
    for name in names:
        os.environ.pop(name, None)


# -- resource limits --------------------------------------------------------------------------


def mapped_bytes() -> int:
    """Address space this process has mapped now (Linux; 0 where unknown)."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[0]) * resource.getpagesize()
    except (OSError, ValueError, IndexError):
        return 0


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
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(which, (soft, hard))


_RESET_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM, signal.SIGCHLD)


def signal_resets() -> tuple[tuple[int, Any], ...]:
    """The signal dispositions a child must change: the host's handlers are not the candidate's, Ctrl-C
    raises KeyboardInterrupt, and an oversized write fails with EFBIG (a clear error) instead of killing.
    Worked out in the parent, so a child whose dispositions are already right makes no call at all."""
    wanted: dict[int, Any] = dict.fromkeys(_RESET_SIGNALS, signal.SIG_DFL)
    wanted |= {signal.SIGINT: signal.default_int_handler, signal.SIGXFSZ: signal.SIG_IGN}
    return tuple((signum, handler) for signum, handler in wanted.items() if signal.getsignal(signum) is not handler)


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


def plan(scratch: str, limits: Limits, netns_fd: int | None, per_call: bool = True) -> Plan:
    baseline = mapped_bytes()
    return Plan(scratch, limits, netns_fd, baseline, secret_names(), per_call, _kernel.shared_regions(),
                rlimits(limits, baseline, per_call), signal_resets())


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


def confine(plan: Plan) -> None:
    """Every guard but the syscall filter and the audit hook: limits, secrets, network, scratch as the
    temp folder, Landlock, private shared memory, no privileges. The process must be in its own session."""
    scratch, limits = plan.scratch, plan.limits
    _kernel.die_with_parent()
    _kernel.enter_netns(plan.netns_fd)
    _kernel.privatize(plan.shared)  # before the address-space limit: it holds a copy of each mapping for a moment
    set_rlimits(plan.rlimits if plan.rlimits is not None else rlimits(limits, plan.baseline, plan.per_call))
    scrub_environ(plan.secrets)
    os.environ["TMPDIR"] = scratch
    tempfile.tempdir = scratch
    sys.dont_write_bytecode = True  # importing must not try (and be refused) to write __pycache__
    for signum, handler in plan.signals if plan.signals is not None else signal_resets():
        signal.signal(signum, handler)
    _kernel.landlock(scratch, allow_exec=_allows_processes(limits))
    _kernel.no_new_privs()
    _kernel.drop_capabilities(bounding=_allows_processes(limits))


def watch(plan: Plan, report_fd: int) -> None:
    """Install the seccomp filter and the audit hook, both for good. Nothing after them may use ctypes,
    start a session or a process group, or do anything else either of them refuses."""
    allow_processes = _allows_processes(plan.limits)
    _kernel.filter_syscalls(allow_processes)
    hook, place = _prebuilt(make_audit_hook, allow_processes)
    place[0], place[1] = plan.scratch, report_fd
    sys.addaudithook(hook)
    unplug_subinterpreters()


def _allows_processes(limits: Limits) -> bool:
    return limits.processes is None or limits.processes > 0


def fresh_stdio() -> None:
    """``sys.stdout``/``sys.stderr`` on fds 1/2: the host's may be capture objects that never reach the fds."""
    for name, fd in (("stdout", 1), ("stderr", 2)):
        if not _writes_to(getattr(sys, name), fd):
            raw = io.FileIO(fd, "w", closefd=False)
            setattr(sys, name, io.TextIOWrapper(raw, "utf-8", "backslashreplace", line_buffering=True))


def _writes_to(stream: Any, fd: int) -> bool:
    try:
        return bool(stream.fileno() == fd)
    except Exception:  # capture objects without a file descriptor
        return False


def leftover_threads(before: set[threading.Thread]) -> list[str]:
    """Names of threads started during the call that are still running after a short grace."""
    fresh = [thread for thread in threading.enumerate() if thread not in before]
    for thread in fresh:
        thread.join(0.05)
    return [thread.name for thread in fresh if thread.is_alive()]

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
import json
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

from . import _kernel, _seccomp
from ._base import Limits
from ._channel import HEADER
from ._kernel import enter_netns, landlock  # noqa: F401 - the guard's Linux layers, also used by name

_SECRET_NAME = re.compile(
    r"KEY|TOKEN|SECRET|PASSW|PASSPHRASE|CREDENTIAL|AUTH|COOKIE|SESSION|PRIVATE|SIGNATURE|_PAT$|DSN$", re.IGNORECASE
)
_SECRET_VALUE = re.compile(
    r"^(sk-|sk_|rk_|ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|xox[abprs]-|AKIA|ASIA|AIza|ya29\.|hf_|npm_|pypi-)"
    r"|://[^/\s:@]+:[^/\s@]+@"  # credentials inside a URL
)
_HOME_SECRETS = (
    ".ssh", ".aws", ".gnupg", ".netrc", ".git-credentials", ".pypirc", ".docker", ".kube", ".azure",
    ".config/gcloud", ".config/gh",
)  # fmt: skip
_PROCESS_EVENTS = frozenset(
    {"os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty", "os.startfile", "subprocess.Popen"}
)
_NETWORK_EVENTS = frozenset(
    {
        "socket.connect", "socket.bind", "socket.sendto", "socket.getaddrinfo", "socket.gethostbyname",
        "socket.gethostbyaddr", "socket.getnameinfo", "socket.sethostname",
    }
)  # fmt: skip
# Ways to reach or outlive the hook: adding hooks, raising limits, walking objects or other threads' frames.
_TAMPER_EVENTS = frozenset(
    {
        "sys.addaudithook", "resource.setrlimit", "resource.prlimit", "gc.get_objects", "gc.get_referrers",
        "gc.get_referents", "sys._current_frames", "sys.settrace", "sys.setprofile", "sys.monitoring.register_callback",
        "os.chdir", "os.symlink", "os.link", "os.killpg", "signal.pidfd_send_signal",
    }
)  # fmt: skip
_PATH_EVENTS = frozenset({"os.remove", "os.rmdir", "os.mkdir", "os.truncate", "shutil.rmtree", "os.mkfifo", "os.mknod"})
# Refused everywhere, scratch included: the seccomp filter cannot tell paths apart, so it refuses them all.
_METADATA_EVENTS = frozenset({"os.chmod", "os.chown", "os.chflags", "os.lchflags", "os.setxattr", "os.removexattr"})
# Subinterpreters have no audit hook of their own (the seccomp filter still holds inside them).
SUBINTERPRETER_MODULES = frozenset({"_xxsubinterpreters", "_interpreters", "interpreters", "_xxinterpchannels",
                                    "_interpchannels", "_interpqueues", "concurrent.interpreters"})
_AF_UNIX = 1
_FAMILIES = {2: "AF_INET", 10: "AF_INET6", 16: "AF_NETLINK", 17: "AF_PACKET", 40: "AF_VSOCK"}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


class SandboxViolation(PermissionError):
    """Raised inside a sandboxed call for an action the guard refuses."""


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
    _set_limit(resource.RLIMIT_CORE, 0)
    if per_call:
        cpu = limits.cpu_seconds if limits.cpu_seconds is not None else math.ceil(limits.timeout) + 1
        # soft < hard: SIGXCPU first (reported as a CPU overrun), SIGKILL a second later if it is caught
        _set_limit(resource.RLIMIT_CPU, cpu, cpu + 1)
    if limits.memory_bytes is not None:
        _set_limit(resource.RLIMIT_AS, baseline + limits.memory_bytes)
    if limits.file_size_bytes is not None:
        _set_limit(resource.RLIMIT_FSIZE, limits.file_size_bytes)


def _set_limit(which: int, soft: int, hard: int | None = None) -> None:
    _, old_hard = resource.getrlimit(which)
    hard = soft if hard is None else hard
    if old_hard != resource.RLIM_INFINITY:
        soft, hard = min(soft, old_hard), min(hard, old_hard)
    with contextlib.suppress(ValueError, OSError):  # e.g. RLIMIT_AS on macOS: not available there
        resource.setrlimit(which, (soft, hard))


# -- the audit hook ---------------------------------------------------------------------------

_OTHER_EVENTS = {"open", "os.rename", "os.kill", "os.utime", "socket.__new__", "fcntl.ioctl", "import"}
_OTHER_EVENTS.add("cpython.PyInterpreterState_New")
_WATCHED = _PROCESS_EVENTS | _NETWORK_EVENTS | _TAMPER_EVENTS | _PATH_EVENTS | _METADATA_EVENTS | _OTHER_EVENTS
# where an event's dir_fd argument sits (shutil.rmtree removes by dir_fd and name)
_DIR_FD_AT = {"os.remove": 1, "os.rmdir": 1, "shutil.rmtree": 1, "os.mkdir": 2}


@functools.lru_cache(maxsize=1)
def secret_paths() -> tuple[str, ...]:
    """Well-known credential files and folders in the home directory, which reading is refused for."""
    home = os.path.expanduser("~")
    return tuple(f"{home}/{name}" for name in _HOME_SECRETS)


def make_audit_hook(scratch: str, report_fd: int, allow_processes: bool) -> Callable[[str, tuple[Any, ...]], None]:
    """Build the hook. It reads only its own closure and C builtins bound here, never module globals,
    so a candidate that patches ``os.path`` or this module cannot change what it decides."""
    _type, _str, _bytes, _int, _tuple, _len = type, str, bytes, int, tuple, len
    _startswith, _endswith, _split, _join = str.startswith, str.endswith, str.split, str.join
    _decode, _encoding = bytes.decode, sys.getfilesystemencoding()
    _fspath, _getcwd, _readlink, _write, _getpid = os.fspath, os.getcwd, os.readlink, os.write, os.getpid
    _escape, _pack = json.encoder.encode_basestring_ascii, HEADER.pack
    _violation, _linux = SandboxViolation, sys.platform == "linux"
    secret_prefixes, write_flags, dir_fd_at, watched = secret_paths(), _WRITE_FLAGS, dict(_DIR_FD_AT), _WATCHED
    process_events, network_events, tamper_events, path_events, metadata_events = (
        _PROCESS_EVENTS, _NETWORK_EVENTS, _TAMPER_EVENTS, _PATH_EVENTS, _METADATA_EVENTS,
    )  # fmt: skip
    ioctls, families = frozenset(_seccomp.IOCTL_ALLOWED.values()), dict(_FAMILIES)
    subinterpreter_modules = SUBINTERPRETER_MODULES

    def show(value: Any) -> str:
        kind = _type(value)
        if kind is _str:
            return value[:200]  # type: ignore[no-any-return]
        if kind is _bytes or kind is _int:
            return _str(value)[:200]
        if kind is _tuple:
            return "(" + _join(", ", [show(item) for item in value]) + ")"
        return "<object>"  # never call a candidate's __repr__ from inside the hook

    def refuse(event: str, what: str) -> None:
        reason = f"{event} {what}".strip()[:400]
        body = b'{"kind":"violation","reason":' + _escape(reason).encode() + b"}"
        # Reported first, so catching the exception does not hide the attempt (< PIPE_BUF: one atomic write).
        # Not contextlib.suppress: the hook must not look anything up in a module a candidate can patch.
        try:  # noqa: SIM105
            _write(report_fd, _pack(_len(body)) + body)
        except OSError:
            pass
        raise _violation(f"regrow sandbox refused {reason}")

    def absolute(path: Any, dir_fd: Any = None) -> str | None:
        kind = _type(path)
        if kind is _int:
            return None  # an fd the process already holds
        if kind is not _str and kind is not _bytes:
            path = _fspath(path)
        if _type(path) is _bytes:
            path = _decode(path, _encoding, "surrogateescape")
        if not _startswith(path, "/"):
            base = _getcwd()
            if _type(dir_fd) is _int and dir_fd >= 0 and _linux:  # -1: the cwd
                try:  # shutil.rmtree removes by (dir_fd, name): find where that directory is
                    base = _readlink(f"/proc/self/fd/{dir_fd}")
                except OSError:
                    base = "/<unknown directory>"
            path = base + "/" + path
        parts: list[str] = []
        for part in _split(path, "/"):
            if part == "..":
                if parts:
                    parts.pop()
            elif part and part != ".":
                parts.append(part)
        return "/" + _join("/", parts)

    def held(path: Any) -> Any:
        """The path an fd stands for (Linux), so a call through an fd is judged by where its file is."""
        if _type(path) is not _int or not _linux:
            return path
        try:
            return _readlink(f"/proc/self/fd/{path}")
        except OSError:
            return "/<unknown file>"

    def inside(path: str | None) -> bool:
        return path is None or path == scratch or _startswith(path, scratch + "/") or path == "/dev/null"

    def check_open(args: tuple[Any, ...]) -> None:
        path, mode, flags = args[0], args[1], args[2]
        writing = (_type(mode) is _str and ("w" in mode or "a" in mode or "x" in mode or "+" in mode)) or (
            _type(flags) is _int and flags & write_flags
        )
        full = absolute(path)
        if writing and not inside(full):
            refuse("open", f"for writing outside the scratch directory: {show(full)}")
        if full is not None and (
            (_startswith(full, "/proc/") and (_endswith(full, "/environ") or _endswith(full, "/mem")))
            or full in secret_prefixes
            or _startswith(full, secret_prefixes)
        ):
            refuse("open", f"of a secret-bearing file: {show(full)}")

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event not in watched:
            if _startswith(event, "ctypes."):
                refuse(event, "(ctypes can reach any memory or syscall)")
            return
        if event == "open":
            check_open(args)
        elif event == "import":
            if args[0] in subinterpreter_modules:
                refuse(event, f"{show(args[0])} (subinterpreters have no audit hook)")
        elif event == "socket.__new__":
            if args[1] != _AF_UNIX:  # AF_UNIX: a socketpair (asyncio's); the kernel refuses any other socket
                refuse(event, f"{families.get(args[1]) or show(args[1])} (the sandbox has no network)")
        elif event == "fcntl.ioctl":
            if _type(args[1]) is not _int or args[1] & 0xFFFFFFFF not in ioctls:
                refuse(event, f"request {show(args[1])} on fd {show(args[0])}")
        elif event in metadata_events:
            refuse(event, f"{show(args[0])} (file metadata changes are refused everywhere, scratch included)")
        elif event == "os.utime":  # (path, times, ns, dir_fd): to now (a touch) only, and only in scratch
            if args[1] is not None or args[2] is not None:
                refuse(event, f"{show(args[0])} to given times (refused everywhere, scratch included)")
            if not inside(absolute(held(args[0]), args[3])):
                refuse(event, f"outside the scratch directory: {show(args[0])}")
        elif event == "cpython.PyInterpreterState_New":
            refuse(event, "(subinterpreters have no audit hook)")
        elif event in path_events:
            at = dir_fd_at.get(event, 99)
            if not inside(absolute(args[0], args[at] if _len(args) > at else None)):
                refuse(event, f"outside the scratch directory: {show(args[0])}")
        elif event == "os.rename":
            if not (inside(absolute(args[0], args[2])) and inside(absolute(args[1], args[3]))):
                refuse(event, f"outside the scratch directory: {show(args[0])} -> {show(args[1])}")
        elif event == "os.kill":
            if args[0] != _getpid():
                refuse(event, f"signal {show(args[1])} to process {show(args[0])}")
        elif event in process_events:
            if not allow_processes:
                refuse(event, show(args[0]) if args else "")
        elif event in network_events:
            refuse(event, show(args[1]) if _len(args) > 1 else show(args[0]) if args else "")
        elif event in tamper_events:
            refuse(event, "")

    return hook


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


def plan(scratch: str, limits: Limits, netns_fd: int | None, per_call: bool = True) -> Plan:
    return Plan(scratch, limits, netns_fd, mapped_bytes(), secret_names(), per_call, _kernel.shared_regions())


def prepare() -> int | None:
    """The host's one-time preparation (libc, seccomp programs, network namespace); the namespace fd."""
    secret_paths()
    return _kernel.prepare()


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
    apply_rlimits(limits, plan.baseline, plan.per_call)
    scrub_environ(plan.secrets)
    os.environ["TMPDIR"] = scratch
    tempfile.tempdir = scratch
    sys.dont_write_bytecode = True  # importing must not try (and be refused) to write __pycache__
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM, signal.SIGCHLD):
        signal.signal(signum, signal.SIG_DFL)  # the host's handlers are not the candidate's
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an oversized write then fails with EFBIG, a clear error
    _kernel.landlock(scratch, allow_exec=_allows_processes(limits))
    _kernel.privatize(plan.shared)
    _kernel.no_new_privs()
    _kernel.drop_capabilities(bounding=_allows_processes(limits))


def watch(plan: Plan, report_fd: int) -> None:
    """Install the seccomp filter and the audit hook, both for good. Nothing after them may use ctypes,
    start a session or a process group, or do anything else either of them refuses."""
    allow_processes = _allows_processes(plan.limits)
    _kernel.filter_syscalls(allow_processes)
    for name in SUBINTERPRETER_MODULES - sys.modules.keys():
        sys.modules[name] = None  # type: ignore[assignment]  # importing it now fails at once
    sys.addaudithook(make_audit_hook(plan.scratch, report_fd, allow_processes))


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

"""The audit hook: a tripwire in the sandboxed interpreter that refuses, and reports, what a candidate
has no business doing.

``sys.addaudithook`` hooks cannot be removed. Every refusal is written to the result channel
before the exception is raised, so a candidate that catches the exception still ends as
``refused``; for what the seccomp filter would refuse without a word (it kills the child), the hook
refuses first and names it. The hook is not a wall: code in the same interpreter can in principle
get past Python-level checks (PEP 578 says as much); the kernel's layers (:mod:`._kernel`) hold
against code that does.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable
from typing import Any

from . import _seccomp
from ._channel import HEADER

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
        "gc.get_referents", "sys._current_frames", "os.chdir", "os.symlink", "os.link", "os.killpg",
        "signal.pidfd_send_signal",
    }
)  # fmt: skip
# Tracing and profiling: refused to a candidate's own code, allowed to the tests and the code under test (a
# test that counts the lines it runs, coverage); the audit hooks themselves are never traced (CPython runs
# them with tracing off).
_TRACE_EVENTS = frozenset({"sys.settrace", "sys.setprofile", "sys.monitoring.register_callback"})
_CANDIDATE_FILE = "<regrow "  # the filename every candidate is compiled under ...
_REGROW_WRAPPER_FILE = "<regrow wrapper of "  # ... and regrow's own wrappers (not a candidate's)
_PATH_EVENTS = frozenset({"os.remove", "os.rmdir", "os.mkdir", "os.truncate", "shutil.rmtree", "os.mkfifo", "os.mknod"})
# Refused everywhere, scratch included: the seccomp filter cannot tell paths apart, so it refuses them all.
_METADATA_EVENTS = frozenset({"os.chmod", "os.chown", "os.chflags", "os.lchflags", "os.setxattr", "os.removexattr"})
# Subinterpreters have no audit hook of their own (the seccomp filter still holds inside them); the
# test modules can make them too (and reach raw memory).
SUBINTERPRETER_MODULES = frozenset({"_xxsubinterpreters", "_interpreters", "interpreters", "_xxinterpchannels",
                                    "_interpchannels", "_interpqueues", "concurrent.interpreters", "_testcapi",
                                    "_testinternalcapi", "_testsinglephase", "_testmultiphase"})
_SUBINTERPRETER_EVENT = "cpython.PyInterpreterState_New"
_AT_FORK_EVENT = "regrow.register_at_fork"
_AF_UNIX = 1
_FAMILIES = {2: "AF_INET", 10: "AF_INET6", 16: "AF_NETLINK", 17: "AF_PACKET", 40: "AF_VSOCK"}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


class SandboxViolation(PermissionError):
    """Raised inside a sandboxed call for an action the guard refuses."""


def unplug_subinterpreters() -> None:
    """Make the subinterpreter modules this process already imported refuse through the hook.

    Importing one is refused by the hook; creating an interpreter raises an audit event the hook
    refuses — but not on every version (3.13 raises it where no hook sees it), and a module the
    host imported before the fork needs no import. Its entry points then raise that event themselves.
    """
    for name in SUBINTERPRETER_MODULES:
        module = sys.modules.get(name)
        if module is None:
            continue
        for attribute in ("create", "run_string", "exec", "call", "run_func", "run_in_subinterp",
                          "run_in_subinterp_with_config"):
            if hasattr(module, attribute):
                setattr(module, attribute, _refused)


def _refused(*args: Any, **kwargs: Any) -> Any:
    sys.audit(_SUBINTERPRETER_EVENT)  # the hook refuses (and reports) it
    raise SandboxViolation("regrow sandbox refused creating a subinterpreter")


def guard_at_fork() -> None:
    """``os.register_at_fork`` called from a candidate's own code is refused and reported.

    A candidate has no business leaving code to run at the next fork: one that did, and was then
    installed, would have it run in every process the host forks. A module imported during the call
    (``random``, ``concurrent.futures``) still registers its own handlers.
    """
    original = getattr(os, "register_at_fork", None)
    if original is None or getattr(original, "__regrow_guarded__", False):
        return
    getframe, audit = sys._getframe, sys.audit

    def register_at_fork(**handlers: Any) -> None:
        caller = getframe(1).f_code.co_filename
        if caller[:8] == "<regrow ":  # the filename every candidate is compiled under
            audit(_AT_FORK_EVENT)  # the hook refuses (and reports) it
            raise SandboxViolation("regrow sandbox refused registering an at-fork handler")
        original(**handlers)

    register_at_fork.__regrow_guarded__ = True  # type: ignore[attr-defined]
    for module in (os, sys.modules.get("posix")):
        if module is not None:
            module.register_at_fork = register_at_fork  # type: ignore[attr-defined]


# -- the audit hook ---------------------------------------------------------------------------

_OTHER_EVENTS = {"open", "os.rename", "os.kill", "os.utime", "socket.__new__", "fcntl.ioctl", "import"}
_OTHER_EVENTS |= {_SUBINTERPRETER_EVENT, _AT_FORK_EVENT}
_WATCHED = _PROCESS_EVENTS | _NETWORK_EVENTS | _TAMPER_EVENTS | _PATH_EVENTS | _METADATA_EVENTS | _OTHER_EVENTS
_WATCHED |= _TRACE_EVENTS
# where an event's dir_fd argument sits (shutil.rmtree removes by dir_fd and name)
_DIR_FD_AT = {"os.remove": 1, "os.rmdir": 1, "shutil.rmtree": 1, "os.mkdir": 2}


@functools.lru_cache(maxsize=1)
def secret_paths() -> tuple[str, ...]:
    """Well-known credential files and folders in the home directory, which reading is refused for."""
    home = os.path.expanduser("~")
    return tuple(f"{home}/{name}" for name in _HOME_SECRETS)


AuditHook = Callable[[str, tuple[Any, ...]], None]


def seal(place: list[Any], scratch: str, report_fd: int, views: tuple[str, ...] = ()) -> None:
    """Point a hook made with ``place`` at ``scratch``, ``report_fd`` and the mounted ``views`` (folders it
    allows writes beneath, as scratch) for good, and empty ``place``."""
    place[0], place[1] = scratch, report_fd
    if len(place) > 2 and callable(place[2]):
        place[2](tuple(str(view) for view in views))
    place.clear()


def make_audit_hook(scratch: str, report_fd: int, allow_processes: bool, place: list[Any] | None = None) -> AuditHook:
    """Build the hook. It reads only its own closure and C builtins bound here, never module globals,
    so a candidate that patches ``os.path`` or this module cannot change what it decides.

    ``place``, if given, is where the hook reads the scratch directory and the report fd from (items
    0 and 1): a hook made in the parent once is then pointed at a child's own in the child. The hook
    appends a third item, a function that *seals* it: the hook copies the two into a tuple of its own
    and forgets the list, so nothing that still holds the list (or finds it in a frame of the hook)
    can widen the hook afterwards. The child seals it as soon as it is installed (:func:`seal`).
    """
    _type, _str, _bytes, _int, _tuple, _len, _any = type, str, bytes, int, tuple, len, any
    _startswith, _endswith, _split, _join = str.startswith, str.endswith, str.split, str.join
    _decode, _encoding = bytes.decode, sys.getfilesystemencoding()
    _fspath, _getcwd, _readlink, _write, _getpid = os.fspath, os.getcwd, os.readlink, os.write, os.getpid
    _escape, _pack = json.encoder.encode_basestring_ascii, HEADER.pack
    _violation, _linux = SandboxViolation, sys.platform == "linux"
    secret_prefixes, write_flags, dir_fd_at, watched = secret_paths(), _WRITE_FLAGS, dict(_DIR_FD_AT), _WATCHED
    secret_parts = tuple(f"/{name}/" for name in _HOME_SECRETS)
    process_events, network_events, tamper_events, path_events, metadata_events = (
        _PROCESS_EVENTS, _NETWORK_EVENTS, _TAMPER_EVENTS, _PATH_EVENTS, _METADATA_EVENTS,
    )  # fmt: skip
    ioctls, families = frozenset(_seccomp.IOCTL_ALLOWED.values()), dict(_FAMILIES)
    trace_events, candidate_file, wrapper_file = _TRACE_EVENTS, _CANDIDATE_FILE, _REGROW_WRAPPER_FILE
    _getframe = sys._getframe
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

    # A list until the child seals it; then (scratch, report fd, views), a tuple of the hook's own.
    where: Any = place if place is not None else (scratch, report_fd, ())

    def sealed(views: tuple[str, ...]) -> None:
        nonlocal where
        where = (where[0], where[1], views)  # immutable; the list is no longer read

    if place is not None:
        place.append(sealed)

    def refuse(event: str, what: str) -> None:
        reason = f"{event} {what}".strip()[:400]
        body = b'{"kind":"violation","reason":' + _escape(reason).encode() + b"}"
        # Reported first, so catching the exception does not hide the attempt (< PIPE_BUF: one atomic write).
        # Not contextlib.suppress: the hook must not look anything up in a module a candidate can patch.
        try:  # noqa: SIM105
            _write(where[1], _pack(_len(body)) + body)
        except OSError:
            pass
        raise _violation(f"regrow sandbox refused {reason}")

    def text(path: Any) -> str | None:
        kind = _type(path)
        if kind is _int or path is None:
            return None  # an fd the process already holds
        if kind is not _str and kind is not _bytes:
            path = _fspath(path)
        if _type(path) is _bytes:
            path = _decode(path, _encoding, "surrogateescape")
        return path  # type: ignore[no-any-return]

    def absolute(path: Any, dir_fd: Any = None) -> str | None:
        path = text(path)
        if path is None:
            return None
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
        scratch = where[0]
        if path is None or path == scratch or _startswith(path, scratch + "/") or path == "/dev/null":
            return True
        views = where[2] if _len(where) > 2 and _type(where[2]) is _tuple else ()
        return _any(path == view or _startswith(path, view + "/") for view in views)

    def check_open(args: tuple[Any, ...]) -> None:
        path, mode, flags = args[0], args[1], args[2]
        writing = (_type(mode) is _str and ("w" in mode or "a" in mode or "x" in mode or "+" in mode)) or (
            _type(flags) is _int and flags & write_flags
        )
        given = text(path)
        full = absolute(given)
        if writing and not inside(full):
            refuse("open", f"for writing outside the scratch directory: {show(full)}")
        if full is not None and (
            (_startswith(full, "/proc/") and (_endswith(full, "/environ") or _endswith(full, "/mem")))
            or full in secret_prefixes
            or _startswith(full, secret_prefixes)
        ):
            refuse("open", f"of a secret-bearing file: {show(full)}")
        if given is not None and not _startswith(given, "/"):  # "open" does not say which dir_fd it is relative to
            padded = "/" + given + "/"
            if _endswith(padded, ("/environ/", "/mem/")) or _any(part in padded for part in secret_parts):
                refuse("open", f"of a secret-bearing file, relative to a directory it does not name: {show(given)}")

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
        elif event == _SUBINTERPRETER_EVENT:
            refuse(event, "(subinterpreters have no audit hook)")
        elif event == _AT_FORK_EVENT:
            refuse("os.register_at_fork", "(a candidate's code would run in every process the host forks)")
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
        elif event in trace_events:
            caller = _getframe(1).f_code.co_filename  # the Python code that called the tracing function
            if _startswith(caller, candidate_file) and not _startswith(caller, wrapper_file):
                refuse(event, "(from the candidate's own code)")

    return hook



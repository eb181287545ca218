"""The quick system calls the host makes around each sandboxed call, made without letting go of the lock.

CPython lets go of the interpreter lock around nearly every system call ``os`` makes (``close``,
``read``, ``pipe``, ``waitpid``, ``scandir``...), so that other threads run meanwhile. A fork-sandbox
call makes about eighteen, each a microsecond or two; in a host whose other threads are busy (a web
worker's threads logging), every let-go hands the lock to one of them, and the call waits for it to
come back: ~50 µs each, measured (docs/sandbox.md, sessions 18 and 19). None of these calls can block
here — a pipe is read only once ``poll`` said it is ready, a child is reaped with ``WNOHANG``, a
folder listed is a local one of regrow's own — so they are made through :class:`ctypes.PyDLL`, which
keeps the lock. The one call that waits (for the child: :meth:`Poller.ready` with a timeout) still lets go.
The price: a foreign call writes a few more of the host's pages than ``os``'s (~30 page faults a call more,
each a page copied while the child lives; measured, docs/sandbox.md), what no busy thread costs the host.

Linux (glibc or musl, 64-bit) only; elsewhere each function is the ``os`` call it stands for.
"""

from __future__ import annotations

import ctypes
import errno
import os
import select
import sys
import threading
from collections.abc import Iterable
from typing import Any

__all__ = ["Poller", "close", "is_empty", "kill", "pipe", "read", "reap", "statm_pages"]


def _load() -> Any:
    if sys.platform != "linux" or ctypes.sizeof(ctypes.c_void_p) != 8:
        return None
    try:
        lib = ctypes.PyDLL(None, use_errno=True)  # the process's own symbols: libc's, called holding the lock
        for name in ("open", "syscall", "pipe2", "close", "read", "pread", "wait4", "kill", "poll"):
            getattr(lib, name)  # resolved now, in the host: every lookup later is a plain attribute
        # No argtypes on the others: each argument is an int below 2**31 or an object made once, so ctypes
        # passes it as it is; argtypes would make a converted object of each, each call (pages written).
        return lib
    except (OSError, AttributeError):
        return None


_LIB = _load()
_NAME = 19  # offset of d_name in a struct linux_dirent64
_DOTS = (b".", b"..")
_ZERO = ctypes.c_long(0)  # pread's off_t, a 64-bit argument: an int alone would be passed as a 32-bit one
READ = 1 << 16  # the most one read takes


class _Mine(threading.local):
    """What this thread's calls fill in, made once per thread: a fresh object each call is pages written, each
    a page copied while a forked child shares them."""

    def __init__(self) -> None:
        self.buffer: Any = ctypes.create_string_buffer(READ)  # sliced, it gives bytes (typeshed says a list)
        self.ends = (ctypes.c_int * 2)()
        self.status = ctypes.c_int(0)
        self.status_ref = ctypes.byref(self.status)


_mine = _Mine()


class _PollFd(ctypes.Structure):
    _fields_ = [("fd", ctypes.c_int), ("events", ctypes.c_short), ("revents", ctypes.c_short)]


def _raise() -> None:
    number = ctypes.get_errno()
    raise OSError(number, os.strerror(number))


def pipe() -> tuple[int, int]:
    """A pipe, both ends close-on-exec (``os.pipe``)."""
    if _LIB is None:
        return os.pipe()
    ends = _mine.ends
    if _LIB.pipe2(ends, _CLOEXEC) != 0:
        _raise()
    return ends[0], ends[1]


def close(fd: int) -> None:
    """``os.close`` (never retried: on Linux the fd is gone even when ``close`` reports EINTR)."""
    if _LIB is None:
        os.close(fd)
    elif _LIB.close(fd) != 0 and ctypes.get_errno() != errno.EINTR:
        _raise()


def read(fd: int, size: int) -> bytes:
    """Up to ``size`` bytes of ``fd`` (at most :data:`READ`), which ``poll`` said is ready (so this does not
    wait)."""
    if _LIB is None:
        return os.read(fd, size)
    buffer = _mine.buffer
    size = min(size, READ)
    while (got := _LIB.read(fd, buffer, size)) < 0:
        if ctypes.get_errno() != errno.EINTR:
            _raise()
    data: bytes = buffer[:got]  # a slice of a char array: bytes, made in C (string_at is a foreign call too)
    return data


def reap(pid: int) -> tuple[int, int]:
    """``os.waitpid(pid, os.WNOHANG)``: (0, 0) while it runs; ``ChildProcessError`` once it was reaped."""
    if _LIB is None:
        return os.waitpid(pid, os.WNOHANG)
    mine = _mine
    while (got := _LIB.wait4(pid, mine.status_ref, _WNOHANG, None)) < 0:
        number = ctypes.get_errno()
        if number == errno.ECHILD:
            raise ChildProcessError(number, os.strerror(number))
        if number != errno.EINTR:
            _raise()
    return got, mine.status.value if got else 0


def kill(pid: int, signal: int) -> None:
    """``os.kill`` (a negative ``pid``: its process group, as ``os.killpg(-pid)``)."""
    if _LIB is None:
        os.kill(pid, signal) if pid > 0 else os.killpg(-pid, signal)
    elif _LIB.kill(pid, signal) != 0:
        _raise()


_CLOEXEC, _WNOHANG, _POLLIN = os.O_CLOEXEC, os.WNOHANG, select.POLLIN


class Poller:
    """The fds of ``fds`` ready to read: data, end of stream or an error (a read tells which)."""

    def __init__(self, fds: Iterable[int]) -> None:
        self._poll = select.poll()  # Linux and macOS: every platform a child process of regrow's runs on
        self._fds: tuple[int, ...] = ()
        self._entries: Any = None
        for fd in fds:
            self._poll.register(fd, select.POLLIN)
            self._keep((*self._fds, fd))

    def _keep(self, fds: tuple[int, ...]) -> None:
        self._fds = fds
        if _LIB is not None:  # the array a look passes to poll(2), made here (before the fork, for a sandbox)
            self._entries = (_PollFd * max(1, len(fds)))()
            for entry, fd in zip(self._entries, fds, strict=False):
                entry.fd, entry.events = fd, _POLLIN

    def ready(self, timeout: float) -> list[int]:
        """Those ready now, waiting up to ``timeout`` seconds (letting go of the lock) for one to be."""
        if timeout > 0 or _LIB is None or not self._fds:
            return [fd for fd, _ in self._poll.poll(timeout * 1000)]  # ms, rounded up: no busy wait at the end
        entries = self._entries  # a look, not a wait: made keeping the lock
        while (count := _LIB.poll(entries, len(self._fds), 0)) < 0:
            if ctypes.get_errno() != errno.EINTR:
                _raise()
        return [entry.fd for entry in entries if entry.revents] if count else []

    def forget(self, fd: int) -> None:
        self._poll.unregister(fd)
        self._keep(tuple(kept for kept in self._fds if kept != fd))


_statm: list[int] = []  # this process's /proc/self/statm, open: [pid, fd]


def statm_pages() -> int:
    """Pages this process has mapped now (the first field of ``/proc/self/statm``), read from a descriptor
    kept open (one per process: a forked child opens its own)."""
    if _LIB is None or not _statm or _statm[0] != os.getpid():
        with open("/proc/self/statm", "rb") as statm:
            pages = int(statm.read().split()[0])
        if _LIB is not None:
            _statm[:] = [os.getpid(), os.open("/proc/self/statm", os.O_RDONLY | os.O_CLOEXEC)]
        return pages
    buffer = _mine.buffer
    got = _LIB.pread(_statm[1], buffer, 128, _ZERO)
    if got <= 0:
        _raise()
    return int(buffer[:got].split()[0])


def is_empty(folder: str) -> bool:
    """Whether ``folder`` holds nothing (False where it cannot be read). Read with ``getdents64`` into this
    thread's buffer: ``opendir`` allocates 32 KiB each time, pages written."""
    if _LIB is None or _GETDENTS is None:
        try:
            with os.scandir(folder) as entries:
                return next(entries, None) is None
        except OSError:
            return False
    fd = _LIB.open(os.fsencode(folder), _DIRECTORY)
    if fd < 0:
        return False
    try:
        buffer = _mine.buffer
        while (got := _LIB.syscall(_GETDENTS, fd, buffer, READ)) > 0:
            at = 0
            while at < got:  # struct linux_dirent64: d_ino, d_off (8 each), d_reclen (2), d_type (1), d_name
                length = int.from_bytes(buffer[at + 16 : at + 18], "little")
                name = buffer[at + _NAME : at + length].split(b"\0", 1)[0]
                if name not in _DOTS:
                    return False
                at += length
        return bool(got == 0)
    finally:
        _LIB.close(fd)


_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_GETDENTS = {"x86_64": 217, "aarch64": 61}.get(os.uname().machine)  # SYS_getdents64

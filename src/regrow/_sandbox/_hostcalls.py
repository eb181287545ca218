"""The quick system calls the host makes around each sandboxed call, made without letting go of the lock.

CPython lets go of the interpreter lock around nearly every system call ``os`` makes (``close``,
``read``, ``pipe``, ``waitpid``, ``scandir``...), so that other threads run meanwhile. A fork-sandbox
call makes about eighteen, each a microsecond or two; in a host whose other threads are busy (a web
worker's threads logging), every let-go hands the lock to one of them, and the call waits for it to
come back: ~50 µs each, measured (docs/sandbox.md, sessions 18 and 19). None of these calls can block
here — a pipe is read only once ``poll`` said it is ready, a child is reaped with ``WNOHANG``, a
folder listed is a local one of regrow's own — so they are made through :class:`ctypes.PyDLL`, which
keeps the lock. The one call that waits (for the child, in :mod:`._channel`) still lets go.

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
        lib.opendir.restype = lib.readdir.restype = ctypes.c_void_p
        lib.opendir.argtypes = [ctypes.c_char_p]
        lib.readdir.argtypes = lib.closedir.argtypes = [ctypes.c_void_p]
        lib.read.restype = lib.pread.restype = ctypes.c_ssize_t
        lib.read.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t]
        lib.pread.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_long]
        lib.wait4.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
        lib.poll.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int]
        return lib
    except (OSError, AttributeError):
        return None


_LIB = _load()
_NAME = 19  # offset of d_name in a 64-bit Linux struct dirent (d_ino, d_off: 8 each; d_reclen: 2; d_type: 1)
_DOTS = (b".", b"..")
READ = 1 << 16  # the most one read takes
_local = threading.local()


class _PollFd(ctypes.Structure):
    _fields_ = [("fd", ctypes.c_int), ("events", ctypes.c_short), ("revents", ctypes.c_short)]


def _raise() -> None:
    number = ctypes.get_errno()
    raise OSError(number, os.strerror(number))


def pipe() -> tuple[int, int]:
    """A pipe, both ends close-on-exec (``os.pipe``)."""
    if _LIB is None:
        return os.pipe()
    ends = (ctypes.c_int * 2)()
    if _LIB.pipe2(ends, os.O_CLOEXEC) != 0:
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
    wait). Into a buffer of this thread's, made once: a fresh one would be pages written, each a page copied
    while a forked child shares them."""
    if _LIB is None:
        return os.read(fd, size)
    buffer = getattr(_local, "buffer", None)
    if buffer is None:
        buffer = _local.buffer = ctypes.create_string_buffer(READ)
    size = min(size, READ)
    while (got := _LIB.read(fd, buffer, size)) < 0:
        if ctypes.get_errno() != errno.EINTR:
            _raise()
    return ctypes.string_at(buffer, got)


def reap(pid: int) -> tuple[int, int]:
    """``os.waitpid(pid, os.WNOHANG)``: (0, 0) while it runs; ``ChildProcessError`` once it was reaped."""
    if _LIB is None:
        return os.waitpid(pid, os.WNOHANG)
    status = ctypes.c_int(0)
    while (got := _LIB.wait4(pid, ctypes.byref(status), os.WNOHANG, None)) < 0:
        number = ctypes.get_errno()
        if number == errno.ECHILD:
            raise ChildProcessError(number, os.strerror(number))
        if number != errno.EINTR:
            _raise()
    return got, status.value if got else 0


def kill(pid: int, signal: int) -> None:
    """``os.kill`` (a negative ``pid``: its process group, as ``os.killpg(-pid)``)."""
    if _LIB is None:
        os.kill(pid, signal) if pid > 0 else os.killpg(-pid, signal)
    elif _LIB.kill(pid, signal) != 0:
        _raise()


class Poller:
    """The fds of ``fds`` ready to read: data, end of stream or an error (a read tells which)."""

    def __init__(self, fds: Iterable[int]) -> None:
        self._fds = tuple(fds)
        self._poll = select.poll()  # Linux and macOS: every platform a child process of regrow's runs on
        for fd in self._fds:
            self._poll.register(fd, select.POLLIN)

    def ready(self, timeout: float) -> list[int]:
        """Those ready now, waiting up to ``timeout`` seconds (letting go of the lock) for one to be."""
        if timeout > 0 or _LIB is None or not self._fds:
            return [fd for fd, _ in self._poll.poll(timeout * 1000)]  # ms, rounded up: no busy wait at the end
        entries = (_PollFd * len(self._fds))()  # a look, not a wait: made keeping the lock
        for entry, fd in zip(entries, self._fds, strict=True):
            entry.fd, entry.events = fd, select.POLLIN
        while (count := _LIB.poll(entries, len(self._fds), 0)) < 0:
            if ctypes.get_errno() != errno.EINTR:
                _raise()
        return [entry.fd for entry in entries if entry.revents] if count else []

    def forget(self, fd: int) -> None:
        self._poll.unregister(fd)
        self._fds = tuple(kept for kept in self._fds if kept != fd)


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
    buffer = ctypes.create_string_buffer(128)
    got = _LIB.pread(_statm[1], buffer, 128, 0)
    if got <= 0:
        _raise()
    return int(buffer.raw[:got].split()[0])


def is_empty(folder: str) -> bool:
    """Whether ``folder`` holds nothing (False where it cannot be read)."""
    if _LIB is None:
        try:
            with os.scandir(folder) as entries:
                return next(entries, None) is None
        except OSError:
            return False
    listing = _LIB.opendir(os.fsencode(folder))
    if not listing:
        return False
    try:
        while entry := _LIB.readdir(listing):
            if ctypes.string_at(entry + _NAME) not in _DOTS:
                return False
        return True
    finally:
        _LIB.closedir(listing)

"""The kernel's side of the guard (Linux): what a sandboxed child asks of the kernel before candidate code runs.

* a new session (``setsid``, done where the child takes its fds): no controlling terminal, and one
  process group the parent kills as a whole;
* die-with-parent, an empty network namespace (root), Landlock (writes outside scratch, ``execve``,
  TCP, signals and abstract sockets outside the sandbox);
* a scratch folder that is a private ``tmpfs`` of a bounded size, ``noexec``/``nosuid``/``nodev``, in a
  mount namespace of the child's own (root): what the call writes holds no disk, cannot be mapped
  executable (no native code ``dlopen``-ed from it) and is gone with the child, whatever its shape;
* no shared memory with the host: every ``MAP_SHARED`` mapping the child inherited (a
  ``multiprocessing.Value``, its lock's semaphore, an ``mmap`` of a file) is replaced by a private
  copy, so what the child writes there stays in the child;
* ``PR_SET_NO_NEW_PRIVS`` and no capabilities: the bounding and ambient sets emptied, the secure
  bits locked, effective/permitted/inheritable set to zero. Root stays uid 0 but can no longer
  override file permissions, trace or read other processes' ``/proc`` entries, or change other
  users' files;
* the seccomp filter of :mod:`._seccomp`, last of all (it forbids what the steps above use).

What can be prepared is prepared in the host, once: libc, the namespace, the filter's bytes.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import warnings
from typing import Any

from . import _afterfork, _seccomp

_CLONE_NEWNET, _CLONE_NEWNS = 0x40000000, 0x00020000
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_REC, _MS_PRIVATE = 0x2, 0x4, 0x8, 0x4000, 0x40000
_INODE_BYTES = 4096  # a private scratch allows one inode per this many bytes of its size
_PR_SET_PDEATHSIG, _PR_CAPBSET_DROP, _PR_SET_SECUREBITS, _PR_SET_NO_NEW_PRIVS, _PR_CAP_AMBIENT = 1, 24, 28, 38, 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_SECURE_BITS = 0xEF  # NOROOT, NO_SETUID_FIXUP, NO_CAP_AMBIENT_RAISE and every lock (not KEEP_CAPS)
_CAPABILITY_V3 = 0x20080522
_LANDLOCK_CREATE_RULESET, _LANDLOCK_ADD_RULE, _LANDLOCK_RESTRICT_SELF = 444, 445, 446  # same on every arch
_FS_EXECUTE, _FS_WRITE_FILE, _FS_TRUNCATE = 1 << 0, 1 << 1, 1 << 14
_FS_WRITES = sum(1 << bit for bit in range(4, 13)) | _FS_WRITE_FILE  # remove_*, make_* and write_file
_FS_REFER = 1 << 13
_NET_TCP = (1 << 0) | (1 << 1)  # bind and connect
_SCOPE_ALL = (1 << 0) | (1 << 1)  # abstract unix sockets and signals
_PROT_READ, _PROT_WRITE, _PROT_EXEC = 1, 2, 4
_MAP_PRIVATE, _MAP_FIXED, _MAP_ANONYMOUS = 0x02, 0x10, 0x20
# Modules through which Python code makes shared mappings; without one loaded the host's maps are not read.
_SHARING_MODULES = ("mmap", "_multiprocessing", "_posixshmem")

Region = tuple[int, int, int]  # start, end, protection


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


_libc_handle: ctypes.CDLL | None = None
_environ: list[ctypes.c_void_p] = []  # libc's `environ`, looked up once in the host
_environ_block: list[tuple[int, int]] = []  # where this process's original environment block is
_kept: list[Any] = []  # the fresh environment a child's libc points at: it must outlive every getenv
_BYTES_DATA = bytes.__basicsize__ - 1  # offset of a bytes object's data (CPython)
_netns: dict[str, int | None] = {}  # "fd" -> an fd on an empty network namespace, once made
_last_cap: list[int] = []
_NO_CAPS = (_CapHeader(_CAPABILITY_V3, 0), (_CapData * 2)())  # capset's arguments, made here, not in each child


def libc() -> ctypes.CDLL | None:
    """libc, loaded once in the host so children do not pay for it (and before their hook refuses ctypes)."""
    global _libc_handle
    if _libc_handle is None and sys.platform == "linux":
        handle = ctypes.CDLL(None, use_errno=True)
        handle.syscall.restype = ctypes.c_long
        handle.mmap.restype = ctypes.c_void_p
        handle.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                ctypes.c_long]
        handle.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        # Looked up here: a child that looks a function up pays ~0.3 ms.
        for name in ("prctl", "setns", "unshare", "capset", "mount"):
            getattr(handle, name)
        _libc_handle = handle
    return _libc_handle


def prepare() -> int | None:
    """Do the host-side preparation once: libc, the seccomp programs, an empty network namespace to join.

    Returns the namespace fd (None where namespaces are not permitted). Joining one namespace per
    call with ``setns`` costs ~0.2 ms; creating one per call with ``unshare`` costs ~1.5 ms.
    """
    handle = libc()
    if handle is None:
        return None
    if not _environ:
        _environ.append(ctypes.c_void_p.in_dll(handle, "environ"))
        _environ_block.extend(_read_environ_block())
    _seccomp.build(False)
    _seccomp.build(True)
    for allow_exec in (False, True):
        _landlock_ruling(handle, allow_exec)
    if not _last_cap:
        try:
            with open("/proc/sys/kernel/cap_last_cap", "rb") as source:
                _last_cap.append(int(source.read()))
        except (OSError, ValueError):
            _last_cap.append(63)
    if "fd" not in _netns:
        _netns["fd"] = _make_empty_netns(handle) if os.geteuid() == 0 else None
    return _netns["fd"]


def _make_empty_netns(handle: ctypes.CDLL) -> int | None:
    ready_r, ready_w = os.pipe()
    done_r, done_w = os.pipe()

    def helper() -> None:  # a short-lived helper: it enters a new namespace and waits until the host holds it
        try:
            os.close(done_w)  # or the read below would never see the end of the pipe
            ok = handle.unshare(_CLONE_NEWNET) == 0
            os.write(ready_w, b"1" if ok else b"0")
            os.read(done_r, 1)
        finally:
            os._exit(0)

    # Its whole life is in the at-fork handler: no handler registered after regrow's ever runs in it.
    _afterfork.arm(helper)
    try:
        with warnings.catch_warnings():  # 3.12 warns about fork in a threaded process; the helper runs no Python
            warnings.simplefilter("ignore", DeprecationWarning)  # of the host's but its own few lines, then _exit
            pid = os.fork()
    finally:
        _afterfork.disarm()
    if pid == 0:
        helper()  # only where no at-fork handler ran
    os.close(ready_w)
    os.close(done_r)
    try:
        if os.read(ready_r, 1) != b"1":
            return None
        return os.open(f"/proc/{pid}/ns/net", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    finally:
        os.close(done_w)
        os.close(ready_r)
        os.waitpid(pid, 0)


# -- the environment ----------------------------------------------------------------------------


def _read_environ_block() -> list[tuple[int, int]]:
    """``env_start`` and ``env_end`` of this process (fields 50 and 51 of ``/proc/self/stat``): the memory
    ``/proc/<pid>/environ`` shows, which still holds every variable the process started with."""
    try:
        with open("/proc/self/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()  # fields[0] is field 3, the state
        start, end = int(fields[47]), int(fields[48])
    except (OSError, ValueError, IndexError):
        return []
    return [(start, end)] if 0 < start < end else []


def environ_array(entries: list[bytes]) -> Any:
    """A ``char **`` holding ``entries`` (``NAME=value``), NULL-terminated: what libc's ``environ`` points at."""
    if libc() is None:
        return None
    array = (ctypes.c_char_p * (len(entries) + 1))(*entries)  # keeps the bytes alive in array._objects
    return array


def forget_environ(environ: dict[bytes, bytes], secrets: list[bytes], made: Any = None) -> bool:
    """Leave nothing of the host's environment in this (child) process but ``environ`` without ``secrets``.

    The secrets' values are wiped in place and dropped from ``environ`` (``os.environ``'s own dict), libc's
    ``environ`` is pointed at a fresh array of what is left, and the original environment block — what
    ``/proc/self/environ`` reads — is zeroed. It is this child's private copy since the fork. False where
    this cannot be done (not Linux, not CPython): the secrets are then only removed with ``unsetenv``.
    ``made`` is that array made in the host already (:func:`environ_array`); it must list what
    ``environ`` holds once the secrets are out.
    """
    handle = _libc_handle or libc()  # loaded in the host: no call in a child
    if handle is None or not _environ or sys.implementation.name != "cpython":
        return False
    for name in secrets:
        value = environ.pop(name, None)
        # Never a one-byte value: CPython keeps one bytes object for each byte and hands it to everyone, so
        # wiping the secret "1" in place turned every b"1" of the child into b"\0" (seen: a real suite
        # failed every candidate with ``SECRET=1`` in the environment). A one-byte secret is no secret.
        if type(value) is bytes and len(value) > 1:
            ctypes.memset(id(value) + _BYTES_DATA, 0, len(value))
    array = made if made is not None else environ_array([name + b"=" + value for name, value in environ.items()])
    _kept[:] = [array]
    _environ[0].value = ctypes.addressof(array)
    for start, end in _environ_block:
        ctypes.memset(start, 0, end - start)
    return True


def die_with_parent() -> None:
    """Ask the kernel to SIGKILL this process when its parent dies (Linux), so nothing outlives the host."""
    handle = _libc_handle or libc()  # loaded in the host: no call in a child
    if handle is not None:
        handle.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def enter_netns(fd: int | None) -> bool:
    handle = _libc_handle or libc()  # loaded in the host: no call in a child
    return fd is not None and handle is not None and handle.setns(fd, _CLONE_NEWNET) == 0


def scratch_mount(scratch: str, size: int) -> tuple[bytes, bytes] | None:
    """What :func:`private_scratch` passes to ``mount`` for ``scratch`` (worked out in the host: a child that
    formats and encodes them pays page faults for it); None where the process cannot mount (not root)."""
    if sys.platform != "linux" or os.geteuid() != 0:
        return None
    return os.fsencode(scratch), f"size={size},nr_inodes={max(size // _INODE_BYTES, 64)},mode=0700".encode()


def private_scratch(scratch: str, size: int, prepared: tuple[bytes, bytes] | None = None) -> bool:
    """Make ``scratch`` a ``tmpfs`` of at most ``size`` bytes that only this process (and what it starts)
    sees: a mount namespace of its own, every mount in it made private (so nothing mounted here
    reaches the host's namespace), then the ``tmpfs`` on ``scratch``, ``noexec``, ``nosuid``, ``nodev``.

    Linux, as root (``CAP_SYS_ADMIN``); False elsewhere, and the folder stays the host's plain one.
    ``prepared``: :func:`scratch_mount` of the same folder and size, made in the host.
    Costs the child ~0.5 ms (a copy of the mount table, one walk over it, one mount).
    """
    handle = _libc_handle or libc()  # loaded in the host: no call in a child
    target = prepared or scratch_mount(scratch, size)
    if handle is None or target is None or handle.unshare(_CLONE_NEWNS) != 0:
        return False
    if handle.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
        return False  # not private: a mount made now could propagate to the host's namespace
    return handle.mount(b"regrow-scratch", target[0], b"tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC,  # type: ignore[no-any-return]
                        target[1]) == 0


def landlock(scratch: str, allow_exec: bool, views: tuple[str, ...] = ()) -> int:
    """Let the kernel refuse writes outside ``scratch`` and the mounted ``views`` (and more, by ABI); the ABI
    used, 0 if none. A view is opened here, after it was mounted: the rule is on the view, not the real folder.
    (The rule on scratch is made here too, after its tmpfs was mounted: a rule on the folder beneath a mount
    does not reach into it.) The ABI and the ruleset's attributes are worked out once, in the host."""
    handle = _libc_handle or libc()  # loaded in the host: no call in a child
    ruling = _landlock_ruling(handle, allow_exec) if handle is not None else None
    if handle is None or ruling is None:
        return 0
    abi, attr, size, fs, null_access = ruling
    ruleset = int(handle.syscall(_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), size, 0))
    if ruleset < 0:
        return 0
    try:
        for place in (scratch, *views):
            _allow_beneath(handle, ruleset, place, fs)
        _allow_beneath(handle, ruleset, os.devnull, null_access)
        if handle.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return 0
        return abi if handle.syscall(_LANDLOCK_RESTRICT_SELF, ruleset, 0) == 0 else 0
    finally:
        os.close(ruleset)


_Ruling = tuple[int, _RulesetAttr, int, int, int]  # ABI, the ruleset's attributes and their size, rule accesses
_rulings: dict[bool, _Ruling | None] = {}


def _landlock_ruling(handle: ctypes.CDLL, allow_exec: bool) -> _Ruling | None:
    """What a ruleset needs on this kernel (None: no Landlock), per variant; made by :func:`prepare` in the host."""
    if allow_exec in _rulings:
        return _rulings[allow_exec]
    abi = int(handle.syscall(_LANDLOCK_CREATE_RULESET, None, 0, 1))
    ruling: _Ruling | None = None
    if abi > 0:
        fs = _FS_WRITES | (_FS_REFER if abi >= 2 else 0) | (_FS_TRUNCATE if abi >= 3 else 0)
        net, scoped = (_NET_TCP if abi >= 4 else 0), (_SCOPE_ALL if abi >= 6 else 0)
        attr = _RulesetAttr(fs | (0 if allow_exec else _FS_EXECUTE), net, scoped)
        size = 8 if abi < 4 else 16 if abi < 6 else 24  # the struct grew with the ABI; pass what this kernel knows
        ruling = (abi, attr, size, fs, _FS_WRITE_FILE | (_FS_TRUNCATE if abi >= 3 else 0))
    _rulings[allow_exec] = ruling
    return ruling


def _allow_beneath(handle: ctypes.CDLL, ruleset: int, path: str, access: int) -> None:
    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    try:
        rule = _RULE  # made in the host; a child fills it in (each object it makes costs it pages)
        rule.allowed, rule.parent_fd = access, fd
        handle.syscall(_LANDLOCK_ADD_RULE, ruleset, 1, _RULE_REF, 0)
    finally:
        os.close(fd)


_RULE = _PathBeneath(0, -1)
_RULE_REF = ctypes.byref(_RULE)


# -- shared memory ----------------------------------------------------------------------------


def shared_regions() -> tuple[Region, ...]:
    """The ``MAP_SHARED`` mappings of this process (read in the host before it forks, where it is cheap).

    Only read when a module that makes them from Python is loaded (``mmap``, ``multiprocessing``'s
    locks, ``multiprocessing.shared_memory``): reading ``/proc/self/maps`` costs ~0.2 ms.
    """
    if sys.platform != "linux" or not any(name in sys.modules for name in _SHARING_MODULES):
        return ()
    try:
        with open("/proc/self/maps", "rb") as maps:
            lines = maps.read().splitlines()
    except OSError:
        return ()
    regions = []
    for line in lines:
        fields = line.split(None, 5)
        perms = fields[1] if len(fields) > 1 else b""
        if perms[3:4] != b"s" or (len(fields) > 5 and fields[5].startswith(b"[")):
            continue
        start, end = (int(part, 16) for part in fields[0].split(b"-"))
        flags = zip(perms[:3], b"rwx", (_PROT_READ, _PROT_WRITE, _PROT_EXEC), strict=False)
        regions.append((start, end, sum(bit for have, want, bit in flags if have == want)))
    return tuple(regions)


def privatize(regions: tuple[Region, ...]) -> None:
    """Replace each shared mapping by a private copy of its content, at the same address and protection."""
    handle = _libc_handle or libc()  # loaded in the host: no call in a child
    if handle is None or not regions:
        return
    memory = os.open("/proc/self/mem", os.O_RDONLY | os.O_CLOEXEC)
    try:
        for start, end, prot in regions:
            size = end - start
            try:
                content = os.pread(memory, size, start)
            except OSError:  # e.g. pages past the end of a truncated file: they read as zeros
                content = b""
            fixed = _MAP_PRIVATE | _MAP_FIXED | _MAP_ANONYMOUS
            if handle.mmap(start, size, _PROT_READ | _PROT_WRITE, fixed, -1, 0) != start:
                raise OSError(ctypes.get_errno(), f"cannot make the shared mapping at {start:#x} private")
            ctypes.memmove(start, content, len(content))
            if prot != _PROT_READ | _PROT_WRITE:
                handle.mprotect(start, size, prot)
    finally:
        os.close(memory)


# -- privileges and the syscall filter --------------------------------------------------------


def no_new_privs() -> None:
    """Nothing this process executes can gain privileges (setuid bits, file capabilities); seccomp needs it."""
    handle = _libc_handle or libc()  # loaded in the host: no call in a child
    if handle is not None and handle.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "cannot set no_new_privs")


def drop_capabilities(bounding: bool) -> None:
    """Empty the capability sets of this process, for good (a no-op for a process that has none).

    Effective, permitted, inheritable and ambient always; the secure bits locked so that root gets
    none back through ``execve``; the bounding set only if ``bounding`` (a child that may execute
    programs): without ``execve`` it grants nothing, and emptying it costs ~0.1 ms (one credential
    commit per capability). ``no_new_privs`` already keeps ``execve`` from granting any.
    """
    handle = _libc_handle or libc()  # loaded in the host: no call in a child
    if handle is None:
        return
    handle.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    for cap in range(_last_cap[0] + 1 if _last_cap else 64) if bounding else ():
        if handle.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:  # EINVAL past the last one; EPERM unprivileged
            break
    handle.prctl(_PR_SET_SECUREBITS, _SECURE_BITS, 0, 0, 0)  # needs CAP_SETPCAP, so: before the capset
    header, data = _NO_CAPS
    if handle.capset(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "cannot drop capabilities")


def filter_syscalls(allow_processes: bool) -> bool:
    """Install the seccomp filter (after ``no_new_privs``); False where this machine has none."""
    handle = _libc_handle or libc()  # loaded in the host: no call in a child
    program = _seccomp.build(allow_processes) if handle is not None else None
    if handle is None or program is None:
        return False
    program.install(handle.prctl)
    return True


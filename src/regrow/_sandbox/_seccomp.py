"""A seccomp filter for sandboxed children: a small classic-BPF program generated here, no libseccomp.

The program is built once per process and per variant (processes allowed or not) and kept as
bytes; a child patches its own pid into it and installs it with one ``prctl``. Filters cannot be
removed and are inherited by every thread and process the child starts, including across
``execve`` and inside subinterpreters: no Python-level trick reaches around it.

Every denial is ``SECCOMP_RET_KILL_PROCESS``: the kernel kills the whole child with SIGSYS before
the call does anything. A candidate cannot catch that, so a denied call can never end as a
passing verdict; the parent reads SIGSYS from the wait status and reports a refusal. The one
exception is ``clone3``, which answers ``ENOSYS`` (its flags sit behind a pointer the filter
cannot read; the C library then falls back to ``clone``, whose flags the filter checks), and
``fallocate`` with a mode, which answers ``EOPNOTSUPP`` as a file system without it would.

What the filter refuses (see ``docs/sandbox.md``):

* every ``socket``; ``socketpair`` except an AF_UNIX stream pair (asyncio's self-pipe), which
  cannot reach anything outside the child;
* ``ioctl`` requests outside a small read-mostly allowlist (no ``TIOCSTI``, no ``FS_IOC_SETFLAGS``);
* ``setpriority``/``ioprio_set``/``sched_set*``/``prlimit64``/``migrate_pages``/``move_pages`` on any
  process but its own, and signals (``kill``, ``tkill``, ``tgkill``, ``rt_*sigqueueinfo``) to any
  process but its own or its own process group; ``pidfd_open``/``pidfd_send_signal``/``pidfd_getfd``;
* ``ptrace``, ``process_vm_readv``/``writev``, ``kcmp``; ``unshare``, ``setns``, the mount family,
  ``chroot``; ``clone`` with namespace flags, and any new process when processes are not allowed;
* ``setsid``/``setpgid`` (so nothing the child starts can leave its process group);
* every change of file metadata: ``chmod``/``chown``/``*xattr``/``file_setattr``, and ``utime``
  to given times (to *now*, as ``Path.touch`` does, is allowed: it needs write access or ownership);
* kernel-wide levers: ``bpf``, ``perf_event_open``, keyrings, modules, ``kexec``, ``reboot``,
  swap, ``acct``, clocks, host names, ``quotactl``, ``syslog``, ``io_uring``, ``userfaultfd``,
  ``open_by_handle_at``, ``fanotify_init``, x86 I/O ports and LDT;
* kernel objects that are not paths, which would outlive the child or reach the host's own by key:
  System V shared memory, semaphores and message queues, POSIX message queues, ``memfd_create`` and
  ``memfd_secret`` (memory no address-space limit counts; code ``dlopen`` could map from it);
* ``prctl`` options outside :data:`PRCTL_ALLOWED` (``PR_SET_PDEATHSIG`` would undo die-with-parent);
  ``fallocate`` with a non-zero mode (``FALLOC_FL_KEEP_SIZE`` holds disk past the file-size limit).
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import os
import platform
import struct
import sys
from collections.abc import Callable, Sequence

RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
RET_ALLOW = 0x7FFF0000
_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 22, 2

# classic BPF opcodes
_LD_ABS, _JA, _JEQ, _JGE, _JSET, _AND, _RET = 0x20, 0x05, 0x15, 0x35, 0x45, 0x54, 0x06
_LEAF = 8  # syscalls compared one by one at the end of a branch of the search tree
_INSN = struct.Struct("=HBBI")  # struct sock_filter: code, jt, jf, k
_WORD = struct.Struct("=I")
_NR, _ARCH = 0, 4  # offsets in struct seccomp_data; args[i] at 16 + 8 * i (low word first on both archs)
_PID, _NEG_PID = "pid", "-pid"  # placeholders for the child's own pid, patched in after the fork

_X86_64 = {
    "socket": 41, "socketpair": 53, "ioctl": 16, "kill": 62, "tkill": 200, "tgkill": 234, "rt_sigqueueinfo": 129,
    "rt_tgsigqueueinfo": 297, "setpriority": 141, "ioprio_set": 251, "sched_setparam": 142,
    "sched_setscheduler": 144, "sched_setaffinity": 203, "sched_setattr": 314, "prlimit64": 302,
    "migrate_pages": 256, "move_pages": 279, "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311,
    "kcmp": 312, "unshare": 272, "setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161,
    "chmod": 90, "fchmod": 91, "chown": 92, "fchown": 93, "lchown": 94, "fchownat": 260, "fchmodat": 268,
    "utime": 132, "utimes": 235, "futimesat": 261, "utimensat": 280, "setxattr": 188, "lsetxattr": 189,
    "fsetxattr": 190, "removexattr": 197, "lremovexattr": 198, "fremovexattr": 199, "clone": 56, "fork": 57,
    "vfork": 58, "bpf": 321, "perf_event_open": 298, "keyctl": 250, "add_key": 248, "request_key": 249,
    "init_module": 175, "finit_module": 313, "delete_module": 176, "kexec_load": 246, "kexec_file_load": 320,
    "reboot": 169, "swapon": 167, "swapoff": 168, "acct": 163, "setsid": 112, "setpgid": 109,
    "userfaultfd": 323, "open_by_handle_at": 304, "settimeofday": 164, "clock_settime": 227,
    "clock_adjtime": 305, "adjtimex": 159, "sethostname": 170, "setdomainname": 171, "iopl": 172, "ioperm": 173,
    "modify_ldt": 154, "quotactl": 179, "syslog": 103, "vhangup": 153, "lookup_dcookie": 212, "uselib": 134,
    "nfsservctl": 180, "fanotify_init": 300, "shmget": 29, "shmat": 30, "shmctl": 31, "shmdt": 67, "semget": 64,
    "semop": 65, "semctl": 66, "semtimedop": 220, "msgget": 68, "msgsnd": 69, "msgrcv": 70, "msgctl": 71,
    "mq_open": 240, "mq_unlink": 241, "mq_timedsend": 242, "mq_timedreceive": 243, "mq_notify": 244,
    "mq_getsetattr": 245, "memfd_create": 319, "prctl": 157, "fallocate": 285,
}  # fmt: skip
_AARCH64 = {
    "socket": 198, "socketpair": 199, "ioctl": 29, "kill": 129, "tkill": 130, "tgkill": 131, "rt_sigqueueinfo": 138,
    "rt_tgsigqueueinfo": 240, "setpriority": 140, "ioprio_set": 30, "sched_setparam": 118,
    "sched_setscheduler": 119, "sched_setaffinity": 122, "sched_setattr": 274, "prlimit64": 261,
    "migrate_pages": 238, "move_pages": 239, "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271,
    "kcmp": 272, "unshare": 97, "setns": 268, "mount": 40, "umount2": 39, "pivot_root": 41, "chroot": 51,
    "fchmod": 52, "fchown": 55, "fchownat": 54, "fchmodat": 53, "utimensat": 88, "setxattr": 5, "lsetxattr": 6,
    "fsetxattr": 7, "removexattr": 14, "lremovexattr": 15, "fremovexattr": 16, "clone": 220, "bpf": 280,
    "perf_event_open": 241, "keyctl": 219, "add_key": 217, "request_key": 218, "init_module": 105,
    "finit_module": 273, "delete_module": 106, "kexec_load": 104, "kexec_file_load": 294, "reboot": 142,
    "swapon": 224, "swapoff": 225, "acct": 89, "setsid": 157, "setpgid": 154, "userfaultfd": 282,
    "open_by_handle_at": 265, "settimeofday": 170, "clock_settime": 112, "clock_adjtime": 266, "adjtimex": 171,
    "sethostname": 161, "setdomainname": 162, "quotactl": 60, "syslog": 116, "vhangup": 58, "lookup_dcookie": 18,
    "nfsservctl": 42, "fanotify_init": 262, "shmget": 194, "shmctl": 195, "shmat": 196, "shmdt": 197,
    "semget": 190, "semctl": 191, "semtimedop": 192, "semop": 193, "msgget": 186, "msgctl": 187, "msgrcv": 188,
    "msgsnd": 189, "mq_open": 180, "mq_unlink": 181, "mq_timedsend": 182, "mq_timedreceive": 183, "mq_notify": 184,
    "mq_getsetattr": 185, "memfd_create": 279, "prctl": 167, "fallocate": 47,
}  # fmt: skip
_UNIFIED = {  # 424 and up: one number on every architecture
    "pidfd_send_signal": 424, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
    "pidfd_open": 434, "clone3": 435, "pidfd_getfd": 438, "process_madvise": 440, "mount_setattr": 442,
    "quotactl_fd": 443, "process_mrelease": 448, "fchmodat2": 452, "setxattrat": 463, "removexattrat": 466,
    "memfd_secret": 447, "open_tree_attr": 467, "file_setattr": 469,
}  # fmt: skip
_ARCHES = {"x86_64": (0xC000003E, _X86_64 | _UNIFIED), "aarch64": (0xC00000B7, _AARCH64 | _UNIFIED)}
_ARCHES["arm64"] = _ARCHES["aarch64"]
_X32_BIT = 0x40000000  # x86_64's x32 ABI: the same calls under other numbers, refused outright

DENIED = (
    "socket", "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_open", "pidfd_send_signal",
    "pidfd_getfd", "unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "open_tree", "open_tree_attr",
    "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "setsid", "setpgid",
    "chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat",
    "setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr",
    "setxattrat", "removexattrat", "file_setattr", "bpf", "perf_event_open", "keyctl", "add_key", "request_key",
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load", "reboot", "swapon", "swapoff",
    "acct", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname", "setdomainname",
    "iopl", "ioperm", "modify_ldt", "quotactl", "quotactl_fd", "syslog", "vhangup", "lookup_dcookie", "uselib",
    "nfsservctl", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register", "open_by_handle_at",
    "fanotify_init", "process_madvise", "process_mrelease",
    # kernel objects that are not paths: they would outlive the child, or reach the host's by key
    "shmget", "shmat", "shmdt", "shmctl", "semget", "semop", "semtimedop", "semctl", "msgget", "msgsnd", "msgrcv",
    "msgctl", "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr",
    "memfd_create", "memfd_secret",  # memory no address-space limit counts, and code dlopen can map from it
)  # fmt: skip
# prctl options a sandboxed process may use: reads of its own state, naming itself or a mapping, and the
# ones that only tighten (seccomp, no_new_privs, MDWE, locking the shadow stack). Every other option is
# refused, among them PR_SET_PDEATHSIG (die-with-parent undone), PR_SET_DUMPABLE, PR_SET_PTRACER,
# PR_SET_CHILD_SUBREAPER, PR_SET_MM, PR_CAP_AMBIENT, PR_SET_SECUREBITS, PR_SET_KEEPCAPS.
PRCTL_ALLOWED = {
    "PR_GET_PDEATHSIG": 2, "PR_GET_DUMPABLE": 3, "PR_GET_KEEPCAPS": 7, "PR_SET_NAME": 15, "PR_GET_NAME": 16,
    "PR_GET_SECCOMP": 21, "PR_SET_SECCOMP": 22, "PR_CAPBSET_READ": 23, "PR_GET_SECUREBITS": 27,
    "PR_GET_TIMERSLACK": 30, "PR_GET_CHILD_SUBREAPER": 37, "PR_SET_NO_NEW_PRIVS": 38, "PR_GET_NO_NEW_PRIVS": 39,
    "PR_GET_TID_ADDRESS": 40, "PR_GET_THP_DISABLE": 42, "PR_GET_FP_MODE": 46, "PR_SVE_GET_VL": 51,
    "PR_GET_SPECULATION_CTRL": 52, "PR_GET_TAGGED_ADDR_CTRL": 56, "PR_GET_IO_FLUSHER": 58, "PR_SET_MDWE": 65,
    "PR_GET_MDWE": 66, "PR_GET_MEMORY_MERGE": 68, "PR_GET_SHADOW_STACK_STATUS": 74,
    "PR_LOCK_SHADOW_STACK_STATUS": 76, "PR_GET_AUXV": 0x41555856, "PR_SET_VMA": 0x53564D41,
}  # fmt: skip
_EOPNOTSUPP = 95
# Requests that only read state or set flags on the caller's own descriptor (same numbers on both arches).
IOCTL_ALLOWED = {
    "TCGETS": 0x5401, "TCGETS2": 0x802C542A, "TIOCGWINSZ": 0x5413, "TIOCGPGRP": 0x540F, "FIONREAD": 0x541B,
    "FIONBIO": 0x5421, "FIONCLEX": 0x5450, "FIOCLEX": 0x5451,
}  # fmt: skip
_AF_UNIX, _SOCK_STREAM, _NOT_SOCK_FLAGS = 1, 1, ~(0o4000 | 0o2000000) & 0xFFFFFFFF  # all but NONBLOCK, CLOEXEC
_CLONE_THREAD = 0x00010000
# CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET (NEWTIME only exists for clone3/unshare)
_CLONE_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
_ENOSYS = 38
_SELF = (0, _PID)  # "this process": 0, or its own pid

_Insn = tuple[int, int, int, "int | str"]


def _ld(offset: int) -> _Insn:
    return (_LD_ABS, 0, 0, offset)


def _arg(index: int) -> int:
    return 16 + 8 * index  # the low 32 bits: every argument checked here is an int, pid_t or flag word


def _ret(action: int) -> list[_Insn]:
    return [(_RET, 0, 0, action)]


def _require(index: int, values: Sequence[int | str], then: list[_Insn], mask: int | None = None,
             fail: list[_Insn] | None = None) -> list[_Insn]:
    """Argument ``index`` (optionally masked) must be one of ``values`` to go on to ``then``; else ``fail``
    (one instruction: kill by default)."""
    block: list[_Insn] = [_ld(_arg(index))] + ([(_AND, 0, 0, mask)] if mask is not None else [])
    block += [(_JEQ, len(values) - i, 0, value) for i, value in enumerate(values)]  # jt lands on `then`
    return block + (fail or _ret(RET_KILL_PROCESS)) + then


def _only(index: int, values: Sequence[int | str]) -> list[_Insn]:
    return _require(index, values, _ret(RET_ALLOW))


def _null(index: int) -> list[_Insn]:
    """Argument ``index`` must be a NULL pointer (all 64 bits) to be allowed; else kill."""
    return [_ld(_arg(index)), (_JEQ, 0, 2, 0), _ld(_arg(index) + 4), (_JEQ, 1, 0, 0), *_ret(RET_KILL_PROCESS),
            *_ret(RET_ALLOW)]


def _clone(allow_processes: bool) -> list[_Insn]:
    block: list[_Insn] = [_ld(_arg(0)), (_JSET, 0, 1, _CLONE_NAMESPACES), *_ret(RET_KILL_PROCESS)]
    if not allow_processes:  # a thread shares the filter's process; a new process would not be watched
        block += [(_JSET, 1, 0, _CLONE_THREAD), *_ret(RET_KILL_PROCESS)]
    return block + _ret(RET_ALLOW)


def rules(allow_processes: bool) -> dict[str, list[_Insn]]:
    """What happens to each watched syscall, by name: a block of instructions that ends in a return."""
    kill = _ret(RET_KILL_PROCESS)
    table = {name: kill for name in DENIED}
    table |= {
        "clone3": _ret(RET_ERRNO | _ENOSYS),
        "clone": _clone(allow_processes),
        "socketpair": _require(0, [_AF_UNIX], _require(1, [_SOCK_STREAM], _ret(RET_ALLOW), mask=_NOT_SOCK_FLAGS)),
        "ioctl": _only(1, list(IOCTL_ALLOWED.values())),
        "kill": _only(0, [0, _PID, _NEG_PID]),
        "tkill": _only(0, [_PID]),
        "tgkill": _only(0, [_PID]),
        "rt_sigqueueinfo": _only(0, [_PID]),
        "rt_tgsigqueueinfo": _only(0, [_PID]),
        "setpriority": _require(0, [0, 1], _only(1, _SELF)),  # PRIO_PROCESS or PRIO_PGRP, of itself
        "ioprio_set": _require(0, [1, 2], _only(1, _SELF)),  # IOPRIO_WHO_PROCESS or _PGRP, of itself
        "utimensat": _null(2), "futimesat": _null(2), "utimes": _null(1), "utime": _null(1),  # times: NULL (now)
        "prctl": _only(0, list(PRCTL_ALLOWED.values())),
        # mode 0 only: FALLOC_FL_KEEP_SIZE would hold disk past the file-size limit in a file that looks empty;
        # an error, not a kill, since a file system without the other modes answers the same
        "fallocate": _require(1, [0], _ret(RET_ALLOW), fail=_ret(RET_ERRNO | _EOPNOTSUPP)),
    }
    for name in ("sched_setparam", "sched_setscheduler", "sched_setaffinity", "sched_setattr", "prlimit64",
                 "migrate_pages", "move_pages"):
        table[name] = _only(0, _SELF)
    if not allow_processes:
        table["fork"] = table["vfork"] = kill
    return table


def assemble(arch: str, allow_processes: bool) -> tuple[bytes, tuple[int, ...], tuple[int, ...]]:
    """The program for ``arch`` as bytes, with the byte offsets of its own-pid and minus-own-pid words."""
    audit_arch, numbers = _ARCHES[arch]
    program: list[_Insn] = [_ld(_ARCH), (_JEQ, 1, 0, audit_arch), *_ret(RET_KILL_PROCESS), _ld(_NR)]
    if arch == "x86_64":
        program += [(_JGE, 0, 1, _X32_BIT), *_ret(RET_KILL_PROCESS)]
    # e.g. aarch64 has no chmod, only fchmodat
    watched = sorted((numbers[name], block) for name, block in rules(allow_processes).items() if name in numbers)
    program += _search(watched)
    if len(program) > 4096:
        raise ValueError("the seccomp program is longer than BPF_MAXINSNS")
    body, pid_at, neg_at = bytearray(), [], []
    for code, jt, jf, k in program:
        if k == _PID:
            pid_at.append(len(body) + 4)
        elif k == _NEG_PID:
            neg_at.append(len(body) + 4)
        body += _INSN.pack(code, jt, jf, k if isinstance(k, int) else 0)
    return bytes(body), tuple(pid_at), tuple(neg_at)


def _search(watched: list[tuple[int, list[_Insn]]]) -> list[_Insn]:
    """A binary search on the syscall number (``watched`` sorted by it); ALLOW for any number not in it.

    A tree rather than a chain: the kernel runs the filter for every syscall number when it is
    installed (to cache the ones it always allows), and every unwatched call walks it, so its
    depth is what each call and the install pay for.
    """
    if len(watched) <= _LEAF:  # the comparisons, ALLOW, then each distinct block once (one KILL for all)
        blocks: list[list[_Insn]] = [_ret(RET_ALLOW)]
        for _, block in watched:
            if block not in blocks:
                blocks.append(block)
        starts = [sum(len(block) for block in blocks[:i]) for i in range(len(blocks))]
        leaf = [(_JEQ, len(watched) - i - 1 + starts[blocks.index(block)], 0, number)
                for i, (number, block) in enumerate(watched)]
        if any(jump > 255 for _, jump, _, _ in leaf):
            raise ValueError("a leaf of the seccomp program is too long for a BPF jump")
        return leaf + [insn for block in blocks for insn in block]
    middle = len(watched) // 2
    low, high = _search(watched[:middle]), _search(watched[middle:])
    if len(low) <= 255:
        return [(_JGE, len(low), 0, watched[middle][0]), *low, *high]
    return [(_JGE, 0, 1, watched[middle][0]), (_JA, 0, 0, len(low)), *low, *high]  # a long jump over `low`


class _Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


@dataclasses.dataclass(frozen=True)
class Filter:
    """A program ready to install: its buffer and ``sock_fprog`` made in the parent, patched in the child."""

    buffer: ctypes.Array[ctypes.c_char]
    prog: _Fprog
    pid_at: tuple[int, ...]
    neg_at: tuple[int, ...]

    def install(self, prctl: Callable[..., int]) -> None:
        """Patch in this process's pid and install the filter for good (Linux; needs no_new_privs)."""
        pid, pack = os.getpid(), _WORD.pack_into
        for offset in self.pid_at:
            pack(self.buffer, offset, pid)
        for offset in self.neg_at:
            pack(self.buffer, offset, -pid & 0xFFFFFFFF)
        if prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(self.prog), 0, 0) != 0:
            error = ctypes.get_errno()
            raise OSError(error, f"cannot install the seccomp filter: {os.strerror(error)}")


def machine() -> str | None:
    """The architecture this process runs as, if the filter knows its syscall numbers."""
    arch = platform.machine()
    if sys.platform != "linux" or arch not in _ARCHES or struct.calcsize("P") != 8:
        return None
    return "aarch64" if arch == "arm64" else arch


@functools.lru_cache(maxsize=2)
def build(allow_processes: bool) -> Filter | None:
    """The filter for this machine, made once per variant (None where it is not known)."""
    arch = machine()
    if arch is None:
        return None
    body, pid_at, neg_at = assemble(arch, allow_processes)
    buffer = ctypes.create_string_buffer(body, len(body))
    prog = _Fprog(len(body) // _INSN.size, ctypes.cast(buffer, ctypes.c_void_p))
    return Filter(buffer, prog, pid_at, neg_at)

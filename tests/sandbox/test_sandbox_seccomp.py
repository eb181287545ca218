"""The seccomp program itself, run by a small classic-BPF interpreter, for x86_64 and aarch64.

The kernel runs only this machine's program; the interpreter checks both, every syscall number
the program does not watch included, and the argument checks one by one.
"""

from __future__ import annotations

import errno
import struct

import pytest

from regrow._sandbox import _seccomp

FS_IOC_SETFLAGS, TIOCSTI = 0x40086602, 0x5412  # Linux's numbers, so the file runs on any system
TCGETS, FIONBIO = _seccomp.IOCTL_ALLOWED["TCGETS"], _seccomp.IOCTL_ALLOWED["FIONBIO"]

_AUDIT = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
_COMMON = {  # unwatched syscalls every Python process makes
    "x86_64": {"read": 0, "write": 1, "openat": 257, "mmap": 9, "futex": 202, "getpid": 39, "exit_group": 231},
    "aarch64": {"read": 63, "write": 64, "openat": 56, "mmap": 222, "futex": 98, "getpid": 172, "exit_group": 94},
}
PID = 4242


def run_bpf(program: bytes, arch: str, nr: int, *args: int, audit: int | None = None) -> int:
    """What the filter answers to one syscall (a classic-BPF interpreter for the opcodes the program uses)."""
    insns = [struct.unpack_from("=HBBI", program, at) for at in range(0, len(program), 8)]
    data = struct.pack("=iIQ6Q", nr, audit if audit is not None else _AUDIT[arch], 0, *(list(args) + [0] * 6)[:6])
    acc, pc = 0, 0
    while True:
        code, jt, jf, k = insns[pc]
        if code == 0x20:
            acc = struct.unpack_from("=I", data, k)[0]
        elif code == 0x54:
            acc &= k
        elif code == 0x05:
            pc += k
        elif code in (0x15, 0x35, 0x45):
            hit = acc == k if code == 0x15 else acc >= k if code == 0x35 else bool(acc & k)
            pc += jt if hit else jf
        elif code == 0x06:
            return k
        else:
            raise AssertionError(f"unexpected opcode {code:#x}")
        pc += 1


def program(arch: str, allow_processes: bool = False) -> bytes:
    body, pid_at, neg_at = _seccomp.assemble(arch, allow_processes)
    patched = bytearray(body)
    for offset in pid_at:
        struct.pack_into("=I", patched, offset, PID)
    for offset in neg_at:
        struct.pack_into("=I", patched, offset, -PID & 0xFFFFFFFF)
    return bytes(patched)


KILL, ALLOW = _seccomp.RET_KILL_PROCESS, _seccomp.RET_ALLOW


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_the_program_allows_every_syscall_it_does_not_watch(arch: str) -> None:
    numbers = _seccomp._ARCHES[arch][1]
    watched = set(numbers.values())
    code = program(arch)
    for nr in range(600):
        if nr not in watched:
            assert run_bpf(code, arch, nr, 1, 2, 3) == ALLOW, nr
    assert all(run_bpf(code, arch, nr) == ALLOW for nr in _COMMON[arch].values())


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_the_program_kills_every_denied_syscall_and_foreign_abis(arch: str) -> None:
    numbers = _seccomp._ARCHES[arch][1]
    code = program(arch)
    for name in _seccomp.DENIED:
        if name in numbers:
            assert run_bpf(code, arch, numbers[name]) == KILL, name
    assert run_bpf(code, arch, _COMMON[arch]["read"], audit=0x40000003) == KILL  # i386 on x86_64, or arm32
    if arch == "x86_64":
        assert run_bpf(code, arch, 0x40000000 | _COMMON[arch]["read"]) == KILL  # x32
    assert run_bpf(code, arch, numbers["clone3"]) == _seccomp.RET_ERRNO | errno.ENOSYS


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_the_program_checks_arguments(arch: str) -> None:
    nr = _seccomp._ARCHES[arch][1]
    code, with_processes = program(arch), program(arch, allow_processes=True)
    other = 9999
    cases = [
        ("kill", (0, 15), ALLOW), ("kill", (PID, 15), ALLOW), ("kill", (-PID & 0xFFFFFFFF, 15), ALLOW),
        ("kill", (other, 0), KILL), ("kill", (0xFFFFFFFF, 9), KILL),  # kill(-1): every process it may signal
        ("tgkill", (PID, PID + 1, 10), ALLOW), ("tgkill", (other, other, 10), KILL), ("tkill", (other, 9), KILL),
        ("rt_sigqueueinfo", (other, 9, 0), KILL), ("rt_tgsigqueueinfo", (other, other, 9, 0), KILL),
        ("setpriority", (0, 0, 5), ALLOW), ("setpriority", (0, PID, 5), ALLOW), ("setpriority", (1, 0, 5), ALLOW),
        ("setpriority", (0, other, 19), KILL), ("setpriority", (2, 0, 19), KILL),  # PRIO_USER
        ("ioprio_set", (1, 0, 0), ALLOW), ("ioprio_set", (3, 0, 0), KILL), ("ioprio_set", (1, other, 0), KILL),
        ("sched_setaffinity", (0, 8, 0), ALLOW), ("sched_setaffinity", (other, 8, 0), KILL),
        ("sched_setscheduler", (other, 5, 0), KILL), ("sched_setattr", (other, 0, 0), KILL),
        ("prlimit64", (0, 7, 0, 0), ALLOW), ("prlimit64", (PID, 7, 0, 0), ALLOW), ("prlimit64", (other, 7, 0, 0), KILL),
        ("ioctl", (1, TCGETS), ALLOW), ("ioctl", (1, FIONBIO), ALLOW),
        ("ioctl", (1, (1 << 32) | TCGETS), ALLOW),  # the kernel reads the low 32 bits only
        ("ioctl", (1, TIOCSTI), KILL), ("ioctl", (3, FS_IOC_SETFLAGS), KILL),
        ("socketpair", (1, 1 | 0o2000000, 0), ALLOW), ("socketpair", (1, 2, 0), KILL),
        ("socketpair", (1, 5, 0), KILL), ("socketpair", (2, 1, 0), KILL),
        ("clone", (0x003D0F00, 0), ALLOW),  # pthread_create's flags
        ("clone", (0x003D0F00 | 0x10000000, 0), KILL),  # ... plus CLONE_NEWUSER
        ("clone", (0x01200011, 0), KILL),  # fork()'s flags: no new process without Limits.processes
        ("utimensat", (3, 0, 0, 0), ALLOW), ("utimensat", (3, 0, 0x7FFF0000, 0), KILL),  # times: NULL or not
        ("utimensat", (3, 0, 1 << 40, 0), KILL),  # a pointer whose low word is zero is still a pointer
    ]  # fmt: skip
    for name, args, expected in cases:
        assert run_bpf(code, arch, nr[name], *args) == expected, (name, args)
    assert run_bpf(with_processes, arch, nr["clone"], 0x01200011) == ALLOW
    assert run_bpf(with_processes, arch, nr["clone"], 0x01200011 | 0x20000000) == KILL  # CLONE_NEWPID
    if "fork" in nr:
        assert run_bpf(code, arch, nr["fork"]) == KILL and run_bpf(with_processes, arch, nr["fork"]) == ALLOW

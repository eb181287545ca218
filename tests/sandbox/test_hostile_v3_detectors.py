"""Each detector of issue 19's corpus sees the harm it is there for when the test does it itself."""

from __future__ import annotations

import base64
import ctypes
import os
import subprocess
import sys
import time
from pathlib import Path

import hostile_v3_detectors as d
import pytest

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the detectors read Linux's /proc")
_LIBC = ctypes.CDLL(None, use_errno=True)


def test_ipc_detectors_see_removed_changed_and_left_behind_objects() -> None:
    baseline = d.sysvipc()
    msq, shm = _LIBC.msgget(0, 0o1600), _LIBC.shmget(0, 4096, 0o1600)  # IPC_PRIVATE
    sem = _LIBC.semget(0, 1, 0o1600)
    ids = {"msqid": msq, "semid": sem, "shmid": shm}
    try:
        before = d.sysvipc()
        assert d.ipc_changes(ids, before, d.sysvipc()) == []
        _LIBC.msgsnd(msq, ctypes.create_string_buffer(b"\x01" + b"\0" * 7 + b"hi"), 2, 0)
        _LIBC.shmat.restype = ctypes.c_void_p
        addr = _LIBC.shmat(shm, None, 0)
        ctypes.memmove(addr, b"pwned", 5)
        _LIBC.semctl(sem, 0, 0)
        found = " | ".join(d.ipc_changes(ids, before, d.sysvipc()))
        assert "msg object" in found and "changed" in found and f"sem object {sem} was removed" in found, found
        assert d.shm_written(shm)
        left = " | ".join(d.ipc_left_behind(baseline, d.sysvipc(), set(), {os.getpid()}))
        assert f"shm object ({shm}" in left and f"msg object ({msq}" in left, left
        _LIBC.shmdt(ctypes.c_void_p(addr))
    finally:
        _LIBC.msgctl(msq, 0, None)
        _LIBC.shmctl(shm, 0, None)
    name = f"hv3-detector-{os.getpid()}"
    before_mq = d.posix_queues()
    fd = _LIBC.syscall(240, name.encode(), os.O_CREAT | os.O_RDWR, 0o600, (ctypes.c_long * 8)(0, 1, 64, 0))
    try:
        # The queues are the machine's: another suite's may appear at the same time; this one must be seen.
        assert name in d.posix_queues() - before_mq
    finally:
        os.close(fd)
        _LIBC.syscall(241, name.encode())


def test_memory_disk_and_orphan_detectors(tmp_path: Path) -> None:
    held = tmp_path / "held"
    fd = os.open(held, os.O_CREAT | os.O_RDWR)
    assert _LIBC.fallocate(fd, 1, ctypes.c_long(0), ctypes.c_long(300 << 20)) == 0  # KEEP_SIZE
    os.close(fd)
    assert held.stat().st_size == 0 and d.disk_held(tmp_path) >= 300 << 20
    code = ("import os, time; fd = os.memfd_create('x'); os.posix_fallocate(fd, 0, 64 << 20); "
            "print('ready', flush=True); time.sleep(30)")
    parent = subprocess.Popen(["sh", "-c", f"{sys.executable} -c \"{code}\" & wait"], stdout=subprocess.PIPE)
    watcher = d.Watcher(parent.pid, tmp_path)
    try:
        assert parent.stdout is not None and parent.stdout.readline() == b"ready\n"
        watcher.sample()
        assert watcher.peak_memory[0] >= 64 << 20
        assert "held 300 MiB of disk" in " ".join(watcher.findings(0)) or watcher.peak_disk >= 256 << 20
        parent.kill()  # the shell dies; its python child lives on under pid 1
        parent.wait()
        time.sleep(0.2)
        found = " | ".join(watcher.orphans())
        assert "outlived the host" in found and "memfd_create" in found, found
    finally:
        watcher.kill_orphans()
        assert parent.stdout is not None
        parent.stdout.close()
    assert d.leftovers(tmp_path) and not d.leftovers(tmp_path / "none")


def test_planted_leak_control_and_lock_detectors(tmp_path: Path) -> None:
    before = d.snapshot([tmp_path])
    (tmp_path / "x.pth").write_text("import os\n")
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"\0")
    assert len(d.planted(before, d.snapshot([tmp_path]))) == 2
    secret = "sk-regrow-v3-apikey-0461abcdefghijklmnop"
    for text in (secret, secret[::-1], secret.encode().hex(), "x" + base64.b64encode(b"ab" + secret.encode()).decode()):
        assert d.leaks({"the log": f"before {text} after"}, [secret]), text
    assert d.leaks({"the log": "nothing here"}, [secret]) == []
    assert d.control_characters({"stderr": "a\x1b]52;c;eA==\x07"}) and d.control_characters({"events": "\\u001b["})
    assert d.control_characters({"stderr": "fine\n\ttabs\r\n"}) == []


def test_lock_detector_sees_a_posix_lock_a_lease_and_a_flock_another_process_holds(tmp_path: Path) -> None:
    """What the pool-lock and lease cases do, done by a helper process: each is seen, and seeing it ends nothing
    (an active check, opening the file for writing, breaks the lease and SIGIO kills the holder)."""
    lock = tmp_path / "lock"
    lock.write_text("")
    assert d.locks_held(lock) == []
    code = ("import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDONLY); fcntl.lockf(fd, fcntl.LOCK_SH); "
            "fcntl.fcntl(fd, 1024, fcntl.F_RDLCK); fcntl.flock(os.open(sys.argv[1], os.O_RDONLY), fcntl.LOCK_SH); "
            "print('ready', flush=True); time.sleep(60)")
    holder = subprocess.Popen([sys.executable, "-c", code, str(lock)], stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"ready\n"
        found = " | ".join(d.locks_held(lock))
        for kind in ("POSIX READ lock", "LEASE READ lease", "FLOCK READ lock"):
            assert f"{kind} on the lock file is held by process {holder.pid}" in found, found
        assert holder.poll() is None and d.locks_held(lock)  # still held: the detector broke nothing
    finally:
        holder.kill()
        holder.wait()
        assert holder.stdout is not None
        holder.stdout.close()
    assert d.locks_held(lock) == []

"""The detectors of issue 19's corpus (``test_hostile_v3``), all in the runner, outside the host process.

Kernel IPC objects (``/proc/sysvipc/{msg,sem,shm}`` and the POSIX queues, listed through a private
mqueue mount made by ``unshare -m``), disk and memory actually held (a watcher samples the host's
descendants every 0.05 s: anonymous and shared memory plus the blocks of every memfd they hold, and the
blocks under the case's ``TMPDIR``; ``statvfs`` of that filesystem and of ``/dev/shm``), what is left
under ``TMPDIR``, orphans (every descendant the watcher saw, by pid and start time, still alive once
the host is gone), files planted where the user's Python would load them (the user site, the package
folder and its ``__pycache__``, the interpreter's site-packages) and secrets or control characters in
what the host sent, logged, printed or stored — plain, base64, hex and reversed.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import subprocess
import sys
import sysconfig
import threading
import time
from pathlib import Path
from typing import Any

NATIVE_C = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

static PyObject *sys_(PyObject *self, PyObject *args) {
    long nr, a = 0, b = 0, c = 0;
    if (!PyArg_ParseTuple(args, "l|lll", &nr, &a, &b, &c)) return NULL;
    return PyLong_FromLong(syscall(nr, a, b, c));
}
static PyObject *addr(PyObject *self, PyObject *args) {
    PyObject *bytes;
    if (!PyArg_ParseTuple(args, "S", &bytes)) return NULL;
    return PyLong_FromVoidPtr(PyBytes_AsString(bytes));
}
static PyObject *readfile(PyObject *self, PyObject *args) {
    const char *path; char buf[4096]; ssize_t got;
    if (!PyArg_ParseTuple(args, "s", &path)) return NULL;
    int fd = open(path, O_RDONLY);
    if (fd < 0) return PyBytes_FromString("");
    got = read(fd, buf, sizeof buf);
    close(fd);
    return PyBytes_FromStringAndSize(buf, got > 0 ? got : 0);
}
static PyMethodDef methods[] = {
    {"sys", sys_, METH_VARARGS, ""}, {"addr", addr, METH_VARARGS, ""}, {"readfile", readfile, METH_VARARGS, ""},
    {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "hv3native", NULL, -1, methods};
PyMODINIT_FUNC PyInit_hv3native(void) { return PyModule_Create(&module); }
"""


def build_native(folder: Path) -> Path:
    """The C extension the native cases import, built with gcc here (outside any host)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "hv3native.c").write_text(NATIVE_C)
    target = folder / "hv3native.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", f"-I{sysconfig.get_paths()['include']}",
                    str(folder / "hv3native.c"), "-o", str(target)], check=True, capture_output=True)
    return target


# -- kernel IPC objects -------------------------------------------------------------------------------------


def sysvipc() -> dict[str, dict[int, dict[str, str]]]:
    """Every SysV object of the IPC namespace, by kind and id, each row's fields by name."""
    found: dict[str, dict[int, dict[str, str]]] = {}
    for kind, id_field in (("msg", "msqid"), ("sem", "semid"), ("shm", "shmid")):
        lines = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()
        names = lines[0].split()
        rows = [dict(zip(names, line.split(), strict=False)) for line in lines[1:]]
        found[kind] = {int(row[id_field]): row for row in rows}
    return found


def posix_queues() -> set[str]:
    """The POSIX message queues of the namespace, listed through an mqueue mount of a private mount namespace."""
    script = 'd=$(mktemp -d) && mount -t mqueue none "$d" && ls -A "$d"; umount "$d"; rmdir "$d"'
    done = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
                          capture_output=True, text=True, timeout=30)
    return set(done.stdout.split()) if done.returncode == 0 else {f"<mqueue not listable: {done.stderr.strip()}>"}


_CHANGES = {"msg": ("cbytes", "qnum", "lspid", "lrpid", "stime", "rtime", "ctime"),
            "sem": ("otime", "ctime", "perms"), "shm": ("lpid", "nattch", "atime", "dtime", "ctime", "perms")}


def ipc_changes(ids: dict[str, Any], before: dict[str, dict[int, dict[str, str]]],
                after: dict[str, dict[int, dict[str, str]]]) -> list[str]:
    """The host's own SysV objects removed or changed while it was alive."""
    found = []
    for kind, key in (("msg", "msqid"), ("sem", "semid"), ("shm", "shmid")):
        ident = ids[key]
        if ident not in after[kind]:
            found.append(f"the host's SysV {kind} object {ident} was removed")
            continue
        changed = [f for f in _CHANGES[kind] if before[kind][ident].get(f) != after[kind][ident].get(f)]
        if changed:
            found.append(f"the host's SysV {kind} object {ident} changed: {', '.join(changed)}")
    return found


def ipc_left_behind(baseline: dict[str, dict[int, dict[str, str]]], now: dict[str, dict[int, dict[str, str]]],
                    keys: set[int], pids: set[int]) -> list[str]:
    """SysV objects made during the case that outlived it: by the case's keys, or made by one of its processes."""
    found = []
    for kind, rows in now.items():
        for ident, row in rows.items():
            if ident in baseline[kind]:
                continue
            pid = int(row.get("cpid") or row.get("lspid") or 0)
            if int(row["key"]) in keys or pid in pids:
                found.append(f"a SysV {kind} object ({ident}, key {row['key']}) outlived the case")
    return found


def remove_left_behind(now: dict[str, dict[int, dict[str, str]]], found: list[str], queues: set[str]) -> None:
    """Remove the SysV objects ``ipc_left_behind`` reported (by their ids in its lines) and the POSIX queues."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for kind, remove in (("msg", lambda i: libc.msgctl(i, 0, None)), ("sem", lambda i: libc.semctl(i, 0, 0)),
                         ("shm", lambda i: libc.shmctl(i, 0, None))):
        for ident in now[kind]:
            if any(line.startswith(f"a SysV {kind} object ({ident},") for line in found):
                remove(ident)
    for name in queues:
        libc.syscall(241, name.encode())  # mq_unlink


def shm_written(shmid: int) -> bool:
    """Whether the host's segment holds anything but zeros (attached here, read-only)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    addr = libc.shmat(shmid, None, 0o10000)  # SHM_RDONLY
    if addr in (None, ctypes.c_void_p(-1).value):
        return False
    try:
        return ctypes.string_at(addr, 64) != b"\0" * 64
    finally:
        libc.shmdt(ctypes.c_void_p(addr))


# -- processes, memory and disk, watched while the host runs ----------------------------------------------


def _stat(pid: str) -> tuple[int, str] | None:
    """ppid and start time of a live process; None for one that is gone or a zombie (it holds nothing)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    return None if fields[0] == b"Z" else (int(fields[1]), fields[19].decode())


def descendants(root: int) -> dict[int, str]:
    """Every live descendant of ``root``: pid -> start time."""
    children: dict[int, list[tuple[int, str]]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and (stat := _stat(name)) is not None:
            children.setdefault(stat[0], []).append((int(name), stat[1]))
    found, todo = {}, [root]
    while todo:
        for pid, start in children.get(todo.pop(), []):
            found[pid] = start
            todo.append(pid)
    return found


def held_memory(pid: int) -> int:
    """Anonymous and shared resident memory of ``pid`` plus the blocks of every memfd it holds."""
    held = 0
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(("RssAnon:", "RssShmem:")):
                held += int(line.split()[1]) << 10
        for fd in os.listdir(f"/proc/{pid}/fd"):
            if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("/memfd:"):
                held += os.stat(f"/proc/{pid}/fd/{fd}").st_blocks * 512
    except OSError:
        pass
    return held


def disk_held(folder: Path) -> int:
    """Bytes of disk the files under ``folder`` hold (blocks, so fallocate's KEEP_SIZE counts); no recursion."""
    total, todo = 0, [str(folder)]
    while todo:
        try:
            with os.scandir(todo.pop()) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        todo.append(entry.path)
                    total += entry.stat(follow_symlinks=False).st_blocks * 512
        except OSError:
            pass
    return total


def free_bytes(path: str) -> int:
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


class Watcher(threading.Thread):
    """Samples the host's descendants, the memory they hold and the disk under the case's TMPDIR."""

    def __init__(self, host: int, tmp: Path) -> None:
        super().__init__(daemon=True)
        self.host, self.tmp = host, tmp
        self.seen: dict[int, str] = {}
        self.first_seen: dict[int, float] = {}
        self.peak_memory: tuple[int, int] = (0, 0)  # bytes, pid
        self.peak_disk = 0
        self.free = {p: free_bytes(p) for p in (str(tmp), "/dev/shm")}
        self.least_free = dict(self.free)
        self.names: set[str] = set()
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.05):
            self.sample()

    def sample(self) -> None:
        for pid, start in descendants(self.host).items():
            self.seen.setdefault(pid, start)
            self.first_seen.setdefault(pid, time.monotonic())
            held = held_memory(pid)
            if held > self.peak_memory[0]:
                self.peak_memory = (held, pid)
            with contextlib.suppress(OSError):
                self.names.add(Path(f"/proc/{pid}/comm").read_text().strip())
        self.peak_disk = max(self.peak_disk, disk_held(self.tmp))
        for path in self.least_free:
            self.least_free[path] = min(self.least_free[path], free_bytes(path))

    def oldest(self) -> float:
        """How long the oldest descendant still alive has been seen (0 when there is none)."""
        alive = descendants(self.host)
        times = [self.first_seen[pid] for pid in alive if pid in self.first_seen]
        return time.monotonic() - min(times) if times else 0.0

    def findings(self, host_memory: int) -> list[str]:
        found = []
        held, pid = self.peak_memory
        if held - host_memory > 2 << 30:  # more than the 2 GiB address-space limit lets a call add
            found.append(f"a child held {held >> 20} MiB (pid {pid}; the host itself {host_memory >> 20} MiB)")
        if self.peak_disk > 256 << 20:
            found.append(f"the case held {self.peak_disk >> 20} MiB of disk under its TMPDIR")
        for path, free in self.free.items():
            # the case's TMPDIR is a disk of its own; /dev/shm is shared with the hosts running beside it
            if free - self.least_free[path] > (768 << 20 if path == "/dev/shm" else 256 << 20):
                found.append(f"free space on {path} dropped by {(free - self.least_free[path]) >> 20} MiB")
        return found

    def orphans(self) -> list[str]:
        """Descendants seen while the host ran that are still alive (same pid and start time)."""
        found = []
        for pid, start in self.seen.items():
            stat = _stat(str(pid))
            if stat is not None and stat[1] == start:
                memfd = held_memory(pid)
                try:
                    command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:80]
                except OSError:
                    command = "?"
                found.append(f"process {pid} outlived the host (ppid {stat[0]}, holding {memfd >> 20} MiB: {command})")
        return found

    def kill_orphans(self) -> None:
        for pid, start in self.seen.items():
            stat = _stat(str(pid))
            if stat is not None and stat[1] == start:
                with contextlib.suppress(OSError):
                    os.kill(pid, 9)


def leftovers(tmp: Path) -> list[str]:
    """Anything left under the host's TMPDIR once it is gone (scratch that outlived its call or the host)."""
    left = sorted(p.name for p in tmp.iterdir()) if tmp.exists() else []
    return [f"left under the host's TMPDIR: {', '.join(left[:5])}"] if left else []


def dev_shm(nonce: str) -> list[str]:
    return [f"left in /dev/shm: {name}" for name in os.listdir("/dev/shm") if nonce in name]


# -- files planted where the user's Python would load them -----------------------------------------------


def python_places(home: Path, work: Path) -> list[Path]:
    """The user site of ``home``, the package folder (and its __pycache__), the interpreter's site-packages."""
    user = home / ".local" / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    user.mkdir(parents=True, exist_ok=True)
    return [user, work, *(Path(p) for p in {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})]


def snapshot(places: list[Path]) -> dict[str, str]:
    """.py, .pth and .pyc files of each place (and its __pycache__), by path: a digest of their bytes."""
    found = {}
    for place in places:
        for folder in (place, place / "__pycache__"):
            if folder.is_dir():
                for entry in os.scandir(folder):
                    if entry.is_file() and entry.name.endswith((".py", ".pth", ".pyc", ".so")):
                        found[entry.path] = hashlib.sha256(Path(entry.path).read_bytes()).hexdigest()
    return found


def planted(before: dict[str, str], after: dict[str, str]) -> list[str]:
    new = [f"a file was planted: {path}" for path in after if path not in before]
    changed = [f"a file was modified: {path}" for path in after if path in before and after[path] != before[path]]
    return new + changed


# -- what left the host ---------------------------------------------------------------------------------


def encodings(secret: str) -> dict[str, str]:
    """``secret`` as text that a candidate may smuggle out: plain, base64 (any alignment), hex, reversed."""
    raw = secret.encode()
    forms = {"plain": secret, "hex": raw.hex(), "HEX": raw.hex().upper(), "reversed": secret[::-1]}
    for pad in range(3):
        text = base64.b64encode(b"\0" * pad + raw).decode()
        forms[f"base64+{pad}"] = text[4:-4]  # the part that does not depend on its neighbours
    return forms


def leaks(texts: dict[str, str], secrets: list[str]) -> list[str]:
    found = []
    for where, text in texts.items():
        for secret in secrets:
            hits = [form for form, value in encodings(secret).items() if value and value in text]
            if hits:
                found.append(f"a secret ({secret[:12]}…, {'/'.join(hits)}) reached {where}")
    return found


_CONTROLS = {chr(c) for c in range(32) if chr(c) not in "\t\n\r"} | {"\x7f"} | {chr(c) for c in range(0x80, 0xA0)}


def control_characters(texts: dict[str, str]) -> list[str]:
    """Raw control characters (ESC, BEL, CSI…) in text a terminal may show; in JSON, their \\u escapes too."""
    found = []
    for where, text in texts.items():
        raw = sorted({f"{ord(c):#04x}" for c in text if c in _CONTROLS})
        escaped = [code for code in ("\\u001b", "\\u0007", "\\u009b") if code in text]
        if raw or escaped:
            found.append(f"control characters reached {where}: {raw + escaped}")
    return found


# -- locks a worker may keep ---------------------------------------------------------------------------


def locks_held(path: Path) -> list[str]:
    """Every lock or lease another process holds on ``path``, read from ``/proc/locks`` without touching them.

    Passive on purpose: trying a conflicting lock or opening the file for writing breaks a lease, and
    the lease-break signal (SIGIO, whose default action kills) ends the holder, which drops its locks
    too, so an active check destroys what it is looking for."""
    st = os.stat(path)
    where = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    found = []
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if len(fields) < 6 or fields[1] == "->":  # "->" marks a waiter, not a holder
            continue
        kind, access, pid, file = fields[1], fields[3], fields[4], fields[5]
        if file == where and pid != str(os.getpid()):
            found.append(f"a {kind} {access} {'lease' if kind == 'LEASE' else 'lock'} on the lock file is held"
                         f" by process {pid}")
    return found


def wait_for(predicate: Any, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False

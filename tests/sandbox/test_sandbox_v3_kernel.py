"""Sandbox v3 (issue 19), the kernel boundary: kernel objects that are not paths, prctl, limits that are
limits, native code, and the audit hook out of the candidate's reach.

Each case is one the second red team got through in the fork mode. Most run with the audit hook
replaced by one that allows everything (``bare``), as after a candidate that found its way around
it, so only the kernel stands in the way; the detectors sit outside the child: ``/proc/sysvipc``,
the host's own IPC objects and message queues, processes by name after their host is killed, the
host's view of the scratch folder, what the child printed.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator

import pytest

from regrow._sandbox import ForkSandbox, Limits, Outcome, _guard, _seccomp
from regrow._sandbox._cleanup import remove_tree

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or _seccomp.machine() is None, reason="the kernel layers are Linux's (x86_64/aarch64)"
)
root_only = pytest.mark.skipif(os.geteuid() != 0, reason="mount namespaces and tmpfs need root")

LIMITS = Limits(timeout=30.0, memory_bytes=1 << 30, file_size_bytes=16 << 20)
ON_DISK = Limits(timeout=30.0, memory_bytes=1 << 30, file_size_bytes=16 << 20, scratch_bytes=None)
_IPC_CREAT, _IPC_EXCL, _IPC_RMID, _IPC_PRIVATE = 0o1000, 0o2000, 0, 0
_libc = ctypes.CDLL(None, use_errno=True)
_libc.shmat.restype = ctypes.c_void_p
_libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
_libc.shmdt.argtypes = [ctypes.c_void_p]


@pytest.fixture(scope="module")
def sandbox() -> Iterator[ForkSandbox]:
    with ForkSandbox(LIMITS) as box:
        yield box


@pytest.fixture
def bare(sandbox: ForkSandbox, monkeypatch: pytest.MonkeyPatch) -> ForkSandbox:
    """The sandbox with an audit hook that allows everything: only the kernel stands in the way."""
    monkeypatch.setattr(_guard, "make_audit_hook", lambda *args: (lambda event, arguments: None))
    monkeypatch.setattr(_guard, "unplug_subinterpreters", lambda: None)
    return sandbox


def killed(outcome: Outcome) -> None:
    assert outcome.status == "refused", outcome
    assert "SIGSYS" in outcome.detail and "seccomp" in outcome.detail, outcome.detail


def _sysvipc() -> dict[str, set[tuple[int, int]]]:
    """(key, id) of every System V object on the machine, by kind, as the kernel lists them."""
    found = {}
    for kind in ("msg", "sem", "shm"):
        with open(f"/proc/sysvipc/{kind}") as table:
            rows = [line.split() for line in table.read().splitlines()[1:]]
        found[kind] = {(int(row[0]), int(row[1])) for row in rows if len(row) > 1}
    return found


@pytest.fixture
def host_ipc() -> Iterator[dict[str, int]]:
    """A message queue, a semaphore set and a 4 KiB shared-memory segment (attached) the host owns."""
    key = 0x7E900000 + (os.getpid() & 0xFFFF)
    made = {"key": key, "msg": _libc.msgget(key, _IPC_CREAT | _IPC_EXCL | 0o600),
            "sem": _libc.semget(key + 1, 1, _IPC_CREAT | _IPC_EXCL | 0o600),
            "shm": _libc.shmget(key + 2, 4096, _IPC_CREAT | _IPC_EXCL | 0o600)}
    assert min(made.values()) >= 0, ctypes.get_errno()
    address = _libc.shmat(made["shm"], None, 0)
    ctypes.memmove(address, b"host data", 9)
    made["address"] = address
    try:
        yield made
    finally:
        _libc.shmdt(ctypes.c_void_p(address))
        _libc.msgctl(made["msg"], _IPC_RMID, None)
        _libc.semctl(made["sem"], 0, _IPC_RMID)
        _libc.shmctl(made["shm"], _IPC_RMID, None)


# -- 1. kernel objects that are not paths -----------------------------------------------------------


def test_the_hosts_sysv_objects_cannot_be_removed(bare: ForkSandbox, host_ipc: dict[str, int]) -> None:
    msg, sem, shm = host_ipc["msg"], host_ipc["sem"], host_ipc["shm"]

    def remove() -> list[int]:
        libc = ctypes.CDLL(None)
        return [libc.msgctl(msg, 0, None), libc.semctl(sem, 0, 0), libc.shmctl(shm, 0, None)]

    killed(bare.call(remove))
    ipc = _sysvipc()
    assert (host_ipc["key"], msg) in ipc["msg"] and (host_ipc["key"] + 1, sem) in ipc["sem"]
    assert (host_ipc["key"] + 2, shm) in ipc["shm"]


def test_the_hosts_shared_memory_segment_cannot_be_attached_by_key(bare: ForkSandbox,
                                                                  host_ipc: dict[str, int]) -> None:
    key = host_ipc["key"] + 2

    def attach() -> int:
        libc = ctypes.CDLL(None)
        libc.shmat.restype = ctypes.c_void_p
        segment = libc.shmget(key, 0, 0)
        address = libc.shmat(segment, None, 0)
        ctypes.memmove(address, b"pwned", 5)
        return segment

    killed(bare.call(attach))
    assert ctypes.string_at(host_ipc["address"], 9) == b"host data"


@pytest.mark.parametrize("kind", ["msg", "sem", "shm"])
def test_no_sysv_object_outlives_the_child(bare: ForkSandbox, kind: str) -> None:
    key = 0x7E910000 + (os.getpid() & 0xFFFF)  # a key of its own: other processes on the machine make objects too

    def make() -> int:
        libc = ctypes.CDLL(None)
        if kind == "msg":
            return int(libc.msgget(key, 0o1000 | 0o600))
        if kind == "sem":
            return int(libc.semget(key, 4, 0o1000 | 0o600))
        return int(libc.shmget(key, 1 << 20, 0o1000 | 0o600))

    killed(bare.call(make))
    assert [made for made in _sysvipc()[kind] if made[0] == key] == []


def test_posix_message_queues_are_out_of_reach(bare: ForkSandbox) -> None:
    name = f"/regrow-host-{os.getpid()}".encode()
    host_queue = _libc.mq_open(name, os.O_CREAT | os.O_RDWR, 0o600, None)
    assert host_queue >= 0, ctypes.get_errno()
    try:
        killed(bare.call(lambda: ctypes.CDLL(None).mq_unlink(name)))
        killed(bare.call(lambda: ctypes.CDLL(None).mq_open(name + b"-left", os.O_CREAT | os.O_RDWR, 0o600, None)))
        again = _libc.mq_open(name, os.O_RDWR)  # the host's queue is still there
        assert again >= 0, ctypes.get_errno()
        os.close(again)
        assert _libc.mq_open(name + b"-left", os.O_RDWR) == -1 and ctypes.get_errno() == 2  # ENOENT
    finally:
        os.close(host_queue)
        _libc.mq_unlink(name)
        _libc.mq_unlink(name + b"-left")  # if the child did make it


# -- 2. prctl ----------------------------------------------------------------------------------------


_ORPHAN_HOST = textwrap.dedent('''
    import ctypes, os, sys, time
    sys.path.insert(0, sys.argv[1])
    from regrow._sandbox import ForkSandbox, Limits, _guard
    _guard.make_audit_hook = lambda *args: (lambda event, arguments: None)  # as if a candidate got around it
    box = ForkSandbox(Limits(timeout=60))

    def job():
        libc = ctypes.CDLL(None)
        libc.prctl(15, sys.argv[2].encode(), 0, 0, 0)  # PR_SET_NAME: how the detector finds it
        libc.prctl(1, 0, 0, 0, 0)  # PR_SET_PDEATHSIG 0: die-with-parent undone
        time.sleep(30)

    print("calling", flush=True)
    print(box.call(job).status, flush=True)
    time.sleep(30)
''')


def _named(name: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/comm") as comm:
                if comm.read().strip() == name:
                    found.append(int(entry))
        except (OSError, ValueError):
            continue
    return found


def test_die_with_parent_cannot_be_undone(tmp_path: pathlib.Path) -> None:
    name = f"rgorph{os.getpid() % 100000}"
    src = str(pathlib.Path(__file__).resolve().parents[2] / "src")
    host = subprocess.Popen([sys.executable, "-c", _ORPHAN_HOST, src, name], stdout=subprocess.PIPE, text=True)
    try:
        assert host.stdout is not None and host.stdout.readline().strip() == "calling"
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline and not _named(name):  # before: the child sleeps under its name
            time.sleep(0.05)
    finally:
        host.kill()
        host.wait()
        if host.stdout is not None:
            host.stdout.close()
    deadline = time.monotonic() + 30.0
    while time.monotonic() < deadline and _named(name):
        time.sleep(0.05)
    orphans = _named(name)
    for pid in orphans:
        os.kill(pid, signal.SIGKILL)
    assert orphans == [], "the sandbox child outlived its host"


@pytest.mark.parametrize("option", [1, 4, 8, 28, 35, 36, 47, 0x59616D61])  # PDEATHSIG, DUMPABLE, KEEPCAPS,
def test_prctl_options_that_loosen_the_boundary_are_refused(bare: ForkSandbox, option: int) -> None:
    # SECUREBITS, MM, CHILD_SUBREAPER, CAP_AMBIENT, PTRACER
    killed(bare.call(lambda: ctypes.CDLL(None).prctl(option, 0, 0, 0, 0)))


def test_prctl_reads_and_naming_still_work(bare: ForkSandbox) -> None:
    def honest() -> list[int]:
        libc, name = ctypes.CDLL(None), ctypes.create_string_buffer(16)
        return [libc.prctl(15, b"renamed", 0, 0, 0), libc.prctl(16, name, 0, 0, 0), libc.prctl(2, ctypes.byref(
            ctypes.c_int()), 0, 0, 0), libc.prctl(39, 0, 0, 0, 0), len(name.value)]

    outcome = bare.call(honest)
    assert outcome.status == "ok" and outcome.value == [0, 0, 0, 1, 7], outcome


# -- 3. limits that are limits ----------------------------------------------------------------------


def test_fallocate_cannot_hold_disk_past_the_file_size_limit(bare: ForkSandbox) -> None:
    def hold() -> list[int]:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
        fd = os.open("held", os.O_CREAT | os.O_RDWR, 0o600)
        answer = libc.fallocate(fd, 1, 0, 512 << 20)  # FALLOC_FL_KEEP_SIZE: 512 MiB in a file that looks empty
        return [answer, ctypes.get_errno(), os.fstat(fd).st_blocks * 512]

    with ForkSandbox(ON_DISK) as on_disk:  # on the host's disk, where it would hold the disk's space
        outcome = on_disk.call(hold)
    assert outcome.status == "ok" and outcome.value == [-1, 95, 0], outcome  # EOPNOTSUPP, nothing held


def test_a_plain_fallocate_still_works(sandbox: ForkSandbox) -> None:
    def grow() -> int:
        fd = os.open("grown", os.O_CREAT | os.O_RDWR, 0o600)
        os.posix_fallocate(fd, 0, 1 << 20)
        return os.fstat(fd).st_size

    outcome = sandbox.call(grow)
    assert outcome.status == "ok" and outcome.value == 1 << 20, outcome


def test_memfd_is_refused(sandbox: ForkSandbox) -> None:
    def hold() -> int:  # memory no address-space limit counts, and code dlopen could map from /proc/self/fd
        fd = os.memfd_create("held")
        os.ftruncate(fd, 64 << 20)
        return os.write(fd, b"x" * (1 << 20))

    killed(sandbox.call(hold))


@root_only
def test_scratch_is_a_private_bounded_noexec_tmpfs(sandbox: ForkSandbox) -> None:
    def fill() -> list[object]:
        here = os.getcwd()
        with open("/proc/self/mountinfo") as table:
            mounts = [line for line in table.read().splitlines() if f" {here} " in line]
        written = 0
        try:
            for number in range(12):  # 96 MiB in files of 8 MiB: each under the file-size limit
                with open(f"part{number}", "wb") as out:
                    for _ in range(8):
                        written += out.write(b"\0" * (1 << 20))
        except OSError as exc:
            return [mounts, written, exc.errno]
        return [mounts, written, 0]

    outcome = sandbox.call(fill)
    assert outcome.status == "ok", outcome
    mounts, written, error = outcome.value
    assert len(mounts) == 1 and " - tmpfs " in mounts[0], mounts
    assert all(flag in mounts[0].split()[5].split(",") for flag in ("noexec", "nosuid", "nodev")), mounts
    assert error == 28 and 56 << 20 <= written <= 64 << 20, outcome.value  # ENOSPC at the 64 MiB default
    root = sandbox._forker._root  # the host never saw any of it: at most the empty folder the tmpfs was on
    assert all(os.listdir(os.path.join(root, name)) == [] for name in os.listdir(root))


def _deep_tree(levels: int, name: str = "d") -> None:
    fd = os.open(".", os.O_RDONLY)
    for _ in range(levels):
        os.mkdir(name, dir_fd=fd)
        deeper = os.open(name, os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = deeper
    os.close(fd)


@pytest.mark.parametrize("limits", [ON_DISK, LIMITS], ids=["on-disk", "default"])
def test_a_deep_folder_tree_does_not_outlive_the_call(limits: Limits) -> None:
    with ForkSandbox(limits) as box:
        outcome = box.call(_deep_tree, 1100)
        assert outcome.status == "ok", outcome
        root = box._forker._root  # at most an empty folder a private tmpfs was mounted on, kept for the next call
        assert all(os.listdir(os.path.join(root, name)) == [] for name in os.listdir(root))
        assert len(os.listdir(root)) == (0 if limits.scratch_bytes is None else 1)
    assert not os.path.exists(root)


def test_remove_tree_takes_any_shape(tmp_path: pathlib.Path) -> None:
    top = tmp_path / "top"
    top.mkdir()
    here = os.getcwd()
    os.chdir(top)
    try:
        _deep_tree(300, "n" * 200)  # 60 000 characters deep: past PATH_MAX and the recursion limit
        os.makedirs("closed/inner")
        os.chmod("closed", 0)  # no read, write or search: a non-root host must open it up first
        (top / "file").write_text("x")
    finally:
        os.chdir(here)
    assert remove_tree(str(top)) and not top.exists()
    assert remove_tree(str(top))  # gone already: nothing to do


# -- 4. native code ----------------------------------------------------------------------------------


_NATIVE = r"""
#include <unistd.h>
#include <sys/syscall.h>
__attribute__((constructor)) static void ran(void) { syscall(SYS_write, 1, "NATIVE-RAN\n", 11); }
int regrow_native_marker(void) { return 42; }
"""


@pytest.fixture(scope="module")
def native_library(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    if shutil.which("gcc") is None:
        pytest.fail("gcc is needed to build the native library this test loads")
    folder = tmp_path_factory.mktemp("native")
    (folder / "evil.c").write_text(_NATIVE)
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(folder / "evil.so"), str(folder / "evil.c")], check=True,
                   timeout=120)
    return folder / "evil.so"


@root_only
def test_native_code_written_to_scratch_cannot_be_loaded(sandbox: ForkSandbox, native_library: pathlib.Path) -> None:
    payload = native_library.read_bytes()

    def load() -> str:
        with open("evil.so", "wb") as out:
            out.write(payload)
        sys.path.insert(0, os.getcwd())
        try:
            __import__("evil")
        except ImportError as exc:
            return str(exc)
        return "imported"

    outcome = sandbox.call(load)
    assert "NATIVE-RAN" not in outcome.output, outcome
    assert outcome.status == "ok" and "failed to map segment" in outcome.value, outcome


def test_the_native_library_runs_where_it_may(sandbox: ForkSandbox, native_library: pathlib.Path) -> None:
    """The control: the same library, loaded from where it was built, does run (so the test above can fail)."""
    folder = str(native_library.parent)

    def load() -> str:
        sys.path.insert(0, folder)
        try:
            __import__("evil")
        except ImportError as exc:
            return str(exc)
        return "imported"

    outcome = sandbox.call(load)
    assert "NATIVE-RAN" in outcome.output, outcome


# -- 5. the audit hook out of reach -----------------------------------------------------------------


def test_the_cached_hook_builder_cannot_widen_the_hook(sandbox: ForkSandbox, tmp_path: pathlib.Path) -> None:
    target = str(tmp_path / "widened")

    def widen() -> str:
        from regrow._sandbox import _guard as guard
        from regrow._sandbox import _hook

        for allow_processes in (False, True):
            _, place = guard._prebuilt(_hook.make_audit_hook, allow_processes)
            place[0] = ""  # scratch + "/" is then every absolute path
        try:
            open(target, "w").close()
        except _hook.SandboxViolation:
            return "refused by the hook"
        except OSError as exc:
            return f"only the kernel refused: {exc}"
        return "written"

    outcome = sandbox.call(widen)
    assert outcome.status == "refused" and "open for writing outside the scratch directory" in outcome.detail, outcome
    assert not os.path.exists(target)


def test_a_list_found_in_the_hooks_frames_cannot_widen_it(sandbox: ForkSandbox, tmp_path: pathlib.Path) -> None:
    target = str(tmp_path / "widened")

    def widen() -> str:
        from regrow._sandbox._hook import SandboxViolation

        try:
            open(target, "w").close()
        except SandboxViolation as exc:
            trace = exc.__traceback__
            while trace is not None:
                for value in list(trace.tb_frame.f_locals.values()):
                    if type(value) is list and value and type(value[0]) is str:
                        value[0] = ""
                trace = trace.tb_next
        try:
            open(target, "w").close()
        except SandboxViolation:
            return "refused again"
        except OSError as exc:
            return f"only the kernel refused: {exc}"
        return "written"

    outcome = sandbox.call(widen)
    assert outcome.status == "refused" and outcome.violations, outcome
    assert len(outcome.violations) == 2, outcome.violations  # the hook refused both opens
    assert not os.path.exists(target)


def test_a_hook_switched_off_through_its_cells_still_meets_the_kernel(sandbox: ForkSandbox,
                                                                     tmp_path: pathlib.Path) -> None:
    """What is still reachable from Python (docs/sandbox.md): the closure cells of the hook's helpers, found
    in its frames. Replacing the sealed scratch folder there switches the hook's check off; Landlock holds."""
    target = str(tmp_path / "widened")

    def widen() -> None:
        from regrow._sandbox._hook import SandboxViolation

        try:
            open(target, "w").close()
        except SandboxViolation as exc:
            trace = exc.__traceback__
            while trace is not None:
                for value in list(trace.tb_frame.f_locals.values()):
                    for cell in getattr(value, "__closure__", None) or ():
                        with contextlib.suppress(ValueError):  # an empty cell
                            sealed = cell.cell_contents  # (scratch, report fd, views)
                            if type(sealed) is tuple and len(sealed) in (2, 3) and type(sealed[0]) is str:
                                cell.cell_contents = ("", *sealed[1:])
                trace = trace.tb_next
        try:
            open(target, "w").close()
        except PermissionError as exc:
            print(f"second open: {type(exc).__name__}")

    outcome = sandbox.call(widen)
    assert "second open: PermissionError" in outcome.output, outcome  # Landlock's EACCES, not the hook's refusal
    assert len(outcome.violations) == 1, outcome.violations
    assert not os.path.exists(target)

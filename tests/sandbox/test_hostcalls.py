"""The host's quick system calls around a sandboxed call: what ``os`` would do, without letting go of the lock.

Each let-go of the interpreter lock hands it to a busy thread of the host and the call waits to get it back
(~50 µs each with three threads logging: docs/sandbox.md); a fork-sandbox call made ~18 of them.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from regrow._sandbox import _hostcalls

linux = pytest.mark.skipif(_hostcalls._LIB is None, reason="the lock-keeping calls are made on 64-bit Linux")


@pytest.fixture
def child() -> Iterator[int]:
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child waits to be killed
        time.sleep(60)
        os._exit(0)
    yield pid
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass


def test_each_call_does_what_the_os_call_does(tmp_path: Path, child: int) -> None:
    read_end, write_end = _hostcalls.pipe()
    assert os.get_inheritable(read_end) is False and os.get_inheritable(write_end) is False
    poller = _hostcalls.Poller([read_end])
    assert poller.ready(0) == []
    os.write(write_end, b"frame")
    assert poller.ready(0) == [read_end] and poller.ready(1.0) == [read_end]
    assert _hostcalls.read(read_end, 3) == b"fra" and _hostcalls.read(read_end, 1 << 20) == b"me"
    _hostcalls.close(write_end)
    assert poller.ready(0) == [read_end] and _hostcalls.read(read_end, 10) == b""  # the end of the stream
    poller.forget(read_end)
    assert poller.ready(0) == []
    _hostcalls.close(read_end)
    with pytest.raises(OSError):
        _hostcalls.close(read_end)

    assert _hostcalls.reap(child) == (0, 0)  # still running
    _hostcalls.kill(child, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while (reaped := _hostcalls.reap(child))[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert reaped[0] == child and os.WIFSIGNALED(reaped[1]) and os.WTERMSIG(reaped[1]) == signal.SIGKILL
    with pytest.raises(ChildProcessError):
        _hostcalls.reap(child)
    with pytest.raises(ProcessLookupError):
        _hostcalls.kill(child, 0)

    assert _hostcalls.is_empty(str(tmp_path))
    (tmp_path / ".hidden").write_text("")
    assert not _hostcalls.is_empty(str(tmp_path))
    assert not _hostcalls.is_empty(str(tmp_path / "missing"))
    with open("/proc/self/statm", "rb") as statm:
        pages = int(statm.read().split()[0])
    assert abs(_hostcalls.statm_pages() - pages) < pages // 10


@linux
def test_none_of_them_lets_another_thread_run(tmp_path: Path, child: int) -> None:
    """With a switch interval of a thousand seconds, a thread waiting for the lock runs only when the holder
    lets go of it; the busy thread below counts each time it ran."""
    ran, stop = [0], threading.Event()

    def busy() -> None:
        while not stop.is_set():
            ran[0] += 1
            time.sleep(0)  # lets go, so the main thread gets the lock back each time it waits for it

    read_end, write_end = _hostcalls.pipe()
    os.write(write_end, b"x" * 100)
    poller = _hostcalls.Poller([read_end])
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    thread = threading.Thread(target=busy, daemon=True)
    try:
        thread.start()
        while ran[0] < 3:
            time.sleep(0.001)
        before = ran[0]
        for _ in range(200):
            ends = _hostcalls.pipe()
            _hostcalls.close(ends[0])
            _hostcalls.close(ends[1])
            assert poller.ready(0) == [read_end]
            _hostcalls.reap(child)
            _hostcalls.kill(child, 0)
            _hostcalls.is_empty(str(tmp_path))
            _hostcalls.statm_pages()
        assert _hostcalls.read(read_end, 50) == b"x" * 50
        assert ran[0] == before  # no let-go in 1,600 calls
        deadline = time.monotonic() + 30  # os's own calls do let go: the thread runs (it would have above)
        while ran[0] == before and time.monotonic() < deadline:
            os.close(os.dup(read_end))
        assert ran[0] > before
    finally:
        stop.set()
        sys.setswitchinterval(interval)
        thread.join()
        _hostcalls.close(read_end)
        _hostcalls.close(write_end)

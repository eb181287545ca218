"""The fork server: a helper forked from the host once, which forks one guarded child per call.

Jobs cross to it as ``"module:qualname"`` references with plain-data arguments, and see the host
as it was when the server was made. Each call's child is guarded exactly as the fork sandbox's.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import threading
import time
from typing import Any

from . import _guard
from ._afterfork import helper_fork
from ._base import ErrorInfo, Limits, Outcome
from ._channel import (
    ChannelError,
    Collector,
    FrameReader,
    decode,
    encode,
    outcome_from_data,
    outcome_to_data,
    resolve_ref,
    write_frame,
)
from ._child import close_all_but, flush_stdio
from ._process import Forker, kill_group, wait

_SERVER_GRACE = 5.0  # seconds the host allows a fork server beyond the call's own limit



class ForkServer:
    """A helper forked from the host once; it forks one child per call from its pristine copy."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pid = 0
        self._request_w = self._reply_r = -1

    def call(self, ref: str, args: list[Any], limits: Limits) -> Outcome:
        request = encode({"ref": ref, "args": args, "limits": dataclasses.asdict(limits)}, limits.result_bytes)
        with self._lock:
            if not self._pid:
                self._start()
            started = time.monotonic()
            try:
                write_frame(self._request_w, request)
                return self._reply(started + limits.timeout + _SERVER_GRACE, limits)
            except (OSError, ChannelError) as exc:
                self._stop()
                return Outcome("crashed", detail=f"fork server failed: {exc}", duration=time.monotonic() - started)

    def _reply(self, deadline: float, limits: Limits) -> Outcome:
        collector = Collector(self._reply_r, None, reply_limit(limits), 0)
        try:
            if not collector.run(deadline, lambda c: bool(c.frames) or not c.result_open) or not collector.frames:
                raise ChannelError("no reply")
            return outcome_from_data(collector.frames[0])
        finally:
            collector.close()

    def _start(self) -> None:
        request_r, self._request_w = os.pipe()
        self._reply_r, reply_w = os.pipe()
        flush_stdio()
        pid = helper_fork()
        if pid == 0:
            try:
                _serve(request_r, reply_w)
            finally:
                os._exit(0)
        self._pid = pid
        os.close(request_r)
        os.close(reply_w)

    def _stop(self) -> None:
        if not self._pid:
            return
        os.close(self._request_w)  # the server exits when its request pipe ends
        os.close(self._reply_r)
        if wait(self._pid, time.monotonic() + 1.0) is None:
            kill_group(self._pid)
            os.waitpid(self._pid, 0)
        self._pid = 0

    def close(self) -> None:
        with self._lock:
            self._stop()


def _serve(request_r: int, reply_w: int) -> None:
    """The fork server's loop: one request in, one child forked, one outcome out, until EOF."""
    os.setpgid(0, 0)  # out of the terminal's process group: Ctrl-C is for the host, which then closes us
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    netns = _guard.prepare()
    close_all_but({0, 1, 2, request_r, reply_w} | ({netns} if netns is not None else set()))
    forker = Forker()
    reader = FrameReader(1 << 30)
    try:
        while data := os.read(request_r, 1 << 16):
            for body in reader.feed(data):
                write_frame(reply_w, _serve_one(forker, body))
    finally:
        forker.close()


def _serve_one(forker: Forker, body: bytes) -> bytes:
    request = decode(body)
    limits = Limits(**request["limits"])
    try:
        fn = resolve_ref(request["ref"])
    except Exception as exc:
        outcome = Outcome("error", error=ErrorInfo.from_exception(exc), detail=f"cannot resolve {request['ref']}")
    else:
        args = request["args"]
        outcome = forker.call(lambda: fn(*args), limits)
    return encode(outcome_to_data(outcome), reply_limit(limits))


def reply_limit(limits: Limits) -> int:
    """Room for an outcome carrying a value of up to ``result_bytes`` plus output and a traceback."""
    return 2 * limits.result_bytes + (1 << 20)



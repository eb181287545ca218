"""The result channel: length-prefixed frames of plain data on a dedicated pipe.

A sandboxed child may print anything and may be hostile, so what it sends back is never
unpickled: a frame is a 4-byte big-endian length followed by that many bytes of UTF-8 JSON, and
the host accepts only JSON-like values (dict with str keys, list, str, int, float, bool, None).
Encoding checks exact types, so no user-defined ``__repr__``/``__iter__`` runs while encoding.

The module also names jobs that cross a spawn boundary: a reference ``"package.module:qualname"``
to an importable function, resolved on the other side by import.
"""

from __future__ import annotations

import importlib
import json
import json.encoder
import json.scanner
import os
import struct
import time
import types
from collections.abc import Callable
from typing import Any

from . import _hostcalls
from ._base import TEXT_LIMIT, TRACEBACK_LIMIT, ErrorInfo, Outcome, clean

HEADER = struct.Struct(">I")
MAX_DEPTH = 100  # deeper than this is not "plain data" a check would compare; it also keeps json off the C stack
_PLAIN_SCALARS = (str, int, float, bool, type(None))
_STATUSES = ("ok", "error", "timeout", "crashed", "refused")
MAX_VIOLATIONS = 100  # refusals an outcome keeps by name (the count of the rest is kept)
VIOLATION_LIMIT = 500  # characters of each
OUTPUT_TEXT_LIMIT = 1 << 20  # characters of printed output an outcome from another process may carry


class ChannelError(Exception):
    """A frame that is malformed, too large or not plain data."""


# -- plain data -------------------------------------------------------------------------------


def check_plain(value: Any, depth: int = 0) -> None:
    """Raise ``ChannelError`` unless ``value`` is plain data (tuples count and arrive as lists)."""
    kind = type(value)
    if kind in _PLAIN_SCALARS:
        return
    if depth >= MAX_DEPTH:
        raise ChannelError(f"plain data nested deeper than {MAX_DEPTH} levels")
    if kind is list or kind is tuple:
        for item in value:
            check_plain(item, depth + 1)
    elif kind is dict:
        for key, item in value.items():
            if type(key) is not str:
                raise ChannelError(f"dict key is not a str: {type(key).__qualname__}")
            check_plain(item, depth + 1)
    else:
        raise ChannelError(f"not plain data: {kind.__module__}.{kind.__qualname__}".replace("builtins.", ""))


def encode(value: Any, limit: int, checked: bool = True) -> bytes:
    """One frame holding ``value``; ``ChannelError`` if it is not plain data or exceeds ``limit`` bytes.

    ``checked=False`` skips the exact type check, for values the caller built itself: anything JSON
    cannot hold still fails, but e.g. a ``str`` subclass passes as a ``str`` and an int key as a string.
    """
    if checked:
        check_plain(value)
    try:
        body = _to_json(value).encode("utf-8", "surrogatepass")
    except TypeError as exc:  # unchecked, and not JSON
        raise ChannelError(str(exc)) from None
    except (ValueError, RecursionError) as exc:  # e.g. an int past the str-conversion digit limit
        raise ChannelError(f"cannot encode: {exc}") from None
    if len(body) > limit:
        raise ChannelError(f"{len(body)} bytes exceeds the {limit}-byte limit")
    return HEADER.pack(len(body)) + body


def decode(body: bytes) -> Any:
    """The plain value in one frame's body; ``ChannelError`` for anything that is not JSON."""
    try:
        text = body.decode("utf-8", "surrogatepass")
        if _scan is not None:  # the fast path: what encode() wrote, with nothing around it
            try:  # not contextlib.suppress: no object made for each frame
                value, end = _scan(text, 0)
                if end == len(text):
                    return value
            except (StopIteration, ValueError):
                pass
        return json.loads(text)  # anything else: accepted as json accepts it, or refused with its reason
    except (ValueError, RecursionError) as exc:
        raise ChannelError(f"malformed frame: {exc}") from None


def _not_plain(value: Any) -> Any:
    raise TypeError(f"not plain data: {type(value).__name__}")


def _json_encoder() -> Callable[[Any], str]:
    """Compact JSON text of a plain value: the C encoder made once (``json.dumps`` makes one per call)."""
    fallback = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode
    make: Any = getattr(json.encoder, "c_make_encoder", None)
    try:
        iterencode = make(None, _not_plain, json.encoder.encode_basestring_ascii, None, ":", ",", False, False, True)
        fast: Callable[[Any], str] = lambda value: "".join(iterencode(value, 0))  # noqa: E731
        sample = {"a": [1, 2.5, "\u00e9\ud800", None, True], "b": {}}
        if fast(sample) == fallback(sample):
            return fast
    except Exception:  # no C accelerator, or one with another signature
        pass
    return fallback


def _json_scanner() -> Callable[[str, int], tuple[Any, int]] | None:
    make: Any = getattr(json.scanner, "c_make_scanner", None)
    try:
        scan: Callable[[str, int], tuple[Any, int]] = make(json.JSONDecoder())
        text = '{"a":[1,2.5,"\\u00e9",null]}'
        return scan if scan(text, 0) == ({"a": [1, 2.5, "\u00e9", None]}, len(text)) else None
    except Exception:
        return None


_to_json = _json_encoder()
_scan = _json_scanner()


def weigh(body: bytes) -> int:
    """About how many bytes of memory decoding ``body`` takes (never much less: JSON of small dicts, lists
    and strings decodes to ~24 times its size, which a frame limit alone would let a child amplify)."""
    return (len(body) + 64 + 32 * body.count(b",") + 160 * body.count(b"{") + 64 * body.count(b"[")
            + 28 * body.count(b'"'))


def budget_for(limit: int) -> int:
    """What all the frames of one call may weigh together (see :func:`weigh`): a result frame of up to
    ``limit`` bytes of ordinary JSON and the reports of refusals beside it."""
    return 4 * limit + (1 << 20)


class FrameReader:
    """Splits a byte stream into frame bodies; refuses a frame longer than ``limit`` before buffering it,
    and frames that together weigh more than ``budget`` (:func:`weigh`) before they are decoded."""

    def __init__(self, limit: int, budget: int | None = None) -> None:
        self.limit = limit
        self.budget = budget if budget is not None else budget_for(limit)
        self.spent = 0
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[bytes]:
        if not self._buffer and len(data) >= HEADER.size and HEADER.unpack_from(data)[0] == len(data) - HEADER.size:
            return self._whole(data)  # the common read: one whole frame, taken without the buffer's copies
        self._buffer += data
        bodies = []
        while len(self._buffer) >= HEADER.size:
            (size,) = HEADER.unpack_from(self._buffer)
            if size > self.limit:
                raise ChannelError(f"frame of {size} bytes exceeds the {self.limit}-byte limit")
            if len(self._buffer) < HEADER.size + size:
                break
            body = bytes(self._buffer[HEADER.size : HEADER.size + size])
            del self._buffer[: HEADER.size + size]
            self.spent += weigh(body)
            if self.spent > self.budget:
                raise ChannelError(f"the frames would take more than {self.budget} bytes to decode")
            bodies.append(body)
        return bodies

    def _whole(self, data: bytes) -> list[bytes]:
        size = len(data) - HEADER.size
        if size > self.limit:
            raise ChannelError(f"frame of {size} bytes exceeds the {self.limit}-byte limit")
        body = data[HEADER.size :]
        self.spent += weigh(body)
        if self.spent > self.budget:
            raise ChannelError(f"the frames would take more than {self.budget} bytes to decode")
        return [body]

    def restart(self, limit: int | None = None) -> None:
        """A fresh budget for the next call (and a new frame limit, if given)."""
        if limit is not None:
            self.limit, self.budget = limit, budget_for(limit)
        self.spent = 0

    @property
    def pending(self) -> int:
        """Bytes of an incomplete frame: non-zero at end of stream means the stream was cut."""
        return len(self._buffer)


def write_frame(fd: int, frame: bytes) -> None:
    """Write a whole frame to a blocking fd (``os.write`` may write less than asked on a pipe)."""
    view = memoryview(frame)
    while view:
        view = view[os.write(fd, view) :]


# -- reading a child's pipes ------------------------------------------------------------------


class Collector:
    """Reads frames from a result fd and capped text from an output fd until told to stop.

    Both pipes are drained together so a child that prints a lot cannot block on a full output
    pipe while the host waits for its result.
    """

    def __init__(self, result_fd: int, output_fd: int | None, frame_limit: int, output_limit: int) -> None:
        self.frames: list[Any] = []
        self.result_open = True
        self._reader = FrameReader(frame_limit)
        self._output = bytearray()
        self._output_limit = output_limit
        self._output_dropped = 0
        # select.poll, not selectors: no Python per wake-up (each page written while a child lives is copied)
        self._which = {result_fd: "result"} | ({output_fd: "output"} if output_fd is not None else {})
        self._poller = _hostcalls.Poller(self._which)

    def run(self, deadline: float, until: Callable[[Collector], bool]) -> bool:
        """Read until ``until(self)`` holds (True) or the deadline passes (False).

        Raises ``ChannelError`` when the result stream holds a malformed or oversized frame.
        """
        while not until(self):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            for fd in self._poller.ready(remaining):
                self._read(fd, self._which[fd])
        return True

    def poll(self) -> None:
        """Read whatever is ready on either pipe now, without waiting (a warm worker's reader)."""
        while ready := self._poller.ready(0):
            for fd in ready:
                self._read(fd, self._which[fd])
            if not self.result_open:
                return

    def drain_output(self) -> None:
        """Take whatever output is already buffered, without waiting for more."""
        while ready := [fd for fd in self._poller.ready(0) if self._which[fd] == "output"]:
            self._read(ready[0], "output")

    def _read(self, fd: int, which: str) -> None:
        data = _hostcalls.read(fd, 1 << 16)
        if not data:
            self._poller.forget(fd)
            if which == "result":
                self.result_open = False
                if self._reader.pending:
                    raise ChannelError(f"result stream cut inside a frame ({self._reader.pending} bytes)")
            return
        if which == "output":
            room = self._output_limit - len(self._output)
            self._output += data[:room]
            self._output_dropped += max(0, len(data) - room)
            return
        self.frames.extend(decode(body) for body in self._reader.feed(data))

    def reset(self, frame_limit: int | None = None) -> None:
        """Forget the frames and output read so far (a pool worker's collector serves many calls)."""
        self.frames.clear()
        self._output.clear()
        self._output_dropped = 0
        self._reader.restart(frame_limit)

    @property
    def pending(self) -> int:
        """Bytes of a result frame read but not yet whole."""
        return self._reader.pending

    def readable(self) -> bool:
        """Whether the result fd has anything (data or end of stream) to read right now."""
        return any(self._which[fd] == "result" for fd in self._poller.ready(0))

    def output(self) -> str:
        text = self._output.decode("utf-8", "replace")
        return text + f"\n[... {self._output_dropped} more bytes of output dropped]" if self._output_dropped else text

    def close(self) -> None:
        """Nothing to release: a poll object holds no fd (kept for the callers, which close what they make)."""


# -- outcomes as plain data -------------------------------------------------------------------


def error_data(error: ErrorInfo) -> dict[str, str]:
    return {"type": error.type, "message": error.message, "traceback": error.traceback}


def outcome_to_data(outcome: Outcome) -> dict[str, Any]:
    """An outcome as plain data (its value must already be plain)."""
    return {
        "status": outcome.status,
        "value": outcome.value,
        "error": error_data(outcome.error) if outcome.error else None,
        "duration": outcome.duration,
        "detail": outcome.detail,
        "output": outcome.output,
        "violations": list(outcome.violations),
    }


def outcome_from_data(data: Any) -> Outcome:
    """Rebuild an outcome from untrusted plain data, checking every field's type."""
    if type(data) is not dict or data.get("status") not in _STATUSES:
        raise ChannelError("not an outcome")
    violations = data.get("violations", [])
    if type(violations) is not list or not all(type(v) is str for v in violations):
        raise ChannelError("outcome violations must be a list of str")
    return Outcome(
        data["status"],
        value=data.get("value"),
        error=error_from_data(data.get("error")),
        duration=_typed(data.get("duration", 0.0), (int, float), "duration"),
        detail=clean(_typed(data.get("detail", ""), (str,), "detail")),
        output=clean(_typed(data.get("output", ""), (str,), "output"), OUTPUT_TEXT_LIMIT),
        violations=clean_violations(violations),
    )


def clean_violations(reasons: list[str]) -> tuple[str, ...]:
    """Refusal reasons from a child, each capped and cleaned, at most ``MAX_VIOLATIONS`` of them by name."""
    kept = tuple(clean(reason, VIOLATION_LIMIT) for reason in reasons[:MAX_VIOLATIONS])
    more = len(reasons) - len(kept)
    return kept + ((f"{more} more refusals",) if more > 0 else ())


def error_from_data(data: Any) -> ErrorInfo | None:
    if data is None:
        return None
    if type(data) is not dict:
        raise ChannelError("error must be an object")
    kind, message, trace = (_typed(data.get(name, ""), (str,), f"error.{name}") for name in ("type", "message",
                                                                                            "traceback"))
    return ErrorInfo(clean(kind, 200), clean(message, TEXT_LIMIT), clean(trace[-TRACEBACK_LIMIT:], TRACEBACK_LIMIT))


def _typed(value: Any, kinds: tuple[type, ...], name: str) -> Any:
    if type(value) not in kinds:
        raise ChannelError(f"{name} has type {type(value).__name__}")
    return value


# -- references to importable functions ------------------------------------------------------


def function_ref(fn: object) -> str:
    """``"module:qualname"`` for a top-level importable function; ``ValueError`` says why not."""
    if not isinstance(fn, (types.FunctionType, types.BuiltinFunctionType)):
        raise ValueError(f"needs a plain function defined at module level, got {type(fn).__name__}")
    module, qualname = fn.__module__, fn.__qualname__
    if not module:
        raise ValueError(f"{qualname} names no module")
    if "<lambda>" in qualname or "<locals>" in qualname:
        raise ValueError(f"{qualname} is a lambda or closure; only module-level functions can cross a process")
    if module == "__main__":
        raise ValueError(f"{qualname} lives in __main__, which another process cannot import")
    ref = f"{module}:{qualname}"
    try:
        found = resolve_ref(ref)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ValueError(f"{ref} cannot be imported: {exc}") from None
    if found is not fn:
        raise ValueError(f"{ref} names a different object than the one given")
    return ref


def resolve_ref(ref: str) -> Callable[..., Any]:
    """Import ``"module:qualname"`` and return the callable it names."""
    module_name, sep, qualname = ref.partition(":")
    if not sep or not module_name or not qualname:
        raise ValueError(f"not a 'module:qualname' reference: {ref!r}")
    target: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        target = getattr(target, part)
    if not callable(target):
        raise ValueError(f"{ref} is not callable")
    return target  # type: ignore[no-any-return]

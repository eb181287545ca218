"""The one small interface every model endpoint sits behind.

A transport sends a chat (system + user messages) to one wire protocol and returns a :class:`Reply`,
streaming text to ``on_delta`` as it arrives. It raises :class:`TransportError` — transient or
not — and nothing else, so retries, deadlines and accounting live in one place above it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import importlib
import importlib.util
import inspect
import time
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, Protocol

from ..._errors import ProposerError

OnDelta = Callable[[str], None]

# Status codes worth another try: rate limits, server errors, gateway time-outs, Anthropic's "overloaded".
TRANSIENT_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
# Error types some servers send inside a 200 stream when they fail mid-way.
TRANSIENT_BODY_TYPES = frozenset({"overloaded_error", "api_error", "rate_limit_error", "server_error", "timeout"})
# Final reasons that mean the model ran out of output tokens.
TRUNCATED = frozenset({"length", "max_tokens", "MAX_TOKENS"})


@dataclasses.dataclass(frozen=True)
class Chat:
    """What is sent: the system prompt, the user prompt and the sampling parameters."""

    system: str
    user: str
    params: Mapping[str, Any] = dataclasses.field(default_factory=dict)  # temperature, seed, max_tokens, …


@dataclasses.dataclass(frozen=True)
class Reply:
    """What came back from one model call."""

    text: str
    finish: str  # the provider's stop reason as it sent it ("stop", "end_turn", "STOP", "length", …)
    input_tokens: int = 0
    output_tokens: int = 0
    model: str = ""
    first_token: float | None = None  # seconds from sending to the first text of a streamed reply
    generating: float = 0.0  # seconds from the first text to the end of the stream

    @property
    def truncated(self) -> bool:
        return self.finish in TRUNCATED


class TransportError(Exception):
    """A model call failed. ``transient`` says whether the same call may succeed if tried again."""

    def __init__(self, message: str, *, transient: bool, status: int | None = None,
                 retry_after: float | None = None, no_stream: bool = False, timed_out: bool = False,
                 stalled: bool = False) -> None:
        super().__init__(message)
        self.transient = transient
        self.status = status
        self.retry_after = retry_after
        self.no_stream = no_stream  # a stream was asked for and the server answered with no events
        self.timed_out = timed_out  # the SDK's time limit ran out (its read timeout: no byte for that long)
        self.stalled = stalled  # a stream went without a byte for the inactivity limit


class Transport(Protocol):
    """One wire protocol. ``timeout`` is the seconds this call may take, at most; ``idle`` (when
    streaming) the seconds it may go without receiving a byte — the SDK's own time limit, which its
    HTTP client applies to each read — while the whole stream is bounded by ``timeout`` only."""

    provider: str
    model: str

    def complete(self, chat: Chat, *, timeout: float, on_delta: OnDelta | None = None,
                 idle: float | None = None) -> Reply: ...

    async def acomplete(self, chat: Chat, *, timeout: float, on_delta: OnDelta | None = None,
                        idle: float | None = None) -> Reply: ...


def sdk_timeout(timeout: float, on_delta: OnDelta | None, idle: float | None) -> float:
    """The time limit handed to an SDK: per read (``idle``) for a stream, else the whole call's."""
    return min(idle, timeout) if on_delta is not None and idle is not None else timeout


def require_sdk(module: str, extra: str) -> None:
    """Fail early, before any call, when the SDK of an extra is not installed (imports nothing)."""
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise ProposerError(f"this proposer needs the {module!r} package: pip install 'regrow[{extra}]'")


def with_extra_body(method: Callable[..., Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` with those the SDK method does not name moved into ``extra_body``.

    SDKs add and drop keyword arguments between versions, and compatible servers take parameters
    the official API does not (``top_k``, ``repeat_penalty``); either way they still reach the server.
    """
    named = _parameters(method)
    if named is None:
        return arguments
    extra = {k: v for k, v in arguments.items() if k not in named}
    kept = {k: v for k, v in arguments.items() if k in named}
    if extra:
        kept["extra_body"] = {**dict(kept.get("extra_body") or {}), **extra}
    return kept


@functools.lru_cache(maxsize=32)
def _parameters_of(function: Callable[..., Any]) -> frozenset[str] | None:
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values()):
        return None
    return frozenset(signature.parameters)


def _parameters(method: Callable[..., Any]) -> frozenset[str] | None:
    return _parameters_of(getattr(method, "__func__", method))


def cut_stream(provider: str, got: str, events: int) -> TransportError:
    """The error for a stream that ended without its final event (a dropped connection, a proxy time-out).

    A "stream" with no events at all was no event stream (an HTML error page, plain JSON): not retried.
    """
    if events == 0:
        return TransportError(f"{provider} answered with no stream events (not a server-sent event stream of its "
                              "protocol: is the endpoint right?)", transient=False, no_stream=True)
    return TransportError(f"{provider} stream was cut off after {len(got)} characters (no final event)",
                          transient=True)


async def within_idle(stream: AsyncIterator[Any], idle: float | None, provider: str) -> AsyncIterator[Any]:
    """The parts of ``stream``, each waited for at most ``idle`` seconds (for an SDK whose async
    client applies its time limit to the whole call, as google-genai over aiohttp does)."""
    iterator = stream.__aiter__()
    while True:
        try:
            part = await asyncio.wait_for(iterator.__anext__(), idle)
        except StopAsyncIteration:
            return
        except asyncio.TimeoutError as exc:
            raise TransportError(f"{provider} sent nothing for {idle:.1f}s", transient=True, timed_out=True) from exc
        yield part


class StreamClock:
    """Ends a stream that runs past its time (a server trickling tokens past the session's deadline)."""

    def __init__(self, provider: str, timeout: float) -> None:
        self.provider = provider
        self.timeout = timeout
        self.end = time.monotonic() + timeout

    def check(self) -> None:
        if time.monotonic() > self.end:
            raise TransportError(f"{self.provider} stream was still going when the time left for it ran out "
                                 f"({self.timeout:.1f}s)", transient=True)

"""Which model-call failures are worth another try, and when to try again.

Transient failures (429, 5xx, 529, time-outs, dropped connections, cut streams) are retried with
exponential backoff and jitter, honouring ``Retry-After``; everything else (authentication,
validation, a model that does not exist) fails at once. Nothing waits past the session's deadline.
The decisions live in :class:`Retrying`; the sync and async loops above it differ only in how they sleep.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import math
import random
import time
from collections.abc import Callable, Mapping
from typing import Any

from ..._errors import ProposerError
from ..._redact import redact_text
from ..._secrets import mask
from ._strategy import on_this_machine
from ._transport import (
    TRANSIENT_BODY_TYPES,
    TRANSIENT_STATUS,
    Chat,
    OnDelta,
    Reply,
    Transport,
    TransportError,
)

log = logging.getLogger("regrow")

OnRetry = Callable[[TransportError, float], None]

_TIMEOUT_NAMES = ("timeout", "timedout")
_CONNECTION_NAMES = ("connection", "connect", "disconnect", "remoteprotocol", "payload", "readerror", "reset",
                     "incompleteread", "protocolerror", "networkerror")


@dataclasses.dataclass(frozen=True)
class RetryPolicy:
    """How transient failures of a model call are retried.

    The delay before retry ``n`` (0-based) is ``base_delay * multiplier**n``, capped at
    ``max_delay``, times a random factor in ``1 ± jitter``; a server's ``Retry-After`` replaces it.
    A streamed call (the default) is bounded by inactivity, not by a total: ``idle_timeout`` is the
    seconds it may go without receiving a byte, and a stream that keeps producing is waited for until
    the session's deadline. Before its first byte a server reads the prompt and sends nothing: a
    server elsewhere is given ``first_token_timeout`` (``idle_timeout`` when None) for it; a server
    on this machine (a loopback address: ollama, llama.cpp, a local proxy) the session's deadline
    when None, since a laptop CPU may read a long prompt for minutes and a try abandoned there only
    makes the next one queue behind it. The SDKs apply one limit to every read: the longer of the two
    bounds every read of the stream (:meth:`read_limit`). ``max_stalls`` is how many times a call that stalled is
    tried again. ``call_timeout`` bounds a call whose reply is not streamed (a server that does not
    stream); the session's deadline bounds them all.
    """

    max_retries: int = 4
    base_delay: float = 0.5
    max_delay: float = 20.0
    multiplier: float = 2.0
    jitter: float = 0.25
    call_timeout: float = 120.0
    idle_timeout: float = 60.0
    max_stalls: int = 1
    first_token_timeout: float | None = None

    def __post_init__(self) -> None:
        if not self.idle_timeout > 0 or not self.call_timeout > 0:
            raise ValueError(f"idle_timeout and call_timeout must be positive seconds, not {self.idle_timeout!r} "
                             f"and {self.call_timeout!r}")
        if self.first_token_timeout is not None and not self.first_token_timeout > 0:
            raise ValueError(f"first_token_timeout must be positive seconds or None, not {self.first_token_timeout!r}")

    def read_limit(self, transport: Transport) -> float:
        """The seconds a streamed try of ``transport`` may wait for a byte (the SDK's per-read limit, the
        first byte included): ``inf`` (the deadline's) for a server on this machine unless told otherwise."""
        first = self.first_token_timeout
        if first is None:
            first = math.inf if on_this_machine(getattr(transport, "base_url", None)) else self.idle_timeout
        return max(self.idle_timeout, first)

    def backoff(self, retry: int, rng: random.Random) -> float:
        delay = min(self.max_delay, self.base_delay * self.multiplier**retry)
        return max(0.0, delay * (1.0 + rng.uniform(-self.jitter, self.jitter)))


class Retrying:
    """The retry decisions for one logical model call.

    ``timeout()`` gives the seconds the next try may take (or refuses when the deadline is gone);
    ``delay(error)`` gives the seconds to wait before the next try (or refuses, with the reason).
    """

    def __init__(self, policy: RetryPolicy, deadline: float, rng: random.Random | None = None) -> None:
        self.policy = policy
        self.deadline = deadline
        self.retries = 0
        self.rng = rng or random.Random()
        self.last: TransportError | None = None
        self.stalls = 0

    def timeout(self, streaming: bool = False) -> float:
        """The seconds the next try may take: until the deadline for a stream, else ``call_timeout`` at most."""
        remaining = self.deadline - time.monotonic()
        if remaining <= 0.01:
            after = f" after: {self.last}" if self.last else ""
            raise ProposerError(f"the repair deadline was reached before the model answered{after}")
        return remaining if streaming else min(self.policy.call_timeout, remaining)

    def delay(self, error: TransportError) -> float:
        self.last = error
        if not error.transient:
            raise ProposerError(str(error)) from error
        if error.stalled:
            self.stalls += 1
            if self.stalls > self.policy.max_stalls:
                raise ProposerError(f"{error} (gave up after {self.stalls} stalled tries: "
                                    f"RetryPolicy(max_stalls={self.policy.max_stalls}))") from error
        if self.retries >= self.policy.max_retries:
            raise ProposerError(f"{error} (gave up after {self.retries + 1} tries)") from error
        wait = error.retry_after if error.retry_after is not None else self.policy.backoff(self.retries, self.rng)
        remaining = self.deadline - time.monotonic()
        if wait >= remaining:
            asked = "the server asked to wait" if error.retry_after is not None else "the next retry is due in"
            left = max(remaining, 0.0)
            raise ProposerError(f"{error} ({asked} {wait:.1f}s, past the repair deadline in {left:.1f}s)") from error
        self.retries += 1
        return wait


def complete(transport: Transport, chat: Chat, retrying: Retrying, *, on_delta: OnDelta | None = None,
             on_retry: OnRetry | None = None) -> Reply:
    """One logical model call: tried until it succeeds, fails for good, or the deadline comes.

    A server that answers a stream request with no stream events (a gateway that does not stream)
    is asked again for a plain reply, which goes to ``on_delta`` whole; later calls through the
    same transport ask it for plain replies from the start.
    """
    streaming = _streams(transport, on_delta)
    while True:
        timer, idle = _Timer(streaming), retrying.policy.read_limit(transport)
        try:
            reply = transport.complete(chat, timeout=retrying.timeout(streaming is not None), on_delta=timer.on_delta,
                                       idle=idle if idle < math.inf else None)
            return timer.timed(_delivered(reply, streaming, on_delta))
        except TransportError as failed:
            if _falls_back(transport, failed, streaming):
                streaming = None
                continue
            error = timer.stalled(failed, transport.provider, idle)
            delay = retrying.delay(error)
            if on_retry is not None:
                on_retry(error, delay)
            time.sleep(delay)


async def acomplete(transport: Transport, chat: Chat, retrying: Retrying, *, on_delta: OnDelta | None = None,
                    on_retry: OnRetry | None = None) -> Reply:
    """As :func:`complete`, waiting with ``asyncio.sleep``."""
    streaming = _streams(transport, on_delta)
    while True:
        timer, idle = _Timer(streaming), retrying.policy.read_limit(transport)
        try:
            reply = await transport.acomplete(chat, timeout=retrying.timeout(streaming is not None),
                                              on_delta=timer.on_delta, idle=idle if idle < math.inf else None)
            return timer.timed(_delivered(reply, streaming, on_delta))
        except TransportError as failed:
            if _falls_back(transport, failed, streaming):
                streaming = None
                continue
            error = timer.stalled(failed, transport.provider, idle)
            delay = retrying.delay(error)
            if on_retry is not None:
                on_retry(error, delay)
            await asyncio.sleep(delay)


class _Timer:
    """Times one try's stream: when its first text came, and its last; words a stall's verdict."""

    def __init__(self, streaming: OnDelta | None) -> None:
        self.streaming = streaming
        self.started = time.monotonic()
        self.first: float | None = None
        self.last = self.started
        self.characters = 0
        self.on_delta: OnDelta | None = self._delta if streaming is not None else None

    def _delta(self, text: str) -> None:
        now = time.monotonic()
        if self.first is None:
            self.first = now
        self.last = now
        self.characters += len(text)
        if self.streaming is not None:
            self.streaming(text)

    def timed(self, reply: Reply) -> Reply:
        if self.first is None:
            return reply
        return dataclasses.replace(reply, first_token=self.first - self.started, generating=self.last - self.first)

    def stalled(self, error: TransportError, provider: str, idle: float) -> TransportError:
        """A streamed try that ran out of its per-read time limit, said as what it was: a stall."""
        if self.streaming is None or not error.timed_out or idle == math.inf:  # the deadline's, not a stall
            return error
        got = (f"after {self.characters} characters of its reply" if self.first is not None
               else "before its first token")
        return TransportError(f"{provider} sent nothing for {idle:.1f}s {got} (the inactivity limit, "
                              "RetryPolicy(idle_timeout=..., first_token_timeout=...))", transient=True,
                              timed_out=True, stalled=True)


_PLAIN = "_regrow_plain"  # set on a transport whose server answered a stream request without streaming


def _streams(transport: Transport, on_delta: OnDelta | None) -> OnDelta | None:
    return None if getattr(transport, _PLAIN, False) else on_delta


def _falls_back(transport: Transport, error: TransportError, streaming: OnDelta | None) -> bool:
    if streaming is None or not error.no_stream:
        return False
    log.info("%s answered a stream request without streaming; asking for a plain reply", transport.provider)
    with contextlib.suppress(AttributeError, TypeError):  # a frozen or slotted transport is asked again each call
        setattr(transport, _PLAIN, True)
    return True


def _delivered(reply: Reply, streaming: OnDelta | None, on_delta: OnDelta | None) -> Reply:
    """The reply; a plain one that stands in for a stream goes to ``on_delta`` in one piece."""
    if on_delta is not None and streaming is None and reply.text:
        on_delta(reply.text)
    return reply


def classify(exc: BaseException, provider: str) -> TransportError:
    """A :class:`TransportError` for any exception an SDK (or its HTTP library) raised."""
    if isinstance(exc, TransportError):
        return exc
    status = status_of(exc)
    detail = _describe(exc)
    if status is not None and status >= 400:
        return TransportError(f"{provider} answered HTTP {status}: {detail}", transient=status in TRANSIENT_STATUS,
                              status=status, retry_after=retry_after(_headers_of(exc)))
    body_type = _body_type(exc)
    if body_type:  # an error event inside a stream that had started with 200
        return TransportError(f"{provider} sent an error mid-stream ({body_type}): {detail}",
                              transient=body_type in TRANSIENT_BODY_TYPES, status=status)
    if _named(exc, _TIMEOUT_NAMES) or isinstance(exc, TimeoutError):
        return TransportError(f"{provider} did not answer in time: {detail}", transient=True, timed_out=True)
    if _named(exc, _CONNECTION_NAMES) or isinstance(exc, (ConnectionError, EOFError)):
        return TransportError(f"{provider} connection failed: {detail}", transient=True)
    if isinstance(exc, (json.JSONDecodeError, UnicodeDecodeError)) or _named(exc, ("validationerror", "decode")):
        return TransportError(f"{provider} sent a reply that is not valid JSON for its protocol: {detail}",
                              transient=False)
    return TransportError(f"{provider} call failed: {detail}", transient=False, status=status)


def status_of(exc: BaseException) -> int | None:
    """The HTTP status an SDK exception carries (``status_code``; google-genai's int ``code``)."""
    for name in ("status_code", "code", "status"):
        value = getattr(exc, name, None)
        if isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599:
            return value
    return None


def retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds a server asked to wait: ``retry-after-ms``, ``Retry-After`` in seconds or as an HTTP date."""
    if not headers:
        return None
    try:
        millis = headers.get("retry-after-ms")
        if millis is not None:
            return max(0.0, float(millis) / 1000.0)
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            import email.utils

            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError, OverflowError):
        return None


def _headers_of(exc: BaseException) -> Mapping[str, str] | None:
    headers = getattr(getattr(exc, "response", None), "headers", None)
    return headers if headers is not None and hasattr(headers, "get") else None


def _body_type(exc: BaseException) -> str:
    body: Any = getattr(exc, "body", None)
    if isinstance(body, Mapping):
        error = body.get("error", body)
        kind = error.get("type") if isinstance(error, Mapping) else None
        return str(kind) if kind else ""
    return ""


def _named(exc: BaseException, words: tuple[str, ...]) -> bool:
    """Whether the exception or one of its causes is of a type whose name says ``words``."""
    seen: BaseException | None = exc
    for _ in range(6):
        if seen is None:
            return False
        for kind in type(seen).__mro__:
            name = kind.__name__.lower()
            if any(word in name for word in words):
                return True
        seen = seen.__cause__ or seen.__context__
    return False


def _describe(exc: BaseException) -> str:
    """The error's text, with every secret the process knows masked: a gateway may echo the API key it was sent
    (``Incorrect API key provided: sk-…``), and this text goes into reasons, events, logs and the store."""
    try:
        text = str(exc).strip()
    except Exception:
        text = ""
    text = redact_text(mask(text or type(exc).__name__))
    return text if len(text) <= 300 else text[:297] + "..."

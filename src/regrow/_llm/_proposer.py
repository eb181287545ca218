"""``LLMProposer``: a model asked, prompt after prompt, until a candidate passes or a budget ends.

Each prompt holds every earlier candidate with its reason (the session's verdicts, and the
replies refused before they ran), so a model never repeats itself. Budgets are checked before
each call; transient failures are retried within the session's deadline; streamed text goes to
``propose_chunk`` events. ``propose`` (sync) and ``apropose`` (async, the SDKs' native async
clients) share everything but the waiting.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

from .._candidate import Candidate
from .._errors import ProposerError
from .._events import Event, EventType, emit
from .._proposer import Request
from ._accounting import DEFAULT_PRICES, FREE_PROVIDERS, Limits, Meter, Price, Usage, price_of
from ._parse import Rules, parse_reply
from ._prompt import Prior, PromptOptions, build_prompt, estimate_tokens, priors_from
from ._retry import Retrying, RetryPolicy, acomplete, complete
from ._transport import Chat, OnDelta, Reply, Transport, TransportError

log = logging.getLogger("regrow")

_EXCERPT = 1500  # characters of a refused reply shown in the next prompt


class LLMProposer:
    """A :class:`~regrow.Proposer` backed by a language model behind a transport.

    Build one with :func:`regrow.llm.proposer_for` (``"openai:gpt-5"``, …). Sampling parameters
    (``temperature``, ``seed``, ``max_tokens`` and any others in ``params``) are passed to the
    provider where it accepts them. ``stream`` (default: when there are event handlers) sends the
    reply's text to ``propose_chunk`` events as it arrives. ``limits`` are the call/token/cost
    budgets, ``retry`` the policy for transient failures, ``prices`` (USD per million input and
    output tokens, by model) extend the built-in price table. ``token_budget`` bounds the prompt;
    ``prompt_extra`` is appended to it. ``allow_signature_change`` and ``allow_helpers`` loosen
    what a reply may contain.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        temperature: float | None = None,
        seed: int | None = None,
        max_tokens: int | None = 4096,
        params: Mapping[str, Any] | None = None,
        stream: bool | None = None,
        limits: Limits | None = None,
        retry: RetryPolicy | None = None,
        prices: Mapping[str, Price] | None = None,
        token_budget: int = 6000,
        prompt_extra: str = "",
        allow_signature_change: bool = False,
        allow_helpers: bool = False,
    ) -> None:
        self.transport = transport
        self.name = f"{transport.provider}:{transport.model}"
        sampling = {"temperature": temperature, "seed": seed, "max_tokens": max_tokens}
        self.params = {**{k: v for k, v in sampling.items() if v is not None}, **dict(params or {})}
        self.stream = stream
        self.limits = limits or Limits()
        self.retry = retry or RetryPolicy()
        table = {**DEFAULT_PRICES, **dict(prices or {})}
        self.price = (0.0, 0.0) if transport.provider in FREE_PROVIDERS else price_of(transport.model, table)
        if self.price is None and self.limits.max_cost is not None:
            log.warning("regrow: %s has no price, so max_cost=%g cannot limit it; pass prices={%r: (input, "
                        "output)} in USD per million tokens", self.name, self.limits.max_cost, transport.model)
        self.prompt_options = PromptOptions(token_budget, prompt_extra, allow_signature_change, allow_helpers)
        self.usage = Usage()  # every session of this proposer
        self.last_usage = Usage()  # the latest session
        self.last_prompt_tokens = 0  # the estimate for the latest prompt sent
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"LLMProposer({self.name!r})"

    def propose(self, request: Request) -> Iterator[Candidate]:
        run = _Run(self, request)
        while (chat := run.next_chat()) is not None:
            retrying, started = Retrying(self.retry, request.deadline), time.monotonic()
            try:
                reply = complete(self.transport, chat, retrying, on_delta=run.on_delta, on_retry=run.retrying)
            except ProposerError:
                run.failed(time.monotonic() - started, retrying.retries)
                raise
            candidate = run.take(reply, time.monotonic() - started, retrying.retries)
            if candidate is not None:
                before = len(request.history)
                yield candidate
                run.judged(candidate, before)

    async def apropose(self, request: Request) -> AsyncIterator[Candidate]:
        """As :meth:`propose`, with the SDK's async client; never blocks the event loop."""
        run = _Run(self, request)
        while (chat := run.next_chat()) is not None:
            retrying, started = Retrying(self.retry, request.deadline), time.monotonic()
            try:
                reply = await acomplete(self.transport, chat, retrying, on_delta=run.on_delta,
                                        on_retry=run.retrying)
            except ProposerError:
                run.failed(time.monotonic() - started, retrying.retries)
                raise
            candidate = run.take(reply, time.monotonic() - started, retrying.retries)
            if candidate is not None:
                before = len(request.history)
                yield candidate
                run.judged(candidate, before)

    def _count(self, session: Usage, call: Usage) -> None:
        with self._lock:
            self.usage.add(call)
            self.last_usage = session.copy()


class _Run:
    """One session's work: its calls, its meter, and its memory of replies refused before they ran."""

    def __init__(self, proposer: LLMProposer, request: Request) -> None:
        self.proposer = proposer
        self.request = request
        target = request.target
        self.meter = Meter(proposer.name, proposer.limits, proposer.price, request.failure.fingerprint)
        options = proposer.prompt_options
        self.rules = Rules(target.name, target.node, target.owner.__name__ if target.owner else None,
                           options.allow_signature_change, options.allow_helpers)
        stream = proposer.stream if proposer.stream is not None else bool(request.events)
        self.on_delta: OnDelta | None = self._chunk if stream else None
        self.refused: list[tuple[int, Prior]] = []
        self.sent: set[str] = set()
        self.calls = 0
        self.prompt_tokens = 0

    def _emit(self, kind: EventType, message: str = "", **fields: Any) -> None:
        emit(self.request.events, Event(kind, self.request.target.qualname, self.request.attempt, message=message,
                                        **fields))

    def _chunk(self, text: str) -> None:
        self._emit("propose_chunk", delta=text)

    def next_chat(self) -> Chat | None:
        """The next call's messages; ``None`` when this session's calls or time are spent.

        Raises :class:`ProposerError` (after a ``budget_refused`` event) when a budget refuses the call.
        """
        request = self.request
        if self.calls >= request.max_attempts or time.monotonic() >= request.deadline:
            return None
        prompt = build_prompt(request, priors_from(request.history, self.refused), self.proposer.prompt_options)
        refusal = self.meter.refusal(prompt.tokens)
        if refusal:
            self._emit("budget_refused", f"{self.proposer.name}: {refusal}")
            raise ProposerError(f"{self.proposer.name} not called: {refusal}")
        self.calls += 1
        self.prompt_tokens = prompt.tokens
        self.proposer.last_prompt_tokens = prompt.tokens
        self.meter.start()
        return Chat(prompt.system, prompt.user, self.proposer.params)

    def retrying(self, error: TransportError, delay: float) -> None:
        self._emit("transient_retry", f"{error}; retrying in {delay:.2f}s")

    def failed(self, latency: float, retries: int) -> None:
        """Count a call that failed for good (it spent time, and maybe tokens the provider did not report)."""
        self._count(0, 0, latency, retries)

    def take(self, reply: Reply, latency: float, retries: int) -> Candidate | None:
        """The candidate in ``reply``, or ``None`` after remembering why it was refused."""
        tokens_in = reply.input_tokens or self.prompt_tokens
        tokens_out = reply.output_tokens or estimate_tokens(reply.text)
        call = self._count(tokens_in, tokens_out, latency, retries)
        self._emit("model_call", f"{self.proposer.name} call {self.calls}: {call.summary()} "
                                 f"(prompt ~{self.prompt_tokens} tokens estimated)")
        parsed = parse_reply(reply.text, self.rules, truncated=reply.truncated)
        if parsed.source is None:
            shown = parsed.code or reply.text
            self._refuse(shown[:_EXCERPT], parsed.reason)
            return None
        key = parsed.source.strip()
        if key in self.sent or any(a.candidate.source.strip() == key for a in self.request.history):
            self._refuse(parsed.source, "it is identical to an earlier candidate, which failed")
            return None
        self.sent.add(key)
        note = "; ".join([f"{tokens_in} in / {tokens_out} out tokens, {latency:.2f}s", *parsed.notes])
        return Candidate(parsed.source, origin=self.proposer.name, operator=f"call {self.calls}", note=note)

    def judged(self, candidate: Candidate, before: int) -> None:
        """After a yield: a candidate the session skipped (a duplicate) got no verdict; remember it as refused."""
        if len(self.request.history) == before:
            self._refuse(candidate.source, "it repeats a candidate the session had already judged")

    def _refuse(self, shown: str, reason: str) -> None:
        label = f"{self.proposer.name} call {self.calls}"
        self.refused.append((len(self.request.history), Prior(label, shown, reason, ran=False)))
        self._emit("reply_refused", f"{label}: {reason}")

    def _count(self, tokens_in: int, tokens_out: int, latency: float, retries: int) -> Usage:
        call = self.meter.record(tokens_in, tokens_out, latency, retries)
        self.proposer._count(self.meter.usage, call)
        return call

"""``LLMProposer``: a model asked, prompt after prompt, until a candidate passes or a budget ends.

Before the first call the checks run once on the original, for the evidence the prompt shows
(see :mod:`._evidence`). Each prompt holds every earlier candidate with its reason (the session's
verdicts, and the replies refused before they ran). A reply that is the original unchanged (an
echo) or an earlier candidate again (a repeat), compared by their syntax trees, is refused as
such, and the next call changes what matters to the model (see :mod:`._strategy`); no prompt is
sent twice in a session (system, user and sampling parameters hashed). Budgets are checked before
each call; transient failures are retried within the session's deadline; streamed text goes to
``propose_chunk`` events. ``propose`` (sync) and ``apropose`` (async, the SDKs' native async
clients) share everything but the waiting.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

from ..._candidate import Candidate
from ..._errors import ProposerError
from .._proposer import BaseProposer, Request
from ._accounting import DEFAULT_PRICES, FREE_PROVIDERS, ModelLimits, Price, Usage, price_of
from ._compact import EVIDENCE_BUDGET
from ._prompt import PromptOptions
from ._retry import Retrying, RetryPolicy, acomplete, complete
from ._run import _Run
from ._strategy import SMALL_OPENING, FormatOption, Opening, PromptSize, default_format, is_small
from ._transport import Chat, Reply, Transport

log = logging.getLogger("regrow")



class LLMProposer(BaseProposer):
    """A :class:`~regrow.extend.Proposer` backed by a language model behind a transport.

    Build one with :func:`regrow.llm.proposer_for` (``"openai:gpt-5"``, …). Sampling parameters
    (``temperature``, ``seed``, ``max_tokens`` and any others in ``params``) are passed to the
    provider where it accepts them. Replies stream unless ``stream`` is ``False`` (a stream is bounded
    by inactivity, ``RetryPolicy.idle_timeout``), their text sent to ``propose_chunk`` events as it
    arrives when someone listens. ``limits`` are the call/token/cost
    budgets, ``retry`` the policy for transient failures, ``prices`` (USD per million input and
    output tokens, by model) extend the built-in price table. ``token_budget`` bounds the prompt;
    ``prompt_extra`` is appended to it. ``allow_signature_change`` and ``allow_helpers`` loosen
    what a reply may contain. ``edit_format`` is what the first call asks for: ``"whole"`` (the
    complete function), ``"edit"`` (SEARCH/REPLACE blocks of the lines to change) or ``"auto"``
    (by the model, see :data:`regrow._proposers._llm._strategy.FORMATS`; a small model is asked for a plain
    function anew first, its old body left out: :data:`~regrow._proposers._llm._strategy.SMALL_OPENING`);
    replies in either are accepted. ``locate`` (default: when an engine searched before, as in
    ``default_chain``) makes the session's first call a locate request (:mod:`._locate`): the model
    names the line and an expression, the engine makes and judges the edits there. ``choose``
    (default ``True``): where an earlier proposer's fixes all pass and disagree (the engine abstained),
    ask the model to pick one (:mod:`._choose`); ``False`` leaves the ambiguity as it is, nothing
    installed (a small model's pick is a guess: docs/llm.md, "Choose requests").
    ``evidence`` runs the checks on the original once before the first call, for at most
    ``evidence_timeout`` seconds each, to show the model what they saw. ``prompt_size`` is
    ``"compact"`` (the short prompt, its evidence bounded by ``evidence_budget`` tokens, and the
    ladder built for greedy decoding; its replies capped at a length sized from the function's, see
    :func:`regrow._proposers._llm._compact.reply_cap`), ``"full"``, or ``"auto"`` (compact for a model whose
    name says it is small).
    """

    trusted = False  # a model's reply is railed, capability-checked and proven twice (regrow._proof._prove)

    def __init__(
        self,
        transport: Transport,
        *,
        temperature: float | None = None,
        seed: int | None = None,
        max_tokens: int | None = 4096,
        params: Mapping[str, Any] | None = None,
        stream: bool | None = None,
        limits: ModelLimits | None = None,
        retry: RetryPolicy | None = None,
        prices: Mapping[str, Price] | None = None,
        token_budget: int = 6000,
        prompt_extra: str = "",
        allow_signature_change: bool = False,
        allow_helpers: bool = False,
        edit_format: FormatOption = "auto",
        evidence: bool = True,
        evidence_timeout: float = 1.0,
        prompt_size: PromptSize = "auto",
        evidence_budget: int = EVIDENCE_BUDGET,
        locate: bool | None = None,
        choose: bool = True,
    ) -> None:
        self.transport = transport
        self.name = f"{transport.provider}:{transport.model}"
        sampling = {"temperature": temperature, "seed": seed, "max_tokens": max_tokens}
        self.params = {**{k: v for k, v in sampling.items() if v is not None}, **dict(params or {})}
        self.stream = stream
        self.limits = limits or ModelLimits()
        self.retry = retry or RetryPolicy()
        table = {**DEFAULT_PRICES, **dict(prices or {})}
        self.price = (0.0, 0.0) if transport.provider in FREE_PROVIDERS else price_of(transport.model, table)
        if self.price is None and self.limits.max_cost is not None:
            log.warning("%s has no price, so max_cost=%g cannot limit it; pass prices={%r: (input, "
                        "output)} in USD per million tokens", self.name, self.limits.max_cost, transport.model)
        self.prompt_options = PromptOptions(token_budget, prompt_extra, allow_signature_change, allow_helpers,
                                            evidence_budget)
        if prompt_size not in ("auto", "full", "compact"):
            raise ValueError(f"prompt_size must be 'auto', 'full' or 'compact', not {prompt_size!r}")
        self.compact = is_small(transport.model) if prompt_size == "auto" else prompt_size == "compact"
        if edit_format not in ("auto", "whole", "edit"):
            raise ValueError(f"edit_format must be 'auto', 'whole' or 'edit', not {edit_format!r}")
        self.edit_format = (default_format(transport.provider, transport.model, getattr(transport, "base_url", None))
                            if edit_format == "auto" else edit_format)
        # A plain function's first request; a method's is always edit_format (its body says what the class holds).
        self.opening: Opening = SMALL_OPENING if self.compact and edit_format == "auto" else self.edit_format
        self.evidence, self.evidence_timeout = evidence, evidence_timeout
        self.locate = locate  # None: a locate request first when an engine ran before (chain mode)
        self.choose = choose
        self.usage = Usage()  # every session of this proposer
        self.last_usage = Usage()  # the latest session
        self.last_prompt_tokens = 0  # the estimate for the latest prompt sent
        self.last_stop = ""  # what became of the latest session's choose request (stop_reason)
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"LLMProposer({self.name!r})"

    @property
    def stop_reason(self) -> str:
        """Why the latest session's stream ended: what became of a choose request ("" otherwise)."""
        return self.last_stop

    def propose(self, request: Request) -> Iterator[Candidate]:
        run = _Run(self, request)
        if request.ambiguity is not None and not self.choose:
            self.last_stop = "not asked to choose (choose=False)"
            return
        if request.ambiguity is not None:  # an earlier proposer's fixes disagree: settle, write none
            candidate = run.chosen(*self._call(run, run.choose_chat()))
            if candidate is not None:
                yield candidate
                run.judged_pick(candidate)
            return
        run.prepare()
        if (chat := run.locate_chat()) is not None:
            yield from run.located(*self._call(run, chat))
        while (chat := run.next_chat()) is not None:
            candidate = run.take(*self._call(run, chat))
            if candidate is not None:
                before = len(request.history)
                yield candidate
                run.judged(candidate, before)

    async def apropose(self, request: Request) -> AsyncIterator[Candidate]:
        """As :meth:`propose`, with the SDK's async client; never blocks the event loop."""
        run = _Run(self, request)
        if request.ambiguity is not None and not self.choose:
            self.last_stop = "not asked to choose (choose=False)"
            return
        if request.ambiguity is not None:
            candidate = run.chosen(*await self._acall(run, run.choose_chat()))
            if candidate is not None:
                yield candidate
                run.judged_pick(candidate)
            return
        await asyncio.to_thread(run.prepare)
        if (chat := run.locate_chat()) is not None:
            for found in await asyncio.to_thread(run.located, *await self._acall(run, chat)):
                yield found
        while (chat := run.next_chat()) is not None:
            candidate = run.take(*await self._acall(run, chat))
            if candidate is not None:
                before = len(request.history)
                yield candidate
                run.judged(candidate, before)

    def _call(self, run: _Run, chat: Chat) -> tuple[Reply, float, int]:
        """One call, retried within the session's deadline: the reply, its latency and its retries."""
        retrying, started = Retrying(self.retry, run.request.deadline), time.monotonic()
        try:
            reply = complete(self.transport, chat, retrying, on_delta=run.on_delta, on_retry=run.retrying)
        except ProposerError:
            run.failed(time.monotonic() - started, retrying.retries)
            raise
        return reply, time.monotonic() - started, retrying.retries

    async def _acall(self, run: _Run, chat: Chat) -> tuple[Reply, float, int]:
        retrying, started = Retrying(self.retry, run.request.deadline), time.monotonic()
        try:
            reply = await acomplete(self.transport, chat, retrying, on_delta=run.on_delta, on_retry=run.retrying)
        except ProposerError:
            run.failed(time.monotonic() - started, retrying.retries)
            raise
        return reply, time.monotonic() - started, retrying.retries

    def _count(self, session: Usage, call: Usage) -> None:
        with self._lock:
            self.usage.add(call)
            self.last_usage = session.copy()

    def _noted(self, session: Usage, kind: str) -> None:
        """An echo or a repeat, counted in this session's usage and the proposer's."""
        with self._lock:
            setattr(session, kind, getattr(session, kind) + 1)
            setattr(self.usage, kind, getattr(self.usage, kind) + 1)
            self.last_usage = session.copy()

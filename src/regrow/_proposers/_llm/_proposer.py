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
import hashlib
import json
import logging
import threading
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

from ..._candidate import Candidate
from ..._errors import ProposerError
from ..._events import Event, EventType, emit
from ..._secrets import mask
from .._proposer import BaseProposer, Request
from ._accounting import DEFAULT_PRICES, FREE_PROVIDERS, Meter, ModelLimits, Price, Usage, price_of
from ._compact import EVIDENCE_BUDGET, reply_cap
from ._evidence import Evidence, gather
from ._locate import LOCATE_TOKENS, locate_prompt, parse_locate, searched
from ._parse import Parsed, Rules, parse_reply
from ._prompt import Prior, Prompt, PromptOptions, build_prompt, estimate_tokens, priors_from
from ._retry import Retrying, RetryPolicy, acomplete, complete
from ._rules import normal_form
from ._sections import focus_line, shown
from ._strategy import SMALL_OPENING, FormatOption, Ladder, Opening, PromptSize, default_format, is_small
from ._transport import Chat, OnDelta, Reply, Transport, TransportError

log = logging.getLogger("regrow")

_EXCERPT = 1500  # characters of a refused reply shown in the next prompt
_SCREENED_FORMS = 1000  # engine candidates a reply is compared with for a repeat
_CLIMBS = 6  # rungs tried for a prompt that differs from every one sent, before the session ends


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
    names the line and an expression, the engine makes and judges the edits there.
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
        self.usage = Usage()  # every session of this proposer
        self.last_usage = Usage()  # the latest session
        self.last_prompt_tokens = 0  # the estimate for the latest prompt sent
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"LLMProposer({self.name!r})"

    def propose(self, request: Request) -> Iterator[Candidate]:
        run = _Run(self, request)
        run.prepare()
        if (chat := run.locate_chat()) is not None:
            retrying, started = Retrying(self.retry, request.deadline), time.monotonic()
            try:
                reply = complete(self.transport, chat, retrying, on_delta=run.on_delta, on_retry=run.retrying)
            except ProposerError:
                run.failed(time.monotonic() - started, retrying.retries)
                raise
            yield from run.located(reply, time.monotonic() - started, retrying.retries)
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
        await asyncio.to_thread(run.prepare)
        if (chat := run.locate_chat()) is not None:
            retrying, started = Retrying(self.retry, request.deadline), time.monotonic()
            try:
                reply = await acomplete(self.transport, chat, retrying, on_delta=run.on_delta, on_retry=run.retrying)
            except ProposerError:
                run.failed(time.monotonic() - started, retrying.retries)
                raise
            for found in await asyncio.to_thread(run.located, reply, time.monotonic() - started, retrying.retries):
                yield found
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

    def _noted(self, session: Usage, kind: str) -> None:
        """An echo or a repeat, counted in this session's usage and the proposer's."""
        with self._lock:
            setattr(session, kind, getattr(session, kind) + 1)
            setattr(self.usage, kind, getattr(self.usage, kind) + 1)
            self.last_usage = session.copy()


class _Run:
    """One session's work: its calls, its meter, its memory of refused replies and of the prompts sent."""

    def __init__(self, proposer: LLMProposer, request: Request) -> None:
        self.proposer = proposer
        self.request = request
        self.meter = Meter(proposer.name, proposer.limits, proposer.price, request.failure.fingerprint)
        # Replies stream unless told not to: a stream's time limit is its inactivity, so a slow model that is
        # producing tokens is waited for; its text becomes propose_chunk events when someone listens.
        self.listened = request.listened
        self.on_delta: OnDelta | None = self._chunk if proposer.stream is not False else None
        self.refused: list[tuple[int, Prior]] = []
        method = "." in request.target.qualname
        params = dict(proposer.params)
        if proposer.compact:  # a small model that runs on (the test's code continued, 768 tokens) costs minutes
            params["max_tokens"] = reply_cap(estimate_tokens(request.target.bare_source), params.get("max_tokens"))
        self.ladder = Ladder(proposer.edit_format, params, proposer.compact,
                             rewrite_first=proposer.opening == "rewrite" and not method, method=method)
        self.evidence: Evidence | None = None
        self.rules = self._rules(None)
        self.forms: dict[str, str] = {}  # normal form of each candidate this run sent → its label
        self.known: dict[str, str] | None = None  # normal forms of the session's other candidates
        self.sent: set[str] = set()  # hashes of (system, user, params) of every call made
        self.calls = 0
        self.prompt_tokens = 0

    def prepare(self) -> None:
        """The evidence from the checks (once, before the first call) and what follows from it."""
        if self.proposer.evidence and self.request.checks:
            self.evidence = gather(self.request, self.proposer.evidence_timeout)
        self.rules = self._rules(focus_line(self.request, self.evidence))

    def _rules(self, hint: int | None) -> Rules:
        target, options = self.request.target, self.proposer.prompt_options
        return Rules(target.name, target.node, target.owner.__name__ if target.owner else None,
                     options.allow_signature_change, options.allow_helpers, source=target.bare_source, hint=hint)

    def _emit(self, kind: EventType, message: str = "", **fields: Any) -> None:
        emit(self.request.events, Event(kind, self.request.target.qualname, self.request.attempt, message=message,
                                        **fields))

    def _chunk(self, text: str) -> None:
        if self.listened:
            self._emit("propose_chunk", delta=text)

    def locate_chat(self) -> Chat | None:
        """The locate request, first in a session after an engine searched (or when ``locate=True``)."""
        request, wanted = self.request, self.proposer.locate
        if not request.checks or wanted is False or not (wanted or request.screened):
            return None
        params = dict(self.ladder.current().params)
        params["max_tokens"] = min(int(params.get("max_tokens") or LOCATE_TOKENS), LOCATE_TOKENS)
        return self._sent(locate_prompt(request, self.evidence), params)

    def located(self, reply: Reply, latency: float, retries: int) -> list[Candidate]:
        """The engine's candidates at the places a locate reply names (none, the reply refused, if unusable)."""
        self._counted(reply, latency, retries, "locate ")
        located = parse_locate(reply.text, len(self.request.target.bare_source.rstrip().splitlines()))
        if not located.spots:
            self._refuse(reply.text[:_EXCERPT], f"a locate reply that could not be used: {located.reason}")
            return []
        found = searched(self.request, located, self.proposer.name, self.calls)
        places = ", ".join(f"line {s.line} ({s.kind}{': ' + s.use if s.use else ''})" for s in located.spots)
        if not found:
            self._refuse("", f"located {places}; no edit there passed the checks")
        return found

    def next_chat(self) -> Chat | None:
        """The next call's messages; ``None`` when this session's calls or time are spent.

        Raises :class:`ProposerError` (after a ``budget_refused`` event) when a budget refuses the call.
        """
        request = self.request
        if self.calls >= request.max_attempts or time.monotonic() >= request.deadline:
            return None
        priors = priors_from(request.history, self.refused)
        for _ in range(_CLIMBS):
            strategy = self.ladder.current()
            prompt = build_prompt(request, priors, self.proposer.prompt_options, self.evidence, strategy)
            key = prompt_key(prompt.system, prompt.user, strategy.params)
            if key not in self.sent:
                break
            self.ladder.climb("")  # it was sent already: change what is sent
        else:
            log.warning("%s: every prompt left to try was sent already; no more calls", self.proposer.name)
            return None
        self.sent.add(key)
        return self._sent(prompt, strategy.params)

    def _sent(self, prompt: Prompt, params: Mapping[str, Any]) -> Chat:
        """The chat for ``prompt``, counted, once the budgets allow the call."""
        refusal = self.meter.refusal(prompt.tokens)
        if refusal:
            self._emit("budget_refused", f"{self.proposer.name}: {refusal}")
            raise ProposerError(f"{self.proposer.name} not called: {refusal}")
        self.calls += 1
        self.prompt_tokens = prompt.tokens
        self.proposer.last_prompt_tokens = prompt.tokens
        self.meter.start()
        # Every secret the host knows is masked by value, plain and encoded: the configuration the function
        # reads (kept in its sandbox, registered by the session) may sit in a local or a message shown here.
        namespace = self.request.target.func.__globals__
        return Chat(mask(prompt.system, namespace), mask(prompt.user, namespace), params)

    def retrying(self, error: TransportError, delay: float) -> None:
        self._emit("transient_retry", f"{error}; retrying in {delay:.2f}s")

    def failed(self, latency: float, retries: int) -> None:
        """Count a call that failed for good (it spent time, and maybe tokens the provider did not report)."""
        self._count(0, 0, latency, retries)

    def take(self, reply: Reply, latency: float, retries: int) -> Candidate | None:
        """The candidate in ``reply``, or ``None`` after remembering why it was refused."""
        tokens_in, tokens_out = self._counted(reply, latency, retries)
        parsed = parse_reply(reply.text, self.rules, truncated=reply.truncated)
        if parsed.source is None:
            self._refused(parsed, reply.text)
            return None
        form = normal_form(parsed.source) or parsed.source.strip()
        earlier = self.forms.get(form) or self._known().get(form)
        if earlier is not None:
            self._refuse("", f"identical to {earlier}, which failed", kind="repeat")
            self.ladder.climb(f"repeated {earlier}, which had already failed")
            return None
        self.forms[form] = f"{self.proposer.name} call {self.calls}"
        self.ladder.settle()
        note = "; ".join([f"{tokens_in} in / {tokens_out} out tokens, {latency:.2f}s", *parsed.notes])
        return Candidate(parsed.source, origin=self.proposer.name, operator=f"call {self.calls}", note=note)

    def _counted(self, reply: Reply, latency: float, retries: int, kind: str = "") -> tuple[int, int]:
        """Count a call that answered and report it (``model_call``); its tokens in and out."""
        tokens_in = reply.input_tokens or self.prompt_tokens
        tokens_out = reply.output_tokens or estimate_tokens(reply.text)
        call = self._count(tokens_in, tokens_out, latency, retries, reply)
        self._emit("model_call", f"{self.proposer.name} {kind}call {self.calls}: {call.summary()} "
                                 f"(prompt ~{self.prompt_tokens} tokens estimated)")
        return tokens_in, tokens_out

    def _refused(self, parsed: Parsed, text: str) -> None:
        if parsed.echo:
            line = self.rules.hint
            where = f"the failing line is {shown(self.request.target, line)}" if line else "it fails"
            self._refuse("", f"identical to the original; {where}", kind="echo")
            self.ladder.climb("was the original function, unchanged" + (" (the edit changed nothing)"
                                                                       if parsed.edited else ""))
            return
        self._refuse((parsed.code or text)[:_EXCERPT], parsed.reason)
        if parsed.edited:  # the format failed this model: ask for the other one
            self.ladder.switch(f"held {parsed.edited} edits that could not be used ({parsed.reason})")
        else:
            self.ladder.settle()

    def _known(self) -> dict[str, str]:
        """The normal forms of the session's candidates from others (judged, or screened by the engine)."""
        if self.known is None:  # the engine's screened candidates, once; parsing each costs ~0.25 ms, so
            self.known = {}     # only the smallest edits (those a model is likeliest to send too)
            failed = [a for a in self.request.screened if not a.verdict.ok]
            for attempt in sorted(failed, key=lambda a: a.candidate.edit_size)[:_SCREENED_FORMS]:
                form = normal_form(attempt.candidate.source)
                if form is not None:
                    self.known[form] = attempt.candidate.describe()
        for attempt in self.request.history:  # few, and growing
            form = normal_form(attempt.candidate.source) if not attempt.verdict.ok else None
            if form is not None and form not in self.forms:
                self.known.setdefault(form, attempt.candidate.describe())
        return self.known

    def judged(self, candidate: Candidate, before: int) -> None:
        """After a yield: a candidate the session skipped (a duplicate) got no verdict; remember it as refused."""
        if len(self.request.history) == before:
            self._refuse("", "it repeats a candidate the session had already judged", kind="repeat")
            self.ladder.climb("repeated a candidate that had already failed")

    def _refuse(self, shown_text: str, reason: str, kind: str = "") -> None:
        label = f"{self.proposer.name} call {self.calls}"
        if kind:
            self.proposer._noted(self.meter.usage, {"echo": "echoes", "repeat": "repeats"}[kind])
        self.refused.append((len(self.request.history), Prior(label, shown_text, reason, ran=False, kind=kind)))
        self._emit("reply_refused", f"{label}: {reason}")

    def _count(self, tokens_in: int, tokens_out: int, latency: float, retries: int,
               reply: Reply | None = None) -> Usage:
        timing = (reply.first_token, reply.generating) if reply is not None else (None, 0.0)
        call = self.meter.record(tokens_in, tokens_out, latency, retries, *timing)
        self.proposer._count(self.meter.usage, call)
        return call


def prompt_key(system: str, user: str, params: Mapping[str, Any]) -> str:
    """What identifies a prompt: a hash of its messages and sampling parameters."""
    text = json.dumps([system, user, sorted((str(k), repr(v)) for k, v in params.items())], ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()

"""One session of a model proposer (:class:`_Run`): its calls, its meter, its memory of refused replies and of
the prompts sent; the choose request when an earlier proposer left an ambiguity, else the locate request
and the rewrites. :class:`~._proposer.LLMProposer` makes the calls; this decides what each one is and
what its reply becomes.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..._candidate import Candidate
from ..._errors import BudgetSpent
from ..._events import Event, EventType, emit
from ..._secrets import mask
from .._proposer import Request
from ._accounting import Meter, Usage
from ._choose import CHOOSE_TOKENS, choose_prompt, settled
from ._compact import reply_cap
from ._evidence import Evidence, gather
from ._locate import LOCATE_TOKENS, locate_prompt, parse_locate, searched
from ._parse import Parsed, Rules, parse_reply
from ._prompt import Prior, Prompt, build_prompt, estimate_tokens, priors_from
from ._rules import normal_form
from ._sections import focus_line, shown
from ._strategy import Ladder
from ._transport import Chat, OnDelta, Reply, TransportError

if TYPE_CHECKING:
    from ._model import ModelProposer

log = logging.getLogger("regrow")

_EXCERPT = 1500  # characters of a refused reply shown in the next prompt
_SCREENED_FORMS = 1000  # engine candidates a reply is compared with for a repeat
_CLIMBS = 6  # rungs tried for a prompt that differs from every one sent, before the session ends


# Stop reasons of a reply the provider withheld (OpenAI, Anthropic, Gemini): said as such, not as an empty reply.
_REFUSALS = frozenset({"content_filter", "refusal", "safety", "recitation", "prohibited_content", "blocklist",
                       "spii"})


class _Run:
    """One session's work: its calls, its meter, its memory of refused replies and of the prompts sent."""

    def __init__(self, proposer: ModelProposer, request: Request) -> None:
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
        self.quickest: float | None = None  # seconds of this run's quickest call that answered
        proposer.last_stop = ""

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

    def choose_chat(self) -> Chat:
        """The choose request for the ambiguity an earlier proposer left (see :mod:`._choose`)."""
        assert self.request.ambiguity is not None
        return self._sent(choose_prompt(self.request.ambiguity), {**self.proposer.params, "max_tokens": CHOOSE_TOKENS})

    def chosen(self, reply: Reply, latency: float, retries: int) -> Candidate | None:
        """The candidate a choose reply picks; ``None`` when it picks none or cannot be used (the proposer's
        ``stop_reason`` says which)."""
        self._counted(reply, latency, retries, "choose ")
        assert self.request.ambiguity is not None
        candidate, self.proposer.last_stop = settled(reply.text, self.request.ambiguity, self.proposer.name,
                                                     self.calls)
        if candidate is None:
            self._emit("reply_refused", f"{self.proposer.name} call {self.calls}: {self.proposer.last_stop}")
        return candidate

    def judged_pick(self, pick: Candidate) -> None:
        """After the pick's yield: a pick that failed its proof is what became of the request."""
        verdict = next((a.verdict for a in reversed(self.request.history) if a.candidate.source == pick.source), None)
        if verdict is not None and not verdict.ok:
            which = pick.operator.rpartition("choose: ")[2]
            self.proposer.last_stop = f"its pick, {which}, failed {verdict.check}: {verdict.reason[:200]}"

    def next_chat(self) -> Chat | None:
        """The next call's messages; ``None`` when this session's calls or time are spent, or when the time left
        is less than this session's quickest call that answered took (the call would be cut, its prompt paid).

        Raises :class:`ProposerError` (after a ``budget_refused`` event) when a budget refuses the call.
        """
        request = self.request
        left = request.deadline - time.monotonic()
        if self.calls >= request.max_attempts or left <= 0:
            return None
        if self.quickest is not None and left < self.quickest:  # it would be cut, its prompt paid for
            self._emit("budget_refused", f"{self.proposer.name}: {left:.0f}s left of the repair's time, less than "
                                         f"this session's quickest model call ({self.quickest:.0f}s): not called")
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
            raise BudgetSpent(f"{self.proposer.name} not called: {refusal}")
        self.calls += 1
        self.prompt_tokens = prompt.tokens
        self.proposer.last_prompt_tokens = prompt.tokens
        self.meter.start()
        # Every secret the host knows is masked by value, plain and encoded: the configuration the function
        # reads (kept in its sandbox, registered by the session) may sit in a local or a message shown here.
        namespace = self.request.target.func.__globals__
        more: frozenset[str] = getattr(self.request.failure, "secrets", frozenset())  # (the call's password=)
        return Chat(mask(prompt.system, namespace, more), mask(prompt.user, namespace, more), params)

    def retrying(self, error: TransportError, delay: float) -> None:
        self._emit("transient_retry", f"{error}; retrying in {delay:.2f}s")

    def failed(self, latency: float, retries: int) -> None:
        """Count a call that failed for good (it spent time, and maybe tokens the provider did not report)."""
        self._count(0, 0, latency, retries)

    def take(self, reply: Reply, latency: float, retries: int) -> Candidate | None:
        """The candidate in ``reply``, or ``None`` after remembering why it was refused."""
        tokens_in, tokens_out = self._counted(reply, latency, retries)
        parsed = parse_reply(reply.text, self.rules, truncated=reply.truncated)
        if parsed.source is None and not reply.text.strip() and reply.finish.lower() in _REFUSALS:
            parsed = Parsed(None, f"the provider refused to answer (its stop reason: {reply.finish})")
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
        self.quickest = latency if self.quickest is None else min(self.quickest, latency)
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

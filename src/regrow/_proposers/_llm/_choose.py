"""The "choose" request: a model settles an ambiguous repair.

When several candidates pass every check but disagree (the engine's :class:`regrow.Ambiguity`), the
model is shown the original, the candidates, and the inputs that separate them with what each one
(and the original) does there, and picks one — or none. It answers ``{"choice": N, "why": "…"}``
and nothing it writes is code that runs: the pick is the candidate's own source, offered to the
session as the model's fix (:class:`Chooser`), so it is still proven and railed like any model's.
A reply that is not the format, or names a candidate that does not exist, is refused with that reason.

The ambiguity is taken by its shape (:class:`AmbiguityLike`): ``original``, ``candidates`` and
``separations`` (each a ``call``, one output per candidate, and the ``original``'s output).
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Protocol

from ..._candidate import Candidate
from ..._errors import BudgetSpent
from .._proposer import Request
from ._accounting import Meter
from ._fences import block
from ._locate import json_in
from ._prompt import Prompt, estimate_tokens
from ._retry import Retrying, complete
from ._sections import cap
from ._transport import Chat

if TYPE_CHECKING:
    from ._model import ModelProposer

MAX_CANDIDATES = 4
MAX_INPUTS = 5
MAX_REPLY = 4000  # characters: a choice is a line
CHOOSE_TOKENS = 200  # the reply's token cap


class SeparationLike(Protocol):
    """One input on which the candidates disagree, with each candidate's output there."""

    @property
    def call(self) -> str: ...

    @property
    def outputs(self) -> Sequence[str]: ...

    @property
    def original(self) -> str: ...


class AmbiguityLike(Protocol):
    """Candidates that pass every check and disagree: the original, their sources, the separating inputs."""

    @property
    def original(self) -> str: ...

    @property
    def candidates(self) -> Sequence[str]: ...

    @property
    def separations(self) -> Sequence[SeparationLike]: ...


@dataclasses.dataclass(frozen=True)
class Choice:
    """What the model chose: ``index`` (0-based) and its ``candidate``, or neither; ``why`` is the model's
    reason, or — ``refused`` — why its reply could not be used."""

    index: int | None
    candidate: Candidate | None
    why: str
    refused: bool = False


SYSTEM = ("You settle an ambiguous repair: several fixes of a Python function pass every test, but they "
          "behave differently on some inputs. Pick the fix whose behaviour the function's author meant, judging "
          "by its name, docstring and code, or none if none is right. Answer with JSON only.")


def choose_prompt(ambiguity: AmbiguityLike) -> Prompt:
    """The original, the candidates and what each does on the separating inputs."""
    candidates = list(ambiguity.candidates)[:MAX_CANDIDATES]
    parts = [f"## The original (it failed)\n{block(cap(ambiguity.original.strip(), 3000))}"]
    for number, source in enumerate(candidates, start=1):
        parts.append(f"## Candidate {number}\n{block(cap(source.strip(), 3000))}")
    rows = []
    for separation in list(ambiguity.separations)[:MAX_INPUTS]:
        row = [f"- called with ({cap(separation.call, 200)}):"]
        if separation.original:
            row.append(f"  the original {cap(separation.original, 200)}")
        row += [f"  candidate {n} {cap(output, 200)}" for n, output in enumerate(separation.outputs[:len(candidates)],
                                                                                 start=1)]
        rows.append("\n".join(row))
    parts.append("## Where they disagree\n" + "\n".join(rows))
    parts.append(f'## Your answer\nOne JSON object: {{"choice": <the candidate number, 1-{len(candidates)}, or 0 '
                 'for none>, "why": "<one sentence>"}. Nothing else.')
    user = "\n\n".join(parts)
    return Prompt(SYSTEM, user, estimate_tokens(SYSTEM) + estimate_tokens(user))


def parse_choice(text: str, count: int) -> tuple[int | None, str, str]:
    """``(index or None, why, refusal)`` from a reply choosing among ``count`` candidates."""
    if len(text) > MAX_REPLY:
        return None, "", f"the reply is {len(text)} characters, not the short JSON asked for"
    try:
        data = json_in(text)
    except ValueError as exc:
        return None, "", f"the reply is not the JSON asked for ({exc})"
    if not isinstance(data, dict) or "choice" not in data:
        return None, "", "the reply is not an object with a choice"
    choice, why = data["choice"], data.get("why", "")
    # The reason is shown in verdicts and terminals: one line of printable text (no escapes, no newlines).
    why = cap(" ".join("".join(ch if ch.isprintable() else " " for ch in why).split()), 300) \
        if isinstance(why, str) else ""
    if choice is None or (isinstance(choice, str) and choice.strip().lower() in ("none", "0", "")):
        return None, why, ""
    if isinstance(choice, str) and choice.strip().isdigit():
        choice = int(choice.strip())
    if type(choice) is not int:
        return None, "", f"the choice {str(choice)[:40]!r} is not a candidate number"
    if choice == 0:
        return None, why, ""
    if not 1 <= choice <= count:
        return None, "", f"candidate {choice} does not exist (1-{count})"
    return choice - 1, why, ""


def choose(ambiguity: AmbiguityLike, proposer: ModelProposer, *, deadline: float | None = None,
           timeout: float = 300.0) -> Choice:
    """Ask ``proposer``'s model to pick among ``ambiguity``'s candidates (one call, retried as any).

    The budgets of ``proposer`` apply and its usage counts the call. Raises :class:`ProposerError`
    when the call cannot be made or fails for good; a reply that cannot be used is a refused
    :class:`Choice`, with the reason.
    """
    candidates = list(ambiguity.candidates)[:MAX_CANDIDATES]
    if len(candidates) < 2 or not ambiguity.separations:
        raise ValueError("a choice needs at least two candidates and one input that separates them")
    prompt = choose_prompt(ambiguity)
    fingerprint = "choose:" + hashlib.sha256("\0".join([ambiguity.original, *candidates]).encode()).hexdigest()[:16]
    meter = Meter(proposer.name, proposer.limits, proposer.price, fingerprint)
    refusal = meter.refusal(prompt.tokens)
    if refusal:
        raise BudgetSpent(f"{proposer.name} not called: {refusal}")
    meter.start()
    params = {**proposer.params, "max_tokens": CHOOSE_TOKENS}
    started = time.monotonic()
    retrying = Retrying(proposer.retry, deadline if deadline is not None else started + timeout)
    on_delta = None if proposer.stream is False else (lambda text: None)
    reply = complete(proposer.transport, Chat(prompt.system, prompt.user, params), retrying, on_delta=on_delta)
    latency = time.monotonic() - started
    call = meter.record(reply.input_tokens or prompt.tokens, reply.output_tokens or estimate_tokens(reply.text),
                        latency, retrying.retries, reply.first_token, reply.generating)
    proposer._count(meter.usage, call)
    index, why, refusal = parse_choice(reply.text, len(candidates))
    if refusal:
        return Choice(None, None, refusal, refused=True)
    if index is None:
        return Choice(None, None, why or "the model chose none")
    return Choice(index, picked(ambiguity, index, proposer.name, why), why)


def picked(ambiguity: AmbiguityLike, index: int, origin: str, why: str, call: int | None = None) -> Candidate:
    """Candidate ``index`` of ``ambiguity`` as the model's fix (``origin``), labelled as its choice (and the
    session's call ``call``, in chain mode)."""
    label = f"choose: candidate {index + 1}" if call is None else f"call {call} choose: candidate {index + 1}"
    return Candidate(list(ambiguity.candidates)[index], origin=origin, operator=label, note=why)


def settled(text: str, ambiguity: AmbiguityLike, origin: str, call: int) -> tuple[Candidate | None, str]:
    """What a chain's choose reply settles: the picked candidate and ``""``, or ``None`` and what became of
    the request, for the verdict (a pick of none, or a reply that could not be used)."""
    count = min(len(ambiguity.candidates), MAX_CANDIDATES)
    index, why, refusal = parse_choice(text, count)
    if refusal:
        return None, f"asked to choose among the {count} candidates, its reply could not be used: {refusal}"
    if index is None:
        return None, f"asked to choose among the {count} candidates, it chose none" + (f" ({why})" if why else "")
    return picked(ambiguity, index, origin, why, call), ""


class Chooser:
    """A proposer that offers the candidate a model chose for ``ambiguity``: the session proves and rails
    it as a model's fix (it is never trusted)."""

    trusted = False

    def __init__(self, ambiguity: AmbiguityLike, proposer: ModelProposer) -> None:
        self.ambiguity = ambiguity
        self.proposer = proposer
        self.name = proposer.name
        self.last: Choice | None = None

    def propose(self, request: Request) -> Iterator[Candidate]:
        self.last = choice = choose(self.ambiguity, self.proposer, deadline=request.deadline)
        if choice.candidate is not None:
            yield choice.candidate

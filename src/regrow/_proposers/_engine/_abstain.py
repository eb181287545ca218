"""Abstention: when the plausible candidates disagree on inputs the engine can derive, no guess.

The ranking (:mod:`._rank`) runs every candidate that passed every check on the same inputs: the
tests' own calls and small variations of them (:func:`._inputs.derive`). Candidates that behave
alike there are one answer; when two or more answers remain, the tests do not decide between them,
and picking the best ranked would install a guess. :func:`undecided` says so, as an
:class:`~regrow._ambiguity.Ambiguity`: one candidate per answer (best ranked first) and the inputs
that separate them, with what each does there.

Not every disagreement counts. An input where the original itself behaves differently on two runs says
nothing (a clock, a random draw); ``-0.0``, ``0.0`` and ``0`` are one answer. A candidate the ranking's
strong rules put below another is dominated and no rival: one that raises or hangs where the original
returned on a passing check's own call (on a variation of one, where the input may be outside what the
function takes, raising is a difference like any other); one that leaves a binding dead that another
keeps read; one that keeps the original's behaviour exactly on every input near the failing calls, where
the original crashes on one of them (it keeps the bug; one that keeps a return, or a ``raise`` of the
function's own, may be what was meant, and stays a rival); and one that leaves unread a binding the
original reads; each when some candidate does not. When every candidate leaves such a binding unread,
none is offered at all (:meth:`._rank.Ranking.doubt`).
"""

from __future__ import annotations

from ..._ambiguity import MAX_CANDIDATES, MAX_INPUTS, Ambiguity, Separation
from ..._redact import redact_text
from ._rank import Evidence, Ranking, alike


def undecided(ranking: Ranking, original: str) -> Ambiguity | None:
    """The ambiguity among ``ranking``'s candidates, or ``None`` when they agree (or there is one).

    ``original`` is the original's source. An input counts where the original behaved the same on two
    runs of it (every input, when the ranking does not say).
    """
    stable = ranking.stable or None
    ranked = ranking.ranked
    if len(ranked) < 2 or not ranking.calls:
        return None
    rivals = list(ranked)
    # Dominated, no rivals: raising where the original returned on a passing test's own call (on a variation
    # of one, raising is a difference like any other: the variation may be outside what the function takes).
    rivals = [evidence for evidence in rivals if not evidence.raised_given] or rivals
    rivals = [evidence for evidence in rivals if not evidence.dead] or rivals
    rivals = [evidence for evidence in rivals if not evidence.crash] or rivals
    rivals = [evidence for evidence in rivals if not evidence.lost] or rivals
    counted = [i for i in range(len(ranking.calls)) if stable is None or stable[i]]
    # An input where a rival did not finish in its time is no evidence either way (a loaded machine stalls
    # quick calls too): disagreeing there would abstain on timing, not on behaviour.
    counted = [i for i in counted if not any(len(e.outcomes) == len(ranking.calls) and e.outcomes[i] == "timeout"
                                             for e in rivals)]
    answers: dict[tuple[str, ...], Evidence] = {}
    for evidence in rivals:
        if len(evidence.outcomes) == len(ranking.calls):
            answers.setdefault(tuple(alike(evidence.outcomes[i]) for i in counted), evidence)
    if len(answers) < 2:
        return None
    chosen = list(answers.values())[:MAX_CANDIDATES]
    apart = [i for i in counted if len({alike(evidence.outcomes[i]) for evidence in chosen}) > 1]
    # The inputs where the two best ranked differ first: those are what a reader (or a model) decides on.
    apart.sort(key=lambda i: alike(chosen[0].outcomes[i]) == alike(chosen[1].outcomes[i]))
    # Shown in logs, the ledger and a prompt: credentials masked (a call's ``shown`` is masked as it is made).
    separations = tuple(
        Separation(ranking.calls[i].shown, tuple(redact_text(evidence.outcomes[i]) for evidence in chosen),
                   redact_text(ranking.original[i]) if i < len(ranking.original) else "")
        for i in apart[:MAX_INPUTS])
    return Ambiguity(original, tuple(evidence.candidate.source for evidence in chosen), separations,
                     tuple(_label(original, evidence) for evidence in chosen))


def _label(original: str, evidence: Evidence) -> str:
    """What made the candidate, and the first line it changes (``"engine replace at line 2: `return n`"``)."""
    before = {line.strip() for line in original.splitlines()}
    changed = next((line.strip() for line in evidence.candidate.source.splitlines()
                    if line.strip() and line.strip() not in before), "")
    return f"{evidence.candidate.describe()}: `{changed[:80]}`" if changed else evidence.candidate.describe()

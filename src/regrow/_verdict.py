"""What a candidate gets: the verdict of the checks (as the sandbox says it and the host confirms it), and
the attempt that pairs the two."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING

from ._sandbox import TEXT_LIMIT, Outcome, clean

if TYPE_CHECKING:
    from ._candidate import Candidate


@dataclasses.dataclass(frozen=True)
class Verdict:
    """What the checks concluded about one candidate."""

    ok: bool
    check: str  # the check that decided: a check's name, "compile" or "sandbox"
    reason: str = ""
    duration: float = 0.0
    passed: tuple[str, ...] = ()

    @classmethod
    def from_outcome(cls, outcome: Outcome) -> Verdict:
        """The sandbox's word on an evaluation (see :func:`evaluate`); anything malformed is a refusal.

        This is only what the sandbox *says*: the session confirms a passing verdict in the host
        (see :mod:`regrow._checks._transcript`) before it believes it.
        """
        data = outcome.value if outcome.ok else None
        if type(data) is not dict or type(data.get("ok")) is not bool or type(data.get("check")) is not str \
                or type(data.get("reason")) is not str:
            reason = outcome.reason() if not outcome.ok else "the sandbox sent a malformed verdict"
            return cls(False, "sandbox", clean(reason or "the evaluation returned no verdict"), outcome.duration)
        passed = data.get("passed", [])
        names = tuple(name for name in passed if type(name) is str) if type(passed) is list else ()
        return cls(data["ok"], clean(data["check"], 80), clean(data["reason"]), outcome.duration, names)

    def scrubbed(self, scrub: Callable[[str, int], str]) -> Verdict:
        """This verdict with its texts passed through ``scrub`` (a session's :class:`regrow._sandbox._scrub.Scrubber`):
        its reason and check name may quote what a candidate produced."""
        check, reason = scrub(self.check, 200), scrub(self.reason, TEXT_LIMIT)
        if check == self.check and reason == self.reason:
            return self
        return dataclasses.replace(self, check=check, reason=reason)


@dataclasses.dataclass(frozen=True)
class Attempt:
    """A candidate and the verdict it got."""

    candidate: Candidate
    verdict: Verdict

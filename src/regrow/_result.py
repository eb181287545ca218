"""What a repair spends and what it returns: :class:`Budget` in, :class:`RepairResult` out.

They live apart from the loop (``_session``) so that the store, the ledger, delivery and every
front-end can name a result without importing the loop that makes one.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._ambiguity import Ambiguity
    from ._candidate import Candidate
    from ._evidence._failure import Failure
    from ._target._target import InstallMode
    from ._verdict import Attempt, Verdict


@dataclasses.dataclass(frozen=True, slots=True)
class Budget:
    """How much one session may spend."""

    max_candidates: int = 2000  # candidates judged, over all proposers
    max_attempts: int = 3  # model calls a model proposer may make
    timeout: float = 60.0  # wall-clock seconds for the whole session
    candidate_timeout: float = 2.0  # wall-clock seconds for one candidate's checks
    jobs: int | None = None  # workers judging candidates at once (None: every core)


@dataclasses.dataclass
class RepairResult:
    """How a repair went: the fix (if any), the verdicts that led to it and why it stopped."""

    ok: bool
    target: str
    failure: Failure | None
    fix: Candidate | None = None
    verdict: Verdict | None = None
    history: list[Attempt] = dataclasses.field(default_factory=list)
    duration: float = 0.0
    reason: str = ""
    diff: str = ""
    installed: InstallMode | None = None
    value: Any = None  # what the repaired call returned (``repair()`` only)
    screened: int = 0  # candidates a proposer judged itself (the engine) before offering any
    trusted: bool = False  # the fix came from a proposer that trusts it (the engine, the cache of its fixes)
    # Candidates passed every check but disagree on inputs derived from the tests: nothing was installed
    # (``ok`` is False), and this says which candidates and on which inputs (docs/engine.md).
    ambiguous: Ambiguity | None = None
    # The file's name and the line of the function's ``def`` in it: where the ledger's edits are, in the file's lines
    place: tuple[str, int] | None = None

    @property
    def candidates(self) -> int:
        return len(self.history)

    @property
    def via(self) -> str:
        """Which request made the fix: ``"engine"``, ``"locate"``, ``"rewrite"``, ``"choose"`` or ``"other"``
        (see :attr:`Candidate.via <regrow.extend.Candidate.via>`); ``""`` without a fix."""
        return self.fix.via if self.fix is not None else ""

    def ledger(self, limit: int = 8) -> str:
        """A short human-readable account of the attempts, for notes and logs."""
        screened = f", {self.screened} screened by the engine" if self.screened else ""
        head = f"regrow: {'repaired' if self.ok else 'could not repair'} {self.target} " \
               f"({self.candidates} candidates proven{screened}, in {self.duration:.2f}s)"
        if self.reason:
            head += f": {self.reason}"
        rejected = [a for a in self.history if not a.verdict.ok]
        lines = [head]
        if self.ok and self.fix is not None:
            lines.append(f"  fixed by {self.via}: {self.fix.describe(self.place)}")
        for attempt in rejected[:limit]:
            lines.append(f"  - {attempt.candidate.describe(self.place)}: {attempt.verdict.check}: "
                         f"{attempt.verdict.reason}")
        if len(rejected) > limit:
            lines.append(f"  ... and {len(rejected) - limit} more rejected candidates")
        return "\n".join(lines)

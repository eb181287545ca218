"""A proposed fix: source text for the target, where it came from, and its diff."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Candidate:
    """Source of one proposed definition of the target (decorators not included).

    ``origin`` names the proposer (``"engine"``, ``"cache"``, ``"openai:gpt-5"``…); ``operator``
    the engine operator or the model's attempt label; ``edit_size`` the number of AST nodes changed.
    """

    source: str
    origin: str
    operator: str = ""
    attempt: int = 0
    edit_size: int = 0
    line: int | None = None  # line of the edit, relative to the definition (1 = def line)
    note: str = ""

    @property
    def via(self) -> str:
        """Which request made it: ``"engine"`` (the built-in engine alone), ``"locate"`` (the engine's edit at
        the place a model named), ``"rewrite"`` (a model's function or edit), ``"choose"`` (a model's pick
        among candidates that disagreed), or ``"other"`` (any other proposer).

        Read from ``origin`` and the labels a model proposer gives ``operator`` (``"call 2"``, ``"call 1
        locate: …"``, ``"call 1 choose: candidate 2"``), which the store keeps: a fix served from the
        cache says what made it first.
        """
        if self.origin == "engine":
            return "engine"
        if ":" not in self.origin:  # a model's origin is "provider:model"
            return "other"
        if "locate:" in self.operator:
            return "locate"
        if "choose:" in self.operator:
            return "choose"
        return "rewrite" if self.operator.startswith("call ") else "other"

    def describe(self, place: tuple[str, int] | None = None) -> str:
        """``engine swap at shapes.py:9``; ``place``: the file's name and its ``def``'s line (else the line counts
        from the ``def``: ``at line 2``)."""
        where = "" if not self.line else f" at {place[0]}:{place[1] + self.line - 1}" if place else \
            f" at line {self.line}"
        op = f" {self.operator}" if self.operator else ""
        return f"{self.origin}{op}{where}"

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

    def describe(self) -> str:
        where = f" at line {self.line}" if self.line else ""
        op = f" {self.operator}" if self.operator else ""
        return f"{self.origin}{op}{where}"

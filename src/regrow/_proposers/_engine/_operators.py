"""The operator set: every family, tier by tier. Add an operator by writing a small class with
``name``, ``tier``, ``prior`` and ``edits(site, scope)`` and listing it here."""

from __future__ import annotations

from ._blocks import BLOCKS
from ._calls import CALLS
from ._copy import COPY
from ._core import CORE
from ._edits import Insert, Operator, Replacement
from ._statements import STATEMENTS
from ._templates import TEMPLATES
from ._twins import TWINS
from ._values import VALUES

OPERATORS: list[Operator] = [*CORE, *VALUES, *CALLS, *TEMPLATES, *TWINS, *BLOCKS, *COPY, *STATEMENTS]
"""The operators the engine uses, in no particular order (the search ranks them)."""

__all__ = ["OPERATORS", "Insert", "Operator", "Replacement"]

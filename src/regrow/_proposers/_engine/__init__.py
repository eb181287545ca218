"""The built-in search-based repair engine."""

from ._edits import Insert, Operator, Replacement
from ._operators import OPERATORS
from ._plan import Stats
from ._search import Engine

__all__ = ["OPERATORS", "Engine", "Insert", "Operator", "Replacement", "Stats"]

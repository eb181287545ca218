"""The built-in search-based repair engine."""

from ._operators import OPERATORS, Operator
from ._search import Engine

__all__ = ["OPERATORS", "Engine", "Operator"]

"""The exceptions regrow raises of its own. The user's exceptions are never replaced by these."""

from __future__ import annotations


class RegrowError(Exception):
    """Base class of every error regrow raises of its own."""


class TargetError(RegrowError):
    """The function cannot be healed (or found): raised before any repair work starts."""


class CheckError(RegrowError):
    """A check could not be set up: a missing test file, an unknown pytest node id, a bad predicate."""


class ProposerError(RegrowError):
    """A proposer could not produce candidates (a missing SDK, a missing key, a refused request)."""


class BudgetSpent(ProposerError):
    """A proposer stopped because its budget (model calls, tokens, cost) is spent: a stop, not a failure."""


class VerificationError(RegrowError):
    """A result failed the ``verify=`` predicate and healing did not produce a fix.

    ``value`` is the rejected result; ``reason`` says why it was rejected.
    """

    def __init__(self, message: str, value: object = None, reason: str = "") -> None:
        super().__init__(message)
        self.value = value
        self.reason = reason


class TestsFailedError(RegrowError):
    """``check()`` found failing tests and healing did not produce a fix."""

    __test__ = False  # not a pytest test class

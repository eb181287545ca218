"""regrow's extension points: what a custom proposer, check, sandbox, store or front-end is built from.

``regrow`` holds the user's API (``heal``, ``repair``, their results and switches); this module holds
the parts a repair is assembled from, for code that adds one (see ``docs/extending.md``):

- proposers: the :class:`Proposer` protocol, the :class:`Request` it is asked with and the
  :class:`Attempt` history in it; the built-in :class:`Engine`, the :class:`CacheProposer` of a
  :class:`Store`, and :func:`default_chain` (the engine, then a model). A proposer derives from
  :class:`BaseProposer` to declare what it can do (``trusted = True`` only if its candidates may skip
  the no-oracle policy's engine-only rule; ``trusts``; ``stop_reason``); one that does not is untrusted.
- checks: the :class:`Check` protocol (a ``cost``, a ``name``, ``__call__(func)`` raising
  :class:`CheckFailed`), and the built-in :class:`Replay`, :class:`TestCallable`, :class:`PytestTests`;
  a :class:`Verdict` is what a candidate gets.
- sandboxes: the :class:`Sandbox` protocol, its :class:`Outcome` and :class:`Limits` (the resources of
  one sandboxed call; a model's budgets are :class:`regrow.llm.ModelLimits`), the built-in modes.
- the loop: :class:`Target`, :class:`Failure`, :class:`Session` with its :class:`Budget`, and the one
  assembly every front-end calls, :class:`RepairRequest` and :func:`run_repair`, with the
  :class:`Options` ``@heal`` takes (:func:`make_options` checks and builds them).
"""

from ._candidate import Candidate
from ._checks._oracles import Check, CheckFailed, PytestTests, Replay, TestCallable
from ._evidence._failure import Failure
from ._heal._assembly import RepairRequest, run_repair
from ._heal._options import Options, make_options
from ._proposers._cache import CacheProposer
from ._proposers._chain import default_chain
from ._proposers._engine import Engine
from ._proposers._proposer import BaseProposer, Proposer, Request
from ._result import Budget, RepairResult
from ._sandbox import ForkSandbox, InProcessSandbox, Limits, Outcome, Sandbox, make_sandbox
from ._session._loop import Session
from ._store import Store
from ._target._target import Target
from ._verdict import Attempt, Verdict

__all__ = [
    "Attempt",
    "BaseProposer",
    "Budget",
    "CacheProposer",
    "Candidate",
    "Check",
    "CheckFailed",
    "Engine",
    "Failure",
    "ForkSandbox",
    "InProcessSandbox",
    "Limits",
    "Options",
    "Outcome",
    "Proposer",
    "PytestTests",
    "RepairRequest",
    "RepairResult",
    "Replay",
    "Request",
    "Sandbox",
    "Session",
    "Store",
    "Target",
    "TestCallable",
    "Verdict",
    "default_chain",
    "make_options",
    "make_sandbox",
    "run_repair",
]

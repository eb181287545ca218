"""regrow: repairs failing Python functions.

A failure goes in; a proven fix comes out, installed into the live function, and (when asked)
written back to the source file. The built-in search engine needs no network and no key.

PYTEST_DONT_REWRITE: regrow is a pytest plugin too, and is often imported before pytest starts
(the CLI, the bench); there is nothing in it for pytest's assertion rewriting to do.
"""

from ._cache import CacheProposer
from ._candidate import Candidate
from ._capture import capture
from ._chain import default_chain
from ._checks import Check, CheckFailed, PytestTests, Replay, TestCallable, Verdict
from ._config import disable, enable, is_enabled
from ._decorator import heal, state
from ._disclosure import EvidencePolicy, Redaction, Sections, configure_evidence, evidence_policy
from ._engine import Engine
from ._errors import CheckError, ProposerError, RegrowError, TargetError, TestsFailedError, VerificationError
from ._events import Event, EventHandler, EventType
from ._failure import Failure
from ._heal import Healing
from ._ledger import ledger_of
from ._logbuffer import disable_log_capture, enable_log_capture
from ._proposer import Attempt, Proposer, Request
from ._repair import repair
from ._request import HealingRequested, request_healing
from ._result import Budget, RepairResult
from ._sandbox import InProcessSandbox, Limits, Outcome, Sandbox
from ._session import Session
from ._store import Store
from ._target import Target
from ._version import __version__

__all__ = [
    "Attempt",
    "Budget",
    "CacheProposer",
    "Candidate",
    "Check",
    "CheckError",
    "CheckFailed",
    "Engine",
    "Event",
    "EvidencePolicy",
    "EventHandler",
    "EventType",
    "Failure",
    "Healing",
    "HealingRequested",
    "InProcessSandbox",
    "Limits",
    "Outcome",
    "Proposer",
    "ProposerError",
    "PytestTests",
    "RegrowError",
    "Redaction",
    "RepairResult",
    "Replay",
    "Request",
    "Sandbox",
    "Sections",
    "Session",
    "Store",
    "Target",
    "TargetError",
    "TestCallable",
    "TestsFailedError",
    "Verdict",
    "VerificationError",
    "__version__",
    "capture",
    "configure_evidence",
    "default_chain",
    "disable",
    "disable_log_capture",
    "enable",
    "enable_log_capture",
    "evidence_policy",
    "heal",
    "is_enabled",
    "ledger_of",
    "repair",
    "request_healing",
    "state",
]

"""regrow: repairs failing Python functions.

A failure goes in; a proven fix comes out, installed into the live function, and (when asked)
written back to the source file. The built-in search engine needs no network and no key.

PYTEST_DONT_REWRITE: regrow is a pytest plugin too, and is often imported before pytest starts
(the CLI, the bench); there is nothing in it for pytest's assertion rewriting to do.
"""

from ._ambiguity import Ambiguity, Separation
from ._candidate import Candidate
from ._errors import CheckError, ProposerError, RegrowError, TargetError, TestsFailedError, VerificationError
from ._events import Event, EventHandler, EventType
from ._evidence._capture import capture
from ._evidence._disclosure import EvidencePolicy, Redaction, Sections, configure_evidence, evidence_policy
from ._evidence._logbuffer import disable_log_capture, enable_log_capture
from ._evidence._request import HealingRequested, request_healing
from ._heal._decorator import heal, state
from ._heal._healing import Healing
from ._heal._ledger import ledger_of
from ._heal._repair import repair
from ._heal._switches import disable, enable, is_enabled
from ._result import RepairResult
from ._service._watch import unwatch, watch, watching
from ._store import Store
from ._verdict import Verdict
from ._version import __version__

# The user's API, pinned by tests/test_exported_members.py. What a custom proposer, check, sandbox or
# front-end is built from is in regrow.extend.
__all__ = [
    "Ambiguity",
    "Candidate",
    "CheckError",
    "Event",
    "EventHandler",
    "EventType",
    "EvidencePolicy",
    "Healing",
    "HealingRequested",
    "ProposerError",
    "Redaction",
    "RegrowError",
    "RepairResult",
    "Sections",
    "Separation",
    "Store",
    "TargetError",
    "TestsFailedError",
    "Verdict",
    "VerificationError",
    "__version__",
    "capture",
    "configure_evidence",
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
    "unwatch",
    "watch",
    "watching",
]

"""regrow: repairs failing Python functions.

A failure goes in; a proven fix comes out, installed into the live function, and (when asked)
written back to the source file. The built-in search engine needs no network and no key.

PYTEST_DONT_REWRITE: regrow is a pytest plugin too, and is often imported before pytest starts
(the CLI, the bench); there is nothing in it for pytest's assertion rewriting to do.
"""

from __future__ import annotations

import importlib

from ._errors import CheckError, ProposerError, RegrowError, TargetError, TestsFailedError, VerificationError
from ._version import __version__

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~10 ms, most of what import regrow costs)
if TYPE_CHECKING:
    from typing import Any

    from ._ambiguity import Ambiguity, Separation
    from ._candidate import Candidate
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

# Where each name of the API lives, imported on its first use (PEP 562): ``import regrow`` (what a
# decorated module, a pytest run with the plugin and ``python -m regrow`` pay first) costs the errors and
# the version alone, and a part is loaded with the first name that needs it (issue 26).
_HOMES = {
    "._ambiguity": ("Ambiguity", "Separation"),
    "._candidate": ("Candidate",),
    "._events": ("Event", "EventHandler", "EventType"),
    "._evidence._capture": ("capture",),
    "._evidence._disclosure": ("EvidencePolicy", "Redaction", "Sections", "configure_evidence", "evidence_policy"),
    "._evidence._logbuffer": ("disable_log_capture", "enable_log_capture"),
    "._evidence._request": ("HealingRequested", "request_healing"),
    "._heal._decorator": ("heal", "state"),
    "._heal._healing": ("Healing",),
    "._heal._ledger": ("ledger_of",),
    "._heal._repair": ("repair",),
    "._heal._switches": ("disable", "enable", "is_enabled"),
    "._result": ("RepairResult",),
    "._service._watch": ("unwatch", "watch", "watching"),
    "._store": ("Store",),
    "._verdict": ("Verdict",),
}
_HOME = {name: module for module, names in _HOMES.items() for name in names}

if not TYPE_CHECKING:  # for a type checker the names are the imports above (an unknown name stays an error)

    def __getattr__(name: str) -> Any:
        module = _HOME.get(name)
        if module is None:
            raise AttributeError(f"module 'regrow' has no attribute {name!r}")
        value = getattr(importlib.import_module(module, __name__), name)
        globals()[name] = value  # the next lookup is an ordinary one
        return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

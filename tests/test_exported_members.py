"""The public face is pinned (as httpx pins its own): ``regrow`` holds the user's API, every name
documented; what extensions are built from is in ``regrow.extend``."""

from __future__ import annotations

import re
from pathlib import Path

import regrow
import regrow.extend
import regrow.web

ROOT = Path(__file__).parents[1]


def test_every_exported_name_exists_and_is_documented() -> None:
    docs = (ROOT / "README.md").read_text(encoding="utf-8") + "".join(
        page.read_text(encoding="utf-8") for page in sorted((ROOT / "docs").glob("*.md")))
    for module in (regrow, regrow.extend, regrow.web):
        for name in module.__all__:
            assert hasattr(module, name), f"{module.__name__}.{name}"
            assert re.search(rf"\b{re.escape(name)}\b", docs), f"{module.__name__}.{name} is in no document"


def test_the_users_api() -> None:
    assert set(regrow.__all__) == {
        "Ambiguity", "Separation",
        "Candidate", "CheckError", "Event", "EventHandler", "EventType", "EvidencePolicy", "Healing",
        "HealingRequested", "ProposerError", "Redaction", "RegrowError", "RepairResult", "Sections", "Store",
        "TargetError", "TestsFailedError", "Verdict", "VerificationError", "__version__", "capture",
        "configure_evidence", "disable", "disable_log_capture", "enable", "enable_log_capture", "evidence_policy",
        "heal", "is_enabled", "ledger_of", "repair", "request_healing", "state", "unwatch", "watch", "watching",
    }
    assert set(regrow.web.__all__) == {"ASGIMiddleware", "SAFE_METHODS", "WSGIMiddleware"}


def test_the_extension_points() -> None:
    assert set(regrow.extend.__all__) == {
        "Attempt", "BaseProposer", "Budget", "CacheProposer", "Candidate", "Check", "CheckFailed", "Engine", "Failure",
        "ForkSandbox", "InProcessSandbox", "Limits", "Options", "Outcome", "Proposer", "PytestTests", "RepairRequest",
        "RepairResult", "Replay", "Request", "Sandbox", "Session", "Store", "Target", "TestCallable", "Verdict",
        "default_chain", "make_options", "make_sandbox", "run_repair",
    }


def test_a_name_means_one_thing() -> None:
    # The sandbox's Limits (one call's resources) and the model's budgets were both called Limits.
    import regrow.llm

    assert "Limits" not in regrow.llm.__all__ and regrow.llm.ModelLimits is not regrow.extend.Limits
    shared = set(regrow.__all__) & set(regrow.extend.__all__)
    for name in shared:  # what both hold (a result's parts, the store) is the same object
        assert getattr(regrow, name) is getattr(regrow.extend, name)

"""Checked by mypy --strict in `make test`: the public API keeps its types through decoration."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import regrow

if TYPE_CHECKING:
    from typing_extensions import assert_type


@regrow.heal
def plain(x: int, y: str = "a") -> float:
    return float(x)


@regrow.heal(verify=lambda r: r > 0, tests=[lambda fn: None], on_failure="return_none", write_back="patch")
def configured(x: int) -> int:
    return x


@regrow.heal(install_missing=True, allow_install={"yaml": "PyYAML==6.0.2"}, record=5, jobs=2)
def loads(text: str) -> dict[str, Any]:
    return {"text": text}


async def _use() -> None:
    @regrow.heal(timeout=5.0)
    async def fetch(n: int) -> list[int]:
        return [n]

    if TYPE_CHECKING:
        assert_type(await fetch(1), list[int])


if TYPE_CHECKING:
    assert_type(plain(1, "b"), float)
    assert_type(configured(3), int)
    assert_type(loads("a: 1"), dict[str, Any])
    assert_type(regrow.repair(plain, args=(1,)), regrow.RepairResult)
    assert_type(regrow.state(plain), regrow.Healing)
    assert_type(regrow.state(plain).last_result, regrow.RepairResult | None)
    assert_type(regrow.state(plain).write_back("apply", force=True), Path | None)


def _requests(total: int) -> int:
    if total < 0:
        regrow.request_healing("a negative total", {"total": total})
    return total


if TYPE_CHECKING:
    assert_type(regrow.HealingRequested("why").reason, str)
    assert_type(regrow.HealingRequested("why", {"n": 1}).details, dict[str, Any])


if TYPE_CHECKING:
    assert_type(regrow.capture("label"), Path | None)
    assert_type(regrow.configure_evidence(regrow.EvidencePolicy(provider=regrow.Sections(locals=False))),
                regrow.EvidencePolicy)
    assert_type(regrow.enable_log_capture(size=10, level="INFO"), None)
    assert_type(regrow.evidence_policy().redaction, regrow.Redaction)


def _misspelled() -> None:
    # The options are a TypedDict (regrow._heal._options.HealOptions): a misspelled one is a type error. Were it
    # accepted, mypy --strict would report these ignores as unused and `make test` would fail.
    regrow.heal(max_candidate=3)  # type: ignore[call-overload]
    regrow.repair(plain, (1,), max_candidate=3)  # type: ignore[call-arg]

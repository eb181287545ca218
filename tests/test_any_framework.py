"""The recipe of docs/agents.md for any framework's decorator: ``examples/any_framework.py``, run."""

from __future__ import annotations

from agent_examples import load

import regrow


def test_heal_under_a_framework_decorator_keeps_what_the_framework_reads_and_heals_its_calls():
    example = load("any_framework")
    registered = example.TOOLS["median"]
    assert registered["parameters"] == ["values"]
    assert registered["description"] == "The median of a non-empty list of numbers."
    assert example.dispatch("median", {"values": [4.0, 2.0]}) == {"result": 3.0}
    result = regrow.state(registered["call"]).last_result
    assert result is not None and result.ok and "ordered[middle - 1]" in result.fix.source  # type: ignore[union-attr]
    assert example.dispatch("median", {"values": [1.0, 3.0, 2.0, 4.0]}) == {"result": 2.5}


def test_an_error_left_after_healing_is_the_frameworks_error_result_with_the_ledger():
    example = load("any_framework")
    reply = example.dispatch("median", {"values": []})
    assert reply["error"] == "ValueError: median of no values"
    assert reply["regrow"].startswith("regrow: could not repair median")

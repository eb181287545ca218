"""Data drift healed through the LLM proposer, in CI: the scripted OpenAI loopback server returns each
scenario's reference adapter (``tests/drift_scenarios.py``), sent through the real OpenAI SDK, the reply
parser, the proposer, the proof (the replay of the new input, the recorded old-format calls) and the
install. The same scenarios run against a real endpoint in ``tests/test_drift_real.py``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from drift_scenarios import SCENARIOS, Scenario, answered, own_error, reply, run
from llm_servers import OpenAIServer, Text

import regrow
from regrow._proposers._llm import LLMProposer, ModelLimits, RetryPolicy, proposer_for


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer() as running:
        yield running


def scripted(server: OpenAIServer) -> LLMProposer:
    return proposer_for("openai:gpt-test", api_key="test-key", base_url=server.base_url,
                        retry=RetryPolicy(max_retries=0), limits=ModelLimits(max_calls_per_failure_per_hour=None))


def test_there_are_ten_kinds_of_drift_and_two_must_refuse():
    assert len(SCENARIOS) >= 10 and len({s.name for s in SCENARIOS}) == len(SCENARIOS)
    assert len([s for s in SCENARIOS if s.must_refuse]) == 2
    kinds = " ".join(s.kind for s in SCENARIOS)
    for kind in ("renamed", "translated", "reordered", "re-nested", "date", "decimal", "BOM", "pagination",
                 "missing", "decoy"):
        assert kind in kinds


@pytest.mark.parametrize("scenario", [s for s in SCENARIOS if not s.must_refuse], ids=lambda s: s.name)
def test_the_adapted_loader_reads_the_old_and_the_new_format(scenario: Scenario, server: OpenAIServer,
                                                           tmp_path: Path) -> None:
    server.add(Text(reply(scenario.fix)))
    outcome = run(scenario, tmp_path, lambda: scripted(server))
    assert outcome.new_error is None, regrow.ledger_of(outcome.new_error) or repr(outcome.new_error)
    assert outcome.new_value == scenario.expected
    assert outcome.old_values == [result for _, result in scenario.old]
    assert outcome.results == [(True, "")]
    assert [e.type for e in outcome.events].count("installed") == 1
    assert len(server.requests) == 1
    # The old format the model was shown is the recorded healthy call, the new one the failing call.
    prompt = server.requests[0].prompt
    assert "def load(payload):" in prompt


@pytest.mark.parametrize("scenario", [s for s in SCENARIOS if s.must_refuse], ids=lambda s: s.name)
def test_missing_data_ends_with_the_healed_codes_own_error(scenario: Scenario, server: OpenAIServer,
                                                         tmp_path: Path) -> None:
    server.add(Text(reply(scenario.fix)), Text(reply(scenario.invent)))
    outcome = run(scenario, tmp_path, lambda: scripted(server))
    assert outcome.new_error is None and outcome.new_value == scenario.expected  # adapted first
    assert outcome.refused_value is None and outcome.refused is not None  # then no values invented
    assert isinstance(outcome.refused, ValueError) and str(outcome.refused).startswith(scenario.refusal)
    assert own_error(outcome.refused, outcome.loader)
    assert answered(outcome.refusal_events)  # the model answered that call: a refusal, not an outage
    assert len(server.requests) == 2  # the adaptation, then the invention offered for the missing data
    (first, _), (second, why) = outcome.results
    assert first and not second and why  # the invention was rejected...
    rejected = [e.verdict for e in outcome.refusal_events if e.type == "verdict" and e.verdict and not e.verdict.ok]
    assert len(rejected) == 1 and rejected[0].check == "replay"  # ...by the code's own contract on that input
    assert outcome.new_after_refusal == scenario.expected  # the adaptation stands
    assert outcome.old_values == [result for _, result in scenario.old]


def test_a_provider_outage_is_not_a_refusal(server: OpenAIServer, tmp_path: Path) -> None:
    scenario = next(s for s in SCENARIOS if s.name == "missing_data")
    server.add(Text(reply(scenario.fix)))  # the adaptation; then the server has no reply: HTTP 500
    outcome = run(scenario, tmp_path, lambda: scripted(server))
    assert outcome.refused is not None and own_error(outcome.refused, outcome.loader)
    assert answered(outcome.events[: len(outcome.events) - len(outcome.refusal_events)])  # the adaptation's call
    assert not answered(outcome.refusal_events)  # so the must-refuse test above would not count it


def test_an_adapter_that_forgets_the_old_format_is_rejected_by_the_recorded_calls(server: OpenAIServer, tmp_path: Path):
    scenario = next(s for s in SCENARIOS if s.name == "renamed_columns")
    new_only = scenario.fix.replace('row["name"] if "name" in row else row["product"]', 'row["product"]')
    assert new_only != scenario.fix
    server.add(Text(reply(new_only)))
    outcome = run(scenario, tmp_path, lambda: scripted(server))
    assert isinstance(outcome.new_error, KeyError)  # the user's own error: no fix was installed
    verdicts = [e.verdict for e in outcome.events if e.type == "verdict" and e.verdict]
    assert [(v.ok, v.check) for v in verdicts] == [(False, "recorded")]
    assert outcome.old_values == [result for _, result in scenario.old]

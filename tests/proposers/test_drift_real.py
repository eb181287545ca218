"""The data-drift scenarios (``tests/drift_scenarios.py``) through a real model behind any
OpenAI-compatible endpoint: ``REGROW_E2E_BASE_URL`` (``REGROW_E2E_MODEL``, default ``default``;
``REGROW_E2E_API_KEY`` if it needs one). Here the model writes its own adapters; nothing is scripted.

Skipped only when ``REGROW_E2E_BASE_URL`` is absent (CI runs the same scenarios scripted in
``tests/test_drift.py``). A must-refuse scenario passes only when the refusal is the healed code's own
error after a model call that answered, never a provider outage.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from drift_scenarios import SCENARIOS, Scenario, answered, own_error, run

import regrow
from regrow._proposers._llm import LLMProposer, ModelLimits, RetryPolicy, proposer_for

BASE_URL = os.environ.get("REGROW_E2E_BASE_URL", "")
MODEL = os.environ.get("REGROW_E2E_MODEL", "default")

pytestmark = pytest.mark.skipif(not BASE_URL, reason="REGROW_E2E_BASE_URL is not set: the drift scenarios run "
                                "against a real endpoint only when one is given (CI runs them scripted)")


def real_model() -> LLMProposer:
    return proposer_for(f"openai:{MODEL}", base_url=BASE_URL, api_key=os.environ.get("REGROW_E2E_API_KEY", "none"),
                        temperature=0.0, seed=1, retry=RetryPolicy(max_retries=2),
                        limits=ModelLimits(max_calls_per_failure_per_hour=None))


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_a_real_model_adapts_the_loader_or_refuses_with_the_codes_own_error(scenario: Scenario,
                                                                           tmp_path: Path) -> None:
    outcome = run(scenario, tmp_path, real_model, timeout=240.0, max_attempts=3)
    assert answered(outcome.events), "the endpoint did not answer: an outage, not a result"
    assert outcome.new_error is None, regrow.ledger_of(outcome.new_error) or repr(outcome.new_error)
    assert outcome.new_value == scenario.expected
    assert outcome.old_values == [result for _, result in scenario.old]  # the old format still works
    if scenario.must_refuse:
        assert outcome.refused_value is None, f"values were invented for missing data: {outcome.refused_value!r}"
        assert outcome.refused is not None and outcome.loader is not None
        assert own_error(outcome.refused, outcome.loader), f"not the healed code's own error: {outcome.refused!r}"
        # Asked again for the missing data, the model may propose (and be refused) or regrow may not ask it;
        # a call that failed is an outage, and then the scenario does not pass.
        assert not any(e.type == "proposer_error" for e in outcome.refusal_events), "a provider outage"

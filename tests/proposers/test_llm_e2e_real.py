"""A heal through a real model behind any OpenAI-compatible endpoint (``make e2e-llm``).

Skipped unless ``REGROW_E2E_BASE_URL`` and ``REGROW_E2E_MODEL`` are set. The model that
``make e2e-llm`` serves is tiny (SmolLM2-135M-Instruct): these tests prove the plumbing — the
prompt goes out, the reply is parsed, verdicts come back, usage is counted, and the user's own
exception is what propagates when the model does not fix the bug — not the model's skill.
"""

from __future__ import annotations

import os

import pytest

import regrow
from regrow._proposers._llm import LLMProposer, ModelLimits, RetryPolicy, proposer_for

BASE_URL = os.environ.get("REGROW_E2E_BASE_URL", "")
MODEL = os.environ.get("REGROW_E2E_MODEL", "")

pytestmark = pytest.mark.skipif(not (BASE_URL and MODEL),
                                reason="set REGROW_E2E_BASE_URL and REGROW_E2E_MODEL to heal through a real model")


def parse_price(text: str) -> float:
    return float(text.replace("$", ""))


def add_one(n: int) -> int:
    return n - 1


def rupees(fn: object) -> None:
    assert fn("₹1,299") == 1299.0  # type: ignore[operator]


def real_model() -> LLMProposer:
    return proposer_for(f"openai:{MODEL}", base_url=BASE_URL, api_key=os.environ.get("REGROW_E2E_API_KEY"),
                        temperature=0.0, seed=1, max_tokens=400, retry=RetryPolicy(max_retries=2),
                        limits=ModelLimits(max_calls_per_failure_per_hour=None))


def test_a_heal_through_a_real_model_either_fixes_or_keeps_the_users_exception() -> None:
    llm = real_model()
    events: list[regrow.Event] = []
    healed = regrow.heal(tests=[rupees], proposers=[llm], max_attempts=2, timeout=240,
                         on_event=events.append)(parse_price)
    try:
        value = healed("₹1,299")
    except ValueError as exc:  # not fixed: the user's own exception, with the ledger attached
        assert "could not convert string to float" in str(exc)
        assert "could not repair" in regrow.ledger_of(exc)
    else:
        assert value == 1299.0
    assert llm.last_usage.calls >= 1
    # As the server reported them, or estimated when it reports none (llama.cpp streams carry no usage).
    assert llm.last_usage.input_tokens > 0 and llm.last_usage.output_tokens > 0
    assert any(e.type == "propose_chunk" and e.delta for e in events)  # the reply was streamed
    refused = [e.message for e in events if e.type == "reply_refused"]
    judged = [e for e in events if e.type == "verdict"]
    assert len(refused) + len(judged) == llm.last_usage.calls  # every reply was judged or refused with a reason


def test_an_obvious_bug_through_a_real_model() -> None:
    llm = real_model()
    healed = regrow.heal(verify=lambda v: v == 3, proposers=[llm], max_attempts=3, timeout=240)(add_one)
    try:
        assert healed(2) == 3
    except regrow.VerificationError as exc:  # a tiny model may not manage even this: the reason says why
        assert "verify" in str(exc)

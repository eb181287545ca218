"""Accounting and budgets: what calls cost, and the limits that refuse them with a reason and an event."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from llm_servers import OpenAIServer, Request, Text

import regrow
from regrow._proposers._llm import (
    DEFAULT_PRICES,
    LLMProposer,
    ModelLimits,
    RetryPolicy,
    Usage,
    process_usage,
    proposer_for,
)
from regrow._proposers._llm._accounting import Ledger, Meter, price_of

FAST = RetryPolicy(max_retries=1, base_delay=0.01)


def parse_a(text: str) -> float:
    return float(text.replace("$", ""))


def parse_b(text: str) -> float:
    return float(text.replace("$", ""))


def parse_c(text: str) -> float:
    return float(text.replace("$", ""))


def parse_d(text: str) -> float:
    return float(text.replace("$", ""))


def parse_e(text: str) -> float:
    return float(text.replace("$", ""))


def rupees(fn: Any) -> None:
    assert fn("₹1,299") == 1299.0


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer() as running:
        yield running


def always_wrong(server: OpenAIServer, name: str, input_tokens: int = 11, output_tokens: int = 7) -> Any:
    def reply(request: Request) -> Text:
        source = f"def {name}(text: str) -> float:\n    return {len(server.requests)}.0\n"
        return Text(f"```python\n{source}```", input_tokens=input_tokens, output_tokens=output_tokens)

    return reply


def model(server: OpenAIServer, **options: Any) -> LLMProposer:
    return proposer_for("openai:gpt-test", api_key="k", base_url=server.base_url, retry=FAST, **options)


# -- the meter ----------------------------------------------------------------------------------------------
def test_session_budgets_refuse_before_the_call_that_would_exceed_them() -> None:
    meter = Meter("m", ModelLimits(max_calls=2, max_tokens=1000, max_cost=None), None, "fp", ledger=Ledger())
    assert meter.refusal(100) == ""
    meter.record(300, 100, 0.5, 0)
    assert meter.refusal(600) == ""  # 400 used + 600 would be 1000: still within
    assert "budget of 1000 tokens would be exceeded (400 used, the next prompt is ~601)" in meter.refusal(601)
    meter.record(10, 10, 0.5, 0)
    assert meter.refusal(1) == "the session's budget of 2 model calls is spent"


def test_cost_budget_uses_the_price_of_the_model() -> None:
    meter = Meter("m", ModelLimits(max_cost=0.01), (2.0, 8.0), "fp", ledger=Ledger())
    call = meter.record(1000, 500, 1.0, 0)
    assert call.cost == pytest.approx((1000 * 2.0 + 500 * 8.0) / 1e6)
    assert meter.refusal(1000) == ""
    meter.record(2000, 1000, 1.0, 0)  # $0.012 in all
    assert "budget of $0.01 would be exceeded ($0.0180 spent" in meter.refusal(10)


def test_a_failure_gets_a_limited_number_of_calls_per_rolling_hour() -> None:
    clock, ledger = Clock(), Ledger()
    limits = ModelLimits(max_calls_per_failure_per_hour=2)
    first = Meter("m", limits, None, "fp-1", ledger=ledger, clock=clock)
    first.start()
    clock.now += 600
    first.start()
    later = Meter("m", limits, None, "fp-1", ledger=ledger, clock=clock)  # another session, same failure
    assert "already had 2 model calls in the last hour (limit 2)" in later.refusal(10)
    assert Meter("m", limits, None, "fp-2", ledger=ledger, clock=clock).refusal(10) == ""  # another failure
    clock.now += 3000.1  # the first call is now more than an hour old
    assert later.refusal(10) == ""


def test_prices_match_dated_and_routed_model_names_and_can_be_overridden() -> None:
    assert price_of("gpt-5", DEFAULT_PRICES) == DEFAULT_PRICES["gpt-5"]
    assert price_of("gpt-5-mini-2025-08-07", DEFAULT_PRICES) == DEFAULT_PRICES["gpt-5-mini"]
    assert price_of("openrouter/anthropic/claude-sonnet-4-5", DEFAULT_PRICES) == DEFAULT_PRICES["claude-sonnet-4-5"]
    assert price_of("my-local-model", DEFAULT_PRICES) is None
    assert proposer_for("openai:gpt-5", api_key="k", prices={"gpt-5": (9.0, 9.0)}).price == (9.0, 9.0)
    assert proposer_for("ollama:qwen2.5-coder:7b").price == (0.0, 0.0)  # local models cost nothing


# -- budgets through a heal -------------------------------------------------------------------------------------
def test_a_function_failing_in_a_loop_does_not_call_the_model_every_time(server: OpenAIServer) -> None:
    server.add(*[always_wrong(server, "parse_a")] * 10)
    events: list[regrow.Event] = []
    llm = model(server, limits=ModelLimits(max_calls_per_failure_per_hour=2))
    healed = regrow.heal(tests=[rupees], proposers=[llm], max_attempts=1, cooldown=0,
                         on_event=events.append)(parse_a)

    for _ in range(6):
        with pytest.raises(ValueError, match="could not convert") as caught:
            healed("₹1,299")

    assert len(server.requests) == 2
    refused = [e.message for e in events if e.type == "budget_refused"]
    assert len(refused) == 4 and "in the last hour (limit 2)" in refused[0]
    notes = regrow.ledger_of(caught.value)
    assert "not called: this failure" in notes  # the reason reaches the user


def test_a_session_token_budget_refuses_before_any_call(server: OpenAIServer) -> None:
    events: list[regrow.Event] = []
    healed = regrow.heal(proposers=[model(server, limits=ModelLimits(max_tokens=50))], on_event=events.append)(parse_b)

    with pytest.raises(ValueError):
        healed("₹1,299")

    assert server.requests == []
    assert any("budget of 50 tokens would be exceeded" in e.message for e in events if e.type == "budget_refused")


def test_a_cost_budget_stops_the_calls_once_spent(server: OpenAIServer) -> None:
    server.add(*[always_wrong(server, "parse_c", input_tokens=400_000, output_tokens=100_000)] * 5)
    llm = model(server, limits=ModelLimits(max_cost=1.0), prices={"gpt-test": (1.0, 2.0)})  # $0.60 a call
    healed = regrow.heal(tests=[rupees], proposers=[llm], max_attempts=5)(parse_c)

    with pytest.raises(ValueError):
        healed("₹1,299")

    assert len(server.requests) == 2  # the third call would start past $1.00
    assert llm.last_usage.cost == pytest.approx(1.2)
    assert (llm.last_usage.calls, llm.last_usage.input_tokens, llm.last_usage.output_tokens) == (2, 800_000, 200_000)


def test_a_call_budget_per_session(server: OpenAIServer) -> None:
    server.add(*[always_wrong(server, "parse_d")] * 5)
    healed = regrow.heal(tests=[rupees], proposers=[model(server, limits=ModelLimits(max_calls=1))],
                         max_attempts=3)(parse_d)
    with pytest.raises(ValueError):
        healed("₹1,299")
    assert len(server.requests) == 1


def test_usage_is_counted_per_session_per_proposer_and_per_process(server: OpenAIServer) -> None:
    server.add(*[always_wrong(server, "parse_e", input_tokens=100, output_tokens=20)] * 4)
    llm = model(server, prices={"gpt-test": (10.0, 30.0)})
    before = process_usage()
    healed = regrow.heal(tests=[rupees], proposers=[llm], max_attempts=2, cooldown=0)(parse_e)
    for _ in range(2):
        with pytest.raises(ValueError):
            healed("₹1,299")

    assert (llm.last_usage.calls, llm.last_usage.input_tokens, llm.last_usage.output_tokens) == (2, 200, 40)
    assert (llm.usage.calls, llm.usage.tokens) == (4, 480)
    assert llm.usage.cost == pytest.approx(4 * (100 * 10 + 20 * 30) / 1e6)
    assert llm.usage.latency > 0
    after = process_usage()
    assert after.calls - before.calls == 4
    assert after.input_tokens - before.input_tokens == 400
    assert 300 < llm.last_prompt_tokens < 2000  # the estimate of the latest prompt
    assert isinstance(after, Usage)
    assert llm.usage.summary().startswith("4 calls, 400 in / 80 out tokens")


@pytest.mark.parametrize("field", ["max_calls", "max_tokens", "max_cost", "max_calls_per_failure_per_hour"])
def test_a_negative_or_non_numeric_budget_is_refused_where_it_is_made(field: str) -> None:
    """``ModelLimits(max_calls=-1)`` was accepted without complaint (and spent at once)."""
    with pytest.raises(ValueError, match=f"ModelLimits.{field} is a number of at least 0 or None, not -1"):
        ModelLimits(**{field: -1})
    with pytest.raises(ValueError, match="not '3'"):
        ModelLimits(**{field: "3"})
    assert getattr(ModelLimits(**{field: 0}), field) == 0

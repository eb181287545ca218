"""Whole heals through the OpenAI SDK against a scripted loopback server.

The engine goes first and cannot fix these bugs; the model's first reply is wrong, its verdict is
fed back, the second prompt shows the first candidate with its reason, the second reply is right
and is installed. When the model never gets it right, the user's own exception propagates.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest
from llm_servers import OpenAIServer, Request, Text, failing_request

import regrow
from regrow._proposers._chain import default_chain
from regrow._proposers._llm import LLMProposer, RetryPolicy, proposer_for

FAST = RetryPolicy(max_retries=2, base_delay=0.01, max_delay=0.05)
WRONG = '```python\ndef {name}(text: str) -> float:\n    return float(text.replace("₹", ""))\n```'
RIGHT = ('Strip everything but digits and the point:\n\n```python\nimport re\n\n'
         'def {name}(text: str) -> float:\n    return float(re.sub(r"[^0-9.]", "", text))\n```\n')


def parse_price(text: str) -> float:
    return float(text.replace("$", ""))


def parse_fee(text: str) -> float:
    return float(text.replace("$", ""))


def parse_tax(text: str) -> float:
    return float(text.replace("$", ""))


def parse_tip(text: str) -> float:
    return float(text.replace("$", ""))


def parse_total(text: str) -> float:
    return float(text.replace("$", ""))


def parse_vat(text: str) -> float:
    return float(text.replace("$", ""))


async def fetch_price(text: str) -> float:
    await asyncio.sleep(0)
    return float(text.replace("$", ""))


def rupees(fn: Any) -> None:
    assert fn("₹1,299") == 1299.0
    assert fn("$12.50") == 12.5


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer() as running:
        yield running


def model(server: OpenAIServer, **options: Any) -> LLMProposer:
    return proposer_for("openai:gpt-test", api_key="test-key", base_url=server.base_url, retry=FAST, **options)


def test_the_model_fixes_on_its_second_try_what_the_engine_could_not(server: OpenAIServer) -> None:
    server.add(Text(WRONG.format(name="parse_price")), Text(RIGHT.format(name="parse_price")))
    chain = default_chain("openai:gpt-test", api_key="test-key", base_url=server.base_url, retry=FAST, locate=False)
    events: list[regrow.Event] = []
    healed = regrow.heal(tests=[rupees], proposers=chain, on_event=events.append)(parse_price)

    assert healed("₹1,299") == 1299.0

    # The engine went first (free, offline) and found nothing; only then was the model asked.
    assert [e.message for e in events if e.type == "attempt_start"] == ["engine", "openai:gpt-test"]
    first, second = (request.prompt for request in server.requests)
    assert "could not convert string to float: '₹1,299'" in first
    # The verdict of the first reply was fed back: its source and the reason it failed.
    assert 'return float(text.replace("₹", ""))' in second
    assert "could not convert string to float: '1,299'" in second
    result = regrow.state(healed).last_result
    assert result is not None and result.ok and result.fix is not None
    assert result.fix.origin == "openai:gpt-test" and result.fix.operator == "call 2"
    origins = [attempt.candidate.origin for attempt in result.history]
    assert origins[-2:] == ["openai:gpt-test", "openai:gpt-test"]
    if "engine" in origins:  # whatever the engine tried is summarised for the model
        assert "Already tried by the built-in engine" in first
    # Installed into the live function: the module's own name runs the fix, and no more calls are made.
    assert parse_price("₹7") == 7.0
    assert healed("$1,000.25") == 1000.25
    assert len(server.requests) == 2


def test_a_refused_reply_is_remembered_in_the_next_prompt(server: OpenAIServer) -> None:
    server.add(Text("```python\ndef parse_cost(text):\n    return 1.0\n```"), Text(RIGHT.format(name="parse_fee")))
    healed = regrow.heal(tests=[rupees], proposers=[model(server)])(parse_fee)

    assert healed("₹1,299") == 1299.0

    second = server.requests[1].prompt
    assert "openai:gpt-test call 1: refused before it ran" in second
    assert "the reply defines `parse_cost` but not `parse_fee`" in second
    assert "def parse_cost(text):" in second
    result = regrow.state(healed).last_result
    assert result is not None and result.candidates == 1  # the refused reply never reached the checks


def test_the_users_exception_propagates_when_the_model_never_fixes_it(server: OpenAIServer) -> None:
    def wrong(request: Request) -> Text:  # a different wrong fix each time
        n = len(server.requests)
        return Text(f"```python\ndef parse_tax(text: str) -> float:\n    return {n}.0\n```")

    server.add(wrong, wrong, wrong, wrong)
    healed = regrow.heal(tests=[rupees], proposers=[model(server)], max_attempts=3)(parse_tax)

    with pytest.raises(ValueError, match=r"could not convert string to float: '₹1,299'") as caught:
        healed("₹1,299")

    assert type(caught.value) is ValueError
    assert caught.traceback[-1].name == "parse_tax"  # raised where the user's code raised it
    notes = regrow.ledger_of(caught.value)
    assert "could not repair" in notes and "openai:gpt-test call 3" in notes
    assert len(server.requests) == 3  # max_attempts model calls, no more
    assert "return 1.0" in server.requests[2].prompt and "return 2.0" in server.requests[2].prompt


def test_a_server_that_never_answers_ends_the_heal_inside_its_timeout(server: OpenAIServer) -> None:
    server.add(*[Text("late", delay=30)] * 4)
    healed = regrow.heal(proposers=[model(server)], timeout=1.0)(parse_tip)

    started = time.monotonic()
    with pytest.raises(ValueError, match="could not convert"):
        healed("₹1,299")
    assert time.monotonic() - started < 3.0


def test_streamed_tokens_and_usage_reach_event_handlers(server: OpenAIServer) -> None:
    reply = RIGHT.format(name="parse_total")
    server.add(Text(reply, pieces=5, input_tokens=321, output_tokens=54))
    events: list[regrow.Event] = []
    healed = regrow.heal(tests=[rupees], proposers=[model(server)], on_event=events.append)(parse_total)

    assert healed("₹1,299") == 1299.0

    assert "".join(e.delta for e in events if e.type == "propose_chunk") == reply
    calls = [e.message for e in events if e.type == "model_call"]
    assert len(calls) == 1 and "321 in / 54 out tokens" in calls[0]
    assert server.requests[0].body["stream"] is True


def test_async_heal_does_not_block_the_event_loop(server: OpenAIServer) -> None:
    server.add(Text(RIGHT.format(name="fetch_price").replace("def fetch_price", "async def fetch_price"), delay=0.5))
    healed = regrow.heal(verify=lambda price: price == 1299.0, proposers=[model(server)])(fetch_price)
    ticks = 0

    async def ticker(stop: asyncio.Event) -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            await asyncio.sleep(0.01)

    async def main() -> float:
        stop = asyncio.Event()
        task = asyncio.create_task(ticker(stop))
        value = await healed("₹1,299")
        stop.set()
        await task
        return float(value)

    assert asyncio.run(main()) == 1299.0
    assert ticks >= 20  # the loop kept running while the model took 0.5 s


def test_apropose_waits_on_the_sdks_async_client_without_blocking(server: OpenAIServer) -> None:
    server.add(Text(WRONG.format(name="parse_vat"), delay=0.4))
    proposer = model(server)
    request = failing_request(parse_vat, "₹1,299", max_attempts=1)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.01)

    async def main() -> list[Any]:
        task = asyncio.create_task(ticker())
        try:
            return [candidate async for candidate in proposer.apropose(request)]
        finally:
            task.cancel()

    candidates = asyncio.run(main())
    assert ticks >= 15
    assert [c.origin for c in candidates] == ["openai:gpt-test"]
    assert 'float(text.replace("₹", ""))' in candidates[0].source
    assert len(server.requests) == 1


def test_the_default_chain_is_the_engine_alone_without_a_model(monkeypatch: pytest.MonkeyPatch) -> None:
    assert [p.name for p in default_chain()] == ["engine"]
    with pytest.raises(TypeError, match="without a model"):
        default_chain(temperature=0.2)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(regrow.ProposerError, match="needs an API key"):  # at configuration, not at the failure
        default_chain("anthropic:claude-sonnet-4-5")


def parse_levy(text: str) -> float:
    return float(text.replace("$", ""))


def test_heal_with_a_model_string_reads_the_endpoint_from_the_environment(
    server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    # After the engine, the first call is a locate request (test_llm_locate.py); this one's reply names nothing.
    server.add(Text("no idea"), Text(RIGHT.format(name="parse_levy")))
    events: list[regrow.Event] = []
    healed = regrow.heal(tests=[rupees], model="openai:gpt-test", on_event=events.append)(parse_levy)

    assert healed("₹1,299") == 1299.0
    assert [e.message for e in events if e.type == "attempt_start"] == ["engine", "openai:gpt-test"]
    assert len(server.requests) == 2


def test_model_and_proposers_together_are_refused() -> None:
    with pytest.raises(ValueError, match="not both"):
        regrow.heal(model="openai:gpt-test", proposers=[])


def test_a_missing_key_is_an_error_at_decoration(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(regrow.ProposerError, match="OPENAI_API_KEY"):
        regrow.heal(model="openai:gpt-test")

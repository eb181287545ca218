"""Chain mode: the engine first, then a model whose prompt says, in a few lines, what the engine tried.

The engine screens its candidates in its own worker; the session keeps them (``Request.screened``)
and the model's prompt summarises them: how many, of which operators, rejected by which checks,
and the few that came closest with their verdicts. The summary must not cost model calls: on the
same task a chain never needs more calls than the model alone.
"""

from __future__ import annotations

import hashlib
import json
import re
import types
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from llm_servers import OpenAIServer, Request, Text

import regrow
from regrow._llm import Limits, RetryPolicy, proposer_for
from regrow._llm._prompt import estimate_tokens

FAST = RetryPolicy(max_retries=1, base_delay=0.01)
PRICES = '''\
def chain_price(text):
    if text.startswith("$"):
        return float(text[1:])
    return float(text.replace("$", ""))


def test_dollars(fn):
    assert fn("$12.50") == 12.5


def test_rupees(fn):
    assert fn("₹1,299") == 1299.0
'''
ECHO = '```python\ndef chain_price(text):\n    if text.startswith("$"):\n        return float(text[1:])\n' \
       '    return float(text.replace("$", ""))\n```'
EDIT = ('<<<<<<< SEARCH\n    return float(text.replace("$", ""))\n=======\n'
        '    return float(text.lstrip("₹").replace(",", ""))\n>>>>>>> REPLACE\n')


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer() as running:
        yield running


def heal(module: types.ModuleType, server: OpenAIServer, chain: bool, **options: Any) -> Any:
    # The same failure healed again and again: the per-failure hourly limit must not end the comparison.
    llm = proposer_for("openai:gpt-test", api_key="k", base_url=server.base_url, retry=FAST,
                       limits=Limits(max_calls_per_failure_per_hour=1000), **options)
    proposers = [regrow.Engine(), llm] if chain else [llm]
    return regrow.heal(tests=[module.test_dollars, module.test_rupees], proposers=proposers)(module.chain_price)


def test_the_models_prompt_summarises_what_the_engine_screened(
        server: OpenAIServer, make_module: Callable[[str], types.ModuleType]) -> None:
    module = make_module(PRICES)
    server.add(Text(EDIT))
    engine = regrow.Engine()
    llm = proposer_for("openai:gpt-test", api_key="k", base_url=server.base_url, retry=FAST)
    healed = regrow.heal(tests=[module.test_dollars, module.test_rupees], proposers=[engine, llm])(
        module.chain_price)

    assert healed("₹1,299") == 1299.0

    screened = engine.last_stats.evaluated
    assert screened > 20  # it tried, in its own worker, and none reached the session
    result = regrow.state(healed).last_result
    assert result is not None and result.screened == screened
    prompt = server.requests[0].body["messages"][1]["content"]
    summary = prompt.split("## Already tried by the built-in engine\n", 1)[1].split("\n\n", 1)[0]
    assert summary.startswith(f"It judged {screened} candidates")
    operators = [part for part in summary.split("Operators: ", 1)[1].split(". ", 1)[0].split(", ") if part != "…"]
    assert 3 <= len(operators) <= 9 and all(re.fullmatch(r"[\w +-]+ x\d+", part) for part in operators)
    assert "Failed on: " in summary
    closest = summary.split("The ones that came closest, and why they failed:\n", 1)[1].splitlines()
    assert 1 <= len(closest) <= 3
    assert all(line.startswith("- line ") and ": test:test_" in line for line in closest)
    assert estimate_tokens(summary) < 400  # a few lines, however many it tried


def fix_when_asked_for_an_edit(system: str, user: str) -> str:
    return EDIT if "<<<<<<< SEARCH" in system else ECHO


def fix_when_told_of_the_echo(system: str, user: str) -> str:
    return EDIT if "the original sent back" in user else ECHO


def always_fix(system: str, user: str) -> str:
    return EDIT


def greedy(decide: Callable[[str, str], str]) -> Callable[[Request], Text]:
    """A server entry that decodes greedily: the same prompt (and temperature) always gets the same reply."""
    replies: dict[str, str] = {}

    def reply(request: Request) -> Text:
        system, user = (m["content"] for m in request.body["messages"])
        digest = hashlib.sha256(json.dumps([system, user, request.body.get("temperature")]).encode()).hexdigest()
        return Text(replies.setdefault(digest, decide(system, user)))

    return reply


@pytest.mark.parametrize("decide", [always_fix, fix_when_asked_for_an_edit, fix_when_told_of_the_echo])
@pytest.mark.parametrize("edit_format", ["whole", "edit"])
def test_a_chain_costs_no_more_model_calls_than_the_model_alone(
        decide: Callable[[str, str], str], edit_format: str, make_module: Callable[[str], types.ModuleType]) -> None:
    calls = {}
    for chain in (False, True):
        with OpenAIServer() as server:
            server.add(*[greedy(decide)] * 3)
            healed = heal(make_module(PRICES), server, chain, edit_format=edit_format)
            assert healed("₹1,299") == 1299.0
            calls[chain] = len(server.requests)
            assert len({json.dumps(r.body, sort_keys=True) for r in server.requests}) == calls[chain]
    assert calls[True] <= calls[False] <= 3

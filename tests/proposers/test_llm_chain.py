"""Chain mode: the engine first, then a model whose prompt says, in a few lines, what the engine tried.

The engine screens its candidates in its own worker; the session keeps them (``Request.screened``)
and the model's prompt summarises them: how many, of which operators, rejected by which checks,
and the few that came closest with their verdicts. The summary must not cost model calls: on the
same task a chain never needs more calls than the model alone.
"""

from __future__ import annotations

import json
import re
import types
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from llm_servers import OpenAIServer, Text, greedy

import regrow
import regrow.extend
from regrow._proposers._llm import ModelLimits, RetryPolicy, proposer_for
from regrow._proposers._llm._prompt import estimate_tokens

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
ECHO = '```python\ndef greedy_price(text):\n    if text.startswith("$"):\n        return float(text[1:])\n' \
       '    return float(text.replace("$", ""))\n```'
EDIT = ('<<<<<<< SEARCH\n    return float(text.replace("$", ""))\n=======\n'
        '    return float(text.lstrip("₹").replace(",", ""))\n>>>>>>> REPLACE\n')


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer() as running:
        yield running


def heal(module: types.ModuleType, server: OpenAIServer, chain: bool, **options: Any) -> Any:
    # The same failure healed again and again: the per-failure hourly limit must not end the comparison.
    # Rewrites only (locate=False): these tests are of the rewrite requests; locate is test_llm_locate.py's.
    llm = proposer_for("openai:gpt-test", api_key="k", base_url=server.base_url, retry=FAST, locate=False,
                       limits=ModelLimits(max_calls_per_failure_per_hour=1000), **options)
    proposers = [regrow.extend.Engine(), llm] if chain else [llm]
    return regrow.heal(tests=[module.test_dollars, module.test_rupees], proposers=proposers)(module.greedy_price)


def test_the_models_prompt_summarises_what_the_engine_screened(
        server: OpenAIServer, make_module: Callable[[str], types.ModuleType]) -> None:
    module = make_module(PRICES)
    server.add(Text(EDIT))
    engine = regrow.extend.Engine()
    llm = proposer_for("openai:gpt-test", api_key="k", base_url=server.base_url, retry=FAST, locate=False)
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


def fix_when_asked_for_an_edit(system: str, user: str, params: dict[str, Any]) -> str:
    return EDIT if "<<<<<<< SEARCH" in system else ECHO


def fix_when_told_of_the_echo(system: str, user: str, params: dict[str, Any]) -> str:
    return EDIT if "the original sent back" in user else ECHO


def always_fix(system: str, user: str, params: dict[str, Any]) -> str:
    return EDIT


@pytest.mark.parametrize("decide", [always_fix, fix_when_asked_for_an_edit, fix_when_told_of_the_echo])
@pytest.mark.parametrize("edit_format", ["whole", "edit"])
def test_a_chain_costs_no_more_model_calls_than_the_model_alone(
        decide: Callable[[str, str, dict[str, Any]], str], edit_format: str,
        make_module: Callable[[str], types.ModuleType]) -> None:
    calls = {}
    for chain in (False, True):
        with OpenAIServer() as server:
            server.add(*[greedy(decide)] * 3)
            healed = heal(make_module(PRICES.replace("chain_price", "greedy_price")), server, chain,
                          edit_format=edit_format)
            assert healed("₹1,299") == 1299.0
            calls[chain] = len(server.requests)
            assert len({json.dumps(r.body, sort_keys=True) for r in server.requests}) == calls[chain]
    assert calls[True] <= calls[False] <= 3


class Screening:
    """Judges candidates itself and offers none, as the engine does when none passes."""

    name = "screening"

    def __init__(self, sources: list[str]) -> None:
        self.sources = sources

    def propose(self, request: regrow.extend.Request) -> Iterator[regrow.Candidate]:
        for number, source in enumerate(self.sources, start=1):
            candidate = regrow.Candidate(source, "engine", operator=f"op{number}", edit_size=1, line=4)
            verdict = regrow.Verdict(False, "test:test_rupees", "test_rupees failed: assert 1299.0 == 1299.5")
            for handler in request.events:
                handler(regrow.Event("verdict", request.target.qualname, request.attempt, candidate, verdict))
        yield from ()


def test_a_model_that_repeats_a_screened_candidate_is_told_so(
        server: OpenAIServer, make_module: Callable[[str], types.ModuleType]) -> None:
    module = make_module(PRICES)
    screened = ECHO.split("\n", 1)[1].rsplit("```", 1)[0].replace("greedy_price", "chain_price").replace(
        'float(text.replace("$", ""))', 'float(text.replace("₹", ""))')
    repeated = screened.replace("\n    return", "\n    # drop the rupee sign\n    return")
    server.add(Text(f"```python\n{repeated}```"), Text(EDIT))
    llm = proposer_for("openai:gpt-test", api_key="k", base_url=server.base_url, retry=FAST, edit_format="whole",
                       locate=False)
    healed = regrow.heal(tests=[module.test_dollars, module.test_rupees],
                         proposers=[Screening([screened]), llm])(module.chain_price)

    assert healed("₹1,299") == 1299.0

    first, second = (request.body["messages"][1]["content"] for request in server.requests)
    assert "It judged 1 candidates" in first and "(op1): test:test_rupees: test_rupees failed" in first
    assert "Reason: identical to engine op1 at line 4, which failed" in second
    result = regrow.state(healed).last_result
    assert result is not None and result.candidates == 1 and result.screened == 1

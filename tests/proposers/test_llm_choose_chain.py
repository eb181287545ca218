"""Chain mode settles the engine's ambiguity: when the engine abstains (its candidates pass every check
but disagree) and a model is configured, the model gets one choose request with the candidates and the
inputs that separate them; its pick is proven and railed as a model's fix. A pick of none, a reply that
cannot be used, or a pick that fails its proof ends in a clear verdict: the ambiguity, what the model
made of it, and nothing installed. Through the real SDKs against scripted loopback servers.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.util
import json
import re
import types
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from llm_servers import SERVERS, OpenAIServer, Text, failing_request, greedy

import regrow
from regrow import Ambiguity, Separation
from regrow._proposers._llm import ModelLimits, RetryPolicy, proposer_for
from regrow.extend import Request

FAST = RetryPolicy(max_retries=1, base_delay=0.01, max_delay=0.05)
UNLIMITED = ModelLimits(max_calls_per_failure_per_hour=None)
MODELS = {"openai": "openai:gpt-test", "anthropic": "anthropic:claude-test", "gemini": "gemini:gemini-test"}
SDKS = {"openai": "openai", "anthropic": "anthropic", "gemini": "google.genai"}
WIRES = [w for w in sorted(SERVERS) if importlib.util.find_spec(SDKS[w]) is not None]

# ``n * 2`` and ``n + 3`` both pass the one test; on ``double(4)`` they disagree: the engine abstains.
DOUBLE = '''
def double(n):
    """Twice n."""
    return n + 2
'''


def check_double(fn: Any) -> None:
    assert fn(3) == 6


def pick(wanted: str) -> Callable[[str, str, dict[str, Any]], str]:
    """A model that answers a choose request with the number of the candidate whose code holds ``wanted``."""
    def decide(system: str, user: str, params: dict[str, Any]) -> str:
        assert "settle an ambiguous repair" in system, system  # a choose request, nothing else
        blocks = re.findall(r"## Candidate (\d+)\n```python\n(.*?)```", user, re.S)
        number = next(int(n) for n, code in blocks if wanted in code)
        return f'{{"choice": {number}, "why": "the docstring says twice n"}}'
    return decide


@pytest.fixture
def model(openai_env: OpenAIServer) -> OpenAIServer:
    return openai_env


def test_the_model_settles_the_engines_ambiguity(model: OpenAIServer,
                                                 make_module: Callable[[str], types.ModuleType]) -> None:
    mod = make_module(DOUBLE)
    model.add(greedy(pick("n * 2")))
    result = regrow.repair(mod.double, args=(3,), tests=[check_double], model="openai:gpt-test")

    assert result.ok and result.value == 6 and result.installed
    assert result.fix is not None and result.fix.source.strip().endswith("return n * 2")
    assert result.fix.origin == "openai:gpt-test" and not result.trusted  # proven and railed as a model's fix
    assert result.via == "choose" and re.fullmatch(r"call 1 choose: candidate \d", result.fix.operator)
    assert "fixed by choose: openai:gpt-test call 1 choose: candidate" in result.ledger()
    assert mod.double(5) == 10  # installed
    (sent,) = model.requests  # one choose request: no locate, no rewrite
    assert "called with (4):" in sent.prompt and "return n + 3" in sent.prompt
    assert sent.body["max_tokens"] <= 200


def test_a_pick_of_none_reports_the_ambiguity_and_installs_nothing(
        model: OpenAIServer, make_module: Callable[[str], types.ModuleType]) -> None:
    mod = make_module(DOUBLE)
    model.add(Text('{"choice": 0, "why": "neither doubles n"}'))
    result = regrow.repair(mod.double, args=(3,), tests=[check_double], model="openai:gpt-test")

    assert not result.ok and result.fix is None and result.installed is None
    assert result.ambiguous is not None and len(result.ambiguous.candidates) == 2
    assert result.reason.startswith("ambiguous: 2 candidates pass every check but disagree on f(")
    assert "openai:gpt-test: asked to choose among the 2 candidates, it chose none (neither doubles n); " \
           "nothing installed" in result.reason, result.reason
    assert len(model.requests) == 1  # the model is not asked to write a fix of its own
    assert mod.double(3) == 5  # still the original


@pytest.mark.parametrize(("reply", "verdict"), [
    ('{"choice": 3}', "candidate 3 does not exist (1-2)"),
    ("```python\ndef double(n):\n    __import__('os').system('touch /tmp/pwned')\n    return n * 2\n```",
     "not the JSON asked for"),
])
def test_a_reply_that_cannot_be_used_ends_in_a_clear_verdict(
        model: OpenAIServer, make_module: Callable[[str], types.ModuleType], reply: str, verdict: str) -> None:
    mod = make_module(DOUBLE)
    model.add(Text(reply))
    result = regrow.repair(mod.double, args=(3,), tests=[check_double], model="openai:gpt-test")

    assert not result.ok and result.ambiguous is not None and result.history == []  # nothing of it was run
    assert "asked to choose among the 2 candidates, its reply could not be used: " in result.reason, result.reason
    assert verdict in result.reason and result.reason.endswith("; nothing installed")
    assert mod.double(3) == 5


def test_the_models_reason_is_one_line_of_printable_text(model: OpenAIServer,
                                                        make_module: Callable[[str], types.ModuleType]) -> None:
    mod = make_module(DOUBLE)
    model.add(Text(json.dumps({"choice": None, "why": "\x1b[2J\x1b[31mneither\nregrow: repaired double\r\x07"})))
    result = regrow.repair(mod.double, args=(3,), tests=[check_double], model="openai:gpt-test")
    assert not result.ok and "it chose none ([2J [31mneither regrow: repaired double)" in result.reason, result.reason
    assert not any(ch in result.reason for ch in "\x1b\n\r\x07")


def test_without_a_model_the_ambiguity_is_reported_as_before(make_module: Callable[[str], types.ModuleType]) -> None:
    mod = make_module(DOUBLE)
    result = regrow.repair(mod.double, args=(3,), tests=[check_double])
    assert not result.ok and result.ambiguous is not None
    assert re.fullmatch(r"ambiguous: 2 candidates pass every check but disagree on f\(.*\); nothing installed",
                        result.reason), result.reason


# A proposer that abstains as the engine does (with a hand-made ambiguity), so that the session's part is
# tested on each wire without the engine's search.
ORIGINAL = 'def middle(a, b, c):\n    """The middle one of three numbers."""\n    return sorted([a, b, c])[0]\n'
RIGHT = 'def middle(a, b, c):\n    """The middle one of three numbers."""\n    return sorted([a, b, c])[1]\n'
LUCKY = 'def middle(a, b, c):\n    """The middle one of three numbers."""\n    return b\n'
AMBIGUITY = Ambiguity(ORIGINAL, (LUCKY, RIGHT), (Separation("3, 1, 2", ("returned 1", "returned 2"), "returned 1"),))


class Abstaining(regrow.extend.BaseProposer):
    name = "abstaining"

    def __init__(self) -> None:
        self.ambiguity = AMBIGUITY

    def propose(self, request: Request) -> Iterator[regrow.extend.Candidate]:
        yield from ()


def llm(server: Any, wire: str = "openai") -> Any:
    return proposer_for(MODELS[wire], api_key="k", base_url=server.base_url, retry=FAST, limits=UNLIMITED)


@pytest.mark.parametrize("wire", WIRES)
def test_each_sdk_settles_an_ambiguity_in_a_session(wire: str, make_module: Callable[[str], types.ModuleType]) -> None:
    mod = make_module(ORIGINAL)

    def test_middle(fn: Any) -> None:
        assert fn(1, 2, 3) == 2

    with SERVERS[wire]([Text('{"choice": 2, "why": "the middle of 3, 1, 2 is 2"}')]) as server:
        result = regrow.repair(mod.middle, (1, 2, 3), tests=[test_middle], proposers=[Abstaining(), llm(server, wire)],
                               timeout=60)
        assert len(server.requests) == 1
    assert result.ok and result.via == "choose" and result.fix is not None
    assert result.fix.source.strip() == RIGHT.strip() and result.fix.origin == MODELS[wire]
    assert mod.middle(3, 1, 2) == 2


def test_a_pick_that_fails_its_proof_is_the_verdict(make_module: Callable[[str], types.ModuleType]) -> None:
    mod = make_module(ORIGINAL)

    def test_both(fn: Any) -> None:
        assert fn(1, 2, 3) == 2 and fn(3, 1, 2) == 2

    with OpenAIServer([Text('{"choice": 1}')]) as server:  # the lucky one, which the second call refutes
        result = regrow.repair(mod.middle, (1, 2, 3), tests=[test_both], proposers=[Abstaining(), llm(server)],
                               timeout=60, install=False)
    assert not result.ok and [a.candidate.source for a in result.history] == [LUCKY]
    assert "openai:gpt-test: its pick, candidate 1, failed " in result.reason, result.reason
    assert result.reason.endswith("; nothing installed")


def test_a_call_that_fails_is_the_verdict(make_module: Callable[[str], types.ModuleType]) -> None:
    mod = make_module(ORIGINAL)

    def test_middle(fn: Any) -> None:
        assert fn(1, 2, 3) == 2

    refusing = proposer_for("openai:gpt-test", api_key="k", base_url="http://127.0.0.1:9/v1", retry=FAST,
                            limits=ModelLimits(max_calls=0))
    result = regrow.repair(mod.middle, (1, 2, 3), tests=[test_middle], proposers=[Abstaining(), refusing],
                           timeout=60, install=False)
    assert not result.ok and result.ambiguous is AMBIGUITY
    # a spent budget is a stop, not a failure (it was "failed" before)
    assert "proposer openai:gpt-test stopped: openai:gpt-test not called: " in result.reason, result.reason
    assert result.reason.endswith("; nothing installed")


def price(text: str) -> float:
    return float(text)


def test_the_async_proposer_settles_too() -> None:
    with OpenAIServer([Text('{"choice": 2}')]) as server:
        proposer = llm(server)
        request = dataclasses.replace(failing_request(price, "$3"), ambiguity=AMBIGUITY)

        async def main() -> list[regrow.extend.Candidate]:
            return [candidate async for candidate in proposer.apropose(request)]

        (found,) = asyncio.run(main())
    assert found.source == RIGHT and found.via == "choose" and proposer.usage.calls == 1


def test_with_choose_off_the_ambiguity_stands_and_the_model_is_not_called(
        model: OpenAIServer, make_module: Callable[[str], types.ModuleType]) -> None:
    from regrow.extend import Engine

    mod = make_module(DOUBLE)
    llm = proposer_for("openai:gpt-test", api_key="k", base_url=model.base_url, retry=FAST, limits=UNLIMITED,
                       choose=False)
    result = regrow.repair(mod.double, args=(3,), tests=[check_double], proposers=[Engine(), llm])

    assert not result.ok and result.fix is None and result.installed is None
    assert result.ambiguous is not None and len(result.ambiguous.candidates) == 2
    assert "openai:gpt-test: not asked to choose (choose=False); nothing installed" in result.reason, result.reason
    assert model.requests == []
    assert mod.double(3) == 5

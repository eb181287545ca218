"""The choose request: a model picks among candidates that all pass but disagree, shown the inputs that
separate them; the pick is proven and railed as a model's fix. Hostile replies end in clear verdicts."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import types
from collections.abc import Callable
from typing import Any

import pytest
from llm_servers import SERVERS, OpenAIServer, Text

import regrow
from regrow._proposers._llm import ModelLimits, RetryPolicy, proposer_for
from regrow._proposers._llm._choose import MAX_REPLY, Chooser, choose, choose_prompt, parse_choice

FAST = RetryPolicy(max_retries=1, base_delay=0.01, max_delay=0.05)
UNLIMITED = ModelLimits(max_calls_per_failure_per_hour=None)
MODELS = {"openai": "openai:gpt-test", "anthropic": "anthropic:claude-test", "gemini": "gemini:gemini-test"}
SDKS = {"openai": "openai", "anthropic": "anthropic", "gemini": "google.genai"}
WIRES = [w for w in sorted(SERVERS) if importlib.util.find_spec(SDKS[w]) is not None]

ORIGINAL = 'def middle(a, b, c):\n    """The middle one of three numbers."""\n    return sorted([a, b, c])[0]\n'
RIGHT = 'def middle(a, b, c):\n    """The middle one of three numbers."""\n    return sorted([a, b, c])[1]\n'
LUCKY = 'def middle(a, b, c):\n    """The middle one of three numbers."""\n    return b\n'


# The shape of the engine's regrow.Ambiguity (the abstain work): taken by its fields, not its class.
@dataclasses.dataclass(frozen=True)
class Separation:
    call: str
    outputs: tuple[str, ...]
    original: str = ""


@dataclasses.dataclass(frozen=True)
class Ambiguity:
    original: str
    candidates: tuple[str, ...]
    separations: tuple[Separation, ...]


AMBIGUITY = Ambiguity(ORIGINAL, (LUCKY, RIGHT), (Separation("3, 1, 2", ("returned 1", "returned 2"), "returned 1"),))


def llm(server: Any, wire: str = "openai") -> Any:
    return proposer_for(MODELS[wire], api_key="k", base_url=server.base_url, retry=FAST, limits=UNLIMITED)


def test_the_prompt_shows_the_candidates_and_the_separating_input() -> None:
    prompt = choose_prompt(AMBIGUITY)
    assert "## Candidate 1\n```python\n" + LUCKY.strip() in prompt.user
    assert "## Candidate 2\n```python\n" + RIGHT.strip() in prompt.user
    assert "- called with (3, 1, 2):\n  the original returned 1\n  candidate 1 returned 1\n  candidate 2 returned 2" \
        in prompt.user
    assert "JSON only" in prompt.system and prompt.tokens > 0


@pytest.mark.parametrize(("reply", "index", "refusal"), [
    ('{"choice": 2, "why": "the middle of 3, 1, 2 is 2"}', 1, ""),
    ('```json\n{"choice": "1"}\n```', 0, ""),
    ('{"choice": 0, "why": "neither"}', None, ""),
    ('{"choice": null}', None, ""),
    ('{"choice": 7}', None, "candidate 7 does not exist (1-2)"),
    ('{"choice": -1}', None, "candidate -1 does not exist"),
    ('{"choice": true}', None, "is not a candidate number"),
    ('{"choice": "the second"}', None, "is not a candidate number"),
    ('{"pick": 1}', None, "not an object with a choice"),
    ("I would pick the second one.", None, "not the JSON asked for"),
    ('{"choice": 1', None, "not the JSON asked for (invalid JSON"),
    ("z" * (MAX_REPLY + 1), None, "characters, not the short JSON asked for"),
])
def test_replies_are_parsed_or_refused_with_their_reason(reply: str, index: int | None, refusal: str) -> None:
    got, _, reason = parse_choice(reply, 2)
    assert got == index
    assert (refusal in reason) if refusal else reason == ""


@pytest.mark.parametrize("wire", WIRES)
def test_the_model_picks_through_each_sdk(wire: str) -> None:
    with SERVERS[wire]([Text('{"choice": 2, "why": "2 is the middle of 3, 1, 2"}')]) as server:
        proposer = llm(server, wire)
        choice = choose(AMBIGUITY, proposer)
        (sent,) = server.requests
    assert choice.index == 1 and not choice.refused
    assert choice.candidate is not None and choice.candidate.source == RIGHT
    assert choice.candidate.origin == MODELS[wire] and choice.candidate.operator == "choose: candidate 2"
    assert "candidate 2 returned 2" in sent.prompt
    assert proposer.usage.calls == 1


HOSTILE = [
    ('{"choice": 2, "source": "import os\\nos.system(\'touch /tmp/pwned\')"}', "", RIGHT),  # only the choice counts
    ('{"choice": 9}', "candidate 9 does not exist (1-2)", None),
    ("def middle(a, b, c):\n    return __import__('os').getcwd()", "not the JSON asked for", None),
    ("[" * 3000, "not the JSON asked for", None),
    ("x" * 50000, "characters, not the short JSON asked for", None),
    ('{"choice": {"$gt": 0}}', "is not a candidate number", None),
]


@pytest.mark.parametrize("wire", WIRES)
def test_hostile_replies_end_in_verdicts(wire: str) -> None:
    for reply, verdict, source in HOSTILE:
        with SERVERS[wire]([Text(reply)]) as server:
            choice = choose(AMBIGUITY, llm(server, wire))
        if source is None:
            assert choice.refused and choice.candidate is None and verdict in choice.why, (reply[:40], choice.why)
        else:
            assert choice.candidate is not None and choice.candidate.source == source


def test_the_pick_is_proven_and_installed_as_a_models_fix(make_module: Callable[[str], types.ModuleType]) -> None:
    module = make_module(ORIGINAL)

    def test_sorted(fn: Any) -> None:
        assert fn(1, 2, 3) == 2

    with OpenAIServer([Text('{"choice": 2, "why": "the middle one"}')]) as server:
        chooser = Chooser(AMBIGUITY, llm(server))
        result = regrow.repair(module.middle, (1, 2, 3), tests=[test_sorted], proposers=[chooser], timeout=60)
    assert result.ok and result.value == 2
    assert result.fix is not None and result.fix.source.strip() == RIGHT.strip()
    assert result.fix.origin == "openai:gpt-test" and not result.trusted  # railed and proven as a model's
    assert module.middle(3, 1, 2) == 2  # installed


def test_a_pick_that_fails_the_checks_is_not_installed(make_module: Callable[[str], types.ModuleType]) -> None:
    module = make_module(ORIGINAL)

    def test_both(fn: Any) -> None:
        assert fn(1, 2, 3) == 2 and fn(3, 1, 2) == 2

    with OpenAIServer([Text(json.dumps({"choice": 1}))]) as server:  # the lucky one, which the new check refutes
        result = regrow.repair(module.middle, (1, 2, 3), tests=[test_both], proposers=[Chooser(AMBIGUITY, llm(server))],
                               timeout=60, install=False)
    assert not result.ok and result.fix is None
    assert [a.candidate.source for a in result.history] == [LUCKY]


def test_an_ambiguity_needs_two_candidates_and_an_input() -> None:
    with OpenAIServer() as server, pytest.raises(ValueError, match="at least two candidates"):
        choose(Ambiguity(ORIGINAL, (RIGHT,), AMBIGUITY.separations), llm(server))


def test_the_engines_ambiguity_is_taken_as_it_is() -> None:
    # regrow.Ambiguity comes with the engine's abstentions (another branch): until it is merged, this waits.
    real = pytest.importorskip("regrow._ambiguity")
    ambiguity = real.Ambiguity(ORIGINAL, (LUCKY, RIGHT),
                               (real.Separation("3, 1, 2", ("returned 1", "returned 2"), "returned 1"),))
    assert choose_prompt(ambiguity).user == choose_prompt(AMBIGUITY).user

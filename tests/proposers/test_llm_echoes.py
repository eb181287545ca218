"""Echoes and repeats are verdicts, local edits are replies: through the real SDKs against loopback servers.

A model that sends the original back (an echo) or an earlier candidate again (a repeat) is told so,
and the next request changes what matters to it: the requested format, the sampling, a narrower
window. A server that decodes greedily (the same prompt gets the same reply) must therefore never
see the same prompt twice. Replies may be SEARCH/REPLACE blocks or diffs, applied to the original.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

import pytest
from llm_servers import AnthropicServer, OpenAIServer, Request, Text, failing_request, greedy
from llm_servers import chat_of as sent

import regrow
from regrow._proposers._llm import LLMProposer, RetryPolicy, proposer_for
from regrow._proposers._llm._proposer import _Run

FAST = RetryPolicy(max_retries=1, base_delay=0.01)
ORIGINAL = 'def {name}(text: str) -> float:\n    return float(text.replace("$", ""))\n'
RIGHT = 'def {name}(text: str) -> float:\n    return float(text.lstrip("$₹").replace(",", ""))\n'
WRONG = 'def {name}(text: str) -> float:\n    return float(text.replace("₹", ""))\n'
EDIT = ('<<<<<<< SEARCH\n    return float(text.replace("$", ""))\n=======\n'
        '    return float(text.lstrip("$₹").replace(",", ""))\n>>>>>>> REPLACE\n')


def echo_a(text: str) -> float:
    return float(text.replace("$", ""))


def echo_b(text: str) -> float:
    return float(text.replace("$", ""))


def echo_c(text: str) -> float:
    return float(text.replace("$", ""))


def echo_d(text: str) -> float:
    return float(text.replace("$", ""))


def echo_e(text: str) -> float:
    return float(text.replace("$", ""))


def echo_f(text: str) -> float:
    return float(text.replace("$", ""))


def echo_g(text: str) -> float:
    return float(text.replace("$", ""))


def rupees(fn: Any) -> None:
    assert fn("₹1,299") == 1299.0
    assert fn("$12.50") == 12.5


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer() as running:
        yield running


def model(server: Any, provider: str = "openai", **options: Any) -> LLMProposer:
    return proposer_for(f"{provider}:gpt-test", api_key="k", base_url=server.base_url, retry=FAST, **options)


def fenced(code: str) -> str:
    return f"```python\n{code}```"


def key(request: Request) -> str:
    return hashlib.sha256(json.dumps(sent(request), sort_keys=True).encode()).hexdigest()


def test_an_echo_is_fed_back_and_every_call_changes_what_matters(server: OpenAIServer) -> None:
    server.add(*[Text(fenced(ORIGINAL.format(name="echo_a")))] * 3)
    proposer = model(server, edit_format="whole", seed=7)
    healed = regrow.heal(tests=[rupees], proposers=[proposer], max_attempts=3)(echo_a)

    with pytest.raises(ValueError, match="could not convert"):
        healed("₹1,299")
    assert (proposer.last_usage.calls, proposer.last_usage.echoes, proposer.last_usage.repeats) == (3, 3, 0)
    assert "3 echoes" in proposer.last_usage.summary()

    calls = [sent(request) for request in server.requests]
    assert len(calls) == 3 and len({key(request) for request in server.requests}) == 3
    (system1, user1, params1), (system2, user2, params2), (system3, user3, params3) = calls
    # Call 2 says what was wrong, asks for a local edit instead, and samples differently.
    assert "one fenced ```python code block" in system1 and "SEARCH/REPLACE" not in system1
    assert "<<<<<<< SEARCH" in system2
    assert ("openai:gpt-test call 1: the original sent back\nReason: identical to the original; the failing line "
            'is line 2: `return float(text.replace("$", ""))`') in user2
    assert "Your previous reply was the original function, unchanged. That cannot pass" in user2
    assert params1 == {"seed": 7} and params2 == {"seed": 8, "temperature": 0.4}
    # Call 3 narrows to the lines around the fault, back in the other format, hotter still.
    assert "## Focus: lines 2-2" in user3 and '  2 |     return float(text.replace("$", ""))' in user3
    assert "one fenced ```python code block" in system3 and params3 == {"seed": 9, "temperature": 0.7}
    assert "Focus" not in user1 + user2
    # No echo is shown again as code: the model has the original already.
    assert user3.count("def echo_a(") == 1


def test_a_greedy_model_that_echoes_whole_functions_is_asked_for_an_edit_and_fixes_it(server: OpenAIServer) -> None:
    def decide(system: str, user: str, params: dict[str, Any]) -> str:
        return EDIT if "<<<<<<< SEARCH" in system else fenced(ORIGINAL.format(name="echo_b"))

    server.add(*[greedy(decide)] * 3)
    healed = regrow.heal(tests=[rupees], proposers=[model(server, edit_format="whole", temperature=0.0)])(echo_b)

    assert healed("₹1,299") == 1299.0
    assert len(server.requests) == 2
    assert sent(server.requests[1])[2] == {"temperature": 0.4}  # raised from the 0.0 asked for
    result = regrow.state(healed).last_result
    assert result is not None and result.fix is not None
    assert result.fix.source == RIGHT.format(name="echo_b")
    assert "applied 1 SEARCH/REPLACE edit to the original" in result.fix.note


def test_a_repeat_in_other_clothes_is_refused_as_a_repeat(server: OpenAIServer) -> None:
    wrong = WRONG.format(name="echo_c")
    dressed = wrong.replace("    return", '    """Strip the currency."""\n    # the rupee sign\n    return')
    server.add(Text(fenced(wrong)), Text(fenced(dressed)), Text(fenced(RIGHT.format(name="echo_c"))))
    events: list[regrow.Event] = []
    proposer = model(server, edit_format="whole")
    healed = regrow.heal(tests=[rupees], proposers=[proposer], on_event=events.append)(echo_c)

    assert healed("₹1,299") == 1299.0
    assert (proposer.usage.calls, proposer.usage.echoes, proposer.usage.repeats) == (3, 0, 1)

    refused = [e.message for e in events if e.type == "reply_refused"]
    assert refused == ["openai:gpt-test call 2: identical to openai:gpt-test call 1, which failed"]
    third = sent(server.requests[2])
    assert "openai:gpt-test call 2: a repeat\nReason: identical to openai:gpt-test call 1, which failed" in third[1]
    assert "Your previous reply repeated openai:gpt-test call 1, which had already failed" in third[1]
    assert third[2] == {"temperature": 0.4}
    result = regrow.state(healed).last_result
    assert result is not None and result.candidates == 2  # the repeat never reached the checks


def test_the_anthropic_wire_gets_a_new_temperature_and_no_seed() -> None:
    with AnthropicServer() as server:
        server.add(*[Text(fenced(ORIGINAL.format(name="echo_d")))] * 2)
        healed = regrow.heal(tests=[rupees], proposers=[model(server, "anthropic", seed=5, edit_format="whole")],
                             max_attempts=2)(echo_d)
        with pytest.raises(ValueError):
            healed("₹1,299")
        first, second = (request.body for request in server.requests)
    assert "seed" not in first and "seed" not in second
    assert "temperature" not in first and second["temperature"] == 0.4
    assert "<<<<<<< SEARCH" in second["system"] and "<<<<<<< SEARCH" not in first["system"]


def test_the_same_prompt_is_never_sent_twice(server: OpenAIServer) -> None:
    proposer = model(server, edit_format="edit", evidence=False)
    run = _Run(proposer, failing_request(echo_e, "₹1,299", max_attempts=5))
    run.prepare()
    first, second = run.next_chat(), run.next_chat()  # nothing happened in between: the same prompt would go
    assert first is not None and second is not None
    assert first.user.startswith(second.user.split("\n\n", 1)[0])  # the same evidence …
    assert "<<<<<<< SEARCH" in first.system and "<<<<<<< SEARCH" not in second.system  # … asked another way
    assert dict(first.params) == {"max_tokens": 4096} and second.params["temperature"] == 0.4
    assert "Your previous reply" not in second.user  # there was no reply to complain about
    assert len(run.sent) == 2


def test_a_local_edit_is_applied_to_the_original_and_judged(server: OpenAIServer) -> None:
    server.add(Text("The currency sign and the separators must go:\n\n```\n" + EDIT + "```\n"))
    healed = regrow.heal(tests=[rupees], proposers=[model(server, edit_format="edit")])(echo_f)

    assert healed("₹1,299") == 1299.0
    system, user, _ = sent(server.requests[0])
    assert "as one or more SEARCH/REPLACE blocks" in system
    assert user.endswith("Reply with SEARCH/REPLACE blocks that fix `echo_f`.")
    assert echo_f("$3") == 3.0  # installed


def test_an_edit_that_does_not_apply_is_refused_and_the_format_switches(server: OpenAIServer) -> None:
    server.add(Text("<<<<<<< SEARCH\n    return float(text)\n=======\n    return 1.0\n>>>>>>> REPLACE\n"),
               Text(fenced(RIGHT.format(name="echo_g"))))
    healed = regrow.heal(tests=[rupees], proposers=[model(server, edit_format="edit")])(echo_g)

    assert healed("₹1,299") == 1299.0
    system, user, params = sent(server.requests[1])
    assert ("openai:gpt-test call 1: refused before it ran\nReason: SEARCH/REPLACE block 1 does not apply: the "
            "SEARCH part has the line `return float(text)`, which is not in the function") in user
    assert "<<<<<<< SEARCH\n    return float(text)" in user  # the refused edit is shown with its reason
    assert "one fenced ```python code block" in system  # asked for the whole function now
    assert "Your previous reply held SEARCH/REPLACE edits that could not be used" in user
    assert params == {}  # not an echo: the sampling stays


@pytest.mark.parametrize(("model_string", "base_url", "expected"), [
    ("ollama:qwen2.5-coder:1.5b", None, "edit"),
    ("openai:Qwen2.5-Coder-1.5B-Instruct", "http://10.1.2.3:8000/v1", "edit"),
    ("openai:my-model", "http://127.0.0.1:8080/v1", "edit"),  # a local server
    ("openai:qwen2.5-coder-32b", "http://127.0.0.1:8080/v1", "whole"),  # local, but large
    ("groq:llama-3.1-8b-instant", None, "edit"),
    ("openai:gpt-5", None, "whole"),
    ("anthropic:claude-sonnet-4-5", None, "whole"),
])
def test_the_first_format_is_chosen_by_the_model(model_string: str, base_url: str | None, expected: str) -> None:
    proposer = proposer_for(model_string, api_key="k", base_url=base_url)
    assert proposer.edit_format == expected
    other = "whole" if expected == "edit" else "edit"
    assert proposer_for(model_string, api_key="k", base_url=base_url, edit_format=other).edit_format == other


def test_an_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="edit_format must be"):
        proposer_for("openai:gpt-5", api_key="k", edit_format="diff")  # type: ignore[arg-type]

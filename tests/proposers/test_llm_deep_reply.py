"""A reply too deep for Python's parser is one refused reply, not the end of the model's turn: through the
real OpenAI SDK against a loopback server, a 160,000-character ``x * 2 + 0 + 0 ...`` (under the reply limit)
is refused with its reason and the model is asked again."""

from __future__ import annotations

from llm_servers import OpenAIServer, Text
from llm_servers import chat_of as sent

import regrow
from regrow._proposers._llm import ModelLimits, RetryPolicy, proposer_for


def double(x: int) -> int:
    return x + 2


def check_double(fn: object) -> None:
    assert fn(3) == 6  # type: ignore[operator]


def test_a_reply_nested_too_deeply_is_refused_and_the_model_asked_again() -> None:
    bomb = "```python\ndef double(x: int) -> int:\n    return x * 2" + " + 0" * 40_000 + "\n```\n"
    good = "```python\ndef double(x: int) -> int:\n    return x * 2\n```\n"
    events: list[regrow.Event] = []
    with OpenAIServer([Text(bomb), Text(good)]) as server:
        model = proposer_for("openai:gpt-test", api_key="k", base_url=server.base_url, evidence=False, locate=False,
                             retry=RetryPolicy(max_retries=1, base_delay=0.01), limits=ModelLimits(max_calls=3))
        healed = regrow.heal(tests=[check_double], proposers=[model], on_event=events.append, cooldown=0)(double)
        regrow.state(healed).check()  # before: "proposer openai:gpt-test failed: maximum recursion depth exceeded"
        assert healed(5) == 10
        assert len(server.requests) == 2
        second = sent(server.requests[1])[1]
    refused = [event.message for event in events if event.type == "reply_refused"]
    assert len(refused) == 1 and "nested too deeply" in refused[0] and "write it with less nesting" in refused[0]
    assert "nested too deeply" in second  # the next prompt tells the model why

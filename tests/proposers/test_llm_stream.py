"""Streaming by default (listened to or not), and a plain request when a server does not stream.

Each wire protocol through its real SDK, against a loopback server; the decorator and the
session decide, as for a user. The gateway that does not stream answers every request, a stream
request too, with a whole JSON reply, as some proxies in front of a model do.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from llm_servers import AnthropicServer, GeminiServer, LoopbackServer, OpenAIServer, Request, Text

import regrow
from regrow._proposers._llm import RetryPolicy, proposer_for

FAST = RetryPolicy(max_retries=2, base_delay=0.01, max_delay=0.05)
MODELS = {"openai": "openai:gpt-test", "anthropic": "anthropic:claude-test", "gemini": "gemini:gemini-test"}
RIGHT = "```python\nimport re\n\ndef {name}(text: str) -> float:\n    return float(re.sub(r'[^0-9.]', '', text))\n```"


def rupees(fn: Any) -> None:
    result = fn("₹1,299")
    if asyncio.iscoroutine(result):
        result = asyncio.run(result)
    assert result == 1299.0


BROKEN = "def {name}(text):\n    return float(text.replace('$', ''))\n"


class _Plain:
    """A gateway that never streams: a stream request gets the whole reply as JSON."""

    def is_stream(self, request: Request) -> bool:
        return False


class PlainOpenAI(_Plain, OpenAIServer):
    pass


class PlainAnthropic(_Plain, AnthropicServer):
    pass


STREAMING = {"openai": OpenAIServer, "anthropic": AnthropicServer, "gemini": GeminiServer}
PLAIN = {"openai": PlainOpenAI, "anthropic": PlainAnthropic}


def asked_to_stream(server: LoopbackServer, request: Request) -> bool:
    if isinstance(server, GeminiServer):
        return ":streamGenerateContent" in request.path
    return bool(isinstance(request.body, dict) and request.body.get("stream"))


def healed(func: Any, server: LoopbackServer, wire: str, **options: Any) -> Any:
    llm = proposer_for(MODELS[wire], api_key="k", base_url=server.base_url, retry=FAST)
    return regrow.heal(tests=[rupees], proposers=[llm], **options)(func)


@pytest.fixture(params=sorted(MODELS))
def wire(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_a_stream_is_asked_for_when_nobody_listens(wire: str, make_module: Any) -> None:
    # A stream's time limit is its inactivity (test_llm_idle.py), so replies stream whoever listens.
    mod = make_module(BROKEN.format(name="cost"))
    with STREAMING[wire]() as server:
        server.add(Text(RIGHT.format(name="cost"), pieces=4))
        fixed = healed(mod.cost, server, wire)
        assert fixed("₹1,299") == 1299.0
        (sent,) = server.requests
        assert asked_to_stream(server, sent)


def test_stream_false_asks_for_a_whole_reply(make_module: Any) -> None:
    mod = make_module(BROKEN.format(name="fee"))
    with OpenAIServer() as server:
        server.add(Text(RIGHT.format(name="fee")))
        llm = proposer_for("openai:gpt-test", api_key="k", base_url=server.base_url, retry=FAST, stream=False)
        fixed = regrow.heal(tests=[rupees], proposers=[llm])(mod.fee)
        assert fixed("₹1,299") == 1299.0
        (sent,) = server.requests
        assert not asked_to_stream(server, sent)


def test_a_listener_gets_the_reply_as_a_stream(wire: str, make_module: Any) -> None:
    events: list[regrow.Event] = []
    mod = make_module(BROKEN.format(name="fare"))
    with STREAMING[wire]() as server:
        server.add(Text(RIGHT.format(name="fare"), pieces=4))
        fixed = healed(mod.fare, server, wire, on_event=events.append)
        assert fixed("₹1,299") == 1299.0
        (sent,) = server.requests
        assert asked_to_stream(server, sent)
    chunks = [e.delta for e in events if e.type == "propose_chunk"]
    assert len(chunks) >= 2 and "".join(chunks) == RIGHT.format(name="fare")


# google-genai reads a whole JSON reply on its stream path as one chunk: it needs no second request.
@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_a_server_that_does_not_stream_is_asked_again_plainly(wire: str, make_module: Any) -> None:
    events: list[regrow.Event] = []
    mod = make_module(BROKEN.format(name="tax") + "\n\n" + BROKEN.format(name="tip"))
    with PLAIN[wire]() as server:
        # The stream request and the plain one after it are each answered with the same whole reply.
        server.add(Text(RIGHT.format(name="tax")), Text(RIGHT.format(name="tax")), Text(RIGHT.format(name="tip")))
        llm = proposer_for(MODELS[wire], api_key="k", base_url=server.base_url, retry=FAST)
        tax = regrow.heal(tests=[rupees], proposers=[llm], on_event=events.append)(mod.tax)
        tip = regrow.heal(tests=[rupees], proposers=[llm], on_event=events.append)(mod.tip)
        assert tax("₹1,299") == 1299.0
        assert tip("₹1,299") == 1299.0
        streamed = [asked_to_stream(server, sent) for sent in server.requests]
    # The first call asked for a stream, got none, asked again plainly; the next call asked plainly at once.
    assert streamed == [True, False, False]
    chunks = [e.delta for e in events if e.type == "propose_chunk"]
    assert chunks == [RIGHT.format(name="tax"), RIGHT.format(name="tip")]  # the listener still sees each reply
    assert not [e for e in events if e.type == "proposer_error"]


def test_an_async_heal_falls_back_too(make_module: Any) -> None:
    events: list[regrow.Event] = []
    mod = make_module("import asyncio\n\nasync def toll(text):\n    await asyncio.sleep(0)\n"
                      "    return float(text.replace('$', ''))\n")
    with PlainOpenAI() as server:
        server.add(*[Text(RIGHT.format(name="toll").replace("def toll", "async def toll"))] * 2)
        fixed = healed(mod.toll, server, "openai", on_event=events.append)
        assert asyncio.run(fixed("₹1,299")) == 1299.0
        assert [asked_to_stream(server, sent) for sent in server.requests] == [True, False]

"""A call is bounded by inactivity and by the session's deadline, not by a fixed total.

Through each installed SDK against a loopback server: a reply that streams slowly, for longer than the
old total limit (``call_timeout``), is used; a stream that stops mid-way ends after the inactivity limit
with a verdict that says so, and is tried again at most ``max_stalls`` times. Each streamed call records
its first-token latency and its tokens per second. Every wire streams (OpenAI, Anthropic, Gemini), sync
and async, and each one's proposer waits for a slow reply that is still producing.
"""

from __future__ import annotations

import asyncio
import importlib.util
import io
import math
import time
from collections.abc import Iterator
from typing import Any

import pytest
from llm_servers import SERVERS, LoopbackServer, OpenAIServer, Text, failing_request

import regrow
from regrow import ProposerError
from regrow._cli._display import Display
from regrow._proposers._llm import RetryPolicy, proposer_for, transport_for
from regrow._proposers._llm._accounting import Usage
from regrow._proposers._llm._retry import Retrying, acomplete, complete
from regrow._proposers._llm._strategy import on_this_machine
from regrow._proposers._llm._transport import Chat
from regrow.extend import Target

MODELS = {"openai": "openai:gpt-test", "anthropic": "anthropic:claude-test", "gemini": "gemini:gemini-test"}
SDKS = {"openai": "openai", "anthropic": "anthropic", "gemini": "google.genai"}
CHAT = Chat("SYSTEM", "USER", {"max_tokens": 100})
# The old rule would cut every call at 5 s; these replies take 8 s and more, a piece every 1.6 s.
SLOW = RetryPolicy(max_retries=2, base_delay=0.01, max_delay=0.05, call_timeout=5.0, idle_timeout=4.0)
# A server on this machine gets until the deadline for a byte unless told otherwise (first_token_timeout).
STALLING = RetryPolicy(max_retries=4, base_delay=0.01, max_delay=0.05, idle_timeout=2.0, max_stalls=1,
                       first_token_timeout=2.0)
REPLY = "```python\ndef price(text):\n    return float(text.strip('$'))\n```"


def installed(wire: str) -> bool:
    return importlib.util.find_spec(SDKS[wire]) is not None


@pytest.fixture(params=[w for w in sorted(SERVERS) if installed(w)])
def server(request: pytest.FixtureRequest) -> Iterator[LoopbackServer]:
    with SERVERS[request.param]() as running:
        yield running


def call(server: LoopbackServer, policy: RetryPolicy, *, deadline: float = 120.0) -> tuple[Any, list[str]]:
    deltas: list[str] = []
    transport = transport_for(MODELS[server.wire], api_key="k", base_url=server.base_url)
    return complete(transport, CHAT, Retrying(policy, time.monotonic() + deadline), on_delta=deltas.append), deltas


def test_a_slow_stream_past_the_old_total_limit_is_used(server: LoopbackServer) -> None:
    server.add(Text(REPLY, pieces=4, event_delay=1.6))
    started = time.monotonic()
    reply, deltas = call(server, SLOW)
    assert time.monotonic() - started > SLOW.call_timeout  # the old total would have cut it
    assert reply.text == REPLY and "".join(deltas) == REPLY
    assert len(server.requests) == 1  # no retry: a stream still producing is not a stuck call
    assert reply.first_token is not None and reply.first_token > 0
    assert reply.generating > 0


def test_a_stream_that_stops_ends_after_the_inactivity_limit(server: LoopbackServer) -> None:
    server.add(Text(REPLY, pieces=3, stall_after=2), Text(REPLY, pieces=3, stall_after=2))
    with pytest.raises(ProposerError) as raised:
        call(server, STALLING)
    message = str(raised.value)
    assert f"{server.wire} sent nothing for 2.0s" in message, message
    assert "inactivity limit" in message and "gave up after 2 stalled tries" in message, message
    assert len(server.requests) == 2  # max_stalls=1: one more try, not max_retries=4


def test_a_server_silent_before_its_first_token_is_a_stall_when_a_first_token_limit_is_set() -> None:
    with OpenAIServer([Text(REPLY, stall_after=0)] * 2) as server:
        with pytest.raises(ProposerError, match=r"sent nothing for 2\.0s before its first token \(the inactivity "
                                                r"limit, RetryPolicy\(idle_timeout=\.\.\., first_token_timeout"):
            call(server, STALLING)
        assert len(server.requests) == 2


def test_a_model_on_this_machine_reading_a_long_prompt_is_waited_for() -> None:
    # A laptop CPU reads a 1,000-token prompt for a minute or two before its first token; a try abandoned
    # then only makes the next one queue behind it. The default waits, within the deadline.
    quick = RetryPolicy(max_retries=2, base_delay=0.01, max_delay=0.05, idle_timeout=1.0)
    with OpenAIServer([Text(REPLY, delay=3.5)]) as server:
        started = time.monotonic()
        reply, deltas = call(server, quick)
        assert time.monotonic() - started > 3.0 > quick.idle_timeout
        assert reply.text == REPLY and "".join(deltas) == REPLY
        assert len(server.requests) == 1  # never abandoned and sent again
        assert reply.first_token is not None and reply.first_token > quick.idle_timeout
    with OpenAIServer([Text(REPLY, delay=30.0)]) as server:  # ... and the deadline still ends the wait
        started = time.monotonic()
        with pytest.raises(ProposerError, match="deadline"):
            call(server, quick, deadline=2.0)
        assert time.monotonic() - started < 20.0


@pytest.mark.parametrize(("url", "local"), [
    ("http://127.0.0.1:8766/v1", True), ("http://localhost:11434/v1", True), ("http://[::1]:8080/v1", True),
    ("http://127.0.0.2:80", True), ("localhost:11434", True), ("https://api.openai.com/v1", False),
    ("http://10.0.0.5:8080/v1", False), ("http://127.0.0.1.example.com/v1", False), (None, False), ("", False)])
def test_which_servers_are_on_this_machine(url: str | None, local: bool) -> None:
    transport = transport_for("openai:m", api_key="k", base_url=url)
    assert on_this_machine(transport.base_url) is local
    assert RetryPolicy(idle_timeout=7.0).read_limit(transport) == (math.inf if local else 7.0)
    assert RetryPolicy(idle_timeout=7.0, first_token_timeout=30.0).read_limit(transport) == 30.0
    assert RetryPolicy(idle_timeout=7.0, first_token_timeout=3.0).read_limit(transport) == 7.0


def test_an_ollama_model_is_on_this_machine_unless_its_url_says_otherwise() -> None:
    assert on_this_machine(transport_for("ollama:qwen2.5-coder:1.5b").base_url)
    assert not on_this_machine(transport_for("ollama:qwen2.5-coder:1.5b", base_url="http://gpu-box.lan:11434/v1").base_url)


# google-genai's async client subclasses aiohttp's ClientSession, which aiohttp warns about.
@pytest.mark.filterwarnings("ignore:Inheritance class AiohttpClientSession:DeprecationWarning")
@pytest.mark.parametrize("wire", [w for w in ("openai", "anthropic", "gemini") if installed(w)])
def test_async_a_stream_that_stops_ends_after_the_inactivity_limit(wire: str) -> None:
    # google-genai's async client over aiohttp bounds the whole call by its time limit: regrow waits per part.
    with SERVERS[wire]([Text(REPLY, pieces=3, stall_after=1)] * 2) as server:
        transport = transport_for(MODELS[wire], api_key="k", base_url=server.base_url)

        async def main() -> Any:
            return await acomplete(transport, CHAT, Retrying(STALLING, time.monotonic() + 120),
                                   on_delta=lambda text: None)

        with pytest.raises(ProposerError, match=r"sent nothing for 2\.0s.*gave up after 2 stalled tries"):
            asyncio.run(main())
        assert len(server.requests) == 2


@pytest.mark.filterwarnings("ignore:Inheritance class AiohttpClientSession:DeprecationWarning")
@pytest.mark.parametrize("wire", [w for w in ("openai", "anthropic", "gemini") if installed(w)])
def test_async_a_slow_stream_is_used(wire: str) -> None:
    with SERVERS[wire]([Text(REPLY, pieces=3, event_delay=1.0)]) as server:
        transport = transport_for(MODELS[wire], api_key="k", base_url=server.base_url)
        policy = RetryPolicy(max_retries=0, call_timeout=1.5, idle_timeout=3.0)

        async def main() -> Any:
            return await acomplete(transport, CHAT, Retrying(policy, time.monotonic() + 120),
                                   on_delta=lambda text: None)

        reply = asyncio.run(main())
        assert reply.text == REPLY and reply.first_token is not None


def price(text: str) -> float:
    return float(text)


def test_the_proposer_streams_unasked_and_records_first_token_and_speed(server: LoopbackServer) -> None:
    # Each wire's proposer (OpenAI, Anthropic, Gemini: all stream) waits for a reply that takes longer than the
    # old total limit while it keeps producing.
    events: list[Any] = []
    server.add(Text(REPLY, pieces=4, event_delay=1.6, output_tokens=30))
    llm = proposer_for(MODELS[server.wire], api_key="k", base_url=server.base_url, retry=SLOW, evidence=False)
    request = failing_request(price, "$3", events=(events.append,), max_attempts=1)
    started = time.monotonic()
    candidates = list(llm.propose(request))
    assert time.monotonic() - started > SLOW.call_timeout and len(server.requests) == 1
    assert server.is_stream(server.requests[0])
    assert [c.source for c in candidates] == ["def price(text):\n    return float(text.strip('$'))\n"]
    usage = llm.last_usage
    assert usage.streamed == 1 and usage.generated == 30
    assert usage.mean_first_token is not None and usage.mean_first_token > 0
    assert usage.tokens_per_second is not None and usage.tokens_per_second > 0
    (call_event,) = [e for e in events if e.type == "model_call"]
    assert "first token" in call_event.message and "tokens/s" in call_event.message
    assert "".join(e.delta for e in events if e.type == "propose_chunk") == REPLY


def test_no_call_is_started_with_less_time_left_than_the_quickest_call_took() -> None:
    # A call that cannot finish before the deadline is cut, its prompt paid for (bench-llm: two of regrow-llm's
    # calls were, at a task's end). The time left is compared with the quickest call of the session so far.
    from regrow._proposers._llm._run import _Run

    events: list[Any] = []
    llm = proposer_for(MODELS["openai"], api_key="k", base_url="http://127.0.0.1:9/v1", evidence=False)
    request = failing_request(price, "$3", events=(events.append,), max_attempts=3, deadline=600.0)
    run = _Run(llm, request)
    assert run.next_chat() is not None  # no call answered yet: nothing to go by
    run.quickest = 60.0
    assert run.next_chat() is not None  # ~600 s left
    run.quickest = 900.0
    assert run.next_chat() is None
    (refused,) = [e.message for e in events if e.type == "budget_refused"]
    assert "s left of the repair's time, less than this session's quickest model call (900s): not called" in refused


def test_the_quickest_call_is_the_one_that_answered_soonest() -> None:
    from regrow._proposers._llm._run import _Run

    with OpenAIServer([Text(REPLY, delay=0.5), Text(REPLY.replace("'$'", "'$ '"))]) as server:
        llm = proposer_for(MODELS["openai"], api_key="k", base_url=server.base_url, evidence=False)
        run = _Run(llm, failing_request(price, "$3", max_attempts=3, deadline=600.0))
        latencies = []
        for _ in range(2):
            chat = run.next_chat()
            assert chat is not None
            reply, latency, retries = llm._call(run, chat)
            run.take(reply, latency, retries)
            latencies.append(latency)
        assert len(server.requests) == 2
        assert latencies[0] >= 0.5 and run.quickest == min(latencies)


def test_a_usage_without_streamed_calls_reports_no_speed() -> None:
    usage = Usage(calls=1, input_tokens=10, output_tokens=5, latency=1.0)
    assert usage.mean_first_token is None and usage.tokens_per_second is None
    assert "tokens/s" not in usage.summary()


def test_limits_must_be_positive() -> None:
    with pytest.raises(ValueError, match="idle_timeout"):
        RetryPolicy(idle_timeout=0)
    with pytest.raises(ValueError, match="first_token_timeout"):
        RetryPolicy(first_token_timeout=0)


def test_verbose_output_shows_each_model_calls_speed() -> None:
    out = io.StringIO()
    display = Display(out, Target.of(price), verbose=True)
    usage = Usage(1, 100, 30, 4.0, streamed=1, first_token=1.0, generating=3.0, generated=30)
    display(regrow.Event("model_call", "price", 1, message=f"openai:m call 1: {usage.summary()}"))
    assert "regrow: model call: openai:m call 1: 1 calls, 100 in / 30 out tokens, 4.00s, first token 1.00s, " \
           "10.0 tokens/s" in out.getvalue()
    quiet = io.StringIO()
    Display(quiet, Target.of(price))(regrow.Event("model_call", "price", 1, message="x"))
    assert quiet.getvalue() == ""

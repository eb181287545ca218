"""Each wire protocol through its real SDK, against a loopback server that speaks it.

Scripted replies (plain and streamed, sync and async), errors worth retrying and errors not,
Retry-After, streams cut mid-way, slow servers and the deadline, invalid JSON, wrong content
types, empty and huge replies; and the model strings, keys and extras of ``proposer_for``.
"""

from __future__ import annotations

import asyncio
import importlib.util
import time
from collections.abc import Iterator
from typing import Any

import pytest
from llm_servers import SERVERS, LoopbackServer, OpenAIServer, Raw, Text, failing_request

from regrow import ProposerError
from regrow._proposers._llm import LLMProposer, ModelLimits, RetryPolicy, proposer_for, transport_for
from regrow._proposers._llm._anthropic import AnthropicTransport
from regrow._proposers._llm._gemini import GeminiTransport
from regrow._proposers._llm._litellm import LiteLLMTransport
from regrow._proposers._llm._openai import OpenAITransport
from regrow._proposers._llm._retry import Retrying, acomplete, complete
from regrow._proposers._llm._transport import Chat, Transport, TransportError

MODELS = {"openai": "openai:gpt-test", "anthropic": "anthropic:claude-test", "gemini": "gemini:gemini-test"}
CHAT = Chat("SYSTEM PROMPT", "USER PROMPT", {"temperature": 0.25, "seed": 7, "max_tokens": 300})
FAST = RetryPolicy(max_retries=3, base_delay=0.01, max_delay=0.05, jitter=0.1)


@pytest.fixture(params=sorted(SERVERS))
def server(request: pytest.FixtureRequest) -> Iterator[LoopbackServer]:
    with SERVERS[request.param]() as running:
        yield running


def transport(server: LoopbackServer) -> Transport:
    return transport_for(MODELS[server.wire], api_key="test-key", base_url=server.base_url)


def call(server: LoopbackServer, *, stream: bool = False, deadline: float = 10.0, policy: RetryPolicy = FAST,
         retries: list[TransportError] | None = None) -> tuple[Any, list[str]]:
    deltas: list[str] = []
    reply = complete(transport(server), CHAT, Retrying(policy, time.monotonic() + deadline),
                     on_delta=deltas.append if stream else None,
                     on_retry=(lambda error, delay: retries.append(error)) if retries is not None else None)
    return reply, deltas


def acall(server: LoopbackServer, *, stream: bool = False, deadline: float = 10.0) -> tuple[Any, list[str]]:
    deltas: list[str] = []

    async def main() -> Any:
        return await acomplete(transport(server), CHAT, Retrying(FAST, time.monotonic() + deadline),
                               on_delta=deltas.append if stream else None)

    return asyncio.run(main()), deltas


# -- scripted replies ---------------------------------------------------------------------------------
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_a_scripted_reply_comes_back_with_its_usage(server: LoopbackServer, stream: bool) -> None:
    server.add(Text("def f():\n    return 1\n", input_tokens=123, output_tokens=45, pieces=4))
    reply, deltas = call(server, stream=stream)
    assert reply.text == "def f():\n    return 1\n"
    assert (reply.input_tokens, reply.output_tokens) == (123, 45)
    assert not reply.truncated
    assert "".join(deltas) == (reply.text if stream else "")
    assert len(deltas) == (4 if stream else 0)
    sent = server.requests[0]
    assert "SYSTEM PROMPT" in sent.text and "USER PROMPT" in sent.text
    assert sent.body.get("stream", False) is stream or server.wire == "gemini"


# google-genai's async client subclasses aiohttp's ClientSession, which aiohttp warns about.
@pytest.mark.filterwarnings("ignore:Inheritance class AiohttpClientSession:DeprecationWarning")
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_the_async_path_uses_the_sdks_async_client(server: LoopbackServer, stream: bool) -> None:
    server.add(Text("async reply", pieces=2))
    reply, deltas = acall(server, stream=stream)
    assert reply.text == "async reply"
    assert "".join(deltas) == ("async reply" if stream else "")


def test_sampling_parameters_reach_the_server_in_each_protocols_names(server: LoopbackServer) -> None:
    server.add(Text("ok"))
    call(server)
    body = server.requests[0].body
    if server.wire == "openai":  # a compatible server (base_url given) is sent max_tokens
        assert (body["temperature"], body["seed"], body["max_tokens"]) == (0.25, 7, 300)
        assert body["messages"][0] == {"role": "system", "content": "SYSTEM PROMPT"}
    elif server.wire == "anthropic":  # the messages API takes no seed
        assert (body["temperature"], body["max_tokens"], body["system"]) == (0.25, 300, "SYSTEM PROMPT")
        assert "seed" not in body
    else:
        config = body["generationConfig"]
        assert (config["temperature"], config["seed"], config["maxOutputTokens"]) == (0.25, 7, 300)
        assert "SYSTEM PROMPT" in str(body["systemInstruction"])
    assert server.requests[0].headers.get("x-api-key", server.requests[0].headers.get(
        "authorization", server.requests[0].headers.get("x-goog-api-key"))) in ("test-key", "Bearer test-key")


def test_a_reply_stopped_at_the_token_limit_is_marked_truncated(server: LoopbackServer) -> None:
    finish = {"openai": "length", "anthropic": "max_tokens", "gemini": "MAX_TOKENS"}[server.wire]
    server.add(Text("def f(", finish=finish))
    reply, _ = call(server, stream=True)
    assert reply.truncated


# -- transient failures: retried --------------------------------------------------------------------------
def test_429_with_retry_after_is_retried_after_the_wait(server: LoopbackServer) -> None:
    server.add(Raw(429, {"error": {"message": "slow down", "type": "rate_limit_error"}}, {"Retry-After": "0.3"}),
               Text("after the wait"))
    retries: list[TransportError] = []
    started = time.monotonic()
    reply, _ = call(server, retries=retries, policy=RetryPolicy(base_delay=5.0))  # Retry-After replaces backoff
    assert reply.text == "after the wait"
    assert 0.3 <= time.monotonic() - started < 3.0
    assert [(e.status, e.retry_after) for e in retries] == [(429, 0.3)]
    assert len(server.requests) == 2


@pytest.mark.parametrize("status", [500, 502, 503, 504, 529])
def test_server_errors_are_retried_with_backoff(status: int) -> None:
    with OpenAIServer([Raw(status, {"error": {"message": "boom"}}), Raw(status, {"error": {"message": "boom"}}),
                       Text("third time")]) as server:
        retries: list[TransportError] = []
        reply, _ = call(server, retries=retries)
    assert reply.text == "third time"
    assert [e.status for e in retries] == [status, status]


def test_a_stream_cut_mid_way_is_retried(server: LoopbackServer) -> None:
    server.add(Text("def f():\n    return 1\n", pieces=6, cut_after=3), Text("whole reply"))
    retries: list[TransportError] = []
    reply, deltas = call(server, stream=True, retries=retries)
    assert reply.text == "whole reply"
    assert len(retries) == 1 and retries[0].transient
    assert "".join(deltas).endswith("whole reply")  # the first attempt's partial text came before


def test_an_error_event_inside_a_stream_is_retried_when_transient() -> None:
    def overloaded(request: Any) -> Raw:
        body = 'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}\n\n'
        return Raw(200, body, content_type="text/event-stream")

    with SERVERS["anthropic"]([overloaded, Text("calm again")]) as server:
        retries: list[TransportError] = []
        reply, _ = call(server, stream=True, retries=retries)
    assert reply.text == "calm again"
    assert "overloaded_error" in str(retries[0])


def test_retries_stop_after_max_retries() -> None:
    with OpenAIServer([Raw(503, {"error": {"message": "down"}})] * 5) as server:
        with pytest.raises(ProposerError, match=r"HTTP 503.*gave up after 3 tries"):
            call(server, policy=RetryPolicy(max_retries=2, base_delay=0.01))
        assert len(server.requests) == 3


# -- permanent failures: not retried --------------------------------------------------------------------
@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_auth_and_validation_errors_are_not_retried(status: int) -> None:
    with OpenAIServer([Raw(status, {"error": {"message": "no", "type": "invalid_request_error"}})]) as server:
        with pytest.raises(ProposerError, match=f"HTTP {status}"):
            call(server)
        assert len(server.requests) == 1


def test_auth_error_is_not_retried_on_any_wire(server: LoopbackServer) -> None:
    server.add(Raw(401, {"error": {"message": "invalid x-api-key", "type": "authentication_error"}}))
    with pytest.raises(ProposerError, match="HTTP 401"):
        call(server)
    assert len(server.requests) == 1


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize(("body", "content_type"), [("{not json", "application/json"),
                                                     ("<html>502 Bad Gateway</html>", "text/html")],
                         ids=["invalid-json", "html"])
def test_invalid_json_and_wrong_content_types_fail_with_a_reason(server: LoopbackServer, stream: bool, body: str,
                                                                 content_type: str) -> None:
    # A stream request answered with no stream events is asked once more for a plain reply (test_llm_stream.py).
    server.add(*[Raw(200, body, content_type=content_type)] * 2)
    with pytest.raises(ProposerError, match=r"not valid JSON|not a |no stream events"):
        call(server, stream=stream)
    assert len(server.requests) == (2 if stream and server.wire != "gemini" else 1)


# -- the deadline ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_a_server_that_never_answers_fails_inside_the_deadline(server: LoopbackServer, stream: bool) -> None:
    server.add(Text("too late", delay=30), Text("too late", delay=30))
    started = time.monotonic()
    with pytest.raises(ProposerError, match=r"deadline|in time"):
        call(server, stream=stream, deadline=0.6)
    assert time.monotonic() - started < 2.5


def test_a_stream_that_trickles_past_the_deadline_is_ended() -> None:
    with OpenAIServer([Text("x" * 40, pieces=40, event_delay=0.05)] * 2) as server:
        started = time.monotonic()
        with pytest.raises(ProposerError, match=r"still going|deadline"):
            call(server, stream=True, deadline=0.5)
        assert time.monotonic() - started < 2.0


def test_a_retry_after_past_the_deadline_is_not_waited_for() -> None:
    with OpenAIServer([Raw(429, {"error": {"message": "later"}}, {"Retry-After": "60"})]) as server:
        started = time.monotonic()
        with pytest.raises(ProposerError, match=r"asked to wait 60\.0s, past the repair deadline"):
            call(server, deadline=5)
        assert time.monotonic() - started < 1.0


def test_async_a_server_that_never_answers_fails_inside_the_deadline() -> None:
    with OpenAIServer([Text("late", delay=30), Text("late", delay=30)]) as server:
        started = time.monotonic()
        with pytest.raises(ProposerError):
            acall(server, deadline=0.6)
        assert time.monotonic() - started < 2.5


# -- empty and huge replies, through the proposer: a refusal with its reason ---------------------------------
def price(text: str) -> float:
    return float(text)


def proposer_against(server: LoopbackServer, **options: Any) -> LLMProposer:
    return proposer_for(MODELS[server.wire], api_key="k", base_url=server.base_url, retry=FAST, **options)


def test_empty_and_huge_replies_are_refused_with_their_reason(server: LoopbackServer) -> None:
    good = "```python\ndef price(text: str) -> float:\n    return float(text.strip('$'))\n```"
    server.add(Text(""), Text("```python\n" + "# padding\n" * 30_000 + "```"), Text(good))
    events: list[Any] = []
    request = failing_request(price, "$3", events=(events.append,))
    proposer = proposer_against(server)
    candidates = list(proposer.propose(request))  # no session here: each candidate gets no verdict
    assert [c.source for c in candidates] == ["def price(text: str) -> float:\n    return float(text.strip('$'))\n"]
    refusals = [e.message for e in events if e.type == "reply_refused"]
    assert "the reply was empty" in refusals[0]
    assert "the reply is too long" in refusals[1]
    # The third prompt told the model about both refusals.
    assert "the reply was empty" in server.requests[2].text and "too long" in server.requests[2].text


_WITHHELD = {"openai": "content_filter", "anthropic": "refusal", "gemini": "SAFETY", "litellm": "content_filter"}


def test_a_reply_the_provider_withheld_is_said_to_be_refused_not_empty(server: LoopbackServer) -> None:
    """A provider's refusal (OpenAI's content_filter, Anthropic's refusal, Gemini's SAFETY) was reported as "the reply
    was empty", which sent the user looking at the model."""
    finish = _WITHHELD.get(server.wire, "content_filter")
    server.add(Text("", finish=finish))
    events: list[Any] = []
    with pytest.raises(ProposerError, match="budget of 1 model calls is spent"):  # (no second reply: it stops)
        list(proposer_against(server, limits=ModelLimits(max_calls=1)).propose(
            failing_request(price, "$3", events=(events.append,))))
    refusals = [e.message for e in events if e.type == "reply_refused"]
    assert refusals and f"the provider refused to answer (its stop reason: {finish})" in refusals[0], refusals


# -- model strings, keys and extras ----------------------------------------------------------------------------
def test_model_strings_pick_wire_endpoint_and_model(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OLLAMA_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "ak-env")
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", "g-env")
    openai = transport_for("openai:gpt-5")
    assert isinstance(openai, OpenAITransport)
    assert (openai.model, openai.api_key, openai.base_url, openai.max_tokens_field) == (
        "gpt-5", "sk-env", None, "max_completion_tokens")
    ollama = transport_for("ollama:qwen2.5-coder:7b")
    assert isinstance(ollama, OpenAITransport)
    assert (ollama.provider, ollama.model, ollama.base_url) == ("ollama", "qwen2.5-coder:7b", "http://localhost:11434/v1")
    anthropic = transport_for("anthropic:claude-sonnet-4-5", base_url="http://127.0.0.1:9")
    assert isinstance(anthropic, AnthropicTransport) and anthropic.api_key == "ak-env"
    assert anthropic.base_url == "http://127.0.0.1:9"
    gemini = transport_for("gemini:gemini-2.5-pro")
    assert isinstance(gemini, GeminiTransport) and gemini.api_key == "g-env"
    litellm = transport_for("litellm:bedrock/anthropic.claude-3-5-sonnet")
    assert isinstance(litellm, LiteLLMTransport) and litellm.model == "bedrock/anthropic.claude-3-5-sonnet"
    assert transport_for("openai:gpt-5", api_key="sk-kwarg").api_key == "sk-kwarg"  # type: ignore[attr-defined]
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8/v1")
    assert transport_for("openai:local").base_url == "http://127.0.0.1:8/v1"  # type: ignore[attr-defined]
    assert proposer_for("openai:gpt-5", temperature=0.2, seed=1).name == "openai:gpt-5"


@pytest.mark.parametrize("model", ["gpt-5", "openai:", ":gpt-5", "closedai:gpt-5"])
def test_bad_model_strings_say_what_is_expected(model: str) -> None:
    with pytest.raises(ValueError, match="provider"):
        transport_for(model, api_key="k")


@pytest.mark.parametrize(("model", "names"), [("openai:gpt-5", "OPENAI_API_KEY"),
                                              ("anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
                                              ("gemini:gemini-2.5-pro", "GEMINI_API_KEY or GOOGLE_API_KEY"),
                                              ("groq:llama-3.3-70b", "GROQ_API_KEY")])
def test_a_missing_key_is_an_error_before_any_call(monkeypatch: pytest.MonkeyPatch, model: str, names: str) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY",
                 "GROQ_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ProposerError, match=f"needs an API key: set {names} or pass api_key="):
        proposer_for(model)


def test_a_local_server_needs_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with OpenAIServer([Text("hi")]) as server:
        reply, _ = call_transport(transport_for("ollama:qwen2.5-coder:7b", base_url=server.base_url))
        assert reply.text == "hi"
        assert server.requests[0].body["model"] == "qwen2.5-coder:7b"
        assert transport_for("openai:llama", base_url=server.base_url) is not None


def call_transport(t: Transport) -> tuple[Any, list[str]]:
    return complete(t, CHAT, Retrying(FAST, time.monotonic() + 5)), []


@pytest.mark.parametrize(("model", "module", "extra"), [("openai:gpt-5", "openai", "openai"),
                                                        ("anthropic:claude-sonnet-4-5", "anthropic", "anthropic"),
                                                        ("gemini:gemini-2.5-pro", "google.genai", "gemini"),
                                                        ("litellm:bedrock/x", "litellm", "litellm")])
def test_a_missing_sdk_names_the_extra_to_install(monkeypatch: pytest.MonkeyPatch, model: str, module: str,
                                                  extra: str) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == module else real(name, *a))
    with pytest.raises(ProposerError, match=rf"pip install 'regrow\[{extra}\]'"):
        proposer_for(model, api_key="k")


# -- LiteLLM, for the long tail, against the OpenAI-compatible server ---------------------------------------
@pytest.fixture
def litellm_offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No fetch of LiteLLM's price list; and its cached HTTP clients closed after the test."""
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    yield
    import litellm

    cache = litellm.in_memory_llm_clients_cache
    for client in list(cache.cache_dict.values()):
        close = getattr(client, "close", None)
        if callable(close) and not asyncio.iscoroutinefunction(close):
            close()
    cache.flush_cache()  # type: ignore[no-untyped-call]


# LiteLLM's stream handling makes pydantic warn (TypedDict qualifiers, deprecated attributes): third-party noise.
@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::DeprecationWarning")
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.usefixtures("litellm_offline")
def test_litellm_reaches_an_openai_compatible_server(stream: bool) -> None:
    with OpenAIServer([Text("via litellm", input_tokens=5, output_tokens=2), Raw(503, {"error": {"message": "x"}}),
                       Text("after 503")]) as server:
        t = transport_for("litellm:openai/local-model", api_key="k", base_url=server.base_url)
        deltas: list[str] = []
        reply = complete(t, CHAT, Retrying(FAST, time.monotonic() + 20), on_delta=deltas.append if stream else None)
        assert reply.text == "via litellm"
        assert "".join(deltas) == ("via litellm" if stream else "")
        assert (reply.input_tokens, reply.output_tokens) == (5, 2)
        assert server.requests[0].body["model"] == "local-model"
        retried = complete(t, CHAT, Retrying(FAST, time.monotonic() + 20))
        assert retried.text == "after 503"

"""OpenAI chat completions: OpenAI itself and every OpenAI-compatible endpoint (``base_url``).

The SDK is imported on first use; its own retries are off (``max_retries=0``) because regrow's
retry policy decides, within the session's deadline.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._sdk import Gatherer, SDKClients, SDKTransport
from ._transport import Chat, OnDelta, Reply, StreamClock, TransportError, cut_stream, require_sdk


class Chunks:
    """Accumulates OpenAI-shaped stream chunks (also LiteLLM's) into a :class:`Reply`."""

    def __init__(self, provider: str, on_delta: OnDelta | None, clock: StreamClock) -> None:
        self.provider = provider
        self.on_delta = on_delta
        self.clock = clock
        self.parts: list[str] = []
        self.finish: str | None = None
        self.usage: Any = None
        self.model = ""
        self.events = 0

    def feed(self, chunk: Any) -> None:
        self.clock.check()
        self.events += 1
        self.model = getattr(chunk, "model", "") or self.model
        self.usage = getattr(chunk, "usage", None) or self.usage
        for choice in getattr(chunk, "choices", None) or ():
            delta = getattr(getattr(choice, "delta", None), "content", None)
            if delta:
                self.parts.append(delta)
                if self.on_delta is not None:
                    self.on_delta(delta)
            if getattr(choice, "finish_reason", None):
                self.finish = str(choice.finish_reason)

    def reply(self) -> Reply:
        text = "".join(self.parts)
        if self.finish is None:
            raise cut_stream(self.provider, text, self.events)
        return Reply(text, self.finish, *_tokens(self.usage), model=self.model)


def reply_from_completion(provider: str, response: Any) -> Reply:
    """A :class:`Reply` from a non-streamed chat completion (OpenAI SDK or LiteLLM object)."""
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list):
        shown = repr(response)[:120]
        raise TransportError(f"{provider} reply is not a chat completion: {shown}", transient=False)
    if not choices:
        return Reply("", "no choices", *_tokens(getattr(response, "usage", None)))
    choice = choices[0]
    message = getattr(choice, "message", None)
    content = getattr(message, "content", None)
    text = content if isinstance(content, str) else ""
    finish = str(getattr(choice, "finish_reason", None) or "stop")
    return Reply(text, finish, *_tokens(getattr(response, "usage", None)), model=str(getattr(response, "model", "")))


def _tokens(usage: Any) -> tuple[int, int]:
    if usage is None:
        return 0, 0
    return int(getattr(usage, "prompt_tokens", 0) or 0), int(getattr(usage, "completion_tokens", 0) or 0)


def messages(chat: Chat) -> list[dict[str, str]]:
    return [{"role": "system", "content": chat.system}, {"role": "user", "content": chat.user}]


class OpenAITransport(SDKTransport):
    """Chat completions through the ``openai`` SDK.

    ``max_tokens_field`` is ``"max_completion_tokens"`` for OpenAI's own API (its newer models
    refuse ``max_tokens``) and ``"max_tokens"`` for compatible servers, which mostly know only that.
    """

    def __init__(
        self,
        model: str,
        *,
        provider: str = "openai",
        api_key: str,
        base_url: str | None = None,
        max_tokens_field: str = "max_tokens",
        client_options: Mapping[str, Any] | None = None,
    ) -> None:
        require_sdk("openai", "openai")
        self.provider = provider
        self.model = model
        self.api_key = api_key
        self.base_url = base_url
        self.max_tokens_field = max_tokens_field
        self.client_options = dict(client_options or {})
        self.clients = SDKClients("openai", "OpenAI", "AsyncOpenAI",
                                  {"api_key": api_key, "base_url": base_url, **self.client_options})

    def _arguments(self, chat: Chat, timeout: float, stream: bool) -> dict[str, Any]:
        params = dict(chat.params)
        if "max_tokens" in params and self.max_tokens_field != "max_tokens":
            params[self.max_tokens_field] = params.pop("max_tokens")
        arguments: dict[str, Any] = {"model": self.model, "messages": messages(chat), "timeout": timeout, **params}
        if stream:
            arguments.update(stream=True, stream_options={"include_usage": True})
        return arguments

    def _create(self, client: Any) -> Any:
        return client.chat.completions.create

    def _whole(self, response: Any) -> Reply:
        return reply_from_completion(self.provider, response)

    def _gatherer(self, on_delta: OnDelta, clock: StreamClock) -> Gatherer:
        return Chunks(self.provider, on_delta, clock)

"""Anthropic messages API through the ``anthropic`` SDK (imported on first use, its retries off)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from ._sdk import Gatherer, SDKClients, SDKTransport
from ._transport import Chat, OnDelta, Reply, StreamClock, TransportError, cut_stream, require_sdk

log = logging.getLogger("regrow")

DEFAULT_MAX_TOKENS = 4096  # the messages API requires max_tokens
_NOT_ACCEPTED = frozenset({"seed", "frequency_penalty", "presence_penalty"})  # the messages API refuses these


class _Events:
    """Accumulates the SSE events of a streamed message into a :class:`Reply`."""

    def __init__(self, on_delta: OnDelta | None, clock: StreamClock) -> None:
        self.on_delta = on_delta
        self.clock = clock
        self.parts: list[str] = []
        self.finish = ""
        self.stopped = False
        self.input_tokens = 0
        self.output_tokens = 0
        self.model = ""
        self.events = 0

    def feed(self, event: Any) -> None:
        self.clock.check()
        self.events += 1
        kind = getattr(event, "type", "")
        if kind == "message_start":
            message = event.message
            self.model = str(getattr(message, "model", "") or "")
            usage = getattr(message, "usage", None)
            self.input_tokens = int(getattr(usage, "input_tokens", 0) or 0)
        elif kind == "content_block_delta":
            text = getattr(event.delta, "text", None)
            if text:
                self.parts.append(text)
                if self.on_delta is not None:
                    self.on_delta(text)
        elif kind == "message_delta":
            self.finish = str(getattr(event.delta, "stop_reason", "") or self.finish)
            self.output_tokens = int(getattr(getattr(event, "usage", None), "output_tokens", 0) or 0)
        elif kind == "message_stop":
            self.stopped = True

    def reply(self) -> Reply:
        text = "".join(self.parts)
        if not self.stopped:
            raise cut_stream("anthropic", text, self.events)
        return Reply(text, self.finish or "end_turn", self.input_tokens, self.output_tokens, self.model)


def _reply(response: Any) -> Reply:
    content = getattr(response, "content", None)
    if not isinstance(content, list):
        raise TransportError(f"anthropic reply is not a message: {repr(response)[:120]}", transient=False)
    text = "".join(getattr(block, "text", "") or "" for block in content if getattr(block, "type", "") == "text")
    usage = getattr(response, "usage", None)
    return Reply(text, str(getattr(response, "stop_reason", "") or "end_turn"),
                 int(getattr(usage, "input_tokens", 0) or 0), int(getattr(usage, "output_tokens", 0) or 0),
                 str(getattr(response, "model", "") or ""))


class AnthropicTransport(SDKTransport):
    """Messages through the ``anthropic`` SDK; ``seed`` and other parameters it does not take are dropped."""

    provider = "anthropic"

    def __init__(self, model: str, *, api_key: str, base_url: str | None = None,
                 client_options: Mapping[str, Any] | None = None) -> None:
        require_sdk("anthropic", "anthropic")
        self.model = model
        self.api_key = api_key
        self.base_url = base_url
        self.client_options = dict(client_options or {})
        self.clients = SDKClients("anthropic", "Anthropic", "AsyncAnthropic",
                                  {"api_key": api_key, "base_url": base_url, **self.client_options})

    def _arguments(self, chat: Chat, timeout: float, stream: bool) -> dict[str, Any]:
        params = {k: v for k, v in chat.params.items() if k not in _NOT_ACCEPTED}
        dropped = sorted(set(chat.params) & _NOT_ACCEPTED)
        if dropped:
            log.debug("anthropic does not take %s; not sent", ", ".join(dropped))
        params.setdefault("max_tokens", DEFAULT_MAX_TOKENS)
        return {"model": self.model, "system": chat.system, "messages": [{"role": "user", "content": chat.user}],
                "timeout": timeout, "stream": stream, **params}

    def _create(self, client: Any) -> Any:
        return client.messages.create

    def _whole(self, response: Any) -> Reply:
        return _reply(response)

    def _gatherer(self, on_delta: OnDelta, clock: StreamClock) -> Gatherer:
        return _Events(on_delta, clock)

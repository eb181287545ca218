"""The long tail of providers (Bedrock, Vertex, Cohere, …) through LiteLLM, imported on first use.

LiteLLM answers in OpenAI's shapes, so the reply and stream handling are the OpenAI transport's.
Keys come from the environment variables LiteLLM documents for each provider, or ``api_key``.
Importing LiteLLM may fetch its model price list from the network; set
``LITELLM_LOCAL_MODEL_COST_MAP=True`` to keep it offline.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._openai import Chunks, messages, reply_from_completion
from ._retry import classify
from ._transport import Chat, OnDelta, Reply, StreamClock, require_sdk, sdk_timeout


class LiteLLMTransport:
    """``litellm.completion`` / ``litellm.acompletion`` with LiteLLM's own retries off."""

    provider = "litellm"

    def __init__(self, model: str, *, api_key: str | None = None, base_url: str | None = None,
                 client_options: Mapping[str, Any] | None = None) -> None:
        require_sdk("litellm", "litellm")
        self.model = model
        self.api_key = api_key
        self.base_url = base_url
        self.client_options = dict(client_options or {})

    def _arguments(self, chat: Chat, timeout: float, stream: bool) -> dict[str, Any]:
        arguments: dict[str, Any] = {"model": self.model, "messages": messages(chat), "timeout": timeout,
                                     "num_retries": 0, **self.client_options, **chat.params}
        if self.api_key:
            arguments["api_key"] = self.api_key
        if self.base_url:
            arguments["api_base"] = self.base_url
        if stream:
            arguments.update(stream=True, stream_options={"include_usage": True})
        return arguments

    def complete(self, chat: Chat, *, timeout: float, on_delta: OnDelta | None = None,
                       idle: float | None = None) -> Reply:
        try:
            import litellm

            if on_delta is None:
                return reply_from_completion(self.provider, litellm.completion(**self._arguments(chat, timeout, False)))
            chunks = Chunks(self.provider, on_delta, StreamClock(self.provider, timeout))
            for chunk in litellm.completion(**self._arguments(chat, sdk_timeout(timeout, on_delta, idle), True)):
                chunks.feed(chunk)
            return chunks.reply()
        except Exception as exc:
            raise classify(exc, self.provider) from exc

    async def acomplete(self, chat: Chat, *, timeout: float, on_delta: OnDelta | None = None,
                              idle: float | None = None) -> Reply:
        try:
            import litellm

            if on_delta is None:
                response = await litellm.acompletion(**self._arguments(chat, timeout, False))
                return reply_from_completion(self.provider, response)
            chunks = Chunks(self.provider, on_delta, StreamClock(self.provider, timeout))
            arguments = self._arguments(chat, sdk_timeout(timeout, on_delta, idle), True)
            async for chunk in await litellm.acompletion(**arguments):
                chunks.feed(chunk)
            return chunks.reply()
        except Exception as exc:
            raise classify(exc, self.provider) from exc

"""Gemini ``generateContent`` / ``streamGenerateContent`` through ``google-genai`` (imported on first use).

The SDK's own retries are off (one attempt) so that regrow's retry policy and deadline decide.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ._retry import classify
from ._transport import (
    Chat,
    OnDelta,
    Reply,
    StreamClock,
    TransportError,
    cut_stream,
    require_sdk,
    sdk_timeout,
    within_idle,
)

_RENAMED = {"max_tokens": "max_output_tokens"}


class _Parts:
    """Accumulates response chunks (or the one response) into a :class:`Reply`."""

    def __init__(self, on_delta: OnDelta | None, clock: StreamClock | None) -> None:
        self.on_delta = on_delta
        self.clock = clock
        self.parts: list[str] = []
        self.finish = ""
        self.input_tokens = 0
        self.output_tokens = 0
        self.model = ""
        self.events = 0

    def feed(self, response: Any) -> None:
        if self.clock is not None:
            self.clock.check()
        self.events += 1
        candidates = getattr(response, "candidates", None)
        if candidates is None and not hasattr(response, "usage_metadata"):
            raise TransportError(f"gemini reply is not a GenerateContentResponse: {repr(response)[:120]}",
                                 transient=False)
        for candidate in (candidates or [])[:1]:
            content = getattr(candidate, "content", None)
            for part in getattr(content, "parts", None) or ():
                text = getattr(part, "text", None)
                if text and not getattr(part, "thought", False):
                    self.parts.append(text)
                    if self.on_delta is not None:
                        self.on_delta(text)
            reason = getattr(candidate, "finish_reason", None)
            if reason is not None:
                self.finish = str(getattr(reason, "name", reason))
        usage = getattr(response, "usage_metadata", None)
        if usage is not None:
            self.input_tokens = int(getattr(usage, "prompt_token_count", 0) or 0) or self.input_tokens
            out = int(getattr(usage, "candidates_token_count", 0) or 0) + int(
                getattr(usage, "thoughts_token_count", 0) or 0)
            self.output_tokens = out or self.output_tokens
        self.model = str(getattr(response, "model_version", "") or self.model)

    def reply(self, streamed: bool) -> Reply:
        text = "".join(self.parts)
        if streamed and not self.finish:
            raise cut_stream("gemini", text, self.events)
        return Reply(text, self.finish or "STOP", self.input_tokens, self.output_tokens, self.model)


class GeminiTransport:
    """Gemini through ``google-genai``; ``max_tokens`` is sent as ``max_output_tokens``."""

    provider = "gemini"

    def __init__(self, model: str, *, api_key: str, base_url: str | None = None, api_version: str | None = None,
                 client_options: Mapping[str, Any] | None = None) -> None:
        require_sdk("google.genai", "gemini")
        self.model = model
        self.api_key = api_key
        self.base_url = base_url
        self.api_version = api_version
        self.client_options = dict(client_options or {})

    def _new_client(self) -> Any:
        from google import genai
        from google.genai import types

        options: dict[str, Any] = {"base_url": self.base_url, "api_version": self.api_version}
        retry_options = getattr(types, "HttpRetryOptions", None)  # older SDKs have none (and do not retry)
        if retry_options is not None:
            options["retry_options"] = retry_options(attempts=1)
        return genai.Client(api_key=self.api_key, http_options=types.HttpOptions(**options), **self.client_options)

    def _arguments(self, chat: Chat, timeout: float, total: float | None = None) -> dict[str, Any]:
        """``timeout`` is the SDK's (per read when streaming); ``total`` the whole call's, which the SDK
        would otherwise send the server as its time limit (``X-Server-Timeout``) from ``timeout``."""
        from google.genai import types

        params = {_RENAMED.get(k, k): v for k, v in chat.params.items()}
        headers = {"X-Server-Timeout": str(math.ceil(total))} if total is not None else None
        config = types.GenerateContentConfig(
            system_instruction=chat.system,
            http_options=types.HttpOptions(timeout=max(1, int(timeout * 1000)), headers=headers),
            **params,
        )
        return {"model": self.model, "contents": chat.user, "config": config}

    # A new client per call, closed after it: no sockets outlive the call, and an async client's
    # connections belong to the event loop that opened them.
    def complete(self, chat: Chat, *, timeout: float, on_delta: OnDelta | None = None,
                       idle: float | None = None) -> Reply:
        client = None
        try:
            client = self._new_client()
            models = client.models
            if on_delta is None:
                parts = _Parts(None, None)
                parts.feed(models.generate_content(**self._arguments(chat, timeout)))
                return parts.reply(streamed=False)
            parts = _Parts(on_delta, StreamClock(self.provider, timeout))
            arguments = self._arguments(chat, sdk_timeout(timeout, on_delta, idle), timeout)
            for chunk in models.generate_content_stream(**arguments):
                parts.feed(chunk)
            return parts.reply(streamed=True)
        except Exception as exc:
            raise classify(exc, self.provider) from exc
        finally:
            if client is not None:
                client.close()

    async def acomplete(self, chat: Chat, *, timeout: float, on_delta: OnDelta | None = None,
                              idle: float | None = None) -> Reply:
        client = None
        try:
            client = self._new_client().aio
            models = client.models
            if on_delta is None:
                parts = _Parts(None, None)
                parts.feed(await models.generate_content(**self._arguments(chat, timeout)))
                return parts.reply(streamed=False)
            parts = _Parts(on_delta, StreamClock(self.provider, timeout))
            stream = await models.generate_content_stream(**self._arguments(chat, timeout, timeout))
            async for chunk in within_idle(stream, idle, self.provider):
                parts.feed(chunk)
            return parts.reply(streamed=True)
        except Exception as exc:
            raise classify(exc, self.provider) from exc
        finally:
            if client is not None:
                await client.aclose()

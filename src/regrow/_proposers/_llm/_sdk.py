"""The call flow shared by transports over an SDK whose sync and async clients take the same
options (OpenAI and compatible servers, Anthropic): make a client, call, stream or not, close.

A transport says only what differs: where the create method is, how a whole reply reads, and
what gathers a streamed one.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from ._retry import classify
from ._transport import Chat, OnDelta, Reply, StreamClock, sdk_timeout, with_extra_body


class SDKClients:
    """The clients of an SDK whose sync and async classes take the same options (OpenAI, Anthropic).

    A new client is made for each call and closed after it: no sockets outlive the call, and an
    async client's connections belong to the event loop that opened them. The SDK's own retries
    are off: regrow retries, with its own policy and deadline.
    """

    def __init__(self, module: str, sync_class: str, async_class: str, options: Mapping[str, Any]) -> None:
        self.module, self.sync_class, self.async_class = module, sync_class, async_class
        self.options = {"max_retries": 0, **options}

    def _make(self, name: str) -> Any:
        return getattr(importlib.import_module(self.module), name)(**self.options)

    def sync(self) -> Any:
        return self._make(self.sync_class)

    def async_(self) -> Any:
        return self._make(self.async_class)


class Gatherer(Protocol):
    """Collects a streamed reply: each event or chunk in turn, then the whole reply."""

    def feed(self, part: Any) -> None: ...

    def reply(self) -> Reply: ...


class SDKTransport:
    """``complete``/``acomplete`` for a transport with :class:`SDKClients`. A new client per call,
    closed after it: no sockets outlive the call, and an async client's connections belong to the
    event loop that opened them (each ``asyncio.run`` is a new one)."""

    provider: str
    clients: SDKClients

    def _arguments(self, chat: Chat, timeout: float, stream: bool) -> dict[str, Any]:
        raise NotImplementedError

    def _create(self, client: Any) -> Any:
        """The SDK method that makes one completion."""
        raise NotImplementedError

    def _whole(self, response: Any) -> Reply:
        """A reply that was not streamed."""
        raise NotImplementedError

    def _gatherer(self, on_delta: OnDelta, clock: StreamClock) -> Gatherer:
        raise NotImplementedError

    def _call(self, create: Callable[..., Any], chat: Chat, timeout: float, stream: bool) -> Any:
        return create(**with_extra_body(create, self._arguments(chat, timeout, stream)))

    def complete(self, chat: Chat, *, timeout: float, on_delta: OnDelta | None = None,
                       idle: float | None = None) -> Reply:
        client = None
        try:
            client = self.clients.sync()
            create = self._create(client)
            if on_delta is None:
                return self._whole(self._call(create, chat, timeout, False))
            gatherer = self._gatherer(on_delta, StreamClock(self.provider, timeout))
            stream = self._call(create, chat, sdk_timeout(timeout, on_delta, idle), True)
            try:
                for part in stream:
                    gatherer.feed(part)
            finally:
                stream.close()
            return gatherer.reply()
        except Exception as exc:
            raise classify(exc, self.provider) from exc
        finally:
            if client is not None:
                client.close()

    async def acomplete(self, chat: Chat, *, timeout: float, on_delta: OnDelta | None = None,
                              idle: float | None = None) -> Reply:
        client = None
        try:
            client = self.clients.async_()
            create = self._create(client)
            if on_delta is None:
                return self._whole(await self._call(create, chat, timeout, False))
            gatherer = self._gatherer(on_delta, StreamClock(self.provider, timeout))
            stream = await self._call(create, chat, sdk_timeout(timeout, on_delta, idle), True)
            try:
                async for part in stream:
                    gatherer.feed(part)
            finally:
                await stream.close()
            return gatherer.reply()
        except Exception as exc:
            raise classify(exc, self.provider) from exc
        finally:
            if client is not None:
                await client.close()

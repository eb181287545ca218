"""Loopback HTTP servers that speak the model wire protocols, for tests through the real SDKs.

Each server answers from a script, one entry per request, and records every request. An entry is
either :class:`Text` (rendered as the wire protocol's reply — streamed when the request asked for a
stream) or :class:`Raw` (an exact status, headers and body: errors, invalid JSON, wrong content
types), optionally delayed, or streamed in events of which only the first few are sent before the
connection is dropped.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

S = TypeVar("S", bound="LoopbackServer")


@dataclasses.dataclass
class Text:
    """A model reply of ``text``, in as many stream events as ``pieces`` says."""

    text: str
    finish: str = ""  # the wire's own stop reason; "" picks the normal one
    input_tokens: int = 11
    output_tokens: int = 7
    pieces: int = 3
    cut_after: int | None = None  # streamed: drop the connection after this many events
    delay: float = 0.0  # seconds before the response starts
    event_delay: float = 0.0  # seconds between stream events
    stall_after: int | None = None  # streamed: after this many events send nothing more, connection open


@dataclasses.dataclass
class Raw:
    """An exact HTTP response."""

    status: int = 200
    body: bytes | str | dict[str, Any] = b""
    headers: dict[str, str] = dataclasses.field(default_factory=dict)
    content_type: str = "application/json"
    delay: float = 0.0


Entry = Text | Raw | Callable[["Request"], "Text | Raw"]


@dataclasses.dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: Any

    @property
    def text(self) -> str:
        """Everything the client sent, as one string (for "the prompt contains …" assertions)."""
        return json.dumps(self.body, ensure_ascii=False)

    @property
    def prompt(self) -> str:
        """The strings of the request body (system and user messages, whatever the wire), one per line."""
        found: list[str] = []

        def walk(value: Any) -> None:
            if isinstance(value, str):
                found.append(value)
            elif isinstance(value, dict):
                for item in value.values():
                    walk(item)
            elif isinstance(value, list):
                for item in value:
                    walk(item)

        walk(self.body)
        return "\n".join(found)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], OSError):
            return  # the client hung up mid-reply: expected when a test cuts a stream or times out
        super().handle_error(request, client_address)


class LoopbackServer:
    """A threaded HTTP server on 127.0.0.1 answering from ``script`` and recording ``requests``."""

    wire = ""

    def __init__(self, script: list[Entry] | None = None) -> None:
        self.script: list[Entry] = list(script or [])
        self.requests: list[Request] = []
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._connections: list[socket.socket] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                with server._lock:
                    server._connections.append(self.connection)

            def do_POST(self) -> None:
                server._handle(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = _HTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """What the SDK's ``base_url`` is set to."""
        return self.root

    def __enter__(self: S) -> S:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()  # wakes handlers that are sleeping to simulate a slow server
        self.httpd.shutdown()
        self.httpd.server_close()
        # Kept-alive connections would go on being served by this server's threads: a client that
        # pools connections (LiteLLM caches its clients) must not reach a finished test's script.
        with self._lock:
            for connection in self._connections:
                with contextlib.suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)

    def add(self, *entries: Entry) -> None:
        with self._lock:
            self.script.extend(entries)

    # -- wire protocol hooks --------------------------------------------------------------------
    def is_stream(self, request: Request) -> bool:
        return bool(isinstance(request.body, dict) and request.body.get("stream"))

    def render(self, request: Request, text: Text) -> dict[str, Any]:
        raise NotImplementedError

    def events(self, request: Request, text: Text) -> Iterator[bytes]:
        raise NotImplementedError

    # -- serving ----------------------------------------------------------------------------------
    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        raw = handler.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        request = Request("POST", handler.path, {k.lower(): v for k, v in handler.headers.items()}, body)
        with self._lock:
            self.requests.append(request)
            entry = self.script.pop(0) if self.script else Raw(500, {"error": {"message": "no scripted reply"}})
        if callable(entry):
            entry = entry(request)
        if entry.delay and self.stopping.wait(entry.delay):
            return
        if isinstance(entry, Raw):
            self._send_raw(handler, entry)
        elif self.is_stream(request):
            self._send_stream(handler, request, entry)
        else:
            self._send_raw(handler, Raw(200, self.render(request, entry)))

    def _send_raw(self, handler: BaseHTTPRequestHandler, raw: Raw) -> None:
        body = raw.body
        data = json.dumps(body).encode() if isinstance(body, dict) else body.encode() if isinstance(body, str) else body
        handler.send_response(raw.status)
        handler.send_header("Content-Type", raw.content_type)
        handler.send_header("Content-Length", str(len(data)))
        for name, value in raw.headers.items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(data)
        handler.wfile.flush()

    def _send_stream(self, handler: BaseHTTPRequestHandler, request: Request, text: Text) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        for sent, event in enumerate(self.events(request, text)):
            if text.cut_after is not None and sent >= text.cut_after:
                # Drop the connection mid-body: no terminating chunk, as when a proxy or network cuts it.
                handler.wfile.flush()
                handler.connection.shutdown(socket.SHUT_RDWR)
                handler.close_connection = True
                return
            if text.stall_after is not None and sent >= text.stall_after:
                handler.wfile.flush()
                self.stopping.wait()  # a server that stopped producing: silent until the test ends
                return
            if text.event_delay and self.stopping.wait(text.event_delay):
                return
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
            handler.wfile.flush()
        handler.wfile.write(b"0\r\n\r\n")
        handler.wfile.flush()


def split(text: str, pieces: int) -> list[str]:
    """``text`` in ``pieces`` nearly equal parts (at least one)."""
    pieces = max(1, min(pieces, len(text) or 1))
    size = -(-len(text) // pieces) if text else 1
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


class OpenAIServer(LoopbackServer):
    """``POST /v1/chat/completions``, JSON or SSE (``data: {...}`` … ``data: [DONE]``)."""

    wire = "openai"

    @property
    def base_url(self) -> str:
        return f"{self.root}/v1"

    def render(self, request: Request, text: Text) -> dict[str, Any]:
        return {
            "id": "chatcmpl-1", "object": "chat.completion", "created": int(time.time()),
            "model": request.body.get("model", "m"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text.text},
                         "finish_reason": text.finish or "stop"}],
            "usage": {"prompt_tokens": text.input_tokens, "completion_tokens": text.output_tokens,
                      "total_tokens": text.input_tokens + text.output_tokens},
        }

    def events(self, request: Request, text: Text) -> Iterator[bytes]:
        base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": int(time.time()),
                "model": request.body.get("model", "m")}
        yield sse({**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                        "finish_reason": None}]})
        for piece in split(text.text, text.pieces):
            yield sse({**base, "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]})
        yield sse({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": text.finish or "stop"}]})
        yield sse({**base, "choices": [], "usage": {"prompt_tokens": text.input_tokens,
                                                     "completion_tokens": text.output_tokens,
                                                     "total_tokens": text.input_tokens + text.output_tokens}})
        yield b"data: [DONE]\n\n"


class AnthropicServer(LoopbackServer):
    """``POST /v1/messages``, JSON or SSE (``message_start`` … ``message_stop``)."""

    wire = "anthropic"

    @property
    def base_url(self) -> str:
        return self.root

    def render(self, request: Request, text: Text) -> dict[str, Any]:
        return {
            "id": "msg_1", "type": "message", "role": "assistant", "model": request.body.get("model", "m"),
            "content": [{"type": "text", "text": text.text}],
            "stop_reason": text.finish or "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": text.input_tokens, "output_tokens": text.output_tokens},
        }

    def events(self, request: Request, text: Text) -> Iterator[bytes]:
        message = {**self.render(request, Text("", text.finish, text.input_tokens, 1)), "content": [],
                   "stop_reason": None}
        yield sse({"type": "message_start", "message": message}, "message_start")
        yield sse({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
                  "content_block_start")
        yield sse({"type": "ping"}, "ping")
        for piece in split(text.text, text.pieces):
            yield sse({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}},
                      "content_block_delta")
        yield sse({"type": "content_block_stop", "index": 0}, "content_block_stop")
        yield sse({"type": "message_delta", "delta": {"stop_reason": text.finish or "end_turn",
                                                      "stop_sequence": None},
                   "usage": {"output_tokens": text.output_tokens}}, "message_delta")
        yield sse({"type": "message_stop"}, "message_stop")


class GeminiServer(LoopbackServer):
    """``POST /v1beta/models/{model}:generateContent`` and ``:streamGenerateContent?alt=sse``."""

    wire = "gemini"

    @property
    def base_url(self) -> str:
        return self.root

    def is_stream(self, request: Request) -> bool:
        return ":streamGenerateContent" in request.path

    def _response(self, text: str, finish: str | None, usage: bool, tokens: tuple[int, int]) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": [{"text": text}]}, "index": 0}
        if finish:
            candidate["finishReason"] = finish
        body: dict[str, Any] = {"candidates": [candidate], "modelVersion": "gemini-test"}
        if usage:
            body["usageMetadata"] = {"promptTokenCount": tokens[0], "candidatesTokenCount": tokens[1],
                                     "totalTokenCount": sum(tokens)}
        return body

    def render(self, request: Request, text: Text) -> dict[str, Any]:
        return self._response(text.text, text.finish or "STOP", True, (text.input_tokens, text.output_tokens))

    def events(self, request: Request, text: Text) -> Iterator[bytes]:
        pieces = split(text.text, text.pieces)
        for i, piece in enumerate(pieces):
            last = i == len(pieces) - 1
            yield sse(self._response(piece, (text.finish or "STOP") if last else None, last,
                                     (text.input_tokens, text.output_tokens)))


def greedy(decide: Callable[[str, str, dict[str, Any]], str]) -> Callable[[Request], Text]:
    """A script entry that decodes greedily: the same prompt always gets the same reply.

    ``decide(system, user, params)`` makes the reply the first time a prompt is seen; ``params`` are
    the sampling parameters sent (temperature, seed, top_p). Works for every wire.
    """
    replies: dict[str, str] = {}

    def reply(request: Request) -> Text:
        asked = chat_of(request)
        digest = hashlib.sha256(json.dumps(asked, sort_keys=True).encode()).hexdigest()
        return Text(replies.setdefault(digest, decide(*asked)))

    return reply


def chat_of(request: Request) -> tuple[str, str, dict[str, Any]]:
    """The system and user prompts and the sampling parameters of an OpenAI, Anthropic or Gemini request."""
    body = request.body
    if "contents" in body:  # Gemini
        config = body.get("generationConfig") or {}
        system = "".join(p.get("text", "") for p in (body.get("systemInstruction") or {}).get("parts", []))
        user = "".join(p.get("text", "") for c in body["contents"] for p in c.get("parts", []))
        return system, user, {k: v for k, v in config.items() if k in ("temperature", "seed", "topP")}
    messages = body["messages"]
    if messages[0]["role"] == "system":  # OpenAI
        system, user = messages[0]["content"], messages[1]["content"]
    else:  # Anthropic
        system, user = body.get("system", ""), messages[0]["content"]
    if isinstance(system, list):
        system = "".join(part.get("text", "") for part in system)
    if isinstance(user, list):
        user = "".join(part.get("text", "") for part in user)
    return system, user, {k: v for k, v in body.items() if k in ("temperature", "seed", "top_p")}


SERVERS: dict[str, type[LoopbackServer]] = {"openai": OpenAIServer, "anthropic": AnthropicServer,
                                            "gemini": GeminiServer}


# -- a proposer's request for a failing call, without a session ------------------------------------------
def failing_request(func: Callable[..., Any], *args: Any, checks: list[Any] | None = None,
                    history: list[Any] | None = None, max_attempts: int = 3, deadline: float = 30.0,
                    events: tuple[Callable[[Any], None], ...] = ()) -> Any:
    """The :class:`regrow.Request` a session would send a proposer after ``func(*args)`` raised."""
    from regrow._evidence._failure import capture_exception
    from regrow.extend import Replay, Request, Target

    target = Target.of(func)
    try:
        target.func(*args)
    except Exception as exc:
        failure = capture_exception(exc, target.func, args, {})
    else:
        raise AssertionError(f"{func.__name__}{args} did not fail")
    checks = checks if checks is not None else [Replay(args, {})]
    return Request(target, failure, history if history is not None else [], checks, 1,
                   time.monotonic() + deadline, 2000, max_attempts, events)

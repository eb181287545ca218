"""A local model behind the OpenAI chat-completions wire format, on loopback, for ``make bench-llm``.

    python benchmarks/llm/serve.py --model .cache/bench-llm/MODEL.gguf --port 8766 --log calls.jsonl

Loads a GGUF file with gpt4all's bundled llama.cpp backend (CPU) and answers:

- ``GET /v1/models`` — the one model, under ``--name``;
- ``POST /v1/chat/completions`` — plain JSON, or server-sent events with ``"stream": true``
  (``stream_options.include_usage`` adds a usage chunk before ``[DONE]``);
- ``POST /bench/mark`` — ``{"label": "..."}``: a line in the log saying which task and system the
  calls that follow belong to (the benchmark driver sends one before each task);
- ``GET /health``.

Decoding is greedy whatever the client asks (temperature 0, top-k 1, no repetition penalty), and
the reply is capped at ``--max-tokens``; the client's own sampling fields are logged, not used.
Messages are rendered with Qwen2.5's ChatML template. One request runs at a time (a lock); others
wait. A prompt prefix shared with the previous request is not evaluated again (see
:meth:`Model.generate`), as llama.cpp's own server and ollama do by default: that saves time,
never changes a token. With ``--threads 0`` (the default) each request uses every core when the
machine is otherwise idle and one thread when other processes keep a core busy (llama.cpp's
threads wait for each other, so two threads on one free core run ~10x slower than one); the
thread count changes speed only, never the tokens (checked: same replies with 1 and 2 threads).

Every request is a JSON line in ``--log``: the rendered prompt's sha256, the messages, the reply,
prompt tokens (and how many came from the kept prefix) and completion tokens as the backend
counted them, the threads used, time to first token and in all.
Only loopback addresses are accepted for ``--host``.
"""

from __future__ import annotations

import argparse
import hashlib
import ipaddress
import json
import os
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

DEFAULT_SYSTEM = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."
_END = object()


def render_chatml(messages: list[dict[str, Any]]) -> str:
    """Qwen2.5's chat template (without tools): a default system turn when the client sent none."""
    parts = []
    if not messages or messages[0].get("role") != "system":
        parts.append(f"<|im_start|>system\n{DEFAULT_SYSTEM}<|im_end|>\n")
    for message in messages:
        parts.append(f"<|im_start|>{message.get('role', 'user')}\n{_content(message.get('content'))}<|im_end|>\n")
    parts.append("<|im_start|>assistant\n")
    return "".join(parts)


def _content(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # [{"type": "text", "text": ...}, ...]
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


class Model:
    """The loaded model; ``generate`` runs one greedy completion at a time."""

    def __init__(self, path: Path, *, n_ctx: int, threads: int, batch: int, segment_chars: int) -> None:
        from gpt4all import GPT4All  # the bench environment's runtime; nothing else imports it

        started = time.monotonic()
        self.gpt = GPT4All(path.name, model_path=str(path.parent), allow_download=False, device="cpu",
                           n_threads=threads or 1, n_ctx=n_ctx, ngl=0)
        self.load_seconds = time.monotonic() - started
        self.n_ctx = n_ctx
        self.batch = batch
        self.segment_chars = segment_chars
        self.threads = threads  # 0: chosen per request from the cores other processes leave free
        self.cached: list[tuple[str, int]] = []  # the previous prompt's segments, each with n_past after it
        self.lock = threading.Lock()

    def generate(self, prompt: str, max_tokens: int, stop: list[str], on_text: Any) -> dict[str, Any]:
        """Greedy decoding of ``prompt``; ``on_text(piece)`` returning False stops it (a gone client).

        The prompt is evaluated in segments cut at line ends (:func:`segments`), always the same way
        for the same text; a segment already in the backend's context from the previous request, with
        everything before it, is kept rather than evaluated again (as llama.cpp's server and ollama
        keep a shared prompt prefix). So the reply depends on the prompt alone, and a repeated or
        extended prompt costs less time, never different tokens.
        """
        llm = self.gpt.model
        parts = segments(prompt, self.segment_chars)
        counts = {"prompt": 0, "completion": 0}
        room = self.n_ctx - max_tokens
        overflow = [False]
        text: list[str] = []
        state: dict[str, Any] = {"first": None, "stopped": "", "gone": False}

        def on_prompt_token(token_id: int) -> bool:
            counts["prompt"] += 1
            if base[0] + counts["prompt"] > room:
                overflow[0] = True
                return False
            return True

        def on_token(token_id: int, piece: str) -> bool:
            if state["first"] is None:
                state["first"] = time.monotonic()
            counts["completion"] += 1
            text.append(piece)
            joined = "".join(text)
            for marker in stop:
                at = joined.find(marker)
                if at >= 0:
                    state["stopped"] = marker
                    kept = joined[:at]
                    already = len(joined) - len(piece)
                    if len(kept) > already and not on_text(kept[already:]):
                        state["gone"] = True
                    text[:] = [kept]
                    return False
            if not on_text(piece):
                state["gone"] = True
                return False
            return True

        def ingest(segment: str, n_predict: int, callback: Any, reset: bool) -> None:
            llm.prompt_model(segment, "%1", callback, n_predict=n_predict, top_k=1, top_p=1.0, min_p=0.0, temp=0.0,
                             n_batch=self.batch, repeat_penalty=1.0, repeat_last_n=0, reset_context=reset,
                             special=True)

        with self.lock:
            started = time.monotonic()
            threads = self.threads or _threads_for_free_cores()
            llm.set_thread_count(threads)
            llm._prompt_callback = on_prompt_token  # counts the prompt's tokens as the backend reads them
            kept = 0  # segments of the previous prompt that this one starts with (never the last: it generates)
            while kept < min(len(self.cached), len(parts) - 1) and self.cached[kept][0] == parts[kept]:
                kept += 1
            base = [self.cached[kept - 1][1] if kept else 0]
            cached_tokens = base[0]
            self.cached = self.cached[:kept]
            if kept:
                llm.context.n_past = base[0]
            try:
                for index in range(kept, len(parts) - 1):
                    ingest(parts[index], 0, lambda token_id, piece: True, reset=index == 0)
                    if overflow[0]:
                        break
                    base[0] += counts["prompt"]
                    counts["prompt"] = 0
                    self.cached.append((parts[index], base[0]))
                if not overflow[0]:
                    ingest(parts[-1], max_tokens, on_token, reset=len(parts) == 1)
            finally:
                ended = time.monotonic()
                if overflow[0]:
                    self.cached = []
        if overflow[0]:
            raise OverflowError(f"the prompt needs more than {room} tokens (context {self.n_ctx}, "
                                f"max_tokens {max_tokens})")
        finish = "stop" if state["stopped"] or counts["completion"] < max_tokens else "length"
        return {"text": "".join(text), "prompt_tokens": base[0] + counts["prompt"],
                "cached_tokens": cached_tokens, "completion_tokens": counts["completion"],
                "finish_reason": finish, "seconds": round(ended - started, 3), "threads": threads,
                "ttft": round((state["first"] or ended) - started, 3), "client_gone": state["gone"]}


def _cpu_times() -> tuple[int, int]:
    with open("/proc/stat", encoding="ascii") as stat:
        fields = [int(value) for value in stat.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return sum(fields[:8]), idle


def _threads_for_free_cores(window: float = 0.25) -> int:
    """All cores when the others' load (sampled while this server is idle) is under half a core, else 1."""
    cores = os.cpu_count() or 1
    try:
        total0, idle0 = _cpu_times()
        time.sleep(window)
        total1, idle1 = _cpu_times()
    except (OSError, ValueError, IndexError):
        return 1
    spent = total1 - total0
    busy = cores * (1 - (idle1 - idle0) / spent) if spent > 0 else 0.0
    return cores if busy < 0.5 else 1


def segments(prompt: str, size: int) -> list[str]:
    """``prompt`` cut after a line end once a piece reaches ``size`` characters (a run of line ends stays whole)."""
    parts: list[str] = []
    start = 0
    while len(prompt) - start > size:
        cut = prompt.find("\n", start + size)
        while cut >= 0 and cut + 1 < len(prompt) and prompt[cut + 1] == "\n":
            cut += 1
        if cut < 0 or cut + 1 >= len(prompt):
            break
        parts.append(prompt[start:cut + 1])
        start = cut + 1
    parts.append(prompt[start:])
    return parts


class Log:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.file = path.open("a", encoding="utf-8")
        self.lock = threading.Lock()
        self.label = ""
        self.seq = 0

    def write(self, record: dict[str, Any]) -> None:
        with self.lock:
            self.seq += 1
            line = {"seq": self.seq, "ts": round(time.time(), 3), "label": self.label, **record}
            self.file.write(json.dumps(line, ensure_ascii=False) + "\n")
            self.file.flush()


class Handler(BaseHTTPRequestHandler):
    server_version = "regrow-bench-llm/1"
    protocol_version = "HTTP/1.1"
    model: Model
    log: Log
    name: str
    cap: int

    def log_message(self, format: str, *args: Any) -> None:  # the JSONL log is the record; keep stderr quiet
        pass

    def _json(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str, kind: str = "invalid_request_error") -> None:
        self._json(status, {"error": {"message": message, "type": kind, "code": status}})

    def do_GET(self) -> None:
        path = self.path.split("?")[0].rstrip("/")
        if path in ("/v1/models", "/models"):
            self._json(200, {"object": "list", "data": [{"id": self.name, "object": "model", "owned_by": "local",
                                                         "created": 0}]})
        elif path == "/health":
            self._json(200, {"status": "ok", "model": self.name, "load_seconds": round(self.model.load_seconds, 3)})
        else:
            self._error(404, f"no route {self.path}")

    def _body(self) -> dict[str, Any] | None:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            self._error(400, "the body is not JSON")
            return None
        if not isinstance(body, dict):
            self._error(400, "the body is not a JSON object")
            return None
        return body

    def do_POST(self) -> None:
        path = self.path.split("?")[0].rstrip("/")
        body = self._body()
        if body is None:
            return
        if path == "/bench/mark":
            self.log.label = str(body.get("label", ""))
            self.log.write({"kind": "mark"})
            self._json(200, {"label": self.log.label})
        elif path in ("/v1/chat/completions", "/chat/completions"):
            self._chat(body)
        else:
            self._error(404, f"no route {self.path}")

    def _chat(self, body: dict[str, Any]) -> None:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages or not all(isinstance(m, dict) for m in messages):
            self._error(400, "messages must be a non-empty list of objects")
            return
        asked = body.get("max_completion_tokens") or body.get("max_tokens")
        max_tokens = min(int(asked), self.cap) if isinstance(asked, int) and asked > 0 else self.cap
        stop = body.get("stop") or []
        stop = [stop] if isinstance(stop, str) else [s for s in stop if isinstance(s, str) and s]
        prompt = render_chatml(messages)
        stream = bool(body.get("stream"))
        usage_chunk = bool((body.get("stream_options") or {}).get("include_usage"))
        ident = f"chatcmpl-{uuid.uuid4().hex[:24]}"
        record: dict[str, Any] = {
            "kind": "chat", "arrived_label": self.log.label, "arrived": round(time.time(), 3), "stream": stream,
            "prompt_sha256": hashlib.sha256(prompt.encode()).hexdigest(),
            "max_tokens": max_tokens, "asked_max_tokens": asked, "user_agent": self.headers.get("User-Agent", ""),
            "client_sampling": {k: body[k] for k in ("temperature", "top_p", "seed", "top_k") if k in body},
            "messages": messages,
        }
        try:
            if stream:
                result = self._stream(ident, prompt, max_tokens, stop, usage_chunk)
            else:
                result = self.model.generate(prompt, max_tokens, stop, lambda piece: True)
                try:
                    self._json(200, self._completion(ident, result))
                except OSError:  # the client went away (its own time limit): the request is logged all the same
                    result["client_gone"] = True
        except OverflowError as exc:
            self.log.write({**record, "error": str(exc)})
            if not stream:
                self._error(400, str(exc))
            return
        self.log.write({**record, "reply": result.pop("text"), **result})

    def _completion(self, ident: str, result: dict[str, Any]) -> dict[str, Any]:
        return {"id": ident, "object": "chat.completion", "created": int(time.time()), "model": self.name,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": result["text"]},
                             "finish_reason": result["finish_reason"]}],
                "usage": _usage(result)}

    def _stream(self, ident: str, prompt: str, max_tokens: int, stop: list[str], usage_chunk: bool) -> dict[str, Any]:
        """Server-sent events, written as the backend produces text (the backend runs on this thread)."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        created = int(time.time())

        def event(data: Any) -> bool:
            try:
                payload = data if isinstance(data, str) else json.dumps(data)
                self.wfile.write(f"data: {payload}\n\n".encode())
                self.wfile.flush()
                return True
            except OSError:
                return False

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {"id": ident, "object": "chat.completion.chunk", "created": created, "model": self.name,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

        event(chunk({"role": "assistant", "content": ""}))
        try:
            result = self.model.generate(prompt, max_tokens, stop, lambda piece: event(chunk({"content": piece})))
        except OverflowError as exc:
            event({"error": {"message": str(exc), "type": "invalid_request_error", "code": 400}})
            raise
        event(chunk({}, result["finish_reason"]))
        if usage_chunk:
            event({"id": ident, "object": "chat.completion.chunk", "created": created, "model": self.name,
                   "choices": [], "usage": _usage(result)})
        event("[DONE]")
        return result


def _usage(result: dict[str, Any]) -> dict[str, int]:
    return {"prompt_tokens": result["prompt_tokens"], "completion_tokens": result["completion_tokens"],
            "total_tokens": result["prompt_tokens"] + result["completion_tokens"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, type=Path, help="the .gguf file")
    parser.add_argument("--name", default="qwen2.5-coder-1.5b-instruct-q4_k_m", help="the model's id on the wire")
    parser.add_argument("--host", default="127.0.0.1", help="a loopback address (127.0.0.1)")
    parser.add_argument("--port", type=int, default=8766)
    parser.add_argument("--log", type=Path, required=True, help="JSONL file, appended to")
    parser.add_argument("--max-tokens", type=int, default=768, help="cap on every reply's tokens (768)")
    parser.add_argument("--n-ctx", type=int, default=8192, help="context window in tokens (8192)")
    parser.add_argument("--threads", type=int, default=0,
                        help="CPU threads; 0 (the default): all cores when the machine is otherwise idle, else 1")
    parser.add_argument("--batch", type=int, default=128, help="prompt tokens evaluated per step (128)")
    parser.add_argument("--segment-chars", type=int, default=600,
                        help="prompt segments (cut at line ends) of about this many characters: the unit a "
                             "shared prompt prefix is kept in (600)")
    args = parser.parse_args(argv)
    if not ipaddress.ip_address(args.host).is_loopback:
        parser.error(f"--host must be a loopback address, not {args.host}")
    if not args.model.is_file():
        parser.error(f"no model file at {args.model}")
    model = Model(args.model, n_ctx=args.n_ctx, threads=args.threads, batch=args.batch,
                  segment_chars=args.segment_chars)
    log = Log(args.log)
    log.write({"kind": "start", "model": args.name, "file": str(args.model), "n_ctx": args.n_ctx,
               "threads": args.threads, "max_tokens": args.max_tokens, "load_seconds": round(model.load_seconds, 3),
               "segment_chars": args.segment_chars,
               "decoding": {"temp": 0.0, "top_k": 1, "repeat_penalty": 1.0}})
    handler = type("BoundHandler", (Handler,), {"model": model, "log": log, "name": args.name, "cap": args.max_tokens})
    server = ThreadingHTTPServer((args.host, args.port), handler)
    server.daemon_threads = True
    print(f"serve: {args.name} on http://{args.host}:{args.port}/v1 (loaded in {model.load_seconds:.2f}s)",
          file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

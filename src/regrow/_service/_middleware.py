"""WSGI and ASGI middleware: a request that fails in your code is repaired, and a safe one re-run once.

The middleware turns ``regrow.watch`` on for the package (in the serving process, at its first request,
so a pre-forking server's workers each watch) and marks each request so that the watch's jobs for the
failures it saw are collected (:data:`regrow._service._watch.COLLECTOR`). After the application answered, for a
request that failed in the user's code the middleware waits up to ``wait`` seconds for the repair, then:

- a fix was installed and the method is safe (GET, HEAD, OPTIONS): the request is run once more and its
  response returned, with ``X-Regrow: repaired-replayed``;
- a fix was installed and the method is not safe (POST, PUT, PATCH, DELETE…): never replayed; the
  failed response goes out with ``X-Regrow: repaired-not-replayed``, and the fix serves the next request;
- otherwise the failed response, with ``X-Regrow: failed``, ``refused``, ``not-installed`` (a blind fix;
  see ``allow_blind``) or ``pending`` (the repair goes on past ``wait``).

The response is buffered until the application is done (a response may be replaced only before its
first byte is sent): a streaming response arrives whole. Requests with no failure are passed through
with no header.
"""

from __future__ import annotations

import asyncio
import io
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .._settings import current
from ._watch import COLLECTOR, Watcher, watch, watching
from ._watch_repair import Job

log = logging.getLogger("regrow")

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
HEADER = "X-Regrow"
MAX_REPLAY_BODY = 1 << 20  # a safe request's body kept for its replay, at most


def verdict(jobs: Sequence[Job], method: str) -> tuple[str, bool]:
    """The header value for a failed request whose repairs ended (or not) and whether to replay it."""
    outcomes = {job.outcome for job in jobs}
    if outcomes == {"installed"}:
        if method.upper() in SAFE_METHODS:
            return "repaired-replayed", True
        return "repaired-not-replayed", False
    for outcome in ("pending", "not-installed", "refused", "failed"):
        if outcome in outcomes:
            return outcome, False
    return "failed", False


async def _await(jobs: Sequence[Job], seconds: float) -> None:
    """:func:`_wait` on the event loop, looking every :data:`_LOOK` seconds: no thread. ``asyncio.to_thread`` took
    one of the loop's default executor (cpus + 4 threads) per failing request: a burst of failures waited up to
    ~5x ``wait`` for a thread, and the app's own uses of that executor (``getaddrinfo``) stalled meanwhile."""
    deadline = time.monotonic() + seconds
    while not all(job.done.is_set() for job in jobs) and time.monotonic() < deadline:
        await asyncio.sleep(min(_LOOK, max(0.0, deadline - time.monotonic())))


_LOOK = 0.02  # seconds between looks at a failing request's repairs


def _wait(jobs: Sequence[Job], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    for job in jobs:
        job.wait(max(0.0, deadline - time.monotonic()))


class _Base:
    def __init__(self, app: Any, packages: Sequence[str], wait: float | None, options: dict[str, Any]) -> None:
        if not packages and not options.get("folders"):
            raise ValueError("the regrow middleware needs the package(s) of your application code")
        seconds = current().wait if wait is None else wait  # None: the configuration's (5.0 by default)
        self.app, self.packages, self.wait, self.options = app, tuple(packages), seconds, options

    def _watcher(self) -> Watcher:
        """The active watch, started in this process on the first request if none is on."""
        current = watching()
        return current if current is not None else watch(*self.packages, **self.options)

    def _log(self, method: str, path: str, jobs: Sequence[Job], value: str) -> None:
        names = ", ".join(sorted({job.name for job in jobs}))
        details = "; ".join(sorted({job.detail for job in jobs if job.detail}))
        log.warning("regrow middleware: %s %s failed in %s: %s%s", method, path, names, value,
                    f" ({details})" if details else "")


class WSGIMiddleware(_Base):
    """``app.wsgi_app = WSGIMiddleware(app.wsgi_app, "mypackage", wait=5.0)``; the rest of the keywords go
    to :func:`regrow.watch` (``tests=``, ``verify=``, ``allow_blind=``…)."""

    def __init__(self, app: Callable[..., Iterable[bytes]], *packages: str, wait: float | None = None,
                 **options: Any) -> None:
        super().__init__(app, packages, wait, options)

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        self._watcher()
        method = str(environ.get("REQUEST_METHOD", "GET")).upper()
        body = _keep_body(environ) if method in SAFE_METHODS else None
        first = self._run(environ)
        status, headers, chunks, jobs, error = first
        if jobs:
            _wait(jobs, self.wait)
            value, replay = verdict(jobs, method)
            if replay and body is None:  # too large to keep: not run again, and the header says so
                value = "repaired-not-replayed"
            elif replay and body is not None:
                environ["wsgi.input"] = io.BytesIO(body)
                again = self._run(environ)
                if not again[3] and again[4] is None:
                    status, headers, chunks, error = again[0], again[1], again[2], None
                else:
                    value = "failed"
            self._log(method, str(environ.get("PATH_INFO", "")), jobs, value)
            headers = [*headers, (HEADER, value)]
        if error is not None:
            raise error  # the application raised: the server answers as it would without regrow
        start_response(status, headers)
        return chunks

    def _run(self, environ: dict[str, Any]) -> tuple[str, list[tuple[str, str]], list[bytes], list[Job],
                                                      Exception | None]:
        """Run the application once, its response buffered, collecting the watch's jobs for its failures."""
        jobs: list[Job] = []
        token = COLLECTOR.set(jobs)
        started: list[Any] = ["500 Internal Server Error", []]
        chunks: list[bytes] = []

        def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Callable[..., Any]:
            started[0], started[1] = status, list(headers)
            return chunks.append

        try:
            result = self.app(environ, start_response)
            try:
                chunks.extend(result)
            finally:
                close = getattr(result, "close", None)
                if callable(close):
                    close()
        except Exception as exc:
            return started[0], started[1], chunks, jobs, exc
        finally:
            COLLECTOR.reset(token)
        return started[0], started[1], chunks, jobs, None


def _keep_body(environ: dict[str, Any]) -> bytes | None:
    """A safe request's body, read so that it can be given again (``None``: too large to keep)."""
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    if length > MAX_REPLAY_BODY:
        return None
    data = environ["wsgi.input"].read(length) if length > 0 else b""
    environ["wsgi.input"] = io.BytesIO(data)
    return bytes(data)


class ASGIMiddleware(_Base):
    """``app = ASGIMiddleware(app, "mypackage", wait=5.0)``; the rest of the keywords go to :func:`regrow.watch`.

    The wait for a repair is spent on the event loop without blocking it, and without a thread."""

    def __init__(self, app: Callable[..., Any], *packages: str, wait: float | None = None, **options: Any) -> None:
        super().__init__(app, packages, wait, options)

    async def __call__(self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        self._watcher()
        method = str(scope.get("method", "GET")).upper()
        received: list[dict[str, Any]] = []
        size = [0]  # the body's bytes received: above MAX_REPLAY_BODY the request is not kept for a replay

        async def recording() -> Any:
            message = await receive()
            size[0] += len(message.get("body", b"") or b"")
            if size[0] <= MAX_REPLAY_BODY:
                received.append(message)
            return message

        messages, jobs, error = await self._run(scope, recording)
        if jobs:
            await _await(jobs, self.wait)
            value, replay = verdict(jobs, method)
            if replay and size[0] > MAX_REPLAY_BODY:
                value = "repaired-not-replayed"
            elif replay:
                again = await self._run(scope, _replaying(list(received), receive))
                if not again[1] and again[2] is None:
                    messages, error = again[0], None
                else:
                    value = "failed"
            self._log(method, str(scope.get("path", "")), jobs, value)
            messages = [_with_header(m, value) for m in messages]
        for message in messages:
            await send(message)
        if error is not None:
            raise error

    async def _run(self, scope: dict[str, Any], receive: Callable[..., Any]
                   ) -> tuple[list[dict[str, Any]], list[Job], Exception | None]:
        jobs: list[Job] = []
        messages: list[dict[str, Any]] = []

        async def buffered(message: dict[str, Any]) -> None:
            messages.append(message)

        token = COLLECTOR.set(jobs)
        try:
            await self.app(scope, receive, buffered)
        except Exception as exc:
            return messages, jobs, exc
        finally:
            COLLECTOR.reset(token)
        return messages, jobs, None


def _replaying(received: list[dict[str, Any]], receive: Callable[..., Any]) -> Callable[..., Any]:
    """A ``receive`` that gives the first run's messages again, then the server's."""
    async def replay() -> Any:
        if received:
            return received.pop(0)
        return await receive()
    return replay


def _with_header(message: dict[str, Any], value: str) -> dict[str, Any]:
    if message.get("type") != "http.response.start":
        return message
    headers = [*message.get("headers", []), (HEADER.lower().encode(), value.encode())]
    return {**message, "headers": headers}

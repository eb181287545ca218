"""The WSGI and ASGI middleware under real servers on loopback: Flask under gunicorn, Starlette under uvicorn.

The application counts its handler's invocations server-side (a line appended to a file per call), so
the tests see that a GET failing on a bug is replayed once after its fix, and a POST never.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

SRC = str(Path(__file__).resolve().parents[2] / "src")

LOGIC = '''
def per_item(total, count):
    return total / count


def share(total, count):
    return total / count
'''

FLASK_APP = '''
import os
from flask import Flask, request
from regrow._service._middleware import WSGIMiddleware
from webshop import logic

app = Flask(__name__)
COUNTS = os.environ["COUNTS"]


def count(name):
    with open(os.path.join(COUNTS, name), "a") as f:
        f.write("x")


@app.get("/per-item")
def per_item_view():
    count("get")
    return str(logic.per_item(int(request.args["total"]), int(request.args["count"])))


@app.post("/share")
def share_view():
    count("post")
    return str(logic.share(int(request.form["total"]), int(request.form["count"])))


app.wsgi_app = WSGIMiddleware(app.wsgi_app, "webshop", wait=90.0, allow_blind=True)
'''

STARLETTE_APP = '''
import os
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from regrow._service._middleware import ASGIMiddleware
from webshop import logic

COUNTS = os.environ["COUNTS"]


def count(name):
    with open(os.path.join(COUNTS, name), "a") as f:
        f.write("x")


async def per_item_view(request):
    count("get")
    await request.body()  # read as an app that takes a body would (a GET's is kept for its replay, up to 1 MiB)
    q = request.query_params
    return PlainTextResponse(str(logic.per_item(int(q["total"]), int(q["count"]))))


async def share_view(request):
    count("post")
    form = await request.form()
    return PlainTextResponse(str(logic.share(int(form["total"]), int(form["count"]))))


app = ASGIMiddleware(Starlette(routes=[Route("/per-item", per_item_view), Route("/share", share_view,
                     methods=["POST"])]), "webshop", wait=90.0, allow_blind=True)
'''


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "webshop").mkdir()
    (tmp_path / "webshop" / "__init__.py").write_text("")
    (tmp_path / "webshop" / "logic.py").write_text(LOGIC)
    (tmp_path / "flask_app.py").write_text(FLASK_APP)
    (tmp_path / "starlette_app.py").write_text(STARLETTE_APP)
    (tmp_path / "counts").mkdir()
    return tmp_path


def _serve(project: Path, command: list[str], port: int) -> Iterator[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, str(project)]), "COUNTS": str(project / "counts")}
    log = (project / "server.log").open("w")
    server = subprocess.Popen(command, cwd=project, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(url + "/", timeout=5)
                break
            except httpx.TransportError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError((project / "server.log").read_text()) from None
                time.sleep(0.2)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


@pytest.fixture
def gunicorn(project: Path) -> Iterator[str]:
    port = _free_port()
    yield from _serve(project, [sys.executable, "-m", "gunicorn", "-w", "1", "--timeout", "180",
                                "-b", f"127.0.0.1:{port}", "flask_app:app"], port)


@pytest.fixture
def uvicorn(project: Path) -> Iterator[str]:
    port = _free_port()
    yield from _serve(project, [sys.executable, "-m", "uvicorn", "--host", "127.0.0.1", "--port", str(port),
                                "starlette_app:app"], port)


def _invocations(project: Path, name: str) -> int:
    path = project / "counts" / name
    return len(path.read_text()) if path.exists() else 0


def _replays_a_get_and_never_a_post(url: str, project: Path) -> None:
    # A connection per request: after an application error the server may close a kept-alive connection (with
    # or without regrow: uvicorn does when the app raises after its 500), and a reused one would be reset.
    with httpx.Client(base_url=url, timeout=120, limits=httpx.Limits(max_keepalive_connections=0)) as client:
        got = client.get("/per-item", params={"total": 10, "count": 0})
        assert (got.status_code, got.text) == (200, "0"), project.joinpath("server.log").read_text()
        assert got.headers["x-regrow"] == "repaired-replayed"
        assert _invocations(project, "get") == 2  # the failing run, and its one replay

        posted = client.post("/share", data={"total": 10, "count": 0})
        assert posted.status_code == 500
        assert posted.headers["x-regrow"] == "repaired-not-replayed"
        assert _invocations(project, "post") == 1  # never replayed

        again = client.post("/share", data={"total": 10, "count": 0})  # the fix serves the next request
        assert (again.status_code, again.text) == (200, "0")
        assert "x-regrow" not in again.headers
        assert _invocations(project, "post") == 2


def test_wsgi_middleware_under_gunicorn(gunicorn: str, project: Path) -> None:
    _replays_a_get_and_never_a_post(gunicorn, project)


def test_asgi_middleware_under_uvicorn(uvicorn: str, project: Path) -> None:
    _replays_a_get_and_never_a_post(uvicorn, project)


@pytest.mark.parametrize("server", ["gunicorn", "uvicorn"])
def test_a_get_too_large_to_keep_is_not_replayed_and_says_so(server: str, project: Path,
                                                              request: pytest.FixtureRequest) -> None:
    """A safe request's body is kept for its replay up to 1 MiB. Above that it is not run again, and the header must
    not say it was (WSGI said ``repaired-replayed`` over the failed 500; ASGI kept the whole body and replayed)."""
    url = request.getfixturevalue(server)
    big = b"x" * (2 << 20)
    with httpx.Client(base_url=url, timeout=120, limits=httpx.Limits(max_keepalive_connections=0)) as client:
        got = client.request("GET", "/per-item", params={"total": 10, "count": 0}, content=big)
        assert got.status_code == 500, project.joinpath("server.log").read_text()
        assert got.headers["x-regrow"] == "repaired-not-replayed"
        assert _invocations(project, "get") == 1  # run once, never again
        again = client.get("/per-item", params={"total": 10, "count": 0})  # the fix serves the next request
        assert (again.status_code, again.text) == (200, "0")


def test_views_inside_the_watched_package_are_repaired(project: Path) -> None:
    """The docs' own layout: the app and its views in the package the middleware watches. On 3.10/3.11 the failing
    function's wrapper left the report to its caller, a view, which no wrapper holds (Flask took it before the
    first request started the watch): every request was a 500 and nothing was repaired."""
    (project / "webshop" / "web.py").write_text(FLASK_APP)
    port = _free_port()
    for url in _serve(project, [sys.executable, "-m", "gunicorn", "-w", "1", "--timeout", "180",
                                "-b", f"127.0.0.1:{port}", "webshop.web:app"], port):
        with httpx.Client(base_url=url, timeout=120, limits=httpx.Limits(max_keepalive_connections=0)) as client:
            got = client.get("/per-item", params={"total": 10, "count": 0})
            assert (got.status_code, got.headers.get("x-regrow")) == (200, "repaired-replayed"), \
                project.joinpath("server.log").read_text()
            assert got.text == "0"


def test_an_asgi_wait_for_a_repair_takes_no_thread_from_the_loop_s_executor(project: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The wait ran in ``asyncio.to_thread``: with the loop's default executor busy (here its one thread, blocked), a
    failing request waited for a thread, and a burst of them took the executor from the app's own uses of it."""
    import asyncio
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from regrow._service._middleware import ASGIMiddleware
    from regrow._service._watch import unwatch

    monkeypatch.syspath_prepend(str(project))

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        from webshop import logic

        body = str(logic.per_item(10, 0)).encode()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": body})

    middleware = ASGIMiddleware(app, "webshop", wait=0.5, allow_blind=True)
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def request() -> None:
        loop = asyncio.get_running_loop()
        executor = ThreadPoolExecutor(1)
        loop.set_default_executor(executor)
        release = threading.Event()
        blocked = loop.run_in_executor(None, release.wait, 60)  # the app's executor, busy
        try:
            await asyncio.wait_for(middleware({"type": "http", "method": "GET", "path": "/", "headers": []},
                                              receive, send), 30)
        except ZeroDivisionError:
            pass  # the repair did not end within wait: the app's own error, as documented
        finally:
            release.set()
            await blocked

    try:
        asyncio.run(request())  # before: asyncio.TimeoutError after 30 s, the wait queued behind the blocked thread
    finally:
        unwatch()
        for name in [name for name in sys.modules if name == "webshop" or name.startswith("webshop.")]:
            del sys.modules[name]

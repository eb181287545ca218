"""A real PostgreSQL server for the tests: initdb in a temporary folder, on a free loopback port.

Started once per test session (``pg_server``), torn down after; each test gets a fresh database
(``pg_url``). The tests run as root and PostgreSQL refuses to, so the server runs as ``nobody``.
Without the server binaries the PostgreSQL tests are skipped with one line saying so, except in CI
(``CI`` set), where they fail with that line. ``Server.pause()``/``resume()`` stop the server and start
it again on the same data and port (the server-stopped-mid-run tests).
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_databases = itertools.count(1)


def _bindir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"), key=lambda p: int(p.split("/")[4]))
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("postgres")
    return Path(on_path).parent if on_path else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _as_user() -> dict[str, Any]:
    """How to run the server: as ``nobody`` when we are root (PostgreSQL will not run as root)."""
    if os.geteuid() != 0:
        return {}
    user = pwd.getpwnam("nobody")
    return {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}


class Server:
    def __init__(self, bindir: Path) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="regrow-pg-"))
        self.port = _free_port()
        user = _as_user()
        os.chown(self.folder, user.get("user", os.getuid()), user.get("group", os.getgid()))
        data = self.folder / "data"
        env = {**os.environ, "LC_ALL": "C", "HOME": str(self.folder)}
        subprocess.run([str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8",
                        "--no-sync"], check=True, capture_output=True, **user, env=env, timeout=300)
        self.log = open(self.folder / "server.log", "wb")  # noqa: SIM115 - closed in stop()
        self._command = [str(bindir / "postgres"), "-D", str(data), "-p", str(self.port), "-k", str(self.folder),
                         "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off",
                         "-c", "full_page_writes=off", "-c", "max_connections=200"]
        self._user, self._env = user, env
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}"
        self.resume()

    def pause(self) -> None:
        """Stop the server, keeping its data (a fast shutdown: every connection is cut); :meth:`resume` restarts it."""
        self.process.send_signal(signal.SIGINT)
        self.process.wait(timeout=120)

    def resume(self) -> None:
        """Start the server (again) on the same port and data, and wait until it takes connections."""
        self.process = subprocess.Popen(self._command, stdout=self.log, stderr=subprocess.STDOUT, **self._user,
                                        env=self._env)
        self._wait()

    def _wait(self) -> None:
        import psycopg

        deadline = time.monotonic() + 120
        while True:
            try:
                psycopg.connect(f"{self.url}/postgres", connect_timeout=5).close()
                return
            except psycopg.OperationalError as exc:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"PostgreSQL did not start: {(self.folder / 'server.log').read_text()}") from exc
                time.sleep(0.1)

    def database(self) -> str:
        """A new empty database; its URL."""
        import psycopg

        name = f"regrow_test_{next(_databases)}"
        with psycopg.connect(f"{self.url}/postgres", autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return f"{self.url}/{name}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGQUIT)  # an immediate shutdown: the data is thrown away
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
        shutil.rmtree(self.folder, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Server]:
    bindir = _bindir()
    if bindir is None and os.environ.get("CI"):  # never silently skipped in CI: a missing binary fails, in one line
        pytest.fail("PostgreSQL server binaries (initdb, postgres) not found: CI must install them", pytrace=False)
    if bindir is None:
        pytest.skip("PostgreSQL server binaries (initdb, postgres) not found: the PostgreSQL store tests need them")
    server = Server(bindir)
    yield server
    server.stop()


@pytest.fixture
def pg_url(pg_server: Server) -> str:
    """The URL of a fresh database on the test server."""
    return pg_server.database()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """Where a store lives, once for each backend: the same tests run against both. After the test, the fleet
    listeners its decorated functions started are stopped (each holds its store's connections open, and the
    threads would otherwise live on beside every later test of the session), and the stores they opened closed."""
    from regrow._heal import _fleet_listen
    from regrow._stores import _shared

    yield str(tmp_path / "regrow.db") if request.param == "sqlite" else str(request.getfixturevalue("pg_url"))
    _fleet_listen.stop(timeout=10)
    _shared.close_all()  # the stores its decorated functions opened: each test has a database of its own


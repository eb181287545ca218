"""The fleet's live path: processes that meet one failure at once run one repair session between them
(real subprocesses, a real store on both backends, a model at a scripted loopback server)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from llm_servers import OpenAIServer, Text
from released import release_when_ready

from regrow import Store
from regrow._stores._base import HOST

SRC = str(Path(__file__).parents[2] / "src")
RIGHT = ('Strip everything but digits and the point:\n\n```python\nimport re\n\n'
         'def parse_price(text: str) -> float:\n    return float(re.sub(r"[^0-9.]", "", text))\n```\n')

TARGET = '''
def parse_price(text: str) -> float:
    return float(text.replace("$", ""))


def rupees(fn) -> None:
    assert fn("₹1,299") == 1299.0
    assert fn("$12.50") == 12.5
'''

PROCESS = '''
import sys, time
from pathlib import Path

store, base_url, folder, name = sys.argv[1:5]
sys.path.insert(0, folder)
import regrow
from regrow._proposers._llm import RetryPolicy, proposer_for
import shop

model = proposer_for("openai:gpt-test", api_key="test-key", base_url=base_url,
                     retry=RetryPolicy(max_retries=0, base_delay=0.01, max_delay=0.05))
healed = regrow.heal(tests=[shop.rupees], proposers=[model], store=store)(shop.parse_price)
(Path(folder) / f"ready-{name}").touch()
while not (Path(folder) / "go").exists():
    time.sleep(0.01)
try:
    value = healed("₹1,299")
except Exception as exc:
    print("raised", type(exc).__name__, flush=True)
else:
    print("healed", value, shop.parse_price("₹7"), flush=True)
'''


def _fleet(folder: Path, store: str, base_url: str, count: int) -> list[subprocess.Popen[str]]:
    """``count`` processes, each with the healed function, released at once when all are ready."""
    (folder / "shop.py").write_text(textwrap.dedent(TARGET))
    script = folder / "process.py"
    script.write_text(textwrap.dedent(PROCESS))
    env = {**os.environ, "PYTHONPATH": SRC}
    processes = [subprocess.Popen([sys.executable, str(script), store, base_url, str(folder), str(n)], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for n in range(count)]
    release_when_ready(folder, processes)
    return processes


def test_eight_processes_meeting_one_failure_run_one_session_and_all_run_the_fix(store_url, tmp_path):
    with OpenAIServer([Text(RIGHT)]) as server:
        processes = _fleet(tmp_path, store_url, server.base_url, 8)
        outputs = [p.communicate(timeout=600) for p in processes]
        requests = len(server.requests)
    # One session's worth of model requests for the whole fleet: one reply, and no process asked again.
    assert requests == 1, outputs
    # Every process runs the fix: the failing call returned its value, and the module's own name runs it.
    assert [out.strip() for out, _ in outputs] == ["healed 1299.0 7.0"] * 8, outputs
    store = Store(store_url)
    try:
        sessions = store.sessions()
        # One session searched (the model's); the other seven were served its fix from the store.
        assert len(sessions) == 8 and all(s["ok"] for s in sessions), sessions
        assert sorted(s["candidates"] for s in sessions) == [1] * 8
        assert store.claims() == []  # the holder gave its claim up once its fix was in the store
    finally:
        store.close()


WATCHER = '''
import sys, time
from pathlib import Path

store, folder, name = sys.argv[1:4]
sys.path.insert(0, folder)
import regrow
import shop

healed = regrow.heal(tests=[shop.rupees], proposers=[], store=store)(shop.parse_price)
hooked = healed.__code__  # @heal hooks the function itself: calling it failing would start a session here
(Path(folder) / f"ready-{name}").touch()
deadline = time.monotonic() + 300
while time.monotonic() < deadline:
    try:
        if healed.__code__ is not hooked and shop.parse_price("₹7") == 7.0:  # the listener installed a fix
            from regrow._heal import _fleet_listen
            print("fixed" if _fleet_listen.stop() else "listener still running", flush=True)  # stops cleanly
            break
    except ValueError:
        pass
    time.sleep(0.005)
else:
    print("never fixed", flush=True)
'''


def _load(folder: Path, name: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, folder / "shop.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_fix_landing_reaches_eight_running_processes_each_proving_it_with_no_model_call(store_url, tmp_path):
    import regrow
    from regrow._proposers._llm import RetryPolicy, proposer_for

    (tmp_path / "shop.py").write_text(textwrap.dedent(TARGET))
    script = tmp_path / "watcher.py"
    script.write_text(textwrap.dedent(WATCHER))
    env = {**os.environ, "PYTHONPATH": SRC}
    processes = [subprocess.Popen([sys.executable, str(script), store_url, str(tmp_path), str(n)], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for n in range(8)]
    deadline = time.monotonic() + 300
    while len(list(tmp_path.glob("ready-*"))) < 8:
        assert all(p.poll() is None for p in processes), [p.communicate() for p in processes]
        assert time.monotonic() < deadline, "the processes never got ready"
        time.sleep(0.05)
    shop = _load(tmp_path, f"shop_{abs(hash(store_url))}")
    store = Store(store_url)
    try:
        with OpenAIServer([Text(RIGHT)]) as server:
            model = proposer_for("openai:gpt-test", api_key="test-key", base_url=server.base_url,
                                 retry=RetryPolicy(max_retries=0, base_delay=0.01, max_delay=0.05))
            # This process lands the fix (not installed here); none of the eight has met the failure.
            landed = regrow.repair(shop.parse_price, ["₹1,299"], tests=[shop.rupees], proposers=[model],
                                   store=store, install=False)
            assert landed.ok and landed.fix is not None
            outputs = [p.communicate(timeout=600) for p in processes]
            requests = len(server.requests)
        assert [out.strip() for out, _ in outputs] == ["fixed"] * 8, outputs
        assert requests == 1  # the lander's one reply: every process proved the fix with no model call
        installs = store.installs()
        assert len(installs) == 8 and all(row["ok"] and row["host"] for row in installs), installs
        assert len({row["pid"] for row in installs}) == 8
    finally:
        store.close()


def test_the_listener_is_one_daemon_thread_per_store_and_stops_cleanly(tmp_path):
    import threading

    import regrow
    from regrow._heal import _fleet_listen

    shop = _load((tmp_path / "shop.py").parent if (tmp_path / "shop.py").write_text(textwrap.dedent(TARGET)) else
                 tmp_path, "shop_listener")
    store = Store(tmp_path / "regrow.db")
    try:
        first = regrow.heal(tests=[shop.rupees], proposers=[], store=store)(shop.parse_price)
        second = regrow.heal(tests=[shop.rupees], proposers=[], store=store)(shop.rupees)
        listeners = [t for t in threading.enumerate() if t.name == "regrow-fleet-listener"]
        assert len(listeners) == 1 and listeners[0].daemon
        assert _fleet_listen.stop()
        assert not listeners[0].is_alive()
        assert first and second
    finally:
        store.close()


def test_a_landing_whose_notification_was_lost_is_still_found_by_the_bounded_poll(pg_url, tmp_path):
    import regrow
    from regrow._heal import _fleet_listen

    (tmp_path / "shop.py").write_text(textwrap.dedent(TARGET))
    here, lander = _load(tmp_path, "shop_lost_here"), _load(tmp_path, "shop_lost_lander")
    store, quiet = Store(pg_url), Store(pg_url)
    quiet.NOTIFY = ""  # this store's landings send no NOTIFY: as if the notification were lost
    try:
        healed = regrow.heal(tests=[here.rupees], proposers=[], store=store)(here.parse_price)
        fixed = regrow.heal(tests=[lander.rupees], proposers=[_Fix()], store=quiet)(lander.parse_price)
        assert fixed("₹1,299") == 1299.0  # landed in the store, with no notification
        deadline = time.monotonic() + 120
        while healed.__regrow__.results == [] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert here.parse_price("₹7") == 7.0  # adopted by the poll
        assert _fleet_listen.stop()
    finally:
        store.close()
        quiet.close()


class _Fix:
    name = "fix"

    def propose(self, request):
        from regrow.extend import Candidate

        yield Candidate('def parse_price(text: str) -> float:\n'
                        '    return float("".join(c for c in text if c.isdigit() or c == "."))\n', origin="test")


def test_a_session_that_found_nothing_keeps_the_claim_for_the_cooldown(tmp_path):
    import pytest

    import regrow

    (tmp_path / "shop.py").write_text(textwrap.dedent(TARGET))
    shop = _load(tmp_path, "shop_nothing")
    store = Store(tmp_path / "regrow.db")
    try:
        healed = regrow.heal(tests=[shop.rupees], proposers=[], store=store, cooldown=60)(shop.parse_price)
        with pytest.raises(ValueError):
            healed("₹1,299")
        [claim] = store.claims()  # the fleet does not search this failure again before the cooldown ends
        assert 59.0 <= claim["expires"] - claim["claimed"] <= 61.0
        assert claim["holder"].startswith(f"{HOST}:{os.getpid()}:")
    finally:
        store.close()


def test_a_process_that_starts_after_a_fix_landed_adopts_it_without_meeting_the_failure(store_url, tmp_path):
    import regrow
    from regrow._heal import _fleet_listen

    (tmp_path / "shop.py").write_text(textwrap.dedent(TARGET))
    lander, later = _load(tmp_path, "shop_early"), _load(tmp_path, "shop_later")
    store = Store(store_url)
    try:
        fixed = regrow.heal(tests=[lander.rupees], proposers=[_Fix()], store=store)(lander.parse_price)
        assert fixed("₹1,299") == 1299.0  # landed before the later process registers its function
        healed = regrow.heal(tests=[later.rupees], proposers=[], store=store)(later.parse_price)
        deadline = time.monotonic() + 120
        while healed.__regrow__.results == [] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert later.parse_price("₹7") == 7.0  # proven with its own tests and installed, never having failed
        [result] = healed.__regrow__.results
        assert result.ok and result.fix is not None and result.fix.origin == "test"
        while not store.installs() and time.monotonic() < deadline:  # recorded after the install, by the listener
            time.sleep(0.05)
        assert any(row["qualname"] == "parse_price" and row["ok"] for row in store.installs())
        assert _fleet_listen.stop()
    finally:
        store.close()


FORKED = '''
import os, sys, time
from pathlib import Path

store, folder = sys.argv[1:3]
sys.path.insert(0, folder)
import regrow
import shop

healed = regrow.heal(tests=[shop.rupees], proposers=[], store=store)(shop.parse_price)  # imported, then forked
hooked = healed.__code__
worker = os.fork()
if worker == 0:  # a web server's worker: it only serves, and never meets the failure
    (Path(folder) / "ready-worker").touch()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if healed.__code__ is not hooked and shop.parse_price("₹7") == 7.0:  # its listener installed a fix
                from regrow._heal import _fleet_listen
                stopped = _fleet_listen.stop()  # its listener ends once it has recorded the install
                print("worker fixed" if stopped else "worker listener still running", os.getpid(), flush=True)
                os._exit(0)
        except ValueError:
            pass
        time.sleep(0.005)
    print("worker never fixed", flush=True)
    os._exit(1)
_, status = os.waitpid(worker, 0)
print("worker exit", os.waitstatus_to_exitcode(status), flush=True)
'''


def test_a_worker_forked_after_the_app_was_imported_adopts_a_fix_that_lands(store_url, tmp_path):
    """Threads do not cross a fork: the listener the import started is started again in each forked worker
    (gunicorn --preload, a multiprocessing pool), or fixes that land would never reach the workers. (On SQLite
    the fork must also not land inside the parent's listener's SQLite call: test_store_fork.py.)"""
    import regrow

    (tmp_path / "shop.py").write_text(textwrap.dedent(TARGET))
    (tmp_path / "server.py").write_text(textwrap.dedent(FORKED))
    process = subprocess.Popen([sys.executable, str(tmp_path / "server.py"), store_url, str(tmp_path)],
                               env={**os.environ, "PYTHONPATH": SRC}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    deadline = time.monotonic() + 300
    while not (tmp_path / "ready-worker").exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the worker never got ready"
        time.sleep(0.05)
    shop = _load(tmp_path, f"shop_forked_{abs(hash(store_url))}")
    store = Store(store_url)
    try:
        landed = regrow.repair(shop.parse_price, ["₹1,299"], tests=[shop.rupees], proposers=[_Fix()], store=store,
                               install=False)
        assert landed.ok and landed.fix is not None
        out, err = process.communicate(timeout=300)
        lines = out.split()
        assert process.returncode == 0 and lines[:2] == ["worker", "fixed"] and out.strip().endswith("worker exit 0"), (
            out, err)
        assert int(lines[2]) in [row["pid"] for row in store.installs() if row["ok"]]  # recorded, by the worker
    finally:
        store.close()


def test_a_fork_server_regrow_makes_for_itself_starts_no_listener(tmp_path):
    """The listener starts again in each process the host forks, but not in one regrow forks for its own use:
    a fork server only forks sandboxed children (whose guard refuses threads)."""
    import operator
    import threading

    import regrow
    from regrow._heal import _fleet_listen
    from regrow._sandbox import ForkSandbox, Limits

    (tmp_path / "shop.py").write_text(textwrap.dedent(TARGET))
    shop = _load(tmp_path, "shop_server")
    store = Store(tmp_path / "regrow.db")
    try:
        healed = regrow.heal(tests=[shop.rupees], proposers=[], store=store)(shop.parse_price)
        assert [t for t in threading.enumerate() if t.name == "regrow-fleet-listener"]  # here, it listens
        with ForkSandbox(Limits(timeout=30), server=True) as sandbox:
            assert sandbox.call(operator.add, 2, 3).value == 5
            server = sandbox._server
            assert server is not None and server._pid
            threads = os.listdir(f"/proc/{server._pid}/task")
        assert len(threads) == 1, threads  # the server: its one thread, no listener
        assert healed and _fleet_listen.stop()
    finally:
        store.close()

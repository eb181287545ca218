"""regrow.watch on a fleet: processes that meet the same failure under ``watch(store=…)`` take the same
fleet-wide claim as ``@heal``, so one of them searches and the others are served its fix (real
subprocesses released at once, a real store on both backends)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from released import release_when_ready

from regrow import Store

SRC = str(Path(__file__).parents[2] / "src")
ORDERS = '''
def per_item(total, count):
    return total / count
'''
PROCESS = '''
import sys, time
from pathlib import Path

import regrow

store, folder, number = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
watcher = regrow.watch("fleetshop", allow_blind=True, store=store, cooldown=0)
from fleetshop import orders

(folder / f"ready-{number}").touch()
while not (folder / "go").exists():
    time.sleep(0.01)
try:
    orders.per_item(10, 0)
except ZeroDivisionError:
    pass
assert watcher.drain(300)
print(orders.per_item(10, 0), orders.per_item(10, 4), [job.outcome for job in watcher.jobs], flush=True)
'''
PROCESSES = 4


def test_processes_watching_one_package_run_one_search_for_one_failure_and_all_run_the_fix(store_url, tmp_path):
    (tmp_path / "fleetshop").mkdir()
    (tmp_path / "fleetshop" / "__init__.py").write_text("")
    (tmp_path / "fleetshop" / "orders.py").write_text(textwrap.dedent(ORDERS))
    (tmp_path / "process.py").write_text(textwrap.dedent(PROCESS))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, str(tmp_path)])}
    processes = [subprocess.Popen([sys.executable, str(tmp_path / "process.py"), store_url, str(tmp_path), str(n)],
                                  env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for n in range(PROCESSES)]
    release_when_ready(tmp_path, processes)
    outputs = [p.communicate(timeout=600) for p in processes]
    assert all(p.returncode == 0 for p in processes), outputs
    assert [out.strip() for out, _ in outputs] == ["0 2.5 ['installed']"] * PROCESSES, outputs
    store = Store(store_url)
    try:
        sessions = store.sessions("per_item")
        searched = [s for s in sessions if s["candidates"] > 1]
        # One process searched; each of the others proved the one fix it was served from the store.
        assert len(searched) == 1, sessions
        assert all(s["ok"] for s in sessions) and len(sessions) == PROCESSES
        assert store.claims() == []
    finally:
        store.close()

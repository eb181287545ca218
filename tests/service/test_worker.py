"""Workers: captured failures handed to the store as jobs and repaired by worker processes, over
both backends (``store_url``), with the fix published in the store's cache."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from regrow import Store
from regrow._service._worker import capture_call, heal_capture

FLEET = '''
def total(values):
    result = 0
    for i in range(1, len(values) + 1):
        result += values[i]
    return result


def test_total(fn):
    assert fn([2, 3, 5]) == 10


def half(n):
    return n // 0


def test_impossible(fn):
    assert fn(4) == "never"
'''

WORKER = '''
import sys
from regrow._service._worker import work
print(" ".join(map(str, work(sys.argv[1], name=sys.argv[2], until_idle=True, lease=60))), flush=True)
'''


def _works(fix: str) -> bool:
    namespace: dict[str, object] = {}
    exec(fix, namespace)
    return namespace["total"]([2, 3, 5]) == 10 and namespace["total"]([4, 5]) == 9


@pytest.fixture
def fleet(make_module):
    return make_module(FLEET)


def _env(folder: Path) -> dict[str, str]:
    src = str(Path(__file__).parents[2] / "src")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([src, str(folder)])}


def test_a_capture_is_plain_data_and_a_worker_publishes_the_fix(fleet, store_url):
    capture = capture_call(fleet.total, [[1, 2]], tests=[fleet.test_total], max_candidates=50)
    assert capture is not None and capture["target"] == f"{fleet.__name__}::total"
    assert capture["args"] == ["L", [["L", [["I", "1"], ["I", "2"]]]]] and capture["tests"][0].endswith("test_total")
    assert capture_call(fleet.total, [[]]) is None  # it did not fail: nothing to hand over
    store = Store(store_url)
    outcome = heal_capture(capture, store)
    assert outcome["ok"] and outcome["origin"] == "engine" and _works(outcome["fix"])
    with pytest.raises(IndexError):  # the worker proves without installing: this process still runs the bug
        fleet.total([1, 2])
    assert store.sessions("total")[0]["fix"] == outcome["fix"]  # published for every process of the fleet
    store.close()


def test_a_capture_that_cannot_be_handed_over_says_why(fleet, store_url):
    with pytest.raises(ValueError, match="not plain data"):
        capture_call(fleet.total, [[1, threading.Lock()]])
    store = Store(store_url)
    capture = capture_call(fleet.total, [[1, 2]], tests=[fleet.test_total])
    assert "other source" in heal_capture({**capture, "source_hash": "0" * 16}, store)["reason"]
    assert "cannot import" in heal_capture({**capture, "target": "no_such_module::f"}, store)["reason"]
    store.close()


def test_a_job_a_worker_cannot_run_is_left_for_another_not_marked_done(fleet, store_url):
    """A worker of other code (a rolling deploy) or started in the wrong folder marked each such job done: the
    worker that could run it never saw it."""
    from regrow._service._worker import work

    store = Store(store_url)
    capture = capture_call(fleet.total, [[1, 2]], tests=[fleet.test_total])
    other = store.submit({**capture, "source_hash": "0" * 16})  # captured from other code than this worker runs
    assert work(store, until_idle=True, poll=0.01) == []  # not done here
    (job,) = [job for job in store.jobs() if job["id"] == other]
    assert job["state"] == "taken" and job.get("result") in (None, "")  # left, its short lease ending soon
    store.close()


def test_four_workers_drain_200_jobs_each_done_once(fleet, store_url, tmp_path):
    store = Store(store_url)
    fixable = [store.submit(capture_call(fleet.total, [[n, n + 1, n + 2]], tests=[fleet.test_total]))
               for n in range(100)]
    unfixable = [store.submit(capture_call(fleet.half, [n], tests=[fleet.test_impossible], max_candidates=10))
                 for n in range(60)]
    stale_capture = {**capture_call(fleet.total, [[1, 2]], tests=[fleet.test_total]), "source_hash": "0" * 16}
    stale = [store.submit(stale_capture) for _ in range(40)]
    script = tmp_path / "worker.py"
    script.write_text(textwrap.dedent(WORKER))
    workers = [subprocess.Popen([sys.executable, str(script), store_url, f"w{n}"], env=_env(tmp_path),
                                stdout=subprocess.PIPE, text=True) for n in range(4)]
    completed = [int(i) for w in workers for i in w.communicate(timeout=900)[0].split()]
    assert [w.returncode for w in workers] == [0, 0, 0, 0]
    assert sorted(completed) == sorted(fixable + unfixable)  # every job these workers can run done, none twice
    jobs = {row["id"]: row for row in store.jobs()}
    assert {jobs[j]["state"] for j in fixable + unfixable} == {"done"}
    assert all(jobs[j]["result"]["ok"] and _works(jobs[j]["result"]["fix"]) for j in fixable)
    assert not any(jobs[j]["result"]["ok"] for j in unfixable)
    # captured from other code than these workers run: left for a worker that runs it, not marked done
    # (or, taken three times on 10 s leases while the run lasted, given up)
    assert all((jobs[j]["state"] == "taken" and not jobs[j].get("result")) or jobs[j]["state"] == "given-up"
               for j in stale)
    searched = [row for row in store.sessions("total") if row["ok"]]
    assert len(searched) == 100 and len({row["fix"] for row in searched}) == 1  # one fix, served to the rest
    store.close()


def test_the_command_drains_the_jobs_of_a_store(fleet, tmp_path):
    """``regrow worker --store FILE --until-idle``: a real subprocess heals what was handed over, then stops."""
    store = Store(tmp_path / "fleet.sqlite")
    jobs = [store.submit(capture_call(fleet.total, [[n, n + 1]], tests=[fleet.test_total])) for n in range(3)]
    store.close()
    done = subprocess.run([sys.executable, "-m", "regrow", "worker", "--store", str(tmp_path / "fleet.sqlite"),
                           "--until-idle", "--poll", "0.1"], env=_env(Path(fleet.__file__).parent),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "3 jobs done" in done.stdout
    store = Store(tmp_path / "fleet.sqlite")
    assert {job["id"] for job in store.jobs("done")} == set(jobs)
    assert store.sessions("total") and store.sessions("total")[0]["fix"]
    store.close()

"""Candidates validated per second: regrow's engine vs mutmut's mutants per second, the ``validation`` section.

The function and the tests are ``benchmarks/engine.py``'s ``score`` and its ten pytest tests. mutmut
(``mutmut run`` in a project of the correct function, its tests green) generates and tests every mutant;
its rate is the mutants it judged over the run's wall time. regrow's engine searches for a fix of the
same function with one test's expectation changed (so the original fails it), one worker, and its rate
is the candidates it judged over its search time. Both rates come from this one process and minute.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

BENCHMARKS = Path(__file__).resolve().parent.parent


COUNTS: dict[str, float] = {}  # what each rate was measured on: judged, seconds


def _mutmut(timeout: float) -> float | str:
    sys.path.insert(0, str(BENCHMARKS))
    import engine  # benchmarks/engine.py: the function and its tests

    mutmut = Path(sys.executable).with_name("mutmut")
    if not mutmut.exists():
        return f"missing: no mutmut executable beside {sys.executable}"
    project = Path(tempfile.mkdtemp(prefix="regrow-peers-mutmut-"))
    (project / "score_mod.py").write_text(textwrap.dedent(engine.PROGRAM))
    (project / "tests").mkdir()
    (project / "tests" / "test_score_mod.py").write_text(engine.TESTS.format(module="score_mod", caps=10))
    (project / "setup.cfg").write_text("[mutmut]\npaths_to_mutate=score_mod.py\ntests_dir=tests/\n")
    started = time.perf_counter()
    done = subprocess.run(
        [str(mutmut), "run"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env={**os.environ, "PYTHONPATH": ""},
    )
    seconds = time.perf_counter() - started
    metas = list((project / "mutants").rglob("*.meta"))
    judged = sum(len(json.loads(meta.read_text()).get("exit_code_by_key", {})) for meta in metas)
    if not judged:
        tail = (done.stdout.strip().splitlines() + done.stderr.strip().splitlines() or ["no output"])[-1]
        return f"missing: mutmut judged no mutant (exit {done.returncode}: {tail})"[:300]
    COUNTS.update({"mutmut mutants": judged, "mutmut seconds": seconds})
    return judged / seconds


def _regrow() -> float | str:
    sys.path.insert(0, str(BENCHMARKS))
    import engine

    folder = Path(tempfile.mkdtemp(prefix="regrow-peers-engine-"))
    stats = engine.run(folder, "score_regrow", engine.PROGRAM, caps=12, jobs=1, quiet=True).last_stats
    if not stats.evaluated or stats.search_seconds <= 0:
        return "missing: regrow's engine judged no candidate"
    COUNTS.update({"regrow candidates": stats.evaluated, "regrow seconds": stats.search_seconds})
    return float(stats.evaluated / stats.search_seconds)


def validation(wanted: set[str], timeout: float = 600.0) -> dict[str, Any]:
    rows: dict[str, Any] = {}
    if "mutmut" in wanted:
        try:
            rows["mutmut mutants/s"] = _mutmut(timeout)
        except Exception as error:
            rows["mutmut mutants/s"] = f"missing: {type(error).__name__}: {error}"[:300]
    if "regrow" in wanted:
        try:
            rows["regrow candidates/s"] = _regrow()
        except Exception as error:
            rows["regrow candidates/s"] = f"missing: {type(error).__name__}: {error}"[:300]
    return {"unit": "per s", "baseline": "mutmut mutants/s", "rows": rows, "counts": dict(COUNTS)}

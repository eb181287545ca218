"""Running a suite's tasks, each in its own process under a hard time limit, several at once.

A process per task keeps module caches, monkeypatches and stuck threads of one task away from the
next, and lets a task that hangs beyond every softer limit be killed without losing the bench.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..._frames import PACKAGE_DIR
from ._manifest import Task

_GRACE = 10.0  # seconds past the task's own budget before its process is killed

Progress = Callable[[dict[str, Any]], None]


def run_tasks(tasks: list[Task], *, proposer: str, model: str | None, parallel: int, timeout: float,
              max_candidates: int, seed: int, on_result: Progress, workers: int = 1) -> list[dict[str, Any]]:
    """Every task's result, in the order given, ``parallel`` tasks at once (``regrow bench --jobs``: not the
    ``jobs`` option of a heal, which is how many workers judge one heal's candidates); ``on_result`` hears of
    each as it ends."""
    with tempfile.TemporaryDirectory(prefix="regrow-bench-") as scratch, \
            ThreadPoolExecutor(max_workers=max(parallel, 1)) as pool:
        def one(task: Task) -> dict[str, Any]:
            result = run_in_process(task, Path(scratch), proposer=proposer, model=model, timeout=timeout,
                                    max_candidates=max_candidates, seed=seed, workers=workers)
            on_result(result)
            return result

        return list(pool.map(one, tasks))


def run_in_process(task: Task, scratch: Path, *, proposer: str, model: str | None, timeout: float, max_candidates: int,
                   seed: int, workers: int = 1) -> dict[str, Any]:
    spec_path, result_path = scratch / f"{task.name}.spec.json", scratch / f"{task.name}.result.json"
    spec = {"task": task.as_dict(), "proposer": proposer, "model": model, "timeout": timeout,
            "max_candidates": max_candidates, "workers": workers}
    spec_path.write_text(json.dumps(spec), encoding="utf-8")
    started = time.monotonic()
    base = {"name": task.name, "family": task.family, "fixable": task.fixable, "bug": task.bug}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "regrow._cli._bench._task", str(spec_path), str(result_path)],
            cwd=task.root, env=_environment(seed, scratch / "pycache"), stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=timeout + _GRACE, check=False,
        )
    except subprocess.TimeoutExpired:
        return {**base, "status": "timeout", "reason": f"killed after {timeout + _GRACE:g}s",
                "time": round(time.monotonic() - started, 3)}
    try:
        result: dict[str, Any] = json.loads(result_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
        reason = f"the task process exited with {done.returncode}" + (f": {' | '.join(tail)}" if tail else "")
        return {**base, "status": "error", "reason": reason, "time": round(time.monotonic() - started, 3)}
    return result


def _environment(seed: int, pycache: Path) -> dict[str, str]:
    env = dict(os.environ)
    package_root = os.path.dirname(PACKAGE_DIR)  # the folder that holds the package regrow
    env["PYTHONPATH"] = os.pathsep.join([package_root, *filter(None, [env.get("PYTHONPATH")])])
    env["PYTHONHASHSEED"] = str(seed)  # set and dict-of-str orders in the tests follow the seed
    # No __pycache__ in the suite's folders, but compiled modules all the same, as a user's project has them:
    # without, every judging child compiled what the code under test imports lazily from its source again
    # (idna's 8,000-line uts46data: a tenth of a search).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(pycache)
    return env

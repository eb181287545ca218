"""Subprocesses released at one moment: each touches ``ready-<n>`` in a shared folder and waits for ``go``."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path


def release_when_ready(folder: Path, processes: list[subprocess.Popen[str]], timeout: float = 300.0) -> None:
    """Wait until every process said it is ready (failing with their output if one died), then let them go."""
    deadline = time.monotonic() + timeout
    while len(list(folder.glob("ready-*"))) < len(processes):
        if any(p.poll() is not None for p in processes) or time.monotonic() >= deadline:
            for process in processes:  # the others wait for "go": end them before reading what they said
                if process.poll() is None:
                    process.kill()
            said = [process.communicate() for process in processes]
            raise AssertionError(f"a process ended (or none was ready in {timeout:g}s) before all were ready: {said}")
        time.sleep(0.05)
    (folder / "go").touch()



def interruptible(module: str) -> list[str]:
    """The command that runs ``python -m module`` taking Ctrl-C as a program a terminal starts does. A shell
    starts its background jobs with SIGINT ignored, the ignoring is inherited through exec, and Python then
    sets no KeyboardInterrupt at all: run as a background job, a suite would see a CLI that cannot be
    interrupted (what these tests check)."""
    import sys

    return [sys.executable, "-c", "import runpy, signal, sys; "
            "signal.signal(signal.SIGINT, signal.default_int_handler); "
            f"sys.argv[0] = {module!r}; runpy.run_module({module!r}, run_name='__main__', alter_sys=True)"]

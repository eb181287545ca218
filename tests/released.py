"""Subprocesses released at one moment: each touches ``ready-<n>`` in a shared folder and waits for ``go``."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path


def release_when_ready(folder: Path, processes: list[subprocess.Popen[str]], timeout: float = 300.0) -> None:
    """Wait until every process said it is ready (failing with their output if one died), then let them go."""
    deadline = time.monotonic() + timeout
    while len(list(folder.glob("ready-*"))) < len(processes):
        assert all(p.poll() is None for p in processes), [p.communicate() for p in processes]
        assert time.monotonic() < deadline, "the processes never got ready"
        time.sleep(0.05)
    (folder / "go").touch()

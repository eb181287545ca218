"""Helpers for the tests that run regrow in the fixture projects of ``tests/projects``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

PROJECTS = Path(__file__).parent / "projects"

# No bytecode: a fix written back in the second a module was first imported, of the same size,
# would otherwise be hidden by a stale .pyc.
ENV = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}


def copy_project(name: str, into: Path) -> Path:
    """A fresh copy of the fixture project ``name`` under ``into``."""
    target = into / name
    shutil.copytree(PROJECTS / name, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return target


def regrow(cwd: Path, *args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    """``python -m regrow ARGS`` in ``cwd``, as a user runs it."""
    return subprocess.run([sys.executable, "-m", "regrow", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=ENV)


def pytest_run(cwd: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``python -m pytest ARGS`` in ``cwd`` (no cache folder)."""
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout, env=ENV)

"""Compiled modules for what the checks import lazily, so that judging children do not compile them again.

Sandboxed children never write ``__pycache__`` (see :mod:`regrow._sandbox._guard`). A module that only the
checks import (a large table a library loads on first use, a helper of the tests) is then compiled from its
source in the tracing child and again in every judging child, inside the time of the test that first imports
it: 50 ms for a 240 kB data module, on the clock of a test whose limit may be 30 ms of CPU. After tracing, the
host writes the bytecode Python would have written itself (:func:`py_compile.compile` to the path
:func:`importlib.util.cache_from_source` gives, so ``PYTHONPYCACHEPREFIX`` holds), unless the host was told
not to write bytecode at all (``sys.dont_write_bytecode``, ``PYTHONDONTWRITEBYTECODE``, ``-B``).
"""

from __future__ import annotations

import importlib.util
import os
import py_compile
import sys
import time
from typing import Any

from .._sandbox._warm import Worker

MAX_SOURCES = 64  # modules compiled per search at most
_SLACK = 32  # modules the host may have imported after its child forked
_JOB_SECONDS = 5.0  # the child's listing may take (a loaded machine; a host of thousands of modules)
_PYTHON_SOURCE = ".py"


def uncompiled_sources(since: int = 0) -> list[str]:
    """The ``"sources"`` job (trusted: it runs no candidate): source files of this process's modules after the
    first ``since`` (the host's, which it imported before this child forked) that have no bytecode as fresh as
    their source, latest first."""
    found = []
    for module in reversed(list(sys.modules.values())[max(since, 0):]):
        path, cached = getattr(module, "__file__", None), getattr(module, "__cached__", None)
        if not (isinstance(path, str) and isinstance(cached, str) and path.endswith(_PYTHON_SOURCE)):
            continue
        try:
            if os.stat(cached).st_mtime >= os.stat(path).st_mtime:
                continue
        except FileNotFoundError:
            pass
        except OSError:
            continue
        found.append(path)
    return found


def sources_from_plain(data: Any) -> list[str]:
    """The job's answer, checked (it comes from a child): a list of existing ``.py`` files."""
    if type(data) is not list or not all(type(path) is str for path in data):
        raise ValueError("the sources must be a list of paths")
    return [path for path in data if path.endswith(_PYTHON_SOURCE) and os.path.isabs(path) and os.path.isfile(path)]


def write_bytecode(paths: list[str], deadline: float) -> list[str]:
    """Compile each of ``paths`` (until :data:`MAX_SOURCES` are written, or ``deadline``) where this process would
    write its bytecode; the paths written. A file that does not compile or cannot be written is left as it is."""
    if sys.dont_write_bytecode:
        return []
    written: list[str] = []
    for path in paths:
        if len(written) >= MAX_SOURCES or time.monotonic() >= deadline:
            break
        try:
            cached = importlib.util.cache_from_source(path)
            if not _writable(os.path.dirname(cached)):  # not compiled for nothing (a system site-packages)
                continue
            py_compile.compile(path, cfile=cached, doraise=True)
        except (py_compile.PyCompileError, OSError, ValueError, SyntaxError):
            continue
        written.append(path)
    return written


def _writable(folder: str) -> bool:
    """Whether a file can be made in ``folder``, or in the folder it would be made in."""
    while folder and not os.path.isdir(folder):
        parent = os.path.dirname(folder)
        if parent == folder:
            return False
        folder = parent
    return bool(folder) and os.access(folder, os.W_OK)


def compile_imported(worker: Worker, timeout: float, deadline: float) -> list[str]:
    """:func:`write_bytecode` for what the worker's child imported without bytecode (its ``"sources"`` job,
    :func:`uncompiled_sources`, run after tracing); the paths written."""
    if not worker.forking or sys.dont_write_bytecode:
        return []
    # What the host imported since its child forked shifts the count: a few of the host's own are looked at
    # again (they have their bytecode, or could not have it); the child's are missed only past the slack.
    since = max(len(sys.modules) - _SLACK, 0)
    limit = min(max(timeout, _JOB_SECONDS), max(deadline - time.monotonic(), 0.1))
    status, sources = worker.call("sources", since, timeout=limit, read=sources_from_plain)
    return write_bytecode(sources if status == "ok" else [], deadline)

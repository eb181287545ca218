"""A missing module, installed when the user allowed it: ``heal(install_missing=True, allow_install=...)``.

A ``ModuleNotFoundError`` raised inside a healed function is not a bug in its code; when the user
opted in and the import name is in their allowlist of pinned requirements (``{"yaml":
"PyYAML==6.0.2"}``), the requirement is installed into the active virtual environment and the call is
run again. Nothing else is ever installed: no name outside the allowlist, nothing outside a venv,
never ``--user``, never the system Python, wheels only (no build step runs code), each name once
per function, within a time limit. pip's own configuration (index, find-links, proxy) applies; where
it installs does not (``PIP_TARGET``, ``PIP_PREFIX``, ``PIP_ROOT``, ``PIP_USER`` are dropped, and pip
is told to require a virtualenv). Each install, or refusal, is an event and a line in the ledger.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import subprocess
import sys
import time

from .._events import Event, emit
from .._result import RepairResult
from ._ledger import note
from ._options import Options

log = logging.getLogger("regrow")

INSTALL_TIMEOUT = 120.0  # seconds pip may take for one requirement
_PLACEMENT = ("PIP_TARGET", "PIP_PREFIX", "PIP_ROOT", "PIP_USER", "PIP_SRC", "PIP_EDITABLE")


def in_venv() -> bool:
    """Whether this interpreter runs in a virtual environment (``python -m venv``, virtualenv)."""
    return sys.prefix != sys.base_prefix


def installed(exc: BaseException, qualname: str, options: Options, tried: set[str],
              results: list[RepairResult]) -> bool:
    """Whether the module missing for ``exc`` was installed now (so the call may run again); with
    ``install_missing`` off, or another error, nothing happens. The outcome is appended to ``results``."""
    if not options.install_missing or not isinstance(exc, ModuleNotFoundError):
        return False
    results.append(install_missing(exc, qualname, options, tried))
    return results[-1].ok


def install_missing(exc: ModuleNotFoundError, qualname: str, options: Options, tried: set[str],
                    timeout: float = INSTALL_TIMEOUT) -> RepairResult:
    """Install the allowlisted requirement of the module ``exc`` says is missing; ``ok`` when it can be
    imported now (the call may run again). ``tried`` holds the names tried before, and gets this one.
    The result is an event (``module_installed`` or ``install_refused``) and a line in the store's ledger."""
    name = (exc.name or "").partition(".")[0]
    requirement = options.allow_install.get(name, "")
    started = time.monotonic()
    reason = _refusal(name, requirement, tried)
    ok = False
    if not reason:
        tried.add(name)
        ok, reason = _pip(requirement, timeout)
        if ok:
            importlib.invalidate_caches()
            if importlib.util.find_spec(name) is None:
                ok, reason = False, f"installed {requirement}, but the module {name!r} still cannot be imported"
            else:
                reason = f"installed {requirement} into {sys.prefix} for the missing module {name!r}"
    result = RepairResult(ok, qualname, None, reason=reason, duration=time.monotonic() - started)
    emit(options.on_event, Event("module_installed" if ok else "install_refused", qualname, message=reason))
    log.warning("regrow: %s: %s", qualname, reason)
    if not ok:
        note(exc, f"regrow: {reason}")
    store = options.store
    if store is not None:
        try:
            store.record(result, key=None)
        except Exception as error:  # a broken store must not cost the call its retry
            log.warning("regrow: could not record the install in %s: %s", store, error)
    return result


def _refusal(name: str, requirement: str, tried: set[str]) -> str:
    if not name:
        return "the ModuleNotFoundError names no module: nothing to install"
    if not requirement:
        return f"the missing module {name!r} is not in allow_install: not installed"
    if name in tried:
        return f"{requirement} was installed for {name!r} once already: not installed again"
    if not in_venv():
        return f"not in a virtual environment ({sys.prefix}): {requirement} is installed into a venv only"
    return ""


def _pip(requirement: str, timeout: float) -> tuple[bool, str]:
    """``pip install`` of one pinned requirement into this interpreter's venv: (ok, what happened)."""
    env = {key: value for key, value in os.environ.items() if key not in _PLACEMENT}
    env.update(PIP_REQUIRE_VIRTUALENV="1", PIP_NO_INPUT="1", PIP_DISABLE_PIP_VERSION_CHECK="1",
               PIP_ROOT_USER_ACTION="ignore")
    command = [sys.executable, "-m", "pip", "install", "--require-virtualenv", "--only-binary", ":all:",
               "--no-input", "--", requirement]
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return False, f"pip install {requirement} did not finish within {timeout:g}s: stopped"
    except OSError as exc:
        return False, f"pip could not be started: {exc}"
    if done.returncode != 0:
        last = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or ["no output"]
        return False, f"pip install {requirement} failed (status {done.returncode}): {last[0][:300]}"
    return True, ""

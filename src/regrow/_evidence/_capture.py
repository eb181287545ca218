"""``regrow.capture(label)``: a redacted snapshot of the caller's frame, written to disk.

No model is called and nothing is repaired: it is evidence kept for later, for a branch that is
not wrong enough to raise. The snapshot holds what the evidence policy lets ``disk`` have (the
caller's locals, the source line, the stack of your code, the allowed environment, the log
records of this thread and task), each value bounded and redacted. The folder is bounded in
files and bytes (the oldest snapshots go first). It never raises into the program: anything that
goes wrong is logged at debug level and ``None`` is returned.
"""

from __future__ import annotations

import contextlib
import json
import linecache
import logging
import os
import re
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

from .._frames import OWN
from .._redact import redact_text
from . import _gather as gather
from ._disclosure import SECTIONS, EvidencePolicy, evidence_policy
from ._logbuffer import failure_logs
from ._render import cut

log = logging.getLogger("regrow")

_SLUG = re.compile(r"[^A-Za-z0-9_.-]+")
_STACK = 12  # frames of the caller's stack kept


def capture(label: str = "capture") -> Path | None:
    """Write a redacted snapshot of the calling frame to the capture folder; its path, or ``None``.

    The folder and its bounds are ``EvidencePolicy.capture_dir``, ``capture_max_files`` and
    ``capture_max_bytes`` (see :func:`regrow.configure_evidence`).
    """
    try:
        frame = sys._getframe(1)
        policy = evidence_policy()
        return _write(policy, snapshot_of(frame, str(label), policy))
    except Exception as exc:  # evidence is a help: it must never break the program
        log.debug("capture(%r) was not written: %s", label, exc, exc_info=True)
        return None


def snapshot_of(frame: Any, label: str, policy: EvidencePolicy) -> dict[str, Any]:
    """The snapshot as plain data: withheld sections are ``null`` and named in ``withheld``."""
    sections = policy.sections("disk")
    budget = gather.budget_of(policy)
    code = frame.f_code
    line = linecache.getline(code.co_filename, frame.f_lineno, frame.f_globals).strip()
    stack = [f for f in traceback.extract_stack(frame, limit=_STACK)
             if not f.filename.startswith(OWN)]
    data: dict[str, Any] = {
        "label": redact_text(cut(label, 200)),
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "function": getattr(code, "co_qualname", code.co_name),
        "file": code.co_filename,
        "lineno": frame.f_lineno,
        "pid": os.getpid(),
    }
    full = {
        "arguments": {name: value for name, value in gather.values(dict(frame.f_locals), budget).items()
                      if name in code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]},
        "locals": gather.values(dict(frame.f_locals), budget),
        "environment": gather.environment(policy),
        "logs": failure_logs(),
        "source": redact_text(line),
        "traceback": redact_text("".join(traceback.StackSummary.from_list(stack).format())),
    }
    withheld = sorted(sections.withheld())
    for name in SECTIONS:
        data[name] = None if name in withheld else full[name]
    data["withheld"] = withheld
    return data


def _write(policy: EvidencePolicy, data: dict[str, Any]) -> Path:
    folder = Path(policy.capture_dir)
    folder.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=1, ensure_ascii=False, default=str)
    cap = max(policy.capture_max_bytes // 2, 1024)
    if len(text.encode()) > cap:  # one snapshot may take half the folder at most: the locals are cut first
        data["locals"] = {"...": "cut: the snapshot was larger than the folder allows"}
        text = json.dumps(data, indent=1, ensure_ascii=False, default=str)[:cap]
    stem = f"{time.strftime('%Y%m%d-%H%M%S')}-{_SLUG.sub('-', data['label'])[:40] or 'capture'}"
    handle, temporary = tempfile.mkstemp(prefix=".capture-", suffix=".tmp", dir=folder)
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(text)
    path = folder / f"{stem}-{os.getpid()}-{time.monotonic_ns() % 10**9}.json"
    os.replace(temporary, path)
    _prune(folder, policy.capture_max_files, policy.capture_max_bytes)
    return path


def _prune(folder: Path, max_files: int, max_bytes: int) -> None:
    """Remove the oldest snapshots until the folder holds at most ``max_files`` files and ``max_bytes``."""
    found = []
    for path in folder.glob("*.json"):
        with contextlib.suppress(OSError):
            stat = path.stat()
            found.append((stat.st_mtime_ns, path.name, path, stat.st_size))
    found.sort()
    total = sum(size for *_, size in found)
    while found and (len(found) > max_files or total > max_bytes):
        _, _, path, size = found.pop(0)
        with contextlib.suppress(OSError):
            path.unlink()
        total -= size

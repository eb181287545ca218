"""What a repair leaves for review: a patch ``git apply`` takes, and a JSON record of its provenance.

The patch is a unified diff of the file's bytes (line endings, BOM and encoding as they are;
``\\ No newline at end of file`` where a side ends without one), with paths relative to the top of
the repository, so ``git apply --check`` accepts it there. The record beside it says where the fix
came from and what proved it: the hashes of the file before and after and of the definition, the
git HEAD it was proven at, the checks, the verdict, the ledger (redacted) and its id in the store.
A failure that could not be repaired gets a record too (no patch): what an issue is made from.
"""

from __future__ import annotations

import dataclasses
import datetime
import difflib
import hashlib
import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from .._errors import RegrowError
from .._version import __version__
from . import _files

Kind = Literal["fix", "failure"]
_NO_NEWLINE = b"\n\\ No newline at end of file\n"


def sha256(data: bytes | str) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


def patch(before: bytes, after: bytes, relative: str) -> bytes:
    """A unified diff from ``before`` to ``after`` of the file ``relative`` (``git apply`` reads it)."""
    old, new = _git_lines(before), _git_lines(after)
    out = [f"diff --git a/{relative} b/{relative}\n--- a/{relative}\n+++ b/{relative}\n".encode()]
    for group in difflib.SequenceMatcher(None, old, new, autojunk=False).get_grouped_opcodes(3):
        first, last = group[0], group[-1]
        out.append(f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n".encode())
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [_line(b" ", line) for line in old[i1:i2]]
                continue
            out += [_line(b"-", line) for line in old[i1:i2]]
            out += [_line(b"+", line) for line in new[j1:j2]]
    return b"".join(out) if len(out) > 1 else b""


def _git_lines(data: bytes) -> list[bytes]:
    """Lines as git counts them: ended by ``\\n`` only (a ``\\r`` is part of the line)."""
    return re.findall(rb"[^\n]*\n|[^\n]+\Z", data)


def _range(start: int, stop: int) -> str:
    length = stop - start
    return f"{start + 1 if length else start},{length}"


def _line(mark: bytes, line: bytes) -> bytes:
    return mark + line if line.endswith(b"\n") else mark + line + _NO_NEWLINE


@dataclasses.dataclass(frozen=True)
class Record:
    """One repair's provenance (``kind="fix"``, with a patch) or one failure's (``kind="failure"``)."""

    kind: Kind
    qualname: str
    module: str
    path: str  # relative to the repository (or the patch's root), with "/"
    fingerprint: str
    failure: str  # one line: what failed (redacted)
    exc_type: str
    ledger: str  # the attempts, as RepairResult.ledger() says them (redacted)
    candidates: int
    reason: str = ""
    ledger_id: int | None = None  # the session's id in the store's ledger, with store=
    checks: tuple[str, ...] = ()  # the checks the fix was proven against
    proved_by: tuple[str, ...] = ()  # the checks the sandbox reported passed
    origin: str = ""  # the proposer of the fix, and its operator
    operator: str = ""
    git_head: str | None = None
    file_sha256_before: str = ""
    file_sha256_after: str = ""
    definition_sha256_before: str = ""
    definition_sha256_after: str = ""
    patch_name: str = ""
    patch_sha256: str = ""
    evidence: str = ""  # the failure's evidence as the evidence policy lets an issue have it (redacted)
    created: str = dataclasses.field(
        default_factory=lambda: datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"))

    @property
    def name(self) -> str:
        """The records' file name stem: the qualname and the fingerprint (one failure, one name)."""
        return f"{slug(self.qualname)}-{self.fingerprint}"

    def to_json(self) -> str:
        data = dataclasses.asdict(self)
        data["regrow"] = _version()
        return json.dumps(data, indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, text: str) -> Record:
        """The record in ``text``; ``ValueError`` when it is not one (another tool's JSON)."""
        data = json.loads(text)
        if not isinstance(data, dict) or "regrow" not in data or data.get("kind") not in ("fix", "failure"):
            raise ValueError("it has no regrow version and kind")
        fields = {field.name for field in dataclasses.fields(cls)}
        known = {key: value for key, value in data.items() if key in fields}
        for key in ("checks", "proved_by"):
            known[key] = tuple(known.get(key, ()))
        return cls(**known)


def slug(text: str) -> str:
    """``text`` as a piece of a file or branch name: letters, digits, ``.``, ``_``, ``-``."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip(".-") or "fix"


def write(folder: Path, record: Record, patch_bytes: bytes | None) -> Path:
    """Write the record (and its patch) into ``folder``, each atomically; returns the record's path.
    A folder that cannot be made or written raises :class:`RegrowError` with the reason."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if patch_bytes is not None:
            record = dataclasses.replace(record, patch_name=f"{record.name}.patch", patch_sha256=sha256(patch_bytes))
            _files.replace(folder / record.patch_name, patch_bytes, None)
        path = folder / f"{record.name}.json"
        _files.replace(path, record.to_json().encode(), None)
    except (OSError, _files.FileError) as exc:
        raise RegrowError(f"cannot write the patch and its record into {folder}: {exc}") from exc
    return path


def read(folder: Path, skipped: Callable[[str], None] = lambda note: None) -> list[tuple[Record, bytes | None]]:
    """Every record in ``folder`` (oldest first) with its patch, checked against the hash it was written with.
    A JSON file that is not a regrow record (a ``package.json``) is left out, and ``skipped`` told why."""
    found = []
    for path in sorted(folder.glob("*.json"), key=lambda p: (p.stat().st_mtime, p.name)):
        try:
            record = Record.from_json(path.read_text(encoding="utf-8"))
        except (ValueError, TypeError) as exc:
            skipped(f"skipped {path.name}: not a regrow record ({exc})")
            continue
        data = None
        if record.patch_name:
            data = (folder / record.patch_name).read_bytes()
            if sha256(data) != record.patch_sha256:
                raise ValueError(f"{record.patch_name} is not the patch its record was written with")
        found.append((record, data))
    return found


def _version() -> str:
    return __version__


def checks_of(checks: Sequence[Any]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(str(getattr(check, "name", check)) for check in checks))

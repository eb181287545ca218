"""Keeping a fix: as a patch with its provenance, in the file, as a draft pull request; and an
issue when healing fails. The decorator, the CLI and the pytest plugin all come through here.

- :class:`Keeper` is what ``heal(write_back=...)`` and ``regrow.state(f).write_back(mode)`` do
  with a proven fix: nothing (``"off"``), a patch and its record (``"patch"``), the file
  (``"apply"``). A delivery that fails is logged; it never undoes the repair.
- :func:`propose` makes one branch and one draft pull request per failure fingerprint, from a
  patch record, with git plumbing (:mod:`regrow._delivery._git`) and the REST API (:mod:`regrow._delivery._github`).
- :func:`escalate` opens one issue per failure fingerprint (or comments on the one there is).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .._errors import RegrowError
from .._evidence._text import evidence_text
from .._redact import redact_text
from . import _provenance as prov
from ._branch import build, check_existing
from ._git import Git, GitError
from ._github import GitHub, Unprocessable
from ._writeback import plan, refuse_installed, write_back, written_text

if TYPE_CHECKING:
    from .._result import RepairResult
    from .._store import Store
    from .._target._target import Target

log = logging.getLogger("regrow")

WriteBackMode = Literal["off", "patch", "apply"]
Detail = Literal["reference", "redacted"]
MODES: tuple[WriteBackMode, ...] = ("off", "patch", "apply")
MARKER = "<!-- regrow:fingerprint={} -->"


def check_mode(mode: str) -> WriteBackMode:
    """``mode`` if it is a write-back mode whose libraries are installed; else a clear error."""
    if mode not in MODES:
        raise ValueError(f"write_back must be one of {', '.join(map(repr, MODES))}, not {mode!r}")
    if mode != "off":
        import importlib.util

        for name in ("filelock", "libcst"):  # found, not imported: libcst (~0.4 s) only where a write needs it
            if importlib.util.find_spec(name) is None:
                raise RegrowError(f"write_back={mode!r} needs {name}: pip install 'regrow[delivery]'")
    return mode


def ledger_id(store: Store | None, result: RepairResult) -> int | None:
    """The id of ``result``'s session in the store's ledger (the newest session that matches it)."""
    if store is None or result.failure is None:
        return None
    fix = result.fix.source if result.fix is not None else None
    for session in store.sessions(result.target):
        if session["fingerprint"] == result.failure.fingerprint and bool(session["ok"]) == result.ok \
                and session["fix"] == fix:
            return int(session["id"])
    return None


def where(path: Path) -> tuple[Git | None, Path, str]:
    """The repository of ``path`` (if any), the folder paths are relative to, and ``path`` relative to it."""
    git = Git.of(path)
    root = git.root if git is not None else path.resolve().parent
    return git, root, path.resolve().relative_to(root.resolve()).as_posix()


def record_of(target: Target, result: RepairResult, checks: Sequence[Any] = (), store: Store | None = None,
              files: tuple[bytes, bytes] | None = None) -> Record:
    """The provenance record of ``result`` (a fix, with the file's bytes before and after; or a failure)."""
    failure = result.failure
    git, _, relative = where(Path(target.filename))
    fix = result.fix
    before, after = files if files is not None else (b"", b"")
    return prov.Record(
        kind="fix" if result.ok and fix is not None else "failure",
        qualname=target.qualname, module=target.module, path=relative,
        fingerprint=failure.fingerprint if failure is not None else prov.sha256(target.qualname)[:16],
        failure=redact_text(failure.summary()) if failure is not None else "",
        exc_type=failure.exc_type if failure is not None else "",
        ledger=redact_text(result.ledger(limit=20)), candidates=result.candidates, reason=redact_text(result.reason),
        ledger_id=ledger_id(store, result), checks=prov.checks_of(checks),
        proved_by=tuple(result.verdict.passed) if result.verdict is not None else (),
        origin=fix.origin if fix is not None else "", operator=fix.operator if fix is not None else "",
        git_head=git.head() if git is not None else None,
        file_sha256_before=prov.sha256(before) if files else "", file_sha256_after=prov.sha256(after) if files else "",
        definition_sha256_before=prov.sha256(target.file_source),
        definition_sha256_after=prov.sha256(written_text(target, fix.source)) if fix is not None else "",
        evidence=evidence_text(failure, "issue") if failure is not None and not result.ok else "",
    )


Record = prov.Record


def save_patch(target: Target, result: RepairResult, checks: Sequence[Any] = (), folder: Path | None = None,
               store: Store | None = None, expected: str | None = None) -> Path:
    """Write the fix of ``result`` as a patch and its record (nothing else written); the record's path."""
    assert result.fix is not None
    refuse_installed(Path(target.filename), f"no patch of {target.qualname}")
    before, after = plan(target, result.fix.source, expected)
    _, root, relative = where(Path(target.filename))
    record = record_of(target, result, checks, store, (before, after))
    return prov.write(folder or root / ".regrow" / "patches", record, prov.patch(before, after, relative))


def save_failure(target: Target, result: RepairResult, folder: Path, store: Store | None = None) -> Path:
    """Write the record of a failure that could not be repaired (what an issue is made from)."""
    return prov.write(folder, record_of(target, result, (), store), None)


class Keeper:
    """What one decorated function does with its proven fixes (``heal(write_back=...)``)."""

    def __init__(self, mode: WriteBackMode = "off") -> None:
        self.mode = mode
        self.kept: list[Path] = []  # what was written: backups ("apply") or records ("patch")
        self._pending: tuple[Target, RepairResult, tuple[Any, ...], Store | None] | None = None
        self.written: str | None = None  # the definition as the last write-back left it (dedented)
        self._lock = threading.Lock()

    def proven(self, target: Target, result: RepairResult, checks: Sequence[Any], store: Store | None) -> None:
        """A fix was installed: keep it as the mode says. A failure here is logged, never raised."""
        with self._lock:
            self._pending = (target, result, tuple(checks), store)
            if self.mode == "off":
                return
            try:
                self._keep(self.mode, force=False)
            except Exception as exc:  # the repair stands whatever happens to its delivery
                log.warning("the fix of %s is installed but was not kept (%s): %s", target.qualname,
                            self.mode, exc)

    def switch(self, mode: WriteBackMode, force: bool = False) -> Path | None:
        """Keep fixes in ``mode`` from now on; a fix installed and not kept yet is kept at once (errors raise)."""
        with self._lock:
            self.mode = check_mode(mode)
            return self._keep(mode, force) if mode != "off" and self._pending is not None else None

    def _keep(self, mode: WriteBackMode, force: bool) -> Path | None:
        assert self._pending is not None
        target, result, checks, store = self._pending
        if result.fix is None:
            return None
        if mode == "patch":  # the fix stays pending: write_back("apply") may still write it
            kept = save_patch(target, result, checks, store=store, expected=self.written)
        else:
            kept = write_back(target, result.fix.source, force=force, expected=self.written).backup
            self.written = written_text(target, result.fix.source)
            self._pending = None
        self.kept.append(kept)
        log.info("kept the fix of %s (%s): %s", target.qualname, mode, kept)
        return kept


@dataclasses.dataclass(frozen=True)
class Delivered:
    """What became of one record: ``status`` is ``opened``, ``exists``, ``commented`` or ``failed``."""

    record: Record
    status: str
    url: str = ""
    branch: str = ""
    message: str = ""


def branch_name(record: Record) -> str:
    return f"regrow/{record.name}"


def propose(record: Record, patch: bytes, git: Git, github: GitHub, *, remote: str = "origin",
            base: str | None = None, force: bool = False) -> Delivered:
    """One branch and one draft pull request for the fix in ``record`` (nothing if there is one)."""
    branch = branch_name(record)
    default = git.default_branch(remote)
    base = base or default
    if base is None:
        raise RegrowError(f"cannot tell the default branch of {remote}; give the base branch")
    if branch in (base, default):
        raise RegrowError(f"the branch {branch} is the default or base branch; regrow never pushes there")
    existing = github.pulls(branch)
    if existing:
        return Delivered(record, "exists", str(existing[0].get("html_url", "")), branch, "already proposed")
    if not git.remote_has(remote, branch):
        if git.local_has(branch):
            raise RegrowError(f"a local branch {branch} exists but is not on {remote}; not moving it")
        commit = build(record, patch, git, remote=remote, base=base, force=force)
        try:
            git.push_new(remote, commit, branch)
        except GitError:
            if not git.remote_has(remote, branch):
                raise
            # Another process pushed this failure's branch first: one branch, and one PR below either way.
            check_existing(record, patch, git, branch, remote=remote, base=base)
        else:
            git.create_branch(branch, commit)  # only after the push: a failed push leaves no branch behind
    else:  # pushed earlier (its pull request failed), or by someone else: only if it holds exactly the fix
        check_existing(record, patch, git, branch, remote=remote, base=base)
    try:
        pull = github.create_pull(branch, base, f"regrow: fix {record.qualname}", pull_body(record))
    except Unprocessable as exc:
        if "already exists" not in str(exc) and not any("already exists" in str(e) for e in exc.errors):
            raise
        found = github.pulls(branch)
        return Delivered(record, "exists", str(found[0].get("html_url", "")) if found else "", branch,
                         "already proposed")
    return Delivered(record, "opened", str(pull.get("html_url", "")), branch)


def pull_body(record: Record) -> str:
    rows = [("failure", f"`{record.failure}`"), ("fix", f"{record.origin} {record.operator}".strip()),
            ("proven against", ", ".join(f"`{c}`" for c in record.checks) or "the replay of the failing call"),
            ("proven at", f"`{record.git_head}`" if record.git_head else "no commit"),
            ("ledger id", str(record.ledger_id) if record.ledger_id is not None else "no store"),
            ("file sha256", f"`{record.file_sha256_before[:16]}` → `{record.file_sha256_after[:16]}`")]
    table = "\n".join(f"| {name} | {value} |" for name, value in rows)
    return (f"regrow repaired `{record.module}.{record.qualname}` in `{record.path}`.\n\n"
            f"{MARKER.format(record.fingerprint)}\n\n| | |\n| --- | --- |\n{table}\n\n"
            f"### Ledger\n\n```text\n{record.ledger}\n```\n")


def issue_body(record: Record, detail: Detail) -> str:
    head = (f"regrow could not repair `{record.module}.{record.qualname}` in `{record.path}`"
            f"{f' at `{record.git_head[:12]}`' if record.git_head else ''}.\n\n{MARKER.format(record.fingerprint)}\n\n"
            f"- failure: `{record.exc_type}`, fingerprint `{record.fingerprint}`\n"
            f"- candidates proven: {record.candidates}\n"
            f"- ledger id: {record.ledger_id if record.ledger_id is not None else 'no store'}\n")
    if detail == "reference":
        return head + "\nThe evidence stays in the ledger; this issue only refers to it.\n"
    text = redact_text(f"{record.failure}\n{record.reason}\n\n{record.ledger}")
    evidence = f"\n### Evidence (redacted)\n\n```text\n{redact_text(record.evidence)}\n```\n" if record.evidence else ""
    return head + f"\n### Ledger (redacted)\n\n```text\n{text}\n```\n" + evidence


def escalate(record: Record, github: GitHub, detail: Detail = "reference", comment: bool = True) -> Delivered:
    """One issue per fingerprint: opened the first time; a repeat adds one comment (or nothing)."""
    marker = MARKER.format(record.fingerprint)
    for issue in github.open_issues():
        if marker in str(issue.get("body") or ""):
            url = str(issue.get("html_url", ""))
            if not comment:
                return Delivered(record, "exists", url)
            github.comment(int(issue["number"]), "regrow saw this failure again.\n\n" + issue_body(record, detail))
            return Delivered(record, "commented", url)
    title = f"regrow could not repair {record.qualname} ({record.exc_type or 'failure'})"
    issue = github.create_issue(title, issue_body(record, detail))
    return Delivered(record, "opened", str(issue.get("html_url", "")))


def summary(found: Sequence[tuple[Record, bytes | None]], delivered: Sequence[Delivered] = ()) -> str:
    """A Markdown report of the records (a job summary): each fix with its patch, each failure."""
    links = {d.record.name: d for d in delivered}
    parts = ["## regrow\n"]
    for record, patch in found:
        done = links.get(record.name)
        status = f" — {done.status}{': ' + done.url if done.url else ''}{': ' + done.message if done.message else ''}" \
            if done else ""
        if record.kind == "fix":
            text = (patch or b"").decode("utf-8", errors="replace")
            parts.append(f"### Fixed `{record.qualname}`{status}\n\n{record.failure}\n\n```diff\n{text}```\n")
        else:
            parts.append(f"### Not fixed `{record.qualname}`{status}\n\n{record.failure}: {record.reason}\n")
    if len(parts) == 1:
        parts.append("Nothing to repair.\n")
    return "\n".join(parts)


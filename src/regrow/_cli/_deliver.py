"""The delivery part of the ``regrow`` command: ``heal --apply/--patch/--pr/--issue`` and ``deliver``.

``regrow heal`` keeps a fix it found (``--apply`` writes the file; ``--patch DIR`` writes a patch
and its record; ``--pr`` opens a draft pull request) and escalates one it did not (``--issue``;
``--patch DIR`` writes the failure's record). ``regrow deliver DIR`` turns the records a run left
(``pytest --heal --heal-patch DIR``) into pull requests, issues and a Markdown summary: what the
GitHub Action runs. Exit status 3: the fix was found, but keeping or delivering it failed.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .._delivery import _keep as delivery
from .._delivery import _provenance as prov
from .._delivery._git import Git
from .._delivery._github import DEFAULT_API, GitHub, GitHubConfig
from .._delivery._writeback import forceable, write_back
from .._errors import RegrowError

if TYPE_CHECKING:
    from .._result import RepairResult
    from .._store import Store
    from .._target._target import Target

UNDELIVERED = 3


@dataclasses.dataclass(frozen=True)
class Keeping:
    """What ``regrow heal`` (and an agent's heal) does with a fix it found, or a failure it could not fix."""

    apply: bool = False  # write the fix into the file, with a backup
    force: bool = False  # over uncommitted git changes, a read-only or hard-linked file
    patch: Path | None = None  # the folder for the patch and its record (or the failure's record)
    pr: bool = False  # a branch and a draft pull request
    issue: bool = False  # an issue when no fix is found
    issue_detail: delivery.Detail = "reference"
    repo: str | None = None
    api_url: str | None = None
    token_env: str = "GITHUB_TOKEN"
    remote: str = "origin"
    base: str | None = None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Keeping:
        """The options ``add_heal_options`` added, as parsed."""
        return cls(**{field.name: getattr(args, field.name) for field in dataclasses.fields(cls)})


Args = Keeping | argparse.Namespace  # the heal's keeping options, or the deliver command's arguments


def add_github_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("GitHub")
    group.add_argument("--repo", default=None, metavar="OWNER/NAME", help="the GitHub repository of the fixes")
    group.add_argument("--api-url", default=None, help="the GitHub API (default: $GITHUB_API_URL or api.github.com)")
    group.add_argument("--token-env", default="GITHUB_TOKEN", metavar="NAME",
                       help="the environment variable that holds the token (GITHUB_TOKEN)")
    group.add_argument("--remote", default="origin", help="the git remote to push branches to (origin)")
    group.add_argument("--base", default=None, help="the pull requests' base branch (default: the remote's default)")
    group.add_argument("--issue-detail", choices=("reference", "redacted"), default="reference",
                       help="what an issue holds: a reference to the ledger, or the ledger redacted (reference)")


def add_heal_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--apply", action="store_true", help="write the fix back to the file (with a backup)")
    parser.add_argument("--force", action="store_true",
                        help="write over a file with uncommitted git changes, a read-only or hard-linked file")
    parser.add_argument("--patch", default=None, metavar="DIR", type=Path,
                        help="write the fix as a patch and its provenance record (or the failure's record) into DIR")
    parser.add_argument("--pr", action="store_true", help="push a branch with the fix and open a draft pull request")
    parser.add_argument("--issue", action="store_true", help="open an issue (one per failure) when no fix is found")
    parser.add_argument("--store", default=None, metavar="PATH", help="a SQLite store for the ledger (and its ids)")
    add_github_options(parser)


def add_deliver_command(commands: Any) -> None:
    deliver = commands.add_parser(
        "deliver", help="open pull requests and issues from the records of a run (pytest --heal --heal-patch DIR)")
    deliver.add_argument("folder", type=Path, help="the folder of patches and records")
    deliver.add_argument("--pr", action="store_true", help="a branch and a draft pull request for each fix")
    deliver.add_argument("--issues", action="store_true", help="an issue for each failure that was not fixed")
    deliver.add_argument("--summary", default=None, type=Path, metavar="FILE",
                         help="append a Markdown summary (each fix's patch) to FILE, e.g. $GITHUB_STEP_SUMMARY")
    deliver.add_argument("--force", action="store_true",
                         help="propose fixes proven on uncommitted versions of their files")
    add_github_options(deliver)
    deliver.set_defaults(run=run_deliver)


def _github(args: Args) -> GitHub:
    if not args.repo:
        raise RegrowError("--repo OWNER/NAME is needed to talk to GitHub")
    api = args.api_url or os.environ.get("GITHUB_API_URL") or DEFAULT_API
    return GitHub(GitHubConfig(args.repo, api, args.token_env))


def _git(where: Path | None = None) -> Git:
    """The repository holding ``where`` (the fixed file's folder; the current folder for ``regrow deliver``)."""
    git = Git.of(where or Path.cwd())
    if git is None:
        raise RegrowError(f"{where or 'the current folder'} is not in a git repository: a pull request needs one")
    return git


def after_fix(args: Keeping, target: Target, result: RepairResult, checks: Sequence[Any],
              store: Store | None, out: TextIO, err: TextIO | None = None, done: list[str] | None = None) -> int:
    """Keep the fix as asked; 0, or :data:`UNDELIVERED` with the reason on ``err`` (stderr). ``done`` gets what
    was kept: ``"patch"``, ``"written"``, and each pull request's status (``"opened"``, ``"exists"``, …)."""
    done = done if done is not None else []
    import tempfile

    assert result.fix is not None
    err = err or sys.stderr
    with tempfile.TemporaryDirectory(prefix="regrow-patch-") as scratch:
        code = 0
        record_path: Path | None = None
        try:
            if args.patch is not None or args.pr:
                record_path = delivery.save_patch(target, result, checks, args.patch or Path(scratch), store)
                done.append("patch")
                if args.patch is not None:
                    print(f"regrow: wrote the patch and its record: {record_path.with_suffix('.patch')}", file=out)
            if args.apply:
                written = write_back(target, result.fix.source, force=args.force)
                done.append("written")
                print(f"regrow: wrote {target.filename} (backup: {written.backup})", file=out)
        except RegrowError as exc:
            print(f"regrow: the fix was not kept: {forceable(exc, '--force')}", file=err)
            code = UNDELIVERED
        if args.pr and record_path is not None:
            try:
                code = max(code, _deliver_records(args, record_path.parent, [record_path.name], out, err, done,
                                                  where=Path(target.filename).resolve().parent))
            except RegrowError as exc:  # no token, no repository: the fix itself stands
                print(f"regrow: the fix was not proposed: {exc}", file=err)
                code = UNDELIVERED
        return code


def after_failure(args: Keeping, target: Target, result: RepairResult, store: Store | None,
                  out: TextIO) -> None:
    """Record and escalate a failure that could not be repaired, as asked (a failure here is reported)."""
    try:
        if args.patch is not None:
            path = delivery.save_failure(target, result, args.patch, store)
            print(f"regrow: wrote the failure's record: {path}", file=out)
        if args.issue:
            with _github(args) as github:
                done = delivery.escalate(delivery.record_of(target, result, (), store), github, args.issue_detail)
            print(f"regrow: issue {done.status}: {done.url}", file=out)
    except RegrowError as exc:
        print(f"regrow: the failure was not escalated: {exc}", file=sys.stderr)


def run_deliver(args: argparse.Namespace, out: TextIO) -> int:
    if not (args.pr or args.issues or args.summary is not None):
        raise RegrowError("regrow deliver needs something to do: --pr, --issues and/or --summary FILE")
    if not args.folder.is_dir():
        raise RegrowError(f"no such folder: {args.folder}")
    return _deliver_records(args, args.folder, None, out)


def _deliver_records(args: Args, folder: Path, names: list[str] | None, out: TextIO,
                     err: TextIO | None = None, statuses: list[str] | None = None, where: Path | None = None) -> int:
    """Deliver the records in ``folder`` (those in ``names``); a line each on ``out``, failures on ``err``. A pull
    request is made in the repository holding ``where`` (the current folder's, without it)."""
    err = err or sys.stderr
    try:
        found = [(record, patch) for record, patch in prov.read(folder, skipped=lambda note: print(
                     f"regrow: {note}", file=err))
                 if names is None or f"{record.name}.json" in names]
    except (ValueError, OSError) as exc:
        raise RegrowError(f"cannot read the records in {folder}: {exc}") from exc
    delivered: list[delivery.Delivered] = []
    wants_pr, wants_issues = getattr(args, "pr", False), getattr(args, "issues", False)
    if wants_pr or wants_issues:
        with _github(args) as github:
            git = _git(where) if wants_pr else None
            for record, patch in found:
                delivered.append(_one(args, record, patch, git, github))
    for done in delivered:
        if statuses is not None:
            statuses.append(done.status)
        said = " ".join(part for part in (done.status, done.url) if part)
        print(f"regrow: {done.record.qualname}: {said}{f': {done.message}' if done.message else ''}",
              file=err if done.status == "failed" else out)
    code = UNDELIVERED if any(done.status == "failed" for done in delivered) else 0
    summary = getattr(args, "summary", None)
    if summary is not None:
        try:
            with open(summary, "a", encoding="utf-8") as handle:
                handle.write(delivery.summary(found, delivered))
        except OSError as exc:
            print(f"regrow: the summary was not written: {exc}", file=err)
            code = UNDELIVERED
    return code


def _one(args: Args, record: prov.Record, patch: bytes | None, git: Git | None,
         github: GitHub) -> delivery.Delivered:
    try:
        if record.kind == "fix" and git is not None and patch is not None:
            return delivery.propose(record, patch, git, github, remote=args.remote, base=args.base,
                                    force=args.force)
        if record.kind == "failure" and getattr(args, "issues", False):
            return delivery.escalate(record, github, args.issue_detail)
    except RegrowError as exc:  # one record's failure does not stop the others
        return delivery.Delivered(record, "failed", message=str(exc))
    return delivery.Delivered(record, "skipped")

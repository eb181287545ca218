"""What a pull request's branch may hold: exactly the fix, on a commit the remote's base branch has.

A pull request is proposed from ``regrow/QUALNAME-FINGERPRINT``. Before regrow makes that branch it
checks that nothing but the fix would travel, and refuses (unless forced) when something would:

- the fix was proven on a version of the file that is not the committed one (compared as git
  checks the file out, so an ``eol=crlf`` or ``core.autocrlf`` checkout is the committed version);
- the commit it was proven at has commits that are not on the remote's base branch (unpushed work,
  or a feature branch): they would ride along in the pull request;
- other tracked files have uncommitted changes: the fix was proven with them, and they do not travel.

A branch of that name that is already on the remote (another process proposed the same fix first, or
a pull request could not be opened earlier) is used only if its tip is the commit regrow would make
there: one commit, on the base branch, whose tree is the parent's with the patch applied.
"""

from __future__ import annotations

from .._errors import RegrowError
from ._git import Git, GitError
from ._provenance import Record, sha256


def build(record: Record, patch: bytes, git: Git, *, remote: str, base: str, force: bool) -> str:
    """The commit of the fix in ``record``, on the commit it was proven at; its id (nothing is pushed)."""
    parent = record.git_head or git.head()
    if parent is None:
        raise RegrowError("the repository has no commit to build the fix on")
    if not force:
        refused = _refusals(record, git, parent, remote, base)
        if refused:
            raise RegrowError("; ".join(refused) + " (--force proposes it anyway)")
    message = f"regrow: fix {record.qualname}\n\n{record.failure}\n\nRegrow-Fingerprint: {record.fingerprint}\n"
    commit = git.commit_patch(patch, parent, message)
    changed = git.changed_paths(commit)
    if changed != [record.path]:
        raise RegrowError(f"the commit would change {changed}, not only {record.path}; not pushed")
    return commit


def _refusals(record: Record, git: Git, parent: str, remote: str, base: str) -> list[str]:
    refused = []
    versions = (git.blob(parent, record.path), git.checked_out(parent, record.path))
    if not any(data is not None and sha256(data) == record.file_sha256_before for data in versions):
        refused.append(f"the fix was proven on a version of {record.path} that is not the one committed at "
                       f"{parent[:12]} (uncommitted changes?): commit them first")
    ahead = git.commits_not_on(parent, remote, base)
    if ahead is None:
        refused.append(f"cannot tell whether {parent[:12]} is on {remote}/{base}: fetch {remote} first")
    elif ahead:
        refused.append(f"{parent[:12]}, where the fix was proven, has {ahead} commit{'s' * (ahead != 1)} not on "
                       f"{remote}/{base}, which would ride along in the pull request: push them first")
    others = [path for path in git.uncommitted() if path != record.path]
    if others:
        more = f" and {len(others) - 3} more" if len(others) > 3 else ""
        refused.append(f"other tracked files have uncommitted changes ({', '.join(others[:3])}{more}): the fix "
                       f"was proven with them, and they would not travel: commit them first")
    return refused


def check_existing(record: Record, patch: bytes, git: Git, branch: str, *, remote: str, base: str) -> None:
    """Refuse (:class:`RegrowError`) a branch on the remote that does not hold exactly the fix."""
    tip = git.remote_tip(remote, branch)
    if tip is None:
        raise RegrowError(f"the branch {branch} is gone from {remote}")
    why = _not_the_fix(record, patch, git, tip, remote, base)
    if why:
        raise RegrowError(f"the branch {branch} is on {remote} but its tip {tip[:12]} is not this fix ({why}); "
                          f"not opening a pull request from it: delete the branch, or look at what it holds")


def _not_the_fix(record: Record, patch: bytes, git: Git, tip: str, remote: str, base: str) -> str:
    parents = git.text("rev-list", "--parents", "-n", "1", tip).split()[1:]
    if len(parents) != 1:
        return f"{len(parents)} parents"
    parent = parents[0]
    if parent != record.git_head and git.commits_not_on(parent, remote, base) != 0:
        return f"its parent {parent[:12]} is not on {remote}/{base}"
    try:
        expected = git.commit_patch(patch, parent, "regrow: the commit the branch should be")
    except GitError:
        return f"the fix does not apply to its parent {parent[:12]}"
    if git.text("rev-parse", f"{expected}^{{tree}}") != git.text("rev-parse", f"{tip}^{{tree}}"):
        return f"it changes {', '.join(git.changed_paths(tip)) or 'nothing'}, not just the fix of {record.path}"
    return ""

"""git plumbing, with real git and a bare remote in a temporary folder."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from regrow._delivery._git import Git, GitError
from regrow._delivery._provenance import patch

PRICES = b"def price(n):\n    return n * 2 + 1\n"
FIXED = b"def price(n):\n    return n * 2\n"


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def make_repo(tmp_path: Path) -> tuple[Path, Path]:
    """A work tree cloned from a bare remote (default branch main) holding one commit."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(remote), str(work))
    git(work, "config", "user.name", "Dev")
    git(work, "config", "user.email", "dev@example.test")
    git(work, "checkout", "-q", "-b", "main")
    (work / "shop").mkdir()
    (work / "shop" / "prices.py").write_bytes(PRICES)
    (work / "shop" / "prices.py").chmod(0o755)
    (work / "notes.txt").write_text("notes\n")
    (work / "other.py").write_text("x = 1\n")
    git(work, "add", ".")
    git(work, "commit", "-qm", "start")
    git(work, "push", "-q", "origin", "main")
    return work, remote


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, Path]:
    return make_repo(tmp_path)


def test_a_commit_on_a_temporary_index_touches_neither_the_work_tree_nor_the_index(repo):
    work, _ = repo
    (work / "other.py").write_text("x = 2\n")
    git(work, "add", "other.py")  # staged: must stay staged, and must not travel
    (work / "notes.txt").write_text("unsaved thoughts\n")  # uncommitted: must stay, and must not travel
    status, staged = git(work, "status", "--porcelain"), git(work, "diff", "--cached")
    repo_ = Git.of(work / "shop" / "prices.py")
    assert repo_ is not None and repo_.root.resolve() == work.resolve()
    head = repo_.head()
    assert head is not None
    commit = repo_.commit_patch(patch(PRICES, FIXED, "shop/prices.py"), head, "regrow: fix price\n")
    assert git(work, "status", "--porcelain") == status and git(work, "diff", "--cached") == staged
    assert (work / "shop" / "prices.py").read_bytes() == PRICES
    assert repo_.changed_paths(commit) == ["shop/prices.py"]
    assert git(work, "show", f"{commit}:shop/prices.py").encode() == FIXED
    assert git(work, "ls-tree", commit, "shop/prices.py").startswith("100755 ")  # the executable bit kept
    assert git(work, "rev-parse", f"{commit}^").strip() == head
    assert git(work, "rev-parse", "HEAD").strip() == head  # no branch moved


def test_a_patch_that_does_not_fit_the_parent_is_refused(repo):
    work, _ = repo
    repo_ = Git(work)
    with pytest.raises(GitError, match="does not apply"):
        repo_.commit_patch(patch(b"def price(n):\n    return 0\n", FIXED, "shop/prices.py"), repo_.head() or "",
                           "msg")


def test_a_branch_is_pushed_only_where_none_is_and_never_moved(repo):
    work, remote = repo
    repo_ = Git(work)
    head = repo_.head() or ""
    first = repo_.commit_patch(patch(PRICES, FIXED, "shop/prices.py"), head, "one")
    repo_.push_new("origin", first, "regrow/fix")
    repo_.create_branch("regrow/fix", first)
    second = repo_.commit_patch(patch(PRICES, b"def price(n):\n    return 2 * n\n", "shop/prices.py"), head, "two")
    with pytest.raises(GitError, match="push"):
        repo_.push_new("origin", second, "regrow/fix")
    with pytest.raises(GitError):
        repo_.create_branch("regrow/fix", second)
    assert git(remote, "rev-parse", "refs/heads/regrow/fix").strip() == first
    assert git(work, "rev-parse", "refs/heads/regrow/fix").strip() == first
    assert repo_.remote_has("origin", "regrow/fix") and not repo_.remote_has("origin", "regrow/other")
    assert repo_.default_branch("origin") == "main"


def test_changes_of_a_file(repo):
    work, _ = repo
    repo_ = Git(work)
    assert repo_.changes(work / "shop" / "prices.py") == ""
    (work / "shop" / "prices.py").write_bytes(FIXED)
    assert repo_.changes(work / "shop" / "prices.py").startswith("M")
    (work / "new.py").write_text("")
    assert repo_.changes(work / "new.py").startswith("??")
    assert Git.of(work.parent) is None  # the folder above the clone is no repository

"""What a pull request's branch may hold: exactly the fix, on the remote's base; real git, the loopback GitHub."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from test_delivery import client, record, server  # noqa: F401  (server: the fixture)
from test_git import FIXED, PRICES, git, make_repo

from regrow._delivery._git import Git
from regrow._delivery._keep import branch_name, propose
from regrow._delivery._provenance import Record, patch, sha256

PATCH = patch(PRICES, FIXED, "shop/prices.py")


def test_a_branch_of_that_name_that_is_not_the_fix_is_refused(server, tmp_path):  # noqa: F811
    work, _ = make_repo(tmp_path)
    fix = record(work)
    git(work, "checkout", "-qb", "theirs")
    (work / "shop" / "evil.py").write_text("evil = 1\n")
    git(work, "add", "-A")
    git(work, "commit", "-qm", "someone else's branch, with the name regrow would give it")
    git(work, "push", "-q", "origin", f"theirs:refs/heads/{branch_name(fix)}")
    git(work, "checkout", "-q", "main")
    with client(server) as github, pytest.raises(Exception, match=r"is not this fix \(it changes shop/evil.py"):
        propose(fix, PATCH, Git(work), github)
    assert server.pulls == []


def test_a_branch_of_that_name_that_holds_the_fix_and_more_commits_is_refused(server, tmp_path):  # noqa: F811
    work, _ = make_repo(tmp_path)
    fix = record(work)
    git(work, "checkout", "-qb", "theirs")
    (work / "other.py").write_text("x = 'not the fix'\n")
    git(work, "commit", "-qam", "first something else")
    (work / "shop" / "prices.py").write_bytes(FIXED)
    git(work, "commit", "-qam", "then the fix")
    git(work, "push", "-q", "origin", f"theirs:refs/heads/{branch_name(fix)}")
    git(work, "checkout", "-q", "main")
    with client(server) as github, pytest.raises(Exception, match="is not on origin/main"):
        propose(fix, PATCH, Git(work), github)
    assert server.pulls == []


def test_commits_not_on_the_remote_are_refused_unless_forced(server, tmp_path):  # noqa: F811
    work, remote = make_repo(tmp_path)
    (work / "other.py").write_text("SECRET_FEATURE = 1\n")
    git(work, "commit", "-qam", "local work, not pushed yet")
    fix = record(work)
    with client(server) as github:
        with pytest.raises(Exception, match=r"has 1 commit not on origin/main.*push them first \(--force"):
            propose(fix, PATCH, Git(work), github)
        assert server.pulls == [] and git(remote, "branch", "--list", "regrow/*") == ""
        git(work, "push", "-q", "origin", "main")
        assert propose(fix, PATCH, Git(work), github).status == "opened"


def test_uncommitted_changes_in_other_tracked_files_are_refused_unless_forced(server, tmp_path):  # noqa: F811
    work, _ = make_repo(tmp_path)
    fix = record(work)
    (work / "other.py").write_text("x = 2  # uncommitted: the fix was proven with it\n")
    (work / "untracked.py").write_text("y = 1\n")  # untracked files are not the tracked tree: no matter
    with client(server) as github:
        with pytest.raises(Exception, match=r"other tracked files have uncommitted changes \(other.py\)"):
            propose(fix, PATCH, Git(work), github)
        assert server.pulls == []
        assert propose(fix, PATCH, Git(work), github, force=True).status == "opened"
    assert git(work, "show", f"{branch_name(fix)}:other.py") == "x = 1\n"  # forced, it still does not travel


def test_a_file_with_a_non_ascii_path(server, tmp_path):  # noqa: F811
    work, _ = make_repo(tmp_path)
    git(work, "mv", "shop/prices.py", "shop/prix_€.py")
    git(work, "commit", "-qm", "renamed")
    git(work, "push", "-q", "origin", "main")
    fix = Record(**{**record(work).__dict__, "path": "shop/prix_€.py"})
    with client(server) as github:
        assert propose(fix, patch(PRICES, FIXED, "shop/prix_€.py"), Git(work), github).status == "opened"
    assert git(work, "show", f"{branch_name(fix)}:shop/prix_€.py").encode() == FIXED


@pytest.mark.parametrize("setting", ["eol=crlf", "core.autocrlf"])
def test_a_checkout_with_crlf_endings_proposes_the_fix_with_the_committed_endings(server, tmp_path, setting):  # noqa: F811
    work, _ = make_repo(tmp_path)
    if setting == "eol=crlf":
        (work / ".gitattributes").write_text("*.py text eol=crlf\n")
        git(work, "add", ".gitattributes")
        git(work, "commit", "-qm", "crlf")
        git(work, "push", "-q", "origin", "main")
    else:
        git(work, "config", "core.autocrlf", "true")
    (work / "shop" / "prices.py").unlink()
    git(work, "checkout", "--", ".")
    crlf = (work / "shop" / "prices.py").read_bytes()
    assert crlf == PRICES.replace(b"\n", b"\r\n") and git(work, "status", "--porcelain") == ""
    fix = Record(**{**record(work).__dict__, "file_sha256_before": sha256(crlf)})
    with client(server) as github:
        assert propose(fix, patch(crlf, FIXED.replace(b"\n", b"\r\n"), "shop/prices.py"), Git(work), github).status \
            == "opened"
    committed = subprocess.run(["git", "cat-file", "blob", f"{branch_name(fix)}:shop/prices.py"], cwd=work,
                               capture_output=True, check=True).stdout
    assert committed == FIXED  # in the repository as every other file is: LF
    assert git(work, "diff-tree", "--no-commit-id", "--name-only", "-r", branch_name(fix)) == "shop/prices.py\n"


def test_the_fix_lands_on_the_base_even_after_a_new_commit_in_the_work_tree(tmp_path: Path) -> None:
    """Git.commits_not_on counts against the remote's base as last fetched, and as it is now."""
    work, _ = make_repo(tmp_path)
    head = git(work, "rev-parse", "HEAD").strip()
    assert Git(work).commits_not_on(head, "origin", "main") == 0
    (work / "other.py").write_text("x = 3\n")
    git(work, "commit", "-qam", "more")
    assert Git(work).commits_not_on(git(work, "rev-parse", "HEAD").strip(), "origin", "main") == 1

"""`regrow heal --patch/--pr/--issue`, `regrow deliver` and `pytest --heal-patch`, run as users run them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from github_server import GitHubServer
from test_cli import BUGGY, TESTS
from test_git import git

IMPOSSIBLE = "\n\ndef test_impossible():\n    assert clamp(1, 2, 3) == 'never'\n"
MARKED = '''\
import pytest
from shapes import clamp


@pytest.mark.heal(target="shapes.clamp")
def test_above():
    assert clamp(11, 0, 10) == 10


@pytest.mark.heal(target="shapes.clamp")
def test_inside():
    assert clamp(5, 0, 10) == 5
'''


def make_project(tmp_path: Path, tests: str = TESTS) -> Path:
    """The shapes project of test_cli, committed in a clone of a bare remote (default branch main)."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(remote), str(work))
    git(work, "checkout", "-q", "-b", "main")
    (work / "shapes.py").write_text(BUGGY)
    (work / "tests").mkdir()
    (work / "tests" / "test_shapes.py").write_text(tests)
    (work / "conftest.py").write_text("import sys, os\nsys.path.insert(0, os.path.dirname(__file__))\n")
    (work / ".gitignore").write_text("__pycache__/\n.regrow/\n")
    git(work, "add", ".")
    git(work, "-c", "user.name=Dev", "-c", "user.email=dev@example.test", "commit", "-qm", "start")
    git(work, "push", "-q", "origin", "main")
    return work


@pytest.fixture
def server():
    with GitHubServer() as running:
        yield running


def run(cwd: Path, server: GitHubServer | None, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    if server is not None:
        env["SHOP_TOKEN"] = server.token
    return subprocess.run([sys.executable, "-m", "regrow", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=240, env=env)


def github(server: GitHubServer) -> list[str]:
    return ["--repo", server.repo, "--api-url", server.url, "--token-env", "SHOP_TOKEN"]


def test_patch_writes_a_patch_git_apply_takes_and_its_record(tmp_path):
    work = make_project(tmp_path)
    done = run(work, None, "heal", "shapes.py::clamp", "--test", "tests/test_shapes.py", "--patch", "out", "-q")
    assert done.returncode == 0, done.stderr
    [record_path] = (work / "out").glob("*.json")
    record = json.loads(record_path.read_text())
    assert record["kind"] == "fix" and record["path"] == "shapes.py" and record["checks"]
    assert record["git_head"] == git(work, "rev-parse", "HEAD").strip()
    assert (work / "shapes.py").read_text() == BUGGY  # a patch is not a write
    git(work, "apply", "--check", str(work / "out" / record["patch_name"]))


def test_pr_pushes_a_branch_and_opens_a_draft_pull_request(tmp_path, server):
    work = make_project(tmp_path)
    done = run(work, server, "heal", "shapes.py::clamp", "--test", "tests/test_shapes.py", "--pr", "-q",
               *github(server))
    assert done.returncode == 0, done.stderr
    [pull] = server.pulls
    assert pull["draft"] and pull["base"]["ref"] == "main" and "regrow: repaired clamp" in pull["body"]
    branch = pull["head"]["ref"]
    assert "return high  # the bug" in git(tmp_path / "remote.git", "show", f"{branch}:shapes.py")
    assert (work / "shapes.py").read_text() == BUGGY and git(work, "status", "--porcelain") == ""
    again = run(work, server, "heal", "shapes.py::clamp", "--test", "tests/test_shapes.py", "--pr", "-q",
                *github(server))
    assert again.returncode == 0 and "exists" in again.stdout and len(server.pulls) == 1


def test_pr_uses_the_repository_of_the_target_not_of_the_current_folder(tmp_path, server):
    """``regrow heal ../shop/shapes.py::clamp --pr`` from another folder: the pull request was made from the current
    folder's repository (or refused: "not in a git repository"), not the one that holds the file."""
    work = make_project(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = run(elsewhere, server, "heal", f"{work}/shapes.py::clamp", "--test", f"{work}/tests/test_shapes.py",
               "--pr", "-q", *github(server))
    assert done.returncode == 0, done.stderr
    [pull] = server.pulls
    assert "return high  # the bug" in git(tmp_path / "remote.git", "show", f"{pull['head']['ref']}:shapes.py")


def test_a_failed_pull_request_does_not_undo_the_written_fix(tmp_path, server):
    work = make_project(tmp_path)
    server.fail("POST", "/pulls$", 502, times=10)
    done = run(work, server, "heal", "shapes.py::clamp", "--test", "tests/test_shapes.py", "--apply", "--pr", "-q",
               *github(server))
    assert done.returncode == 3, done.stdout + done.stderr
    assert "return high  # the bug" in (work / "shapes.py").read_text()
    assert "clamp: failed: " in done.stderr and "answered 502" in done.stderr  # a failure goes to stderr


def test_no_fix_opens_one_issue_and_comments_on_a_repeat(tmp_path, server):
    work = make_project(tmp_path, TESTS + IMPOSSIBLE)
    args = ("heal", "shapes.py::clamp", "--test", "tests/test_shapes.py::test_impossible", "--max-candidates", "20",
            "--issue", "--issue-detail", "redacted", *github(server))
    first, second = run(work, server, *args), run(work, server, *args)
    assert (first.returncode, second.returncode) == (1, 1), first.stderr
    [issue] = server.issues
    assert issue["title"] == "regrow could not repair clamp (AssertionError)"
    assert "### Ledger (redacted)" in issue["body"]
    assert len(server.comments) == 1 and "issue opened" in first.stdout and "issue commented" in second.stdout


def test_the_plugin_writes_records_and_deliver_turns_them_into_a_summary(tmp_path):
    work = make_project(tmp_path, MARKED)
    (work / "tests" / "test_shapes.py").rename(work / "test_shapes.py")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--heal-patch", "patches"],
                          cwd=work, capture_output=True, text=True, timeout=300, env=env)
    assert "shapes.clamp: fixed" in done.stdout, done.stdout
    summary = work / "summary.md"
    delivered = run(work, None, "deliver", "patches", "--summary", str(summary))
    assert delivered.returncode == 0, delivered.stderr
    text = summary.read_text()
    assert "### Fixed `clamp`" in text and "+        return high" in text
    assert (work / "shapes.py").read_text() == BUGGY


def test_a_pull_request_without_a_token_is_reported_and_the_fix_stands(tmp_path):
    work = make_project(tmp_path)
    done = run(work, None, "heal", "shapes.py::clamp", "--test", "tests/test_shapes.py", "--apply", "--pr", "-q",
               "--repo", "acme/shop", "--token-env", "NO_SUCH_TOKEN_VARIABLE")
    assert done.returncode == 3, done.stdout + done.stderr
    assert "the environment variable NO_SUCH_TOKEN_VARIABLE is not set" in done.stderr
    assert "return high  # the bug" in (work / "shapes.py").read_text()

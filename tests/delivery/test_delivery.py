"""Delivery against real parts: real git with a bare remote, and a loopback GitHub server with its errors."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

import pytest
from github_server import GitHubServer
from test_git import FIXED, PRICES, git, make_repo

from regrow._delivery._git import Git, GitError
from regrow._delivery._github import GitHub, GitHubConfig, GitHubError, RateLimited, Unprocessable
from regrow._delivery._keep import branch_name, escalate, propose
from regrow._delivery._provenance import Record, patch, sha256


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    with GitHubServer(page_size=3) as running:
        monkeypatch.setenv("REGROW_TEST_TOKEN", running.token)
        yield running


def client(server: GitHubServer, **kwargs: object) -> GitHub:
    options: dict[str, object] = {"backoff": 0.01, **kwargs}
    return GitHub(GitHubConfig(server.repo, server.url, "REGROW_TEST_TOKEN"), **options)  # type: ignore[arg-type]


def record(work: Path, *, ledger: str = "regrow: repaired price (3 candidates proven)", kind: str = "fix",
           fingerprint: str = "0123456789abcdef") -> Record:
    head = git(work, "rev-parse", "HEAD").strip()
    return Record(kind=kind, qualname="price", module="shop.prices", path="shop/prices.py",  # type: ignore[arg-type]
                  fingerprint=fingerprint, failure="price at line 2: AssertionError: 3 != 2",
                  exc_type="AssertionError", ledger=ledger, candidates=3, checks=("tests/test_prices.py::test_two",),
                  origin="engine", operator="binop", git_head=head, file_sha256_before=sha256(PRICES),
                  file_sha256_after=sha256(FIXED), ledger_id=7)


# -- the REST client ------------------------------------------------------------------------
def test_a_refused_token_says_so(server, monkeypatch):
    monkeypatch.setenv("REGROW_TEST_TOKEN", "ghp_wrongwrongwrongwrongwrong")
    with client(server) as github, pytest.raises(GitHubError, match=r"refused the token \(401: Bad credentials"):
        github.create_issue("t", "b")
    assert server.issues == []


def test_no_token_no_call(server, monkeypatch):
    monkeypatch.delenv("REGROW_TEST_TOKEN")
    with pytest.raises(GitHubError, match="REGROW_TEST_TOKEN is not set"):
        client(server)


def test_a_rate_limit_that_resets_soon_is_waited_out(server):
    server.rate_limit("POST", "/issues$", reset_in=0.5)
    started = time.monotonic()
    with client(server) as github:
        made = github.create_issue("t", "b")
    assert made["number"] == 1 and time.monotonic() - started >= 0.4
    assert [r for r in server.requests if r[0] == "POST"] == [("POST", "/repos/acme/shop/issues")] * 2


def test_a_rate_limit_that_resets_late_is_an_error_with_the_time(server):
    server.rate_limit("POST", "/issues$", reset_in=3600)
    with client(server, max_wait=5.0) as github, pytest.raises(RateLimited, match="rate limit is spent until") as info:
        github.create_issue("t", "b")
    assert info.value.reset > time.time() + 3000 and server.issues == []


def test_a_validation_error_lists_what_github_said(server):
    server.fail("POST", "/issues$", 422, message="Validation Failed",
                errors=[{"resource": "Issue", "code": "missing_field", "message": "title is too long"}])
    with client(server) as github, pytest.raises(Unprocessable, match="Validation Failed: title is too long"):
        github.create_issue("t" * 300, "b")


def test_server_errors_are_retried_then_reported(server):
    server.fail("POST", "/issues$", 502, times=2)
    with client(server) as github:
        assert github.create_issue("t", "b")["number"] == 1
    server.fail("POST", "/issues$", 503, times=3)
    with client(server) as github, pytest.raises(GitHubError, match="answered 503"):
        github.create_issue("t", "b")
    assert len(server.issues) == 1


def test_every_page_of_open_issues_is_read(server):
    for n in range(8):
        server.add_issue(f"issue {n}", "")
    with client(server) as github:
        github.create_pull("feature", "main", "a pull request is not an issue", "")
        titles = [issue["title"] for issue in github.open_issues()]
    assert titles == [f"issue {n}" for n in range(8)]
    assert sum(1 for method, path in server.requests if method == "GET" and "/issues" in path) == 3


# -- issues -----------------------------------------------------------------------------------
def test_one_issue_per_failure_found_on_any_page(server, tmp_path):
    work, _ = make_repo(tmp_path)
    failed = record(work, kind="failure")
    for n in range(7):
        server.add_issue(f"unrelated {n}", "")
    with client(server) as github:
        first = escalate(failed, github)
        for n in range(5):
            server.add_issue(f"later {n}", "")
        again = escalate(failed, github)
        quiet = escalate(failed, github, comment=False)
    assert (first.status, again.status, quiet.status) == ("opened", "commented", "exists")
    assert first.url == again.url == quiet.url
    ours = [issue for issue in server.issues if "0123456789abcdef" in issue["body"]]
    assert len(ours) == 1 and len(server.comments) == 1
    assert ours[0]["title"] == "regrow could not repair price (AssertionError)"


def test_an_issue_body_at_each_detail_level(server, tmp_path):
    work, _ = make_repo(tmp_path)
    ledger = "regrow: could not repair price\n  - engine: replay: called with token=ghp_abcdefghijklmnopqrstuvwxyz0123"
    with client(server) as github:
        escalate(record(work, kind="failure", ledger=ledger, fingerprint="aaaa000000000000"), github, "reference")
        escalate(record(work, kind="failure", ledger=ledger, fingerprint="bbbb000000000000"), github, "redacted")
    reference, redacted = (issue["body"] for issue in server.issues)
    assert "ledger id: 7" in reference and "AssertionError" in reference
    assert "could not repair price\n" not in reference and "ghp_" not in reference
    assert "engine: replay: called with token=[REDACTED]" in redacted and "ghp_" not in redacted


# -- pull requests ------------------------------------------------------------------------------
def test_one_failure_one_branch_one_draft_pull_request(server, tmp_path):
    work, remote = make_repo(tmp_path)
    fix = record(work)
    data = patch(PRICES, FIXED, "shop/prices.py")
    with client(server) as github:
        opened = propose(fix, data, Git(work), github)
        again = propose(fix, data, Git(work), github)
    assert (opened.status, again.status) == ("opened", "exists") and opened.url == again.url
    branch = branch_name(fix)
    assert branch == "regrow/price-0123456789abcdef"
    [pull] = server.pulls
    assert pull["draft"] is True and pull["base"]["ref"] == "main" and pull["head"]["ref"] == branch
    assert "regrow: repaired price (3 candidates proven)" in pull["body"] and "| ledger id | 7 |" in pull["body"]
    assert git(remote, "show", f"{branch}:shop/prices.py").encode() == FIXED
    assert git(work, "rev-parse", branch) == git(remote, "rev-parse", branch)
    assert (work / "shop" / "prices.py").read_bytes() == PRICES and git(work, "status", "--porcelain") == ""
    assert git(remote, "rev-parse", "main") == git(work, "rev-parse", "HEAD")  # the default branch never moved


def test_two_processes_proposing_one_fix_make_one_pull_request(server, tmp_path):
    work, _ = make_repo(tmp_path)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(tmp_path / "remote.git"), str(clone))
    fix, data = record(work), patch(PRICES, FIXED, "shop/prices.py")
    results = []

    def deliver(where: Path) -> None:
        with client(server) as github:
            results.append(propose(fix, data, Git(where), github).status)

    threads = [threading.Thread(target=deliver, args=(where,)) for where in (work, clone)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == ["exists", "opened"] and len(server.pulls) == 1


def test_a_failed_push_leaves_no_branch_and_no_pull_request(server, tmp_path):
    work, remote = make_repo(tmp_path)
    hook = remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'pushes are closed today' >&2\nexit 1\n")
    hook.chmod(0o755)
    fix = record(work)
    with client(server) as github, pytest.raises(GitError, match="pushes are closed today"):
        propose(fix, patch(PRICES, FIXED, "shop/prices.py"), Git(work), github)
    assert not Git(work).local_has(branch_name(fix)) and server.pulls == []


def test_a_pull_request_that_failed_is_opened_next_time_without_a_second_push(server, tmp_path):
    work, remote = make_repo(tmp_path)
    fix, data = record(work), patch(PRICES, FIXED, "shop/prices.py")
    server.fail("POST", "/pulls$", 500, times=3)
    with client(server) as github, pytest.raises(GitHubError, match="answered 500"):
        propose(fix, data, Git(work), github)
    pushed = git(remote, "rev-parse", branch_name(fix))
    with client(server) as github:
        assert propose(fix, data, Git(work), github).status == "opened"
    assert git(remote, "rev-parse", branch_name(fix)) == pushed and len(server.pulls) == 1


def test_never_onto_the_default_branch(server, tmp_path):
    work, remote = make_repo(tmp_path)
    fix = record(work)
    git(work, "push", "-q", "origin", f"main:refs/heads/{branch_name(fix)}")
    git(remote, "symbolic-ref", "HEAD", f"refs/heads/{branch_name(fix)}")
    with client(server) as github, pytest.raises(Exception, match="regrow never pushes there"):
        propose(fix, patch(PRICES, FIXED, "shop/prices.py"), Git(work), github)
    assert server.pulls == [] and git(remote, "rev-parse", branch_name(fix)) == git(remote, "rev-parse", "main")


def test_a_fix_proven_on_an_uncommitted_version_is_not_proposed_unless_forced(server, tmp_path):
    work, _ = make_repo(tmp_path)
    rest = b"\n\n" + b"".join(b"def other_%d():\n    return %d\n\n\n" % (n, n) for n in range(3))
    (work / "shop" / "prices.py").write_bytes(PRICES + rest)
    git(work, "commit", "-qam", "more")
    edited = PRICES + rest.replace(b"return 2", b"return 'uncommitted'")
    (work / "shop" / "prices.py").write_bytes(edited)
    fix = Record(**{**record(work).__dict__, "file_sha256_before": sha256(edited)})
    data = patch(edited, FIXED + rest.replace(b"return 2", b"return 'uncommitted'"), "shop/prices.py")
    with client(server) as github:
        with pytest.raises(Exception, match="not the one committed"):
            propose(fix, data, Git(work), github)
        assert propose(fix, data, Git(work), github, force=True).status == "opened"
    # Only the fix travels: the uncommitted edit further down does not.
    assert subprocess.run(["git", "show", f"{branch_name(fix)}:shop/prices.py"], cwd=work, capture_output=True,
                          check=True).stdout == FIXED + rest
    assert (work / "shop" / "prices.py").read_bytes() == edited

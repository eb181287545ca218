"""`regrow heal --apply/--patch/--pr` and `regrow deliver` when keeping the fix fails: one line each, exit 3."""

from __future__ import annotations

from test_delivery_cli import github, make_project, run, server  # noqa: F401  (server: the fixture)
from test_git import git

HEAL = ("heal", "shapes.py::clamp", "--test", "tests/test_shapes.py", "-q")


def test_a_patch_folder_that_cannot_be_made_is_a_failure_to_keep_the_fix(tmp_path):
    work = make_project(tmp_path)
    (work / "afile").write_text("a file, not a folder\n")
    done = run(work, None, *HEAL, "--patch", "afile/sub")
    assert done.returncode == 3, done.stdout + done.stderr
    assert "regrow: the fix was not kept: cannot write the patch and its record into afile/sub" in done.stderr
    assert "Traceback" not in done.stdout + done.stderr


def test_deliver_says_in_one_line_that_the_summary_was_not_written(tmp_path):
    work = make_project(tmp_path)
    assert run(work, None, *HEAL, "--patch", "records").returncode == 0
    done = run(work, None, "deliver", "records", "--summary", str(tmp_path / "no-such-folder" / "summary.md"))
    assert done.returncode == 3, done.stdout + done.stderr
    assert "regrow: the summary was not written:" in done.stderr and "Traceback" not in done.stderr


def test_deliver_skips_a_json_file_that_is_not_a_record(tmp_path):
    work = make_project(tmp_path)
    assert run(work, None, *HEAL, "--patch", "records").returncode == 0
    (work / "records" / "package.json").write_text('{"name": "frontend", "version": "1.0.0"}\n')
    done = run(work, None, "deliver", "records", "--summary", str(tmp_path / "summary.md"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "regrow: skipped package.json: not a regrow record" in done.stderr and "Traceback" not in done.stderr
    assert "### Fixed `clamp`" in (tmp_path / "summary.md").read_text()


def test_a_refused_pull_request_says_why_on_one_line(tmp_path, server):  # noqa: F811
    work = make_project(tmp_path)
    (work / "notes.txt").write_text("local work\n")
    git(work, "add", "notes.txt")
    git(work, "-c", "user.name=Dev", "-c", "user.email=dev@example.test", "commit", "-qm", "not pushed")
    done = run(work, server, *HEAL, "--pr", *github(server))
    assert done.returncode == 3, done.stdout + done.stderr
    assert "regrow: clamp: failed: " in done.stderr and "has 1 commit not on origin/main" in done.stderr
    assert server.pulls == []


def test_a_refused_write_names_the_option_that_forces_it(tmp_path):
    work = make_project(tmp_path)
    (work / "shapes.py").write_text((work / "shapes.py").read_text() + "# my uncommitted work\n")
    done = run(work, None, *HEAL, "--apply")
    assert done.returncode == 3, done.stdout + done.stderr
    assert "has uncommitted changes (M in git status) (--force writes it anyway)" in done.stderr

"""What ``regrow heal`` prints: a short plain log and a summary off a terminal, a live display on one
(a real pseudo-terminal), and ``--version``, ``history`` and ``show`` from the ledger."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

import pytest
from test_cli_status import BUGGY, _env

PREAMBLE = '''\
"""Shapes."""

SIDES = 4

'''  # the function starts at line 5: line numbers in the output are the file's


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "shapes.py").write_text(PREAMBLE + BUGGY)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_shapes.py").write_text(
        "from shapes import clamp\n\n\ndef test_above():\n    assert clamp(11, 0, 10) == 10\n\n\n"
        "def test_below():\n    assert clamp(-1, 0, 10) == 0\n")
    (tmp_path / "conftest.py").write_text("import sys, os\nsys.path.insert(0, os.path.dirname(__file__))\n")
    return tmp_path


def regrow(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "regrow", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=240, env=_env())


HEAL = ("heal", "shapes.py::clamp", "--test", "tests/test_shapes.py")


def test_the_default_plain_output_is_short_and_ends_with_a_summary(project):
    done = regrow(project, *HEAL)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) <= 25, done.stdout
    assert not any(" FAIL " in line for line in lines)  # no line per candidate by default
    summary = {line.split()[0]: line.split(None, 1)[1] for line in lines if line.startswith("  ") and
               len(line.split()) > 1 and not line.startswith("   ")}
    assert summary["outcome"].startswith("fixed")
    assert summary["found"] .endswith("at shapes.py:9")  # the file's line of `return low`, not the def's 5th
    assert "tests/test_shapes.py::test_above" in summary["proved"]
    assert summary["stopped"].startswith("a candidate passed every test")
    assert "+        return high  # the bug: should return high" in lines


def test_verbose_lists_every_candidate_with_file_lines(project):
    done = regrow(project, *HEAL, "-v")
    assert done.returncode == 0, done.stderr
    judged = [line for line in done.stdout.splitlines() if line.lstrip().startswith("#")]
    assert len(judged) > 1 and any(" PASS " in line for line in judged)
    assert all("at shapes.py:" in line for line in judged)
    assert not any("at shapes.py:1 " in line or "at shapes.py:2 " in line for line in judged)  # never the def's


def _on_a_terminal(cwd: Path, *args: str) -> tuple[int, str]:
    """Run regrow with a pseudo-terminal as its output; its status and everything it wrote there."""
    leader, follower = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "regrow", *args], cwd=cwd, stdout=follower,
                               stderr=subprocess.PIPE, env={**_env(), "TERM": "xterm-256color", "COLUMNS": "120"})
    os.close(follower)
    chunks = []
    try:
        while True:
            ready, _, _ = select.select([leader], [], [], 60)
            if not ready:
                break
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the process closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(leader)
        process.wait(timeout=120)
        assert process.stderr is not None
        process.stderr.close()
    return process.returncode, b"".join(chunks).decode("utf-8", "replace")


def test_on_a_terminal_a_live_display_then_the_summary(project):
    status, shown = _on_a_terminal(project, *HEAL)
    assert status == 0, shown
    # the live panel, redrawn in place (rich hides the cursor while it draws), then the summary table
    assert "\x1b[?25l" in shown and "best so far" in shown and "elapsed" in shown, shown
    assert "candidates" in shown and "judged" in shown
    assert "outcome" in shown and "fixed" in shown and "shapes.py:9" in shown
    assert "\x1b[" in shown.split("outcome")[1]  # the diff is coloured


def _screen(shown: str) -> list[str]:
    """The lines left on the terminal once everything ``shown`` was drawn (newlines, carriage returns,
    cursor up and erase line, as rich's live display redraws; other escape sequences draw nothing)."""
    lines, row = [""], 0
    for token in re.findall(r"\x1b\[[0-9;?]*[A-Za-z]|\r|\n|[^\x1b\r\n]+", shown):
        if token == "\n":
            row += 1
            lines += [""] * (row + 1 - len(lines))
        elif token.endswith("A") and token.startswith("\x1b["):
            row = max(0, row - int(token[2:-1] or 1))
        elif token == "\x1b[2K":
            lines[row] = ""
        elif not token.startswith("\x1b") and token != "\r":
            lines[row] += token
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def test_on_a_terminal_the_screen_keeps_at_most_25_lines(project):
    status, shown = _on_a_terminal(project, *HEAL)
    assert status == 0, shown
    screen = _screen(shown)
    assert 10 < len(screen) <= 25, "\n".join(screen)  # the live panel is gone, the summary and the diff stay
    assert any("regrow: fixed by engine" in line for line in screen) and "best so far" not in "\n".join(screen)


def test_log_keeps_the_plain_output_on_a_terminal(project):
    status, shown = _on_a_terminal(project, *HEAL, "--log")
    assert status == 0, shown
    assert "\x1b[?25l" not in shown and "best so far" not in shown
    assert "regrow: searching with engine" in shown


def test_version(project):
    import regrow as package

    done = regrow(project, "--version")
    assert done.returncode == 0 and done.stdout.strip() == f"regrow {package.__version__}"


def test_history_and_show_read_the_ledger(project):
    store = project / ".regrow" / "ledger.sqlite"
    assert regrow(project, *HEAL, "--store", str(store)).returncode == 0
    listed = regrow(project, "history", "--json")  # the default store: .regrow/ledger.sqlite
    assert listed.returncode == 0, listed.stderr
    sessions = json.loads(listed.stdout)
    assert len(sessions) == 1 and sessions[0]["ok"] is True and sessions[0]["qualname"] == "clamp"
    assert "return high" in sessions[0]["fix"]
    table = regrow(project, "history")
    assert "fixed" in table.stdout and "clamp" in table.stdout
    shown = regrow(project, "show", str(sessions[0]["id"]), "--json")
    assert shown.returncode == 0, shown.stderr
    session = json.loads(shown.stdout)
    assert session["verdicts"] and any(verdict["ok"] for verdict in session["verdicts"])
    text = regrow(project, "show", str(sessions[0]["id"]))
    assert "fixed" in text.stdout and "return high" in text.stdout


def test_history_without_a_ledger_and_show_of_no_session_are_bad_input(project):
    missing = regrow(project, "history")
    assert missing.returncode == 2 and "no ledger at" in missing.stderr and "Traceback" not in missing.stderr
    store = project / "ledger.sqlite"
    assert regrow(project, *HEAL, "--store", str(store)).returncode == 0
    nothing = regrow(project, "show", "999", "--store", str(store))
    assert nothing.returncode == 2 and "no session 999" in nothing.stderr


def _grow(store: Path, times: int) -> None:
    """Double the ledger's sessions and the first session's verdicts ``times`` times: more than a pipe holds."""
    import sqlite3

    db = sqlite3.connect(store)
    sessions = "qualname, fingerprint, ok, reason, candidates, duration, fix, created, host"
    for _ in range(times):
        db.execute(f"INSERT INTO sessions ({sessions}) SELECT {sessions} FROM sessions")
        db.execute("INSERT INTO verdicts SELECT * FROM verdicts WHERE session = 1")
    db.commit()
    db.close()


@pytest.mark.parametrize("command", [("history", "--json", "--limit", "100000"), ("show", "1", "--json")])
def test_a_closed_pipe_ends_history_and_show_quietly(project, command):
    store = project / ".regrow" / "ledger.sqlite"
    assert regrow(project, *HEAL, "--store", str(store)).returncode == 0
    _grow(store, 11)  # 2048 sessions, thousands of verdicts: far more than the 64 KiB a pipe buffers
    process = subprocess.Popen([sys.executable, "-m", "regrow", *command], cwd=project, env=_env(),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.readline().strip() in (b"[", b"{")
    process.stdout.close()  # what ``| head -1`` does
    err = process.stderr.read().decode()
    process.stderr.close()
    assert process.wait(timeout=120) == 141, err  # the shell's status for a closed pipe (128 + SIGPIPE)
    assert err == "", err  # no traceback, no "Exception ignored" at exit


def test_quiet_prints_only_the_one_line_result(project):
    done = regrow(project, *HEAL, "-q")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [done.stdout.strip()], done.stdout  # exactly one line: no phases, no diff
    assert done.stdout.startswith("regrow: fixed by engine") and "at shapes.py:9 after " in done.stdout
    assert done.stdout.rstrip().endswith("; the file is unchanged (--apply writes it)"), done.stdout
    assert done.stderr == ""


def test_quiet_without_a_fix_is_one_line_too(project):
    (project / "tests" / "test_shapes.py").write_text(
        "from shapes import clamp\n\n\ndef test_above():\n    assert clamp(11, 0, 10) == 'eleven'\n")
    done = regrow(project, *HEAL, "-q", "--timeout", "60")
    assert done.returncode == 1, done.stdout + done.stderr
    assert len(done.stdout.splitlines()) == 1 and done.stdout.startswith("regrow: no fix for clamp after "), done.stdout
    assert done.stderr == ""  # the session's "could not repair" warning would say the same again


def test_quiet_with_nothing_to_heal_says_why_in_one_line(project):
    (project / "shapes.py").write_text(PREAMBLE + BUGGY.replace("return low  # the bug", "return high  # the bug"))
    done = regrow(project, *HEAL, "-q")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "regrow: every test passes; nothing to repair\n"

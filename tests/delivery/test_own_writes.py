"""Write-back knows its own writes: a file regrow changed is not "dirty" for its next fix; backups in .regrow/."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from regrow._delivery import _own_writes
from regrow._delivery._writeback import WriteBackError, write_edit
from regrow._target._rewrite import Edit

SOURCE = '''\
def first(n):
    return n - 1


def second(n):
    return n - 2
'''
FIRST = Edit("first", "", "def first(n):\n    return n - 1\n", "def first(n):\n    return n + 1\n")
SECOND = Edit("second", "", "def second(n):\n    return n - 2\n", "def second(n):\n    return n + 2\n")


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git work tree with ``shop/prices.py`` committed."""
    git(tmp_path, "init", "-q")
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "prices.py").write_text(SOURCE)
    commit(tmp_path, "start")
    _own_writes._memory.clear()  # every test starts as a fresh process would
    return tmp_path


def commit(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message)


def test_a_second_fix_in_a_committed_file_is_written(repo):
    path = repo / "shop" / "prices.py"
    write_edit(path, FIRST)
    assert git(repo, "status", "--porcelain").strip() == "M shop/prices.py"  # regrow's write, and nothing else
    write_edit(path, SECOND)  # only regrow's changes: clean for the next fix
    assert path.read_text() == SOURCE.replace("n - 1", "n + 1").replace("n - 2", "n + 2")


def test_the_record_serves_a_later_process(repo):
    """``regrow heal --apply`` twice in a row: the second run is another process, and still knows."""
    path = repo / "shop" / "prices.py"
    script = textwrap.dedent(f"""
        from pathlib import Path
        from regrow._target._rewrite import Edit
        from regrow._delivery._writeback import write_edit
        write_edit(Path({str(path)!r}), Edit(*{(FIRST.qualname, FIRST.indent, FIRST.expected, FIRST.replacement)!r}))
    """)
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120,
                   env={"PYTHONPATH": str(Path(__file__).parents[2] / "src"), "PATH": "/usr/bin:/bin"})
    assert _own_writes._memory == {}
    write_edit(path, SECOND)
    assert "n + 1" in path.read_text() and "n + 2" in path.read_text()


def test_the_users_edit_after_regrows_write_makes_it_dirty_again(repo):
    path = repo / "shop" / "prices.py"
    write_edit(path, FIRST)
    path.write_text(path.read_text() + "\n# the user's own line\n")
    with pytest.raises(WriteBackError, match=r"uncommitted changes \(M in git status\)"):
        write_edit(path, SECOND)
    assert "n - 2" in path.read_text()


def test_a_file_the_user_had_changed_stays_dirty_after_a_forced_write(repo):
    """Forced over the user's uncommitted work, the file's changes are not only regrow's: not recorded."""
    path = repo / "shop" / "prices.py"
    path.write_text(SOURCE + "\n# the user's work in progress\n")
    write_edit(path, FIRST, force=True)
    with pytest.raises(WriteBackError, match="uncommitted changes"):
        write_edit(path, SECOND)


def test_a_record_is_stale_once_head_holds_another_version(repo):
    path = repo / "shop" / "prices.py"
    write_edit(path, FIRST)
    ours = path.read_bytes()
    path.write_text(SOURCE.replace("n - 2", "n * 2"))
    commit(repo, "the user's own change")
    path.write_bytes(ours)  # the same bytes regrow wrote, but HEAD moved under them
    with pytest.raises(WriteBackError, match="uncommitted changes"):
        write_edit(path, SECOND)


def test_an_untracked_file_is_never_taken_for_regrows(repo):
    path = repo / "shop" / "new.py"
    path.write_text(SOURCE)
    write_edit(path, FIRST, force=True)
    with pytest.raises(WriteBackError, match=r"uncommitted changes \(\?\? in git status\)"):
        write_edit(path, SECOND)


def test_backups_go_to_the_project_roots_regrow_folder_and_stay_out_of_git_status(repo):
    path = repo / "shop" / "prices.py"
    one = write_edit(path, FIRST)
    two = write_edit(path, SECOND)
    folder = repo / ".regrow" / "backups" / "shop"
    assert (one.backup, two.backup) == (folder / "prices.py", folder / "prices.py.1")
    assert one.backup.read_text() == SOURCE and two.backup.read_bytes() == one.after
    assert not list((repo / "shop").glob("*regrow*"))  # nothing beside the sources
    assert git(repo, "status", "--porcelain", "--untracked-files=all").strip() == "M shop/prices.py"


def test_outside_git_the_root_is_the_folder_with_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'shop'\n")
    (tmp_path / "src" / "shop").mkdir(parents=True)
    path = tmp_path / "src" / "shop" / "prices.py"
    path.write_text(SOURCE)
    written = write_edit(path, FIRST)
    assert written.backup == tmp_path / ".regrow" / "backups" / "src" / "shop" / "prices.py"
    assert written.backup.read_text() == SOURCE

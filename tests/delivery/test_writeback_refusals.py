"""Write-back fails closed: a repository git cannot read, and installed code, are refused with the reason."""

from __future__ import annotations

import os
import shutil
import sysconfig
from pathlib import Path

import pytest
from test_own_writes import FIRST, SOURCE, commit, git

from regrow._delivery import _own_writes
from regrow._delivery._git import Git, GitError
from regrow._delivery._writeback import WriteBackError, write_edit


@pytest.fixture
def dirty(tmp_path: Path) -> Path:
    """A committed ``shop/prices.py`` with the user's uncommitted work at its end."""
    git(tmp_path, "init", "-q")
    (tmp_path / "shop").mkdir()
    path = tmp_path / "shop" / "prices.py"
    path.write_text(SOURCE)
    commit(tmp_path, "start")
    path.write_text(SOURCE + "# my uncommitted work\n")
    _own_writes._memory.clear()
    return path


def test_no_git_on_the_path_is_not_no_repository(dirty, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "no-programs-here"))
    with pytest.raises(GitError, match="holds a git repository, but git could not run"):
        Git.of(dirty)
    with pytest.raises(WriteBackError, match=r"cannot tell whether .*prices.py has uncommitted changes: .* git could "
                                             r"not run.* \(force=True writes it anyway\)"):
        write_edit(dirty, FIRST)
    assert dirty.read_text().endswith("# my uncommitted work\n") and "n - 1" in dirty.read_text()
    write_edit(dirty, FIRST, force=True)  # forced, it is written (and kept in .regrow/backups/ at the top)
    assert "n + 1" in dirty.read_text() and (tmp_path / ".regrow" / "backups" / "shop" / "prices.py").exists()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown to another user needs root")
def test_a_repository_git_refuses_for_dubious_ownership_is_refused(dirty, tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "no-global-config"))  # no safe.directory from it
    shutil.chown(tmp_path, "nobody")
    for folder, names, files in os.walk(tmp_path):
        for name in names + files:
            shutil.chown(Path(folder) / name, "nobody")
    with pytest.raises(WriteBackError, match=r"cannot tell whether .* git says: fatal: detected dubious ownership"):
        write_edit(dirty, FIRST)
    assert "n - 1" in dirty.read_text()


def test_outside_any_repository_there_is_nothing_to_ask_git(tmp_path):
    path = tmp_path / "prices.py"
    path.write_text(SOURCE)
    assert Git.of(path) is None
    write_edit(path, FIRST)
    assert "n + 1" in path.read_text()


def test_installed_code_is_never_written(tmp_path, monkeypatch):
    site = tmp_path / "venv" / "lib" / "site-packages"
    (site / "shop").mkdir(parents=True)
    path = site / "shop" / "prices.py"
    path.write_text(SOURCE)
    real = sysconfig.get_paths
    monkeypatch.setattr(sysconfig, "get_paths", lambda *a, **k: {**real(*a, **k), "purelib": str(site)})
    for force in (False, True):
        with pytest.raises(WriteBackError, match=r"prices.py is installed code \(under .*site-packages\), not the "
                                                 r"source it was installed from"):
            write_edit(path, FIRST, force=force)
    assert path.read_text() == SOURCE and not (site / ".regrow").exists()

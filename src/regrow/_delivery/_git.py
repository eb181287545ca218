"""git, through its own command line: the state of a file, and a commit made with plumbing.

A fix is committed without touching the working tree or the real index: a temporary index
(``GIT_INDEX_FILE``) is filled from the parent commit's tree, the patch is applied to it alone
(``git apply --cached``: only the repaired blob changes, its mode kept), and ``write-tree`` /
``commit-tree`` make the commit. Branches are only ever created, never moved: the push expects the
branch not to exist on the remote, and the local branch is made after the push, expecting the same.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from .._errors import RegrowError

_TIMEOUT = 120.0
_IDENTITY = {"GIT_AUTHOR_NAME": "regrow", "GIT_AUTHOR_EMAIL": "regrow@users.noreply.github.com",
             "GIT_COMMITTER_NAME": "regrow", "GIT_COMMITTER_EMAIL": "regrow@users.noreply.github.com"}


class GitError(RegrowError):
    """A git command failed; the message has its output."""


class Git:
    """One repository, driven through ``git`` in a subprocess."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @classmethod
    def of(cls, path: Path) -> Git | None:
        """The repository holding ``path``, or ``None`` (not in one, or no git on this machine)."""
        folder = path if path.is_dir() else path.parent
        try:
            done = subprocess.run(["git", "-C", str(folder), "rev-parse", "--show-toplevel"], capture_output=True,
                                  timeout=_TIMEOUT, check=False, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired):
            return None
        if done.returncode != 0:
            return None
        return cls(Path(os.fsdecode(done.stdout.strip())))

    def run(self, *args: str, input: bytes | None = None, env: Mapping[str, str] | None = None,
            check: bool = True) -> subprocess.CompletedProcess[bytes]:
        try:
            done = subprocess.run(["git", *args], cwd=self.root, input=input, capture_output=True, timeout=_TIMEOUT,
                                  check=False, env={**os.environ, **(env or {})},
                                  stdin=None if input is not None else subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise GitError(f"git {args[0]} could not run: {exc}") from exc
        if check and done.returncode != 0:
            said = (done.stderr or done.stdout).decode(errors="replace").strip()
            raise GitError(f"git {' '.join(args[:2])} failed: {said}")
        return done

    def text(self, *args: str, env: Mapping[str, str] | None = None) -> str:
        return self.run(*args, env=env).stdout.decode().strip()

    def relative(self, path: Path) -> str:
        """``path`` as git names it: relative to the top of the work tree, with ``/``."""
        return path.resolve().relative_to(self.root.resolve()).as_posix()

    def changes(self, path: Path) -> str:
        """What ``git status`` says of ``path`` ("" when it is as committed; untracked counts)."""
        done = self.run("status", "--porcelain=v1", "--untracked-files=all", "--", self.relative(path))
        return done.stdout.decode(errors="replace").strip()

    def head(self) -> str | None:
        done = self.run("rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False)
        return done.stdout.decode().strip() or None

    def blob(self, commit: str, relative: str) -> bytes | None:
        done = self.run("cat-file", "blob", f"{commit}:{relative}", check=False)
        return done.stdout if done.returncode == 0 else None

    def default_branch(self, remote: str) -> str | None:
        """The branch the remote's ``HEAD`` names (its default branch)."""
        for line in self.text("ls-remote", "--symref", remote, "HEAD").splitlines():
            if line.startswith("ref: refs/heads/") and line.endswith("\tHEAD"):
                return line[len("ref: refs/heads/") : -len("\tHEAD")]
        return None

    def remote_has(self, remote: str, branch: str) -> bool:
        return bool(self.text("ls-remote", "--heads", remote, f"refs/heads/{branch}"))

    def local_has(self, branch: str) -> bool:
        return self.run("show-ref", "--verify", "--quiet", f"refs/heads/{branch}", check=False).returncode == 0

    def commit_patch(self, patch: bytes, parent: str, message: str) -> str:
        """A commit of ``parent``'s tree with ``patch`` applied, made on a temporary index; its id."""
        with tempfile.TemporaryDirectory(prefix="regrow-index-") as scratch:
            env = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
            self.run("read-tree", parent, env=env)
            applied = self.run("apply", "--cached", "--whitespace=nowarn", "-", input=patch, env=env, check=False)
            if applied.returncode != 0:
                said = applied.stderr.decode(errors="replace").strip()
                raise GitError(f"the patch does not apply to {parent[:12]}: {said}")
            tree = self.text("write-tree", env=env)
        identity = {} if self._configured() else _IDENTITY
        done = self.run("commit-tree", tree, "-p", parent, "-F", "-", input=message.encode(), env=identity)
        return done.stdout.decode().strip()

    def _configured(self) -> bool:
        return all(self.run("config", key, check=False).stdout.strip() for key in ("user.name", "user.email"))

    def changed_paths(self, commit: str) -> list[str]:
        return self.text("diff-tree", "--no-commit-id", "--name-only", "-r", f"{commit}^", commit).splitlines()

    def push_new(self, remote: str, commit: str, branch: str) -> None:
        """Push ``commit`` as the new branch ``branch``; refused by the remote if the branch exists."""
        ref = f"refs/heads/{branch}"
        self.run("push", "--porcelain", f"--force-with-lease={ref}:", remote, f"{commit}:{ref}")

    def create_branch(self, branch: str, commit: str) -> None:
        """Make the local branch ``branch`` at ``commit``; fails (moves nothing) if it exists."""
        self.run("update-ref", f"refs/heads/{branch}", commit, "")

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
        """The repository holding ``path``, or ``None`` when it is in none.

        Raises :class:`GitError` when a folder above ``path`` holds a ``.git`` but git cannot answer
        (not installed, or it refuses the repository: "dubious ownership"): a repository git cannot
        read is not "no repository", and what relies on git's answer must not go on without it."""
        folder = path if path.is_dir() else path.parent
        try:
            done = subprocess.run(["git", "-C", str(folder), "rev-parse", "--show-toplevel"], capture_output=True,
                                  timeout=_TIMEOUT, check=False, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            said = f"git could not run ({exc})"
        else:
            if done.returncode == 0:
                return cls(Path(os.fsdecode(done.stdout.strip())))
            lines = done.stderr.decode(errors="replace").strip().splitlines()
            said = f"git says: {lines[0] if lines else f'exit status {done.returncode}'}"
        holder = next((p for p in (folder.resolve(), *folder.resolve().parents) if (p / ".git").exists()), None)
        if holder is None:
            return None
        raise GitError(f"{holder} holds a git repository, but {said}")

    def run(self, *args: str, input: bytes | None = None, env: Mapping[str, str] | None = None,
            check: bool = True, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
        try:
            done = subprocess.run(["git", *args], cwd=cwd or self.root, input=input, capture_output=True,
                                  timeout=_TIMEOUT, check=False, env={**os.environ, **(env or {})},
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
            if applied.returncode != 0 and not self._apply_checked_out(patch, parent, env):
                said = applied.stderr.decode(errors="replace").strip()
                raise GitError(f"the patch does not apply to {parent[:12]}: {said}")
            tree = self.text("write-tree", env=env)
        identity = {} if self._configured() else _IDENTITY
        done = self.run("commit-tree", tree, "-p", parent, "-F", "-", input=message.encode(), env=identity)
        return done.stdout.decode().strip()

    def _apply_checked_out(self, patch: bytes, parent: str, env: Mapping[str, str]) -> bool:
        """Apply ``patch`` (made from the working tree's bytes) to the file as git checks it out of ``parent``
        (``eol=crlf``, ``core.autocrlf``), and stage the result as git would commit it; ``False`` when the
        checked-out bytes are the blob's own (the patch just does not fit)."""
        relative = patch_path(patch)
        if relative is None:
            return False
        blob = self.blob(parent, relative)
        shown = self.checked_out(parent, relative)
        if blob is None or shown is None or shown == blob:
            return False
        with tempfile.TemporaryDirectory(prefix="regrow-apply-") as scratch:
            file = Path(scratch, "tree", relative)
            file.parent.mkdir(parents=True)
            file.write_bytes(shown)
            applied = self.run("apply", "--whitespace=nowarn", "-", input=patch, cwd=Path(scratch, "tree"),
                               env={"GIT_CEILING_DIRECTORIES": scratch}, check=False)
            if applied.returncode != 0:
                return False
            fixed = file.read_bytes()
        made = self.run("hash-object", "-w", f"--path={relative}", "--stdin", input=fixed).stdout.decode().strip()
        mode = self.text("ls-tree", parent, "--", relative).split(" ", 1)[0]
        self.run("update-index", "--cacheinfo", f"{mode},{made},{relative}", env=env)
        return True

    def checked_out(self, commit: str, relative: str) -> bytes | None:
        """The bytes git would check out for ``relative`` at ``commit`` (its eol and filters applied)."""
        done = self.run("cat-file", "--filters", f"{commit}:{relative}", check=False)
        return done.stdout if done.returncode == 0 else None

    def _configured(self) -> bool:
        return all(self.run("config", key, check=False).stdout.strip() for key in ("user.name", "user.email"))

    def changed_paths(self, commit: str) -> list[str]:
        """The paths ``commit`` changes against its first parent (read with ``-z``: never quoted)."""
        done = self.run("diff-tree", "-z", "--no-commit-id", "--name-only", "-r", f"{commit}^", commit)
        return [os.fsdecode(name) for name in done.stdout.split(b"\0") if name]

    def uncommitted(self) -> list[str]:
        """The tracked files whose working-tree or staged content is not ``HEAD``'s (renames: both names)."""
        entries = iter(self.run("status", "--porcelain=v1", "-z", "--untracked-files=no").stdout.split(b"\0"))
        found = []
        for entry in entries:
            if entry:
                found.append(os.fsdecode(entry[3:]))
                if entry[:1] in (b"R", b"C"):  # then the name it had: "XY NEW\0OLD\0"
                    found.append(os.fsdecode(next(entries, b"")))
        return found

    def commits_not_on(self, commit: str, remote: str, base: str) -> int | None:
        """How many commits ``commit`` has that ``remote``'s ``base`` (as the remote has it now, or as last
        fetched) does not; ``None`` when neither is known here."""
        tracking = f"refs/remotes/{remote}/{base}"
        known = [tracking] if self._has(tracking) else []
        listed = self.text("ls-remote", "--heads", remote, f"refs/heads/{base}").split()
        if listed and self._has(listed[0]):
            known.append(listed[0])
        if not known:
            return None
        return int(self.text("rev-list", "--count", commit, "--not", *known))

    def remote_tip(self, remote: str, branch: str) -> str | None:
        """The commit ``branch`` is at on ``remote``, its objects fetched (no ref is made or moved)."""
        listed = self.text("ls-remote", "--heads", remote, f"refs/heads/{branch}").split()
        if not listed:
            return None
        if not self._has(listed[0]):
            self.run("fetch", "-q", "--no-tags", "--no-write-fetch-head", remote, f"refs/heads/{branch}")
        return listed[0]

    def _has(self, commit: str) -> bool:
        return self.run("rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}", check=False).returncode == 0

    def is_ancestor(self, older: str, newer: str) -> bool:
        return self.run("merge-base", "--is-ancestor", older, newer, check=False).returncode == 0

    def push_new(self, remote: str, commit: str, branch: str) -> None:
        """Push ``commit`` as the new branch ``branch``; refused by the remote if the branch exists."""
        ref = f"refs/heads/{branch}"
        self.run("push", "--porcelain", f"--force-with-lease={ref}:", remote, f"{commit}:{ref}")

    def create_branch(self, branch: str, commit: str) -> None:
        """Make the local branch ``branch`` at ``commit``; fails (moves nothing) if it exists."""
        self.run("update-ref", f"refs/heads/{branch}", commit, "")


def patch_path(patch: bytes) -> str | None:
    """The path a one-file patch of :func:`regrow._delivery._provenance.patch` changes (``+++ b/PATH``)."""
    for line in patch.splitlines():
        if line.startswith(b"+++ b/"):
            return os.fsdecode(line[len(b"+++ b/"):])
    return None

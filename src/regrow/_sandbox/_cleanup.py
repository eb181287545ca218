"""Removing a folder a sandboxed call wrote, whatever the shape of the tree it left there.

``shutil.rmtree`` holds one file descriptor per level (``fwalk``) or builds ever longer paths, so a
candidate that makes a folder tree a thousand levels deep makes it fail (too many open files, a path
longer than ``PATH_MAX``, or Python's recursion limit), and the tree outlives the call and the host.
:func:`remove_tree` works on descriptors relative to their parent, iteratively, and never holds more
than :data:`_DEPTH` of them: a folder met deeper than that is first moved up to the top (a rename
within one file system), where it is emptied later. So no shape defeats it; only the disk's own
errors can.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os

_DEPTH = 32  # descriptors held at most while emptying a tree
_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_IS_A_DIRECTORY = (errno.EISDIR, errno.EPERM)  # what unlink answers for a folder (Linux; POSIX says EPERM)


def remove_tree(path: str) -> bool:
    """Remove ``path`` and everything under it, never following a symlink out of it; True if it is gone.

    Never raises for what the tree holds: what cannot be removed (a file the disk refuses to let go
    of) is left, and the answer is False.
    """
    try:
        top = os.open(path, _DIRECTORY)
    except FileNotFoundError:
        return True
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(path)  # a file, or a symlink, where the folder was
        return not os.path.lexists(path)
    try:
        _empty(top)
    except OSError:
        pass
    finally:
        os.close(top)
    try:
        os.rmdir(path)
    except FileNotFoundError:
        pass
    except OSError:
        return False
    return True


def _empty(top: int) -> None:
    """Empty the folder open as ``top``: depth first, ``_DEPTH`` descriptors at most."""
    hoisted = itertools.count()
    stack: list[tuple[int, list[str], str]] = [(top, _files_out(top), "")]  # (fd, sub-folders left, its name)
    try:
        while stack:
            fd, folders, name = stack[-1]
            if not folders and fd == top:
                folders[:] = _files_out(top)  # the folders moved up here, if any: another round
                if not folders:
                    return
            elif not folders:  # this one is empty now
                stack.pop()
                os.close(fd)
                with contextlib.suppress(OSError):
                    os.rmdir(name, dir_fd=stack[-1][0])
            elif len(stack) >= _DEPTH:  # too deep to go on holding descriptors: move it to the top, for later
                with contextlib.suppress(OSError):
                    os.rename(folders.pop(), f".regrow-deep-{os.getpid()}-{next(hoisted)}", src_dir_fd=fd,
                              dst_dir_fd=top)
            else:
                sub_name = folders.pop()
                sub = _open_folder(sub_name, fd)
                if sub is not None:
                    stack.append((sub, _files_out(sub), sub_name))
    finally:
        for fd, _, _ in stack[1:]:
            os.close(fd)


def _open_folder(name: str, parent: int) -> int | None:
    """The sub-folder ``name`` of ``parent`` opened (made readable first if it was made without read
    permission: ``mkdir`` with mode 0 needs no ``chmod``); None if it cannot be, or is gone."""
    for attempt in range(2):
        try:
            return os.open(name, _DIRECTORY, dir_fd=parent)
        except PermissionError:
            if attempt:
                return None
            with contextlib.suppress(OSError):  # it is a folder (unlink said so) and ours: the child ran as us
                os.chmod(name, 0o700, dir_fd=parent)
        except OSError:
            return None
    return None


def _files_out(fd: int) -> list[str]:
    """Unlink every non-folder in the folder open as ``fd`` (made writable first if it was made read-only);
    the names of its sub-folders."""
    with contextlib.suppress(OSError):
        if os.fstat(fd).st_mode & 0o700 != 0o700:
            os.chmod(fd, 0o700)
    try:
        names = os.listdir(fd)
    except OSError:
        return []
    folders = []
    for name in names:
        try:
            os.unlink(name, dir_fd=fd)
        except FileNotFoundError:
            continue
        except OSError as exc:
            if exc.errno in _IS_A_DIRECTORY:
                folders.append(name)
    return folders

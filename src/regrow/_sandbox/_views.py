"""Throwaway views of the folders a function writes (sandbox v3; Linux, as root).

A function that writes a report to ``/srv/app/report.txt`` cannot be proven with its writes refused,
and must not be proven with its writes reaching the real file. So, in a child that has a mount
namespace of its own (:func:`._kernel.private_scratch`), each folder named in ``Limits.views`` gets an
``overlayfs`` mounted on it: the real folder is the read-only lower layer, and the upper layer — where
every write, new file, rename and removal lands — is a directory in a ``tmpfs`` of the child's own.
What the call writes there it reads back; the real folder is never written (overlayfs never writes its
lower layer), and the view is gone with the child's namespace.

The upper layers live in the scratch ``tmpfs`` (so its size bounds them too), in a folder that an empty
read-only ``tmpfs`` then covers: no path in the child reaches an upper layer except through its view.

Landlock and the audit hook then allow writes beneath each view that was mounted (:func:`mounted`);
a folder whose view could not be made stays as it was: writes there are refused.
"""

from __future__ import annotations

import ctypes
import os

from ._kernel import libc

_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
_LIMIT = 4  # views a call may have
# Characters overlayfs reads as separators in its options (or that no path of a view should hold).
_UNSAFE = frozenset(",:\\\n=")
_mounted: list[str] = []  # in a child: the views it mounted, for Landlock and the audit hook


def mounted() -> tuple[str, ...]:
    """The views this (child) process mounted; empty in the host."""
    return tuple(_mounted)


def usable(view: str, scratch: str) -> bool:
    """Whether ``view`` may get a view in a child whose scratch folder is ``scratch``: an absolute, normal
    path of an existing directory, not ``/``, not overlapping scratch, without characters overlayfs
    reads as separators."""
    if type(view) is not str or not view.startswith("/") or view == "/" or os.path.normpath(view) != view:
        return False
    if _UNSAFE & set(view) or view == scratch or scratch.startswith(view + "/") or view.startswith(scratch + "/"):
        return False
    return os.path.isdir(view) and not os.path.islink(view)


def mount(views: tuple[str, ...], scratch: str) -> tuple[str, ...]:
    """Mount a throwaway view on each usable folder of ``views`` (at most four); the views mounted.

    Call in the child, after :func:`._kernel.private_scratch` made the mount namespace and the scratch
    ``tmpfs`` (the upper layers live in it: what scratch and the views hold together is bounded by its
    size), before Landlock.
    """
    handle = libc()
    wanted = [view for view in dict.fromkeys(views) if usable(view, scratch)][:_LIMIT]
    if handle is None or not wanted:
        return ()
    layers = os.path.join(scratch, ".regrow-views")
    os.mkdir(layers, 0o700)
    for number, view in enumerate(wanted):
        if _overlay(handle, view, f"{layers}/{number}"):
            _mounted.append(view)
    # Out of reach but through the views: an empty read-only tmpfs over the layers (the overlays hold them).
    # Not a lazy unmount, which would also do: it waits for an RCU grace period, ~4 ms per call here.
    # Were this to fail, a call could write the layers directly: only its own throwaway views, so no harm.
    hide = _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
    handle.mount(b"regrow-views", os.fsencode(layers), b"tmpfs", hide, b"size=4k,nr_inodes=2,mode=0500")
    return mounted()


def _overlay(handle: ctypes.CDLL, view: str, layers: str) -> bool:
    upper, work = f"{layers}/upper", f"{layers}/work"
    os.mkdir(layers, 0o700)
    os.mkdir(upper, 0o755)
    os.mkdir(work, 0o700)
    options = f"lowerdir={view},upperdir={upper},workdir={work}".encode()
    # noexec, as scratch: a native library written into a view must not be mapped executable (dlopen runs
    # its code without the audit hook). The cost: a native module of the real folder that the call
    # imports for the first time does not load in the child.
    flags = _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
    return handle.mount(b"regrow-view", os.fsencode(view), b"overlay", flags, options) == 0  # type: ignore[no-any-return]

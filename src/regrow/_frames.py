"""The one answer to "is this code regrow's own, or the user's": by the file it comes from.

Evidence, captures and the model's view of a traceback leave regrow's own frames out (:func:`own`); the
no-oracle policy and the sandbox's decoder ask whether code is the user's own, not the standard library's,
an installed package's or regrow's (:func:`users_file`). They ask here, so that moving a module never
changes which code counts as whose.
"""

from __future__ import annotations

import functools
import os
import site
import sysconfig
from pathlib import Path

# The package folder, found by name from this file so that it holds wherever this module sits in it.
PACKAGE_DIR = str(next(folder for folder in Path(__file__).resolve().parents if folder.name == "regrow"))
# The file name of every wrapper's code (see regrow._heal._wrapper): "your code only" leaves these frames out.
WRAPPER_FILE = "<regrow wrapper of "
OWN = (PACKAGE_DIR, WRAPPER_FILE)  # prefixes of the file names of regrow's own frames


def own(filename: str) -> bool:
    """Whether code from ``filename`` is regrow's own (the package or a wrapper), not the user's."""
    return filename.startswith(OWN)


@functools.lru_cache(maxsize=1)
def _not_users() -> tuple[str, ...]:
    """The folders of the standard library, the installed packages and regrow, each ending in a separator."""
    paths = {sysconfig.get_paths().get(key, "") for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    paths.update(site.getsitepackages() if hasattr(site, "getsitepackages") else [])
    paths.add(PACKAGE_DIR)
    return tuple(os.path.abspath(path) + os.sep for path in paths if path)


@functools.lru_cache(maxsize=4096)
def users_file(filename: str) -> bool:
    """Whether code from ``filename`` is the user's own: a real file outside the standard library, the
    installed packages (any ``site-packages``/``dist-packages`` folder) and regrow."""
    if not filename or filename.startswith("<"):
        return False
    path = os.path.abspath(filename)
    parts = path.replace("\\", "/").split("/")
    return "site-packages" not in parts and "dist-packages" not in parts and not path.startswith(_not_users())

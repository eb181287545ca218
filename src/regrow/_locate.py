"""Where a target lives: ``path/to/module.py::qualname`` or ``package.module::qualname`` to the
module object and the function in it — the module the tests import, not a second copy.
"""

from __future__ import annotations

import importlib
import inspect
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._errors import TargetError


def resolve(ref: str) -> Callable[..., Any]:
    """The object named by ``path/to/module.py::qualname`` or ``package.module::qualname``."""
    where, sep, qualname = ref.partition("::")
    if not sep or not qualname:
        raise TargetError(f"{ref!r} is not a target reference; write path/to/module.py::function")
    module = import_path(where) if where.endswith(".py") or "/" in where else _import(where)
    obj: Any = module
    for part in qualname.split("."):
        try:
            obj = inspect.getattr_static(obj, part) if isinstance(obj, type) else getattr(obj, part)
        except AttributeError:
            raise TargetError(f"{module.__name__} has no {qualname!r} (no attribute {part!r})") from None
    return obj  # type: ignore[no-any-return]


def _import(name: str) -> types.ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise TargetError(f"cannot import {name!r}: {exc}") from exc


def import_path(path: str | Path) -> types.ModuleType:
    """Import a file under the module name its tests would import it by.

    As pytest does: the package root is the first folder upwards without ``__init__.py``; it goes on
    ``sys.path`` and the module is imported by its dotted name, so tests that import it share the
    same module object (and the same function objects) as regrow.
    """
    file = Path(path).resolve()
    if not file.is_file():
        raise TargetError(f"no such file: {path}")
    parts = [file.stem] if file.stem != "__init__" else []
    folder = file.parent
    while (folder / "__init__.py").is_file():
        parts.insert(0, folder.name)
        folder = folder.parent
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    name = ".".join(parts)
    module = _import(name)
    found = getattr(module, "__file__", None)
    if found is None or Path(found).resolve() != file:
        raise TargetError(f"importing {name!r} gave {found}, not {file}: another module shadows it")
    return module

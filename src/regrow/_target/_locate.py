"""Where a target lives: ``path/to/module.py::qualname`` or ``package.module::qualname`` to the
module object and the function in it — the module the tests import, not a second copy.

The rule: the module regrow heals is the module object the tests actually import. The front-ends
collect the tests first (pytest configured as for the run: rootdir, ini file, ``pythonpath``,
conftest files, import mode), then look the module up here: among the loaded modules, the one whose
``__file__`` is the target's file (a path reference) or the one of that name (a dotted reference).
Only a module the tests have not imported yet is imported here, as pytest would import it.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import itertools
import logging
import os
import sys
import types
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from .._errors import TargetError

log = logging.getLogger("regrow")

_apart = itertools.count(1)


def split(ref: str) -> tuple[str, str]:
    """``(where, qualname)`` of a target reference; a :class:`TargetError` for one without ``::``."""
    where, sep, qualname = ref.partition("::")
    if not sep or not where or not qualname:
        raise TargetError(f"{ref!r} is not a target reference; write path/to/module.py::function")
    return where, qualname


def is_path(where: str) -> bool:
    """Whether the module part of a reference is a file path (else a dotted module name)."""
    return where.endswith(".py") or "/" in where or os.sep in where


def resolve(ref: str) -> Callable[..., Any]:
    """The object named by ``path/to/module.py::qualname`` or ``package.module::qualname``."""
    where, qualname = split(ref)
    found: Callable[..., Any] = attribute(module_of(where), qualname)
    return found


def attribute(module: types.ModuleType, qualname: str) -> Any:
    """``module``'s object at the dotted ``qualname`` (class attributes as stored, unbound)."""
    obj: Any = module
    for part in qualname.split("."):
        try:
            obj = inspect.getattr_static(obj, _stored(obj, part)) if isinstance(obj, type) else getattr(obj, part)
        except AttributeError:
            raise TargetError(f"{module.__name__} has no {qualname!r} (no attribute {part!r})") from None
    return obj


def _stored(owner: type, name: str) -> str:
    """The name a class body stores ``name`` under: a private ``__name`` is mangled (``_Owner__name``)."""
    if name.startswith("__") and not name.endswith("__") and owner.__name__.lstrip("_"):
        mangled = f"_{owner.__name__.lstrip('_')}{name}"
        if mangled in vars(owner):
            return mangled
    return name


def module_of(where: str) -> types.ModuleType:
    """The module a reference's module part names: the loaded one when the tests imported it."""
    if is_path(where):
        return module_for_file(where)
    loaded = sys.modules.get(where)
    return loaded if loaded is not None else _import(where, where)


def module_for_file(path: str | Path) -> types.ModuleType:
    """The module of a file: the one the tests imported (found by ``__file__``), else imported now."""
    file = Path(path).resolve()
    if not file.is_file():
        raise TargetError(f"no such file: {path}")
    found = loaded(file)
    if found:
        return _pick(found, file)
    return import_path(file, shown=str(path))


def loaded(file: str | Path) -> list[types.ModuleType]:
    """The modules in ``sys.modules`` whose ``__file__`` is ``file`` (``__main__`` left out)."""
    wanted = Path(file).resolve()
    found = []
    for name, module in list(sys.modules.items()):
        where = getattr(module, "__file__", None)
        if name == "__main__" or not isinstance(where, str) or os.path.basename(where) != wanted.name:
            continue
        try:
            same = Path(where).resolve() == wanted
        except OSError:
            continue
        if same:
            found.append(module)
    return found


def _pick(found: list[types.ModuleType], file: Path) -> types.ModuleType:
    # One file imported under two names is two modules; the most qualified name is the package's.
    found.sort(key=lambda module: (-module.__name__.count("."), module.__name__))
    if len(found) > 1:
        log.warning("%s is loaded as %s; healing %s", file, ", ".join(m.__name__ for m in found),
                    found[0].__name__)
    return found[0]


def import_path(path: str | Path, shown: str | None = None) -> types.ModuleType:
    """Import a file under the module name its tests would import it by.

    As pytest does: the package root is the first folder upwards without ``__init__.py``; it goes on
    ``sys.path`` and the module is imported by its dotted name, so tests that import it share the
    same module object (and the same function objects) as regrow.
    """
    file = Path(path).resolve()
    if not file.is_file():
        raise TargetError(f"no such file: {path}")
    root, parts = package_root(file)
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    name = ".".join(parts)
    module = _import(name, shown or str(path), file)
    found = getattr(module, "__file__", None)
    if found is None or Path(found).resolve() != file:
        raise TargetError(f"importing {name!r} gave {found}, not {file}: another module shadows it")
    return module


def package_root(file: Path) -> tuple[Path, list[str]]:
    """The first folder above ``file`` without ``__init__.py``, and the dotted name from there."""
    parts = [file.stem] if file.stem != "__init__" else []
    folder = file.parent
    while (folder / "__init__.py").is_file():
        parts.insert(0, folder.name)
        folder = folder.parent
    return folder, parts


def import_apart(path: str | Path) -> types.ModuleType:
    """Import a file under a private name of its own, with its package, beside any module of its name.

    For a reference that lives in a pristine copy of the target's own package: importing it by its
    dotted name would give the target's module. Here its top package is loaded from the copy as
    ``_regrow_apart_<n>_<package>``, so the copy's own relative imports resolve inside the copy.
    """
    file = Path(path).resolve()
    if not file.is_file():
        raise TargetError(f"no such file: {path}")
    root, parts = package_root(file)
    private = f"_regrow_apart_{next(_apart)}_{parts[0] if parts else file.stem}"
    if len(parts) <= 1 and file.stem != "__init__":
        return _exec_file(private, file, None, str(path))
    top = root / parts[0]
    package = _exec_file(private, top / "__init__.py", [str(top)], str(path))
    if len(parts) == 1:
        return package
    return _import(".".join([private, *parts[1:]]), str(path), file)


def _exec_file(name: str, file: Path, search: list[str] | None, shown: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, file, submodule_search_locations=search)
    if spec is None or spec.loader is None:
        raise TargetError(f"cannot import {shown}: no loader for {file}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:
        sys.modules.pop(name, None)
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise TargetError(f"cannot import {shown}: {describe(exc, file)}") from exc
    return module


def _import(name: str, shown: str, file: Path | None = None) -> types.ModuleType:
    try:
        return importlib.import_module(name)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # a syntax error, an exception at import time, a sys.exit() at import
        if isinstance(exc, ImportError) and file is None:
            raise TargetError(f"cannot import {name!r}: {exc}") from exc
        raise TargetError(f"cannot import {shown}: {describe(exc, file or _spec_file(name))}") from exc


def describe(exc: BaseException, file: Path | None = None) -> str:
    """One line for an exception raised while importing: its type, message and line (in ``file``)."""
    if isinstance(exc, SyntaxError):
        where = f"line {exc.lineno}" if exc.lineno else ""
        if exc.filename and (file is None or not _same(exc.filename, file)):
            where = f"{_shown(exc.filename)}, {where}" if where else _shown(exc.filename)
        return f"{type(exc).__name__}: {exc.msg}" + (f" ({where})" if where else "")
    text = _text(exc)
    line = _line_in(exc, file) if file is not None else None
    suffix = f" (line {line})" if line is not None else ""
    return (f"{type(exc).__name__}: {text}" if text else type(exc).__name__) + suffix


def blame(where: str, errors: Iterable[BaseException]) -> TargetError | None:
    """The target's own error among exceptions a collection raised: the one raised in its file, if any.

    Tests that import a target which does not compile, raises at import or cannot be read fail to
    collect; that is bad input about the target, and says so by naming it.
    """
    if not is_path(where):
        spec_file = _spec_file(where)
        if spec_file is None:
            return None
        file = spec_file
    else:
        file = Path(where).resolve()
    for error in errors:
        for exc in _chain(error):
            found = None
            if isinstance(exc, SyntaxError) and exc.filename and _same(exc.filename, file):
                found = TargetError(f"cannot import {where}: {describe(exc, file)}")
            elif isinstance(exc, OSError) and exc.filename and _same(str(exc.filename), file):
                found = TargetError(f"cannot read {where}: {describe(exc)}")
            elif _line_in(exc, file) is not None:
                found = TargetError(f"cannot import {where}: {describe(exc, file)}")
            if found is not None:
                found.__cause__ = exc
                return found
    return None


def _spec_file(name: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(name)
    except Exception:  # a parent package that cannot be imported: nothing to blame here
        return None
    return Path(spec.origin).resolve() if spec is not None and spec.origin else None


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not s for s in seen) and len(seen) < 16:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def _line_in(exc: BaseException, file: Path) -> int | None:
    """The last line of ``file`` in ``exc``'s traceback, if the traceback goes through it."""
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if _same(tb.tb_frame.f_code.co_filename, file):
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _same(name: str, file: Path) -> bool:
    try:
        return os.path.basename(name) == file.name and Path(name).resolve() == file
    except (OSError, ValueError):
        return False


def _shown(name: str) -> str:
    try:
        return str(Path(name).resolve().relative_to(Path.cwd()))
    except ValueError:
        return name


def _text(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:
        text = "<unprintable>"
    return text.strip().splitlines()[0] if text.strip() else ""

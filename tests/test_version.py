"""The version lives in one module at the bottom of the import order, and agrees with pyproject.toml."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import regrow
from regrow._version import __version__

ROOT = Path(__file__).resolve().parents[1]


def test_the_version_is_pyprojects() -> None:
    declared = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.MULTILINE)
    assert declared is not None
    assert regrow.__version__ == __version__ == declared.group(1)


def test_no_module_of_the_package_imports_the_package_root() -> None:
    """``from . import __version__`` inside the package made every such module import one above it."""
    offenders = []
    for path in (ROOT / "src" / "regrow").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module is None and node.level == len(
                    path.relative_to(ROOT / "src" / "regrow").parts):
                names = [alias.name for alias in node.names]
                if "__version__" in names:
                    offenders.append(f"{path.name}: from . import {', '.join(names)}")
    assert offenders == []

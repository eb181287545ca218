"""The example files under examples/, imported as users would import them (each test gets a fresh module)."""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def load(name: str) -> types.ModuleType:
    """``examples/<name>.py`` as a module of its own (a fresh copy: the fix of an earlier test is not in it)."""
    path = EXAMPLES / f"{name}.py"
    module_name = f"example_{name}_{len([m for m in sys.modules if m.startswith(f'example_{name}_')])}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module

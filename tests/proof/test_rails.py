"""The AST rails: a cheap pre-filter for obvious hazards (the sandbox's runtime guard is the boundary)."""

from __future__ import annotations

import pytest

from regrow._proof._rails import check_source


def test_ordinary_code_passes_both_modes() -> None:
    source = """
import math
from collections import Counter

def mean(values):
    counts = Counter(values)
    return math.fsum(values) / len(values) if values else 0.0

class Box:
    def __init__(self, item):
        self.item = item
    def __repr__(self):
        return f"{type(self).__name__}({self.item!r})"
"""
    assert check_source(source) == []
    assert check_source(source, strict=True) == []


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("eval('1 + 1')", "line 1: use of eval"),
        ("exec('x = 1')", "line 1: use of exec"),
        ("compile('1', 'f', 'eval')", "line 1: use of compile"),
        ("__import__('os')", "line 1: use of __import__"),
        ("run = eval\nrun('1')", "line 1: use of eval"),
        ("f.__globals__['x']", "line 1: access to __globals__"),
        ("().__class__.__base__.__subclasses__()", "line 1: access to __subclasses__"),
        ("f.__code__", "line 1: access to __code__"),
        ("__builtins__['exec']('x')", "line 1: use of __builtins__"),
        ("__builtins__['exec']('x')", "line 1: subscript with 'exec'"),
        ("getattr(f, '__globals__')", "line 1: getattr of __globals__"),
        ("getattr(f, '__glo' + 'bals__')", "line 1: getattr of __globals__"),
        ("getattr(obj, ''.join(['__di', 'ct__']))", "line 1: getattr of __dict__"),
        ("getattr(obj, f'__code__')", "line 1: getattr of __code__"),
        ("setattr(f, '__code__', g)", "line 1: setattr of __code__"),
        ("frame.f_back.f_globals", "line 1: access to f_globals"),
    ],
)
def test_moderate_mode_flags_dynamic_code_and_escape_hatches(source: str, reason: str) -> None:
    assert reason in check_source(source)


@pytest.mark.parametrize(
    "module", ["os", "subprocess", "socket", "ctypes", "pickle", "marshal", "importlib", "shutil", "signal"]
)
def test_moderate_mode_flags_modules_that_reach_outside(module: str) -> None:
    assert check_source(f"import {module}") == [f"line 1: import of {module}"]
    assert f"line 1: import of {module}" in check_source(f"from {module} import something")


def test_submodules_count_as_their_package() -> None:
    assert check_source("import os.path") == ["line 1: import of os.path"]
    assert "line 1: import of importlib.util" in check_source("import importlib.util")


def test_aliases_are_resolved() -> None:
    assert check_source("import os as o\no.system('ls')") == ["line 1: import of os", "line 2: use of os.system"]
    assert check_source("from os import system as s\ns('ls')") == [
        "line 1: import of os",
        "line 2: use of os.system (as s)",
    ]
    assert "line 2: use of exec" in check_source("from builtins import exec as run\nrun('x')")
    assert "line 2: getattr of __code__" in check_source("import builtins as b\nb.getattr(f, '__code__')")
    assert "line 2: getattr of __code__" in check_source("from builtins import getattr as g\ng(f, '__code__')")


def test_computed_attribute_names_pass_moderate_but_not_strict() -> None:
    assert check_source("getattr(obj, name)") == []
    assert check_source("getattr(obj, name)", strict=True) == ["line 1: getattr with a computed attribute name"]
    assert check_source("hasattr(obj, name)", strict=True) == []


def test_strict_mode_allows_only_a_small_set_of_imports() -> None:
    assert check_source("import json, re, math", strict=True) == []
    assert check_source("import urllib.parse", strict=True) == [
        "line 1: import of urllib.parse (not in the strict allowlist)"
    ]
    assert check_source("import urllib.parse") == []  # moderate mode only denies what reaches outside


def test_strict_mode_flags_reflective_builtins_and_unusual_dunders() -> None:
    reasons = check_source("open('f').read()\nglobals()\nx.__reduce_ex__(2)\nx.__weakref__", strict=True)
    assert reasons == [
        "line 1: use of open",
        "line 2: use of globals",
        "line 3: access to __reduce_ex__",
        "line 4: access to __weakref__",
    ]


def test_allow_widens_both_modes_for_the_targets_own_package() -> None:
    assert check_source("import mypkg.util", strict=True) != []
    assert check_source("import mypkg.util", strict=True, allow=["mypkg"]) == []
    assert check_source("import shutil", allow=["shutil"]) == []


def test_relative_imports_stay_inside_the_package() -> None:
    assert check_source("from . import helpers\nfrom .util import parse", strict=True) == []


def test_syntax_errors_are_a_reason() -> None:
    assert check_source("def f(:\n    pass") == ["line 1: syntax error: invalid syntax"]


def test_reasons_are_not_repeated() -> None:
    assert check_source("eval('1')\neval('2')") == ["line 1: use of eval", "line 2: use of eval"]
    assert check_source("x = eval; x = eval") == ["line 1: use of eval"]


@pytest.mark.parametrize("strict", [False, True])
def test_a_denied_module_reached_through_an_allowed_one_is_flagged(strict: bool) -> None:
    through_import = "import contextlib\ndef f():\n    return contextlib.os.system('true')\n"
    assert any("contextlib.os" in reason for reason in check_source(through_import, strict=strict))
    # the same through a module-level name the candidate does not import itself
    bare = "def f():\n    return tp.sys.modules\n"
    assert any("typing.sys" in reason for reason in check_source(bare, strict=strict, known={"tp": "typing"}))
    # an allowed module's own submodules and attributes stay allowed
    fine = "import collections\ndef f(x):\n    return isinstance(x, collections.abc.Mapping)\n"
    assert check_source(fine, strict=strict) == []

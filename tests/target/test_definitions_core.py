"""A core install has no libcst (it comes with the ``delivery`` extra): the definitions a proven fix's diff needs
are then found with :mod:`ast`, on the same lines libcst finds them."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from regrow._target._rewrite import _definitions_ast, definitions

SRC = Path(__file__).parents[2] / "src"


def _qualnames(tree: ast.AST) -> set[str]:
    names: set[str] = set()

    def visit(node: ast.AST, scope: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, [*scope, child.name])
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names.add(".".join([*scope, child.name]))
                visit(child, [*scope, child.name, "<locals>"])
            else:
                visit(child, scope)

    visit(tree, [])
    return names


TRICKY = '''
import functools


@functools.cache
@staticmethod
def first(xs): return xs[0]


class Box:
    if True:
        def inside(self):
            pass
            # indented as the body: its own


    # not indented as the body: what follows
    async def later(self, n):
        def helper():
            return n
        return helper()

    @property
    def size(self):
        return (
            1
        )

try:
    def guarded(x):
        return x
except Exception:
    pass
'''


SAMPLE = [path for path in sorted((SRC / "regrow").rglob("*.py")) if path.stat().st_size > 4000][::10]


@pytest.mark.parametrize("path", [*SAMPLE, None], ids=lambda path: "tricky" if path is None else path.name)
def test_ast_finds_every_definition_where_libcst_does(path: Path | None) -> None:
    text = TRICKY if path is None else path.read_text(encoding="utf-8")
    names = _qualnames(ast.parse(text))
    assert names
    for name in sorted(names):
        assert _definitions_ast(text, name) == definitions(text, name), name


def test_a_proven_fix_is_kept_without_libcst_where_two_definitions_begin_alike(tmp_path: Path) -> None:
    """Two healed functions beginning with the same line made the diff look the definition up (libcst); a core
    install failed there with ModuleNotFoundError and threw the proven fix away."""
    (tmp_path / "core.py").write_text(textwrap.dedent('''
        import sys
        sys.modules["libcst"] = None  # as in a core install: importing it fails
        import regrow

        def check(fn):
            assert fn([1, 2, 3]) == 3
            assert fn([9]) == 9

        @regrow.heal(tests=[check])
        def first(xs):
            return xs[0]

        @regrow.heal(tests=[check])
        def last(xs):
            return xs[len(xs)]

        print("fixed", last([4, 5]))
    '''))
    done = subprocess.run([sys.executable, str(tmp_path / "core.py")], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(SRC)}, cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.strip() == "fixed 5", (done.stdout, done.stderr)

"""Each operator family produces the exact mutants a human fix would be, among others."""

from __future__ import annotations

import ast
import textwrap

import pytest

from regrow._engine import OPERATORS, Operator
from regrow._engine._copy import ExpressionCopy
from regrow._engine._core import (
    AugAssignOp,
    CompareOp,
    ConstantTweak,
    DropOperand,
    NotToggle,
    OffByOne,
    SiblingSwap,
    SwapOperands,
    UnwrapCall,
)
from regrow._engine._edits import EditSizes
from regrow._engine._scope import Scope
from regrow._engine._splice import splice
from regrow._engine._statements import DeleteStatement, InsertBuilt, InsertCopy, InsertRenamedCopy
from regrow._engine._templates import BoolReturnComparison, Clamp, ConcatReturn, GuardClause, SliceIterable


def mutants(op: Operator, source: str) -> list[str]:
    """Every function ``op`` makes of ``source``, each normalised by ``ast.unparse``."""
    source = textwrap.dedent(source)
    function = ast.parse(source).body[0]
    assert isinstance(function, ast.FunctionDef)
    scope = Scope.of(function)
    made = []
    for site in scope.sites:
        for new in op.edits(site, scope):
            made.append(ast.unparse(ast.parse(splice(source, function, site, new))))
    return made


def fn(body: str, args: str = "a, b") -> str:
    return f"def f({args}):\n" + textwrap.indent(textwrap.dedent(body), "    ")


def unparsed(source: str) -> str:
    return ast.unparse(ast.parse(textwrap.dedent(source)))


@pytest.mark.parametrize(("op", "before", "after"), [
    (CompareOp(), fn("return a < b"), fn("return a <= b")),
    (AugAssignOp(), fn("a += b\nreturn a"), fn("a -= b\nreturn a")),
    (AugAssignOp(), fn("a += 1\nreturn a"), fn("return a")),
    (NotToggle(), fn("if not a:\n    return b"), fn("if a:\n    return b")),
    (NotToggle(), fn("if a:\n    return b"), fn("if not a:\n    return b")),
    (ConstantTweak(), fn("return []"), fn("return [[]]")),
    (ConstantTweak(), fn("return a.get(b, 1)"), fn("return a.get(b, 0)")),
    (ConstantTweak(), fn("return True"), fn("return False")),
    (SiblingSwap(), fn("return min(a, b)"), fn("return max(a, b)")),
    (SiblingSwap(), fn("return a.lstrip()"), fn("return a.rstrip()")),
    (SwapOperands(), fn("return a - b"), fn("return b - a")),
    (SwapOperands(), fn("return a[0][1]"), fn("return a[1][0]")),
    (OffByOne(), fn("return range(a)"), fn("return range(a + 1)")),
    (OffByOne(), fn("return a[b]"), fn("return a[b - 1]")),
    (UnwrapCall(), fn("return a.strip()"), fn("return a")),
    (DropOperand(), fn("return a and b and c", "a, b, c"), fn("return a and c", "a, b, c")),
    (GuardClause(), fn("if a > 0:\n    return b"), fn("if a > 0 or a is None:\n    return b")),
    (Clamp(), fn("return a - b"), fn("return max(0, a - b)")),
    (SliceIterable(), fn("for x in a:\n    b += x\nreturn b"), fn("for x in a[1:]:\n    b += x\nreturn b")),
    (BoolReturnComparison(), fn("return True"), fn("return a < b")),
    (ConcatReturn(), fn("return a"), fn("return a + [b]")),
    (ExpressionCopy(), fn("c = a[0][1]\nreturn max(b, c)", "a, b"), fn("c = a[0][1]\nreturn max(a[0][1], c)", "a, b")),
    (DeleteStatement(), fn("a += 1\nreturn a"), fn("return a")),
    (InsertCopy(), fn("a.append(b)\nreturn a"), fn("a.append(b)\na.append(b)\nreturn a")),
    (InsertRenamedCopy(), fn("a = a.strip()\nreturn a + b"), fn("b = b.strip()\na = a.strip()\nreturn a + b")),
    (InsertBuilt(), fn("for x in a:\n    b.append(x)"), fn("for x in a:\n    b.append(x)\nreturn b")),
])
def test_operator_makes_the_expected_mutant(op: Operator, before: str, after: str) -> None:
    assert unparsed(after) in mutants(op, before)


def test_identity_mutations_are_left_to_deletion() -> None:
    made = mutants(AugAssignOp(), fn("a += 1\nreturn a")) + mutants(ConstantTweak(), fn("a += 1\nreturn a"))
    assert unparsed(fn("a *= 1\nreturn a")) not in made
    assert unparsed(fn("a += 0\nreturn a")) not in made


def test_splice_keeps_the_rest_of_the_text() -> None:
    source = "def f(a, b):\n    # keep me\n    x = (a  +  b)   # and me\n    return x < 2\n"
    function = ast.parse(source).body[0]
    assert isinstance(function, ast.FunctionDef)
    scope = Scope.of(function)
    site = next(s for s in scope.sites if isinstance(s.node, ast.Compare))
    new = next(iter(CompareOp().edits(site, scope)))
    assert splice(source, function, site, new) == source.replace("x < 2", "x <= 2")


def test_edit_sizes_count_changed_nodes() -> None:
    source = fn("a += 1\nreturn a < b")
    function = ast.parse(source).body[0]
    assert isinstance(function, ast.FunctionDef)
    scope = Scope.of(function)
    sizes = EditSizes()
    compare = next(s for s in scope.sites if isinstance(s.node, ast.Compare))
    update = next(s for s in scope.sites if isinstance(s.node, ast.AugAssign))
    assert sizes(compare, next(iter(CompareOp().edits(compare, scope)))) == 1
    assert sizes(update, []) == 4  # AugAssign, target, operator, constant


def test_every_family_is_registered() -> None:
    assert {op.tier for op in OPERATORS} == {1, 2, 3, 4}
    assert len({op.name for op in OPERATORS}) == len(OPERATORS)

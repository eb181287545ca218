"""Each operator family produces the exact mutants a human fix would be, among others."""

from __future__ import annotations

import ast
import textwrap

import pytest

from regrow._proposers._engine import OPERATORS, Operator
from regrow._proposers._engine._blocks import ElifBranch, GuardBlock, RestoreUpdate, ReturnDropped, WrapCall
from regrow._proposers._engine._copy import ExpressionCopy
from regrow._proposers._engine._core import (
    AugAssignOp,
    BinaryOp,
    CompareOp,
    ConstantTweak,
    DropOperand,
    NotToggle,
    OffByOne,
    SiblingSwap,
    SwapOperands,
    UnwrapCall,
)
from regrow._proposers._engine._edits import EditSizes
from regrow._proposers._engine._module import Module
from regrow._proposers._engine._pairs import TOP, pairs
from regrow._proposers._engine._scope import Scope, Site
from regrow._proposers._engine._splice import _unparse_with, splice, splice_both, splice_text
from regrow._proposers._engine._statements import DeleteStatement, InsertBuilt, InsertCopy, InsertRenamedCopy
from regrow._proposers._engine._templates import (
    BoolReturnComparison,
    Clamp,
    ConcatReturn,
    GuardClause,
    SliceIterable,
    SquareOrAbs,
)
from regrow._proposers._engine._values import ConstantSwap, ModuleName, UnaryMinus
from regrow._target._target import Target


def texts(op: Operator, source: str, module: Module | None = None) -> list[str]:
    """Every function ``op`` makes of ``source``, as spliced."""
    source = textwrap.dedent(source)
    function = ast.parse(source).body[0]
    assert isinstance(function, ast.FunctionDef)
    scope = Scope.of(function, module)
    return [splice(source, function, site, new) for site in scope.sites for new in op.edits(site, scope)]


def mutants(op: Operator, source: str, module: Module | None = None) -> list[str]:
    """Every function ``op`` makes of ``source``, each normalised by ``ast.unparse``."""
    return [ast.unparse(ast.parse(text)) for text in texts(op, source, module)]


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
    (SiblingSwap(), fn("return next(reversed(a))"), fn("return next(iter(a))")),
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


PADS = Module(functions=["_pad_left", "_pad_right", "_pad_both", "render"], constants={"LIMIT": 10, "NAME": "x"})
ERRORS = Module(classes=["ConfigError", "MissingKey"], exceptions=["ConfigError", "MissingKey"])


@pytest.mark.parametrize(("op", "before", "after"), [
    (UnaryMinus(), fn("return -a"), fn("return a")),
    (UnaryMinus(), fn("return (a, b)"), fn("return (a, -b)")),
    (UnaryMinus(), fn("return a[b]"), fn("return a[-b]")),
    (ConstantSwap(), fn("return a % 10"), fn("return a % 100")),
    (ConstantSwap(), fn("return a * 100"), fn("return a * 10")),
    (ConstantSwap(), fn("return 1 if a else 1"), fn("return 1 if a else -1")),
    (ConstantSwap(), fn('a = a.replace("_", "-")\nreturn "_".join(b)'),
     fn('a = a.replace("_", "-")\nreturn "-".join(b)')),
    (ConstantSwap(), fn("for x in a:\n    b += x\nreturn 0"), fn("for x in a:\n    b += x\nreturn len(a)")),
    (ReturnDropped(), fn("if a:\n    return b\nround(a / b, 2)"), fn("if a:\n    return b\nreturn round(a / b, 2)")),
    (ReturnDropped(), fn("if a:\n    c = a * b\nreturn None"), fn("if a:\n    c = a * b\n    return c\nreturn None")),
    (ReturnDropped(), fn("if a:\n    c = 1\nelse:\n    c = b"), fn("if a:\n    c = 1\nelse:\n    c = b\nreturn c")),
    (GuardBlock(), fn("return len(a.split())"), fn("if a is None:\n    return 0\nreturn len(a.split())")),
    (GuardBlock(), fn("return a[0] + b"), fn("if not a:\n    return a\nreturn a[0] + b")),
    (GuardBlock(), fn("return b / len(a)"), fn("if not a:\n    raise ValueError\nreturn b / len(a)")),
    (GuardBlock(), fn("for x in a:\n    b += x['n']\nreturn b"),
     fn("for x in a:\n    if x is None:\n        continue\n    b += x['n']\nreturn b")),
    (ElifBranch(), fn("if a == 'x':\n    return b\nreturn a + 'y'"),
     fn("if a == 'x':\n    return b\nelif a == 'y':\n    return b\nreturn a + 'y'")),
    (RestoreUpdate(), fn("n = 1\nfor x in a:\n    b.append((n, x))\nreturn b"),
     fn("n = 1\nfor x in a:\n    b.append((n, x))\n    n += 1\nreturn b")),
    (RestoreUpdate(), fn("for _ in range(b):\n    c = a * 2\nreturn a"),
     fn("for _ in range(b):\n    c = a * 2\n    a = c\nreturn a")),
    (WrapCall(), fn("return [x for x in a]"), fn("return [x for x in reversed(a)]")),
    (WrapCall(), fn("c = a\nreturn c[b]"), fn("c = sorted(a)\nreturn c[b]")),
    (WrapCall(), fn("c = a.keys()\nreturn c[0]"), fn("c = list(a.keys())\nreturn c[0]")),
    (WrapCall(), fn("return [a[i] for i in range(a)]"), fn("return [a[i] for i in range(len(a))]")),
])
def test_new_operator_makes_the_expected_mutant(op: Operator, before: str, after: str) -> None:
    assert unparsed(after) in mutants(op, before)


@pytest.mark.parametrize(("module", "before", "after"), [
    (PADS, fn("return _pad_left(a, b)"), fn("return _pad_both(a, b)")),
    (PADS, fn("return a > 5"), fn("return a > LIMIT")),
    (ERRORS, fn("raise ConfigError(a)"), fn("raise MissingKey(a)")),
    (None, fn("try:\n    return int(a)\nexcept TypeError:\n    return b"),
     fn("try:\n    return int(a)\nexcept ValueError:\n    return b")),
    (None, fn("return sorted(a, key=str)"), fn("return sorted(a, key=len)")),
])
def test_module_names_stand_in_for_each_other(module: Module | None, before: str, after: str) -> None:
    assert unparsed(after) in mutants(ModuleName(), before, module)


def test_a_separator_for_a_separator() -> None:
    # ``?`` is written once in the module, far below its common literals; a separator still finds it.
    module = Module(literals=["utf8", "ascii", "host", ":", "=", "%", "]", "+", "-", "_", "//", "..", ":@", "/?", "&=+",
                              "://", "::", "<>", "!=", "->", "**", "?", "/", "&"])
    made = mutants(ConstantSwap(), fn('return "&".join(a)'), module)
    assert unparsed(fn('return "?".join(a)')) in made and not [m for m in made if "utf8" in m]
    assert not [m for m in mutants(ConstantSwap(), fn('return a.encode("utf8")'), module) if '"?"' in m or "'?'" in m]
    assert unparsed(fn('return "/".join(a)')) in mutants(ConstantSwap(), fn('return "//".join(a)'), module)


def test_a_code_for_a_code_of_the_same_family() -> None:
    # The codes are written once each, far below the module's common literals: alike, they are still tried.
    module = Module(literals=["utf8", "ascii", "host", "label", "x", "y", "z", "bidi_rule_2", "hyphen_start_end"])
    made = mutants(ConstantSwap(), fn('raise E(a, code="bidi_rule_5")'), module)
    assert unparsed(fn('raise E(a, code="bidi_rule_2")')) in made
    assert unparsed(fn('raise E(a, code="hyphen_start_end")')) in mutants(ConstantSwap(), fn(
        'raise E(a, code="hyphen_3_4")'), module)


def test_every_separator_of_the_module_is_a_literal() -> None:
    module = Module.of(Target.of(textwrap.dedent))
    assert [v for v in module.literals if isinstance(v, str) and len(v) == 1 and not v.isalnum()]


def test_a_base_exception_comes_before_its_subclasses() -> None:
    # ``pytest.raises(LookupError)`` passes with KeyError too; the base is what such a test names.
    made = mutants(ModuleName(), fn("if a not in b:\n    raise ValueError(a)\nreturn b[a]"))
    index = {name: next(i for i, m in enumerate(made) if f"raise {name}Error(a)" in m) for name in ("Lookup", "Key")}
    assert index["Lookup"] < index["Key"]
    assert not [m for m in made[:8] if "raise Exception(a)" in m]  # a base of the original's own class stays last


def test_module_names_most_alike_come_first() -> None:
    made = mutants(ModuleName(), fn("return _pad_left(a, b)"), PADS)
    assert made.index(unparsed(fn("return _pad_right(a, b)"))) < made.index(unparsed(fn("return render(a, b)")))
    assert unparsed(fn("return _pad_left(a, b)")) not in made


def test_a_named_constant_comes_by_name_not_by_value() -> None:
    module = Module(constants={"PORT": 8080}, literals=[8080, 3])
    made = mutants(ConstantSwap(), fn("return a or 80"), module)
    assert unparsed(fn("return a or 3")) in made and unparsed(fn("return a or 8080")) not in made
    assert unparsed(fn("return a or PORT")) in mutants(ModuleName(), fn("return a or 80"), module)


def test_a_module_is_read_from_the_target() -> None:
    import json

    module = Module.of(Target.of(json.dumps))
    assert "loads" in module.functions and "JSONDecodeError" not in module.classes
    assert "" in module.literals or module.literals  # the module's own source was read


def test_natural_edits_only() -> None:
    # A stray ``- 1`` is deleted, never compensated; a literal is never wrapped; no double negation.
    assert unparsed(fn("return len(a) - 1 + 1")) not in mutants(OffByOne(), fn("return len(a) - 1"))
    assert unparsed(fn("return len(a)")) in mutants(DropOperand(), fn("return len(a) - 1"))
    assert unparsed(fn("return len(a) - -1")) not in mutants(ConstantSwap(), fn("return len(a) - 1"))
    assert not [m for m in mutants(SquareOrAbs(), fn("return -1")) if "abs" in m]
    assert not [m for m in mutants(Clamp(), fn("return [a, b]")) if "max" in m]
    assert unparsed(fn("a -= -b\nreturn a")) not in mutants(AugAssignOp(), fn("a += -b\nreturn a"))


def test_no_class_or_callee_is_copied_into_a_condition() -> None:
    made = mutants(ExpressionCopy(), fn("if a == 3:\n    raise ValueError(b)\nreturn len(b)"))
    assert not [m for m in made if "ValueError ==" in m or "len ==" in m or "if ValueError" in m]


def test_guards_prefer_the_narrow_test_for_a_missing_value() -> None:
    made = mutants(GuardBlock(), fn("for x in a:\n    b += x['n']\nreturn b"))
    assert unparsed(fn("for x in a:\n    if not x:\n        continue\n    b += x['n']\nreturn b")) not in made


def test_elif_keeps_the_branch_as_written() -> None:
    source = fn('if a == "x":  # the first\n    return b  * 2\nreturn a + "y"')
    made = texts(ElifBranch(), source)
    assert fn('if a == "x":  # the first\n    return b  * 2\nelif a == "y":\n    return b  * 2\nreturn a + "y"') in made


@pytest.mark.parametrize(("op", "before", "after"), [
    (CompareOp(), fn('if a in ["inf", "nan"]:  # special\n    return 1_000_000\nreturn b'),
     fn('if a not in ["inf", "nan"]:  # special\n    return 1_000_000\nreturn b')),
    (InsertCopy(), fn("c = 1_000_000\nreturn a"), fn("c = 1_000_000\nc = 1_000_000\nreturn a")),
    (ConstantTweak(), fn('return a.get(b, "")'), fn('return a.get(b, " ")')),
    (BinaryOp(), fn("return (a  +  b) * 2"), fn("return (a  +  b) - 2")),
    (SquareOrAbs(), fn("return (a  +  b) * 2"), fn("return abs((a  +  b) * 2)")),
    (UnaryMinus(), fn("return (a  -  b) / 2"), fn("return -(a  -  b) / 2")),
    (GuardBlock(), fn('return a["k"]'), fn('if not a:\n    return a\nreturn a["k"]')),
])
def test_edits_keep_the_user_s_text(op: Operator, before: str, after: str) -> None:
    assert after in texts(op, before)


SAMPLES = [
    fn('if a in ["inf", "nan"]:  # special\n    return 1_000_000\nreturn (a  +  b) * 2'),
    fn("total = 0\nfor x in a:\n    if x > b:\n        total += -x ** 2\n    elif x:\n        total -= (x + 1) // b\n"
       "return total if total else None"),
    fn("c = not a or b and (a < b) in [True]\nreturn [a[i] for i in range(len(a)) if c], f'{a!r} {b}'"),
    # a generator that is a call's only argument shares the call's parentheses; a condition broken over
    # lines goes on only inside its own
    fn("if (a and\n        len(b) > 2):\n    return sum(x * b for x in a if x)\nreturn max((y for y in b), default=a)"),
]


@pytest.mark.parametrize("source", SAMPLES)
def test_a_spliced_edit_means_what_its_tree_means(source: str) -> None:
    function = ast.parse(source).body[0]
    assert isinstance(function, ast.FunctionDef)
    scope = Scope.of(function)
    count = 0
    for site in scope.sites:
        for op in OPERATORS:
            for new in op.edits(site, scope):
                text = splice_text(source, function, site, new)
                if text is not None:
                    assert ast.dump(ast.parse(text)) == ast.dump(ast.parse(_unparse_with(function, site, new))), text
                    count += 1
    assert count > 100


def test_two_edits_at_separate_places() -> None:
    source = fn("return max(a) - max(b)")
    function = ast.parse(source).body[0]
    assert isinstance(function, ast.FunctionDef)
    scope = Scope.of(function)
    names = [s for s in scope.sites if isinstance(s.node, ast.Name) and s.node.id == "max"]
    edits = [(site, new) for site in names for new in SiblingSwap().edits(site, scope)]
    assert splice_both(source, function, edits) == fn("return min(a) - min(b)")
    outer = next(s for s in scope.sites if isinstance(s.node, ast.BinOp))
    assert splice_both(source, function, [edits[0], (outer, ast.Constant(0))]) is None  # one inside the other


def test_pairs_are_of_separate_sites_the_same_slip_first() -> None:
    class Edit:
        def __init__(self, op: Operator, order: int) -> None:
            self.op, self.new = op, ast.Constant(0)
            self.site = Site(ast.Constant(0), ast.Pass(), "body", -1, order)

    compare, sign = CompareOp(), UnaryMinus()
    edits = [Edit(compare, 1), Edit(compare, 1), Edit(sign, 2), Edit(compare, 3)]
    made = [(a.site.order, b.site.order, a.op.name == b.op.name) for a, b in pairs(edits)]
    assert all(a != b for a, b, _ in made)
    assert [same for _, _, same in made] == sorted([same for _, _, same in made], reverse=True)
    assert len(list(pairs([Edit(compare, n) for n in range(100)]))) == TOP * (TOP - 1) // 2


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
    assert {"sign", "constant-swap", "module-name", "return-dropped", "guard-block", "elif", "restore",
            "wrap"} <= {op.name for op in OPERATORS}
    assert len({op.name for op in OPERATORS}) == len(OPERATORS)

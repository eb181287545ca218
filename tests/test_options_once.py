"""The options of @heal, repair() and watch are spelled once (regrow._heal._options.HealOptions/RepairOptions)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import regrow
from regrow._heal._options import KEYWORDS, HealOptions, RepairOptions

SRC = Path(regrow.__file__).parent


def total(values: list[int]) -> int:
    return sum(values)


def test_a_misspelled_option_is_a_type_error_naming_the_near_one() -> None:
    with pytest.raises(TypeError, match=r"'max_candidate'.*did you mean 'max_candidates'"):
        regrow.heal(max_candidate=3)
    with pytest.raises(TypeError, match=r"'timout'.*did you mean 'timeout'"):
        regrow.repair(len, ([1],), timout=3)
    with pytest.raises(TypeError, match=r"'sandbx'"):
        regrow.watch("nothing_here", sandbx="fork")
    assert regrow.watching() is None


def test_repair_takes_every_shared_option_and_heal_every_option() -> None:
    assert set(RepairOptions.__annotations__) <= set(HealOptions.__annotations__) == set(KEYWORDS)
    result = regrow.repair(total, ([1, 2],), max_candidates=5, timeout=5.0, jobs=1, environ=False)
    assert result.ok and result.value == 3


def test_no_function_spells_the_options_out_again() -> None:
    """No function of the package takes three or more of the options' knobs as parameters of its own (the
    loop takes them checked, as a Budget; an agent tool's schema names the two it exposes)."""
    knobs = KEYWORDS - {"proposers", "model", "sandbox", "on_event", "store", "environ", "verify", "tests"}
    spelled = []
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names = {a.arg for a in [*node.args.args, *node.args.kwonlyargs]}
                if len(names & knobs) >= 3:
                    spelled.append(f"{path.relative_to(SRC)}:{node.lineno} {node.name}")
    assert spelled == []

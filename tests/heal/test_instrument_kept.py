"""Instrumenting a function that rebinds its parameters: one compile where the bytes can tell, the same refusals.

Such a function keeps its parameters in locals at entry, which shifts the numbers of the locals after them,
so its instrumented body is not the running body byte for byte. On 3.11 and 3.12 the body is compared
with the local numbers taken by name instead of compiling the definition a second time (a fifth of
``@heal``'s cost at a cold import, benchmarks/overhead.py); anything that comparison cannot tell falls back
to the second compile.
"""

from __future__ import annotations

import builtins
import dis
import linecache
import sys
import types
from pathlib import Path
from typing import Any

import pytest

import regrow
from regrow._heal import _instrument_bytes as instrument_bytes
from regrow._heal import _instrument_code as instrument_code
from regrow._heal import _instrument_splice as splice
from regrow._heal._instrument import Hook, instrument
from regrow._heal._wrapper import RAISE

ONE_COMPILE = (3, 11) <= sys.version_info < (3, 13)

PRICE = '''
def price(text, rate=1.0, *, strict=False):
    """Parse a price."""
    text = text.strip()
    if text and text[0] in "$":
        text = text[1:]
    value = float(text.replace(",", "")) * rate
    if strict and value < 0:
        raise ValueError(text)
    return round(value, 2)
'''


def _compiles(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The sources ``_instrument_code`` compiles from now on (``ast.parse`` is not counted)."""
    seen: list[object] = []

    def counted(source: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(source)
        return builtins.compile(source, *args, **kwargs)

    monkeypatch.setattr(instrument_code, "compile", counted, raising=False)
    return seen


def test_a_function_that_keeps_parameters_is_compiled_once_where_the_bytes_tell(make_module, monkeypatch):
    mod = make_module(PRICE)
    seen = _compiles(monkeypatch)
    made = instrument_code._instrumented(mod.price, mod.price.__code__, exact=True)
    assert isinstance(made, types.CodeType), made
    assert len(seen) == (1 if ONE_COMPILE else 2)
    assert "_regrow_p0" in made.co_varnames  # the parameter kept at entry shifted ``value``'s number
    healed = regrow.heal(proposers=[], cooldown=60)(mod.price)
    assert healed is mod.price and regrow.state(healed).mode == "instrumented"
    assert healed(" $1,234.5 ", 2) == 2469.0 and healed("3", strict=True) == 3.0


@pytest.mark.parametrize("edit", [
    ("return round(value, 2)", "return round(rate, 2)"),  # another local at the same place
    ("value = float", "amount = float"),  # a local renamed (and the old name read later)
    ("* rate", "/ rate"),  # an operation
    ("round(value, 2)", "round(value, 3)"),  # a constant
    ("text = text[1:]", "rate = text[1:]"),  # another parameter rebound
])
def test_a_file_changed_since_import_is_wrapped_not_instrumented_when_parameters_are_kept(make_module, edit):
    mod = make_module(PRICE)
    path = Path(mod.__file__ or "")
    path.write_text(path.read_text(encoding="utf-8").replace(*edit), encoding="utf-8")
    linecache.checkcache(str(path))
    healed = regrow.heal(mod.price)
    # 3.11 makes the instrumented code from the running bytes alone: the edited text is not read
    assert regrow.state(healed).mode == ("instrumented" if splice.APPLIES else "wrapped")
    assert healed(" $1,234.5 ", 2) == 2469.0  # the code that runs, not the edited text


def test_the_arguments_are_handed_over_as_they_entered_past_a_byte_of_locals(make_module):
    names = [f"v{i}" for i in range(300)]  # numbers past 255 take EXTENDED_ARG: the second compile decides
    body = "".join(f"    {name} = x + {i}\n" for i, name in enumerate(names))
    mod = make_module(f"def wide(x, y):\n    x = x + 1\n{body}    return {names[-1]} / (y - y)\n")
    seen: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    class Recorder:  # what Hook hands a failure to (the Healing state's part)
        def on_error(self, exc: BaseException, args: tuple[Any, ...], kwargs: dict[str, Any]) -> object:
            seen.append((args, kwargs))
            return RAISE

    made = instrument(mod.wide, Hook(Recorder()))  # type: ignore[arg-type]
    assert isinstance(made, types.CodeType), made
    mod.wide.__code__ = made
    with pytest.raises(ZeroDivisionError):
        mod.wide(5, y=2)
    assert seen == [((5, 2), {})]  # x as it entered, not x + 1


def _reference(code: types.CodeType) -> set[int]:
    """The local numbers ``code`` stores to or deletes, read with ``dis``."""
    pairs = {"STORE_FAST_STORE_FAST", "STORE_FAST_LOAD_FAST"}
    stores = {"STORE_FAST", "DELETE_FAST", "LOAD_FAST_AND_CLEAR"}
    found: set[int] = set()
    for ins in dis.get_instructions(code):
        if ins.opname in stores:
            found.add(ins.arg or 0)
        elif ins.opname in pairs:
            found.update(((ins.arg or 0) >> 4, (ins.arg or 0) & 15))
    return found


def _codes(top: types.CodeType) -> list[types.CodeType]:
    found, todo = [], [top]
    while todo:
        each = todo.pop()
        found.append(each)
        todo.extend(c for c in each.co_consts if isinstance(c, types.CodeType))
    return found


def test_the_stores_found_are_those_dis_reads():
    wide = "def wide(a, b):\n" + "".join(f"    v{i} = a\n" for i in range(600)) + "    del v599\n    a = b = 1\n"
    sources = [wide, "def f(a):\n    [a for a in range(3)]\n    a, b = 1, 2\n    return a + b\n",
               Path(dis.__file__).read_text(encoding="utf-8")]
    codes = [code for source in sources for code in _codes(compile(source, "<test>", "exec"))]
    assert len(codes) > 30
    for code in codes:
        assert instrument_bytes.stored(code) == _reference(code), code.co_name
    assert {0, 1, 599 + 2} <= instrument_bytes.stored(_codes(compile(wide, "<test>", "exec"))[-1])


def test_the_one_compile_builds_what_the_second_compile_would_on_real_code(monkeypatch):
    """Every function of a few standard modules that rebinds a parameter: instrumented with the comparison and
    with the second compile forced, the same code, or the same refusal."""
    import argparse
    import difflib
    import textwrap

    functions = [value for module in (argparse, difflib, textwrap) for owner in (module, *[
        v for v in vars(module).values() if isinstance(v, type) and v.__module__ == module.__name__])
        for value in vars(owner).values()
        if isinstance(value, types.FunctionType) and value.__module__ == module.__name__]
    kept = [fn for fn in functions if instrument_bytes.keeps(fn.__code__)]
    assert len(kept) > 40
    compared = 0
    for fn in kept:
        fast = instrument_code._instrumented(fn, fn.__code__, exact=True)
        with monkeypatch.context() as patch:
            patch.setattr(instrument_code, "same_kept", lambda made, code: False)
            slow = instrument_code._instrumented(fn, fn.__code__, exact=True)
        if isinstance(fast, str) or isinstance(slow, str):
            assert fast == slow, fn.__qualname__
            continue
        compared += instrument_bytes.plain(fn.__code__) and instrument_bytes.same_kept(fast, fn.__code__)
        assert (fast.co_code, fast.co_varnames, fast.co_consts) == (slow.co_code, slow.co_varnames, slow.co_consts)
    assert (compared > 20) == ONE_COMPILE


_BOTH_WAYS = '''
import json, sys, types, argparse, difflib, textwrap
sys.path.insert(0, sys.argv[1])
from regrow._heal import _instrument_bytes as bytes_, _instrument_code as code_
counts = {"fast": 0, "diff": 0}
same_kept = bytes_.same_kept
for module in (argparse, difflib, textwrap):
    owners = [module, *[v for v in vars(module).values() if isinstance(v, type) and v.__module__ == module.__name__]]
    for fn in [v for o in owners for v in vars(o).values() if isinstance(v, types.FunctionType)]:
        if fn.__module__ != module.__name__ or not bytes_.keeps(fn.__code__):
            continue
        code_.same_kept = same_kept
        fast = code_._instrumented(fn, fn.__code__, exact=True)
        code_.same_kept = lambda made, code: False
        slow = code_._instrumented(fn, fn.__code__, exact=True)
        if isinstance(fast, str) or isinstance(slow, str):
            counts["diff"] += fast != slow
            continue
        counts["fast"] += bytes_.plain(fn.__code__) and same_kept(fast, fn.__code__)
        shown = [(c.co_code, c.co_varnames, c.co_consts) for c in (fast, slow)]
        counts["diff"] += shown[0] != shown[1]
print(json.dumps(counts))
'''


def test_on_python_3_12_too_where_ci_has_no_environment():
    """CI runs 3.10, 3.11 and 3.13; the one-compile path also serves 3.12, whose ``dis`` differs (it lists
    pseudo-instructions among the local ones). Where a 3.12 interpreter is on the machine, the same
    comparison runs there, on regrow's source (importing it needs no third-party package)."""
    import json
    import subprocess

    import splice_oracle

    python = splice_oracle.python_3_12()
    if python is None:
        pytest.skip("no Python 3.12 on this machine")
    source = str(Path(instrument_code.__file__).parents[2])
    done = subprocess.run([python, "-c", _BOTH_WAYS, source], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    counts = json.loads(done.stdout.strip().splitlines()[-1])
    assert counts["diff"] == 0 and counts["fast"] > 20, counts

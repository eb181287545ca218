"""On 3.11-3.13 the instrumented code is made from the running bytes alone (regrow._heal._instrument_splice): what
the compiler makes of the definition's text with its body inside the ``try``, without reading the text.

The oracle is the compiler: on the standard library, function by function, the spliced code's handler is the
compiled text's (its instructions, constants, names, positions and exception entries), its body is the
running code's, and every instruction of the body goes where the compiled text sends it. Then the spliced
code is run, on every shape of parameter list and body the splice takes.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import opcode
import subprocess
import sys
import traceback
import types
from pathlib import Path
from typing import Any

import pytest
import splice_oracle
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import regrow
from regrow._heal import _instrument_code as instrument_code
from regrow._heal import _instrument_splice as splice
from regrow._heal._instrument import Hook, instrument
from regrow._heal._instrument_bytes import stored
from regrow._heal._wrapper import RAISE, RETRY

pytestmark = pytest.mark.skipif(not splice.APPLIES, reason="the handler's bytes are written for 3.11-3.13; 3.10 "
                                "compiles the text (tests/heal/test_instrument.py runs there)")

def test_the_standard_library_spliced_as_the_compiler_makes_it() -> None:
    counts = splice_oracle.compare()
    assert counts["bad"] == {}
    assert counts["compared"] > 1000 and counts["kept"] > 100, counts  # 1175 and 156 on 3.11.7


def test_on_python_3_12_too_where_ci_has_no_environment() -> None:
    """CI runs 3.10, 3.11 and 3.13; the splice serves 3.12 as well, whose instructions differ from both. Where a
    3.12 interpreter is on the machine, the same comparison runs there, on regrow's source."""
    python = splice_oracle.python_3_12()
    if python is None:
        pytest.skip("no Python 3.12 on this machine")
    source = str(Path(instrument_code.__file__).parents[2])
    done = subprocess.run([python, splice_oracle.__file__, source], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    counts = json.loads(done.stdout.strip().splitlines()[-1])
    assert counts["bad"] == {} and counts["compared"] > 1000 and counts["kept"] > 100, counts


# Shapes of parameter list and body, each run healthy and failing: the source, a healthy call (its arguments),
# a failing call and what the handler must be handed (the arguments as they entered).
SHAPES = [
    ("def f():\n    return 1 / 0\n", None, ((), {}), ((), {})),
    ("def f(a, b, /):\n    return a / b\n", ((4, 2), {}), ((1, 0), {}), ((1, 0), {})),
    ("def f(a, b=2, *args):\n    a = a + len(args)\n    b, args = 0, ()\n    return a / b\n", None,
     ((1, 5, 6, 7), {}), ((1, 5, 6, 7), {})),
    ("def f(a, *, b, c=3):\n    c += 1\n    return [a, b][c]\n", None,
     ((0,), {"b": 5}), ((0,), {"b": 5, "c": 3})),
    ("def f(a, *, b):\n    return [a][b]\n", ((0,), {"b": 0}), ((7,), {"b": 4}), ((7,), {"b": 4})),
    ("def f(*args, **kwargs):\n    return args[len(args)]\n", None, ((1, 2), {"x": 3}), ((1, 2), {"x": 3})),
    ("def f(a, **kwargs):\n    a = None\n    return a + 1\n", None, ((1,), {"y": 2}), ((1,), {"y": 2})),
    # a **kwargs the body changes: handed over as it entered (a copy kept at entry)
    ("def f(a, **kw):\n    kw['x'] = kw.pop('y')\n    return a / kw['x']\n", ((1,), {"y": 2}), ((1,), {"y": 0}),
     ((1,), {"y": 0})),
    # the failure with values on the stack: in a loop, a call's arguments, a with block, a comprehension
    ("def f(xs):\n    total = 0\n    for x in xs:\n        total += 10 // x\n    return total\n",
     (([1, 2],), {}), (([1, 0],), {}), (([1, 0],), {})),
    ("def f(a):\n    return max(a, 1, 10 // a)\n", ((5,), {}), ((0,), {}), ((0,), {})),
    ("import contextlib\ndef f(a):\n    with contextlib.nullcontext():\n        a = 10 // a\n    return a\n",
     ((5,), {}), ((0,), {}), ((0,), {})),
    ("def f(xs):\n    return [10 // x for x in xs]\n", (([5],), {}), (([0],), {}), (([0],), {})),
    # the body's own try: what it handles stays its own; what it raises again, and its finally, reach the hook
    ("def f(a):\n    try:\n        return 10 // a\n    except ZeroDivisionError:\n        return -1\n",
     ((0,), {}), (("x",), {}), (("x",), {})),
    ("def f(a):\n    try:\n        a = 10 // a\n    except ZeroDivisionError:\n        raise KeyError(a)\n"
     "    return a\n", ((5,), {}), ((0,), {}), ((0,), {})),
    ("def f(a):\n    try:\n        a = a + 1\n    finally:\n        b = 1 // (a - 1)\n    return b\n",
     ((1,), {}), ((0,), {}), ((0,), {})),
]


class _Recorder:
    """A stand-in for the Healing state: keeps what the handler hands over."""

    def __init__(self, decision: object = RAISE) -> None:
        self.calls: list[tuple[BaseException, tuple[Any, ...], dict[str, Any]]] = []
        self.decision = decision
        self.func: Any = None

    def on_error(self, exc: BaseException, args: tuple[Any, ...], kwargs: dict[str, Any]) -> object:
        self.calls.append((exc, args, kwargs))
        return self.decision

    async def aon_error(self, exc: BaseException, args: tuple[Any, ...], kwargs: dict[str, Any]) -> object:
        return self.on_error(exc, args, kwargs)

    def rest(self, args: tuple[Any, ...], kwargs: dict[str, Any], exc: BaseException) -> Any:
        return iter(["the rest"])  # what a generator's caller goes on with after a fix


def _spliced(source: str, recorder: _Recorder, make_module: Any) -> tuple[types.FunctionType, types.FunctionType]:
    """The function ``f`` of ``source`` as written and a copy of it with the spliced code installed."""
    fn = make_module(source).f
    copy = types.FunctionType(fn.__code__, fn.__globals__, "f", fn.__defaults__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    made = splice.spliced(copy, fn.__code__, Hook(recorder), stored(fn.__code__))  # type: ignore[arg-type]
    assert made is not None
    copy.__code__ = made
    recorder.func = copy
    return fn, copy


@pytest.mark.parametrize(("source", "healthy", "failing", "handed"), SHAPES)
def test_every_shape_runs_healthy_and_hands_its_failure_over(make_module: Any, source: str, healthy: Any,
                                                             failing: Any, handed: Any) -> None:
    recorder = _Recorder()
    fn, copy = _spliced(source, recorder, make_module)
    if healthy is not None:
        args, kwargs = healthy
        assert copy(*args, **kwargs) == fn(*args, **kwargs)
        assert recorder.calls == []
    args, kwargs = failing
    with pytest.raises(Exception) as original:
        fn(*args, **dict(kwargs))
    with pytest.raises(type(original.value)) as raised:
        copy(*args, **dict(kwargs))
    [(exc, given, named)] = recorder.calls
    assert exc is raised.value and (given, named) == handed
    # the traceback is the user's: the same last line as the function's own failure, and no line of regrow's
    ours, theirs = (traceback.extract_tb(e.__traceback__)[-1] for e in (raised.value, original.value))
    assert (ours.lineno, ours.line, ours.name) == (theirs.lineno, theirs.line, theirs.name)


def test_a_retry_returns_the_fixed_result_and_other_exceptions_pass(make_module: Any) -> None:
    recorder = _Recorder(RETRY)
    _, copy = _spliced("def f(a, *, b):\n    a = a * 2\n    return a / b\n", recorder, make_module)
    recorder.func = lambda a, *, b: (a, b)  # the "fix" the retry calls, with the arguments as they entered
    assert copy(3, b=0) == (3, 0)
    _, copy = _spliced("def f(a):\n    raise KeyboardInterrupt(a)\n", recorder, make_module)
    with pytest.raises(KeyboardInterrupt):
        copy(1)
    assert len(recorder.calls) == 1  # not an Exception: never handed over


def test_a_tracer_sees_the_same_lines_as_in_the_function_itself(make_module: Any) -> None:
    source = "def f(a, b):\n    a = a + 1\n    for i in range(b):\n        a += i\n    return 10 // (a - 4)\n"
    fn, copy = _spliced(source, _Recorder(), make_module)

    def traced(call: types.FunctionType, *args: int) -> list[tuple[str, int]]:
        seen: list[tuple[str, int]] = []

        def tracer(frame: types.FrameType, event: str, arg: object) -> Any:
            if frame.f_code.co_name == "f":
                seen.append((event, frame.f_lineno - frame.f_code.co_firstlineno))
            return tracer
        sys.settrace(tracer)
        try:
            call(*args)
        except ZeroDivisionError:
            pass
        finally:
            sys.settrace(None)
        return seen

    assert traced(copy, 1, 3) == traced(fn, 1, 3)
    failing = traced(copy, 1, 2)
    assert failing[:len(traced(fn, 1, 2)) - 1] == traced(fn, 1, 2)[:-1]  # up to the failure, the same
    assert {line for _, line in failing} <= {line for _, line in traced(fn, 1, 3)} | {0}  # then the def line


def test_the_handler_stands_on_the_def_line_below_its_decorators(make_module: Any) -> None:
    mod = make_module('''
        import regrow

        @regrow.heal(
            proposers=[], cooldown=60,
        )
        def ratio(a, b):
            return a / b
    ''')
    code = mod.ratio.__code__
    at = splice_oracle.handler_at(code)
    lines = {line for start, end, line in code.co_lines() if start >= at and line is not None}
    assert lines == {code.co_firstlineno + 3}


def test_a_plain_function_is_made_without_its_text_or_the_cache(make_module: Any,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*args: Any) -> Any:
        raise AssertionError("read or compiled the text")

    for name in ("_instrumented", "load", "keep"):
        monkeypatch.setattr(instrument_code, name, refused)
    mod = make_module('''
        import regrow

        @regrow.heal(proposers=[], cooldown=60)
        def price(text, rate=1.0, **extra):
            text = text.strip()
            return float(text) * rate
    ''')
    assert regrow.state(mod.price).mode == "instrumented"
    assert mod.price(" 2 ", 3) == 6.0
    with pytest.raises(ValueError):
        mod.price(" x ")
    assert regrow.state(mod.price).tally.failures == 1


@pytest.mark.parametrize("source", [
    "async def f(a):\n    yield a\n",  # an async generator
    "def f(a, **kw):\n    def g():\n        return kw\n    return g\n",  # a **kwargs a closure holds
    "def f(a, *, __b):\n    return a\n",  # a private keyword, whose name the code has mangled elsewhere
])
def test_what_the_splice_leaves_to_the_text_is_still_instrumented(make_module: Any, source: str) -> None:
    fn = make_module(source).f
    assert splice.spliced(fn, fn.__code__, object(), stored(fn.__code__)) is None
    assert isinstance(instrument(fn, Hook(_Recorder())), types.CodeType)  # type: ignore[arg-type]


# Functions generated from pieces that fail, rebind parameters, loop, catch, clean up and return early: each run
# as written and spliced, on the same arguments, must do the same, and each failure reach the hook once.
_PARAMETERS = ["a, b=1", "a, /, b=2", "a, b=3, *args", "a, b=0, *, k=2", "a, b=0, **kw", "a, b=1, *args, k=1, **kw"]
_STEPS = [
    "a = a + {n}",
    "x = {n} // (a - {m})",
    "for i in range({n}):\n    a += i",
    "while a > {n}:\n    a -= {m} + 1",
    "try:\n    x = 1 // (a - {m})\nexcept ZeroDivisionError:\n    x = -1",
    "try:\n    a = a - 1\nfinally:\n    x = {n} // (a - {m})",
    "with contextlib.nullcontext():\n    a = a * {n}",
    "x = [1 // (i - {m}) for i in range(a % 5)]",
    "if a > {n}:\n    return a",
    "if a == {m}:\n    raise KeyError(a)",
    "assert a != {m}, 'a is {m}'",
    "a = str(a) if a < {n} else a",
    "x = {{'k': a}}[('k' if a != {m} else 'j')]",
    "del a\na = {n}",
    "b = b * {n} - {m}",
    "a, b = b, a",
    "x = a // (b - {m})",
    "y = a * {n}\nx = (lambda: 10 // y)()",  # a cell of the body's own, failing in the closure's frame
    "x = (lambda: 10 // (b - {m}))()\nb = {n}",  # a parameter a closure holds, rebound after
]


@st.composite
def _functions_and_arguments(draw: st.DrawFn) -> tuple[str, tuple[int, ...]]:
    steps = draw(st.lists(st.sampled_from(_STEPS), min_size=1, max_size=5))
    kind = draw(st.sampled_from(_KINDS))
    if kind != "def":  # a generator yields, a coroutine awaits, somewhere among the steps
        steps.insert(draw(st.integers(min_value=0, max_value=len(steps))), _SUSPEND[kind])
    numbers = st.integers(min_value=0, max_value=4)
    body = "\n".join(step.format(n=draw(numbers), m=draw(numbers)) for step in steps)
    returned = draw(st.sampled_from(["a", "x", "(a, x)", "None"]))
    source = f"import asyncio, contextlib\n{_KEYWORD[kind]} f({draw(st.sampled_from(_PARAMETERS))}):\n" + \
        "".join(f"    {line}\n" for line in f"{body}\nreturn {returned}".splitlines())
    return source, (draw(st.integers(min_value=-2, max_value=6)),)


# generators and coroutines too (tests/heal/test_instrument_generators.py tells how a caller goes on after a fix)
_KINDS = ["def", "generator", "coroutine"]
_SUSPEND = {"generator": "yield a", "coroutine": "await asyncio.sleep(0)"}
_KEYWORD = {"def": "def", "generator": "def", "coroutine": "async def"}


def _outcome(call: Any, args: tuple[int, ...]) -> tuple[str, Any]:
    """What a call returned (a generator: what it yielded, then what it returned) or raised."""
    try:
        made = call(*args)
        if inspect.iscoroutine(made):
            return "returned", asyncio.run(made)
        if inspect.isgenerator(made):
            items = []
            while True:
                try:
                    items.append(next(made))
                except StopIteration as stop:
                    return "returned", (items, stop.value)
        return "returned", made
    except Exception as exc:  # what the function raised, to compare
        return "raised", exc


_POSITIONAL, _EITHER = inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD


@settings(max_examples=300, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(_functions_and_arguments())
def test_generated_functions_do_the_same_spliced(made: tuple[str, tuple[int, ...]]) -> None:
    source, args = made
    space: dict[str, Any] = {}
    exec(compile(source, "<generated>", "exec"), space)
    fn = space["f"]
    recorder = _Recorder()
    copy = types.FunctionType(fn.__code__, space, "f", fn.__defaults__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    code = splice.spliced(copy, fn.__code__, Hook(recorder), stored(fn.__code__))  # type: ignore[arg-type]
    assert code is not None, source
    copy.__code__ = code
    theirs, ours = _outcome(fn, args), _outcome(copy, args)
    if theirs[0] == "returned":
        assert ours == theirs and recorder.calls == [], source
        return
    assert ours[0] == "raised" and type(ours[1]) is type(theirs[1]) and str(ours[1]) == str(theirs[1]), source
    bound = inspect.signature(fn).bind(*args)
    bound.apply_defaults()
    kinds = {name: p.kind for name, p in inspect.signature(fn).parameters.items()}
    positional = [v for name, v in bound.arguments.items() if kinds[name] in (_POSITIONAL, _EITHER)]
    positional += bound.arguments.get("args", ())
    named = {name: v for name, v in bound.arguments.items() if kinds[name] is inspect.Parameter.KEYWORD_ONLY}
    assert recorder.calls == [(ours[1], tuple(positional), {**named, **bound.arguments.get("kw", {})})], source
    last = traceback.extract_tb(ours[1].__traceback__)[-1]
    assert (last.lineno, last.name) == (traceback.extract_tb(theirs[1].__traceback__)[-1].lineno,
                                        traceback.extract_tb(theirs[1].__traceback__)[-1].name), source


def test_a_generator_and_a_coroutine_caught_in_their_own_frames(make_module: Any) -> None:
    mod = make_module('''
        import asyncio

        def numbers(n):
            n = n + 1
            for i in range(n):
                yield 10 // (i - 2)

        async def ratio(a, b):
            await asyncio.sleep(0)
            a = a * 2
            return a / b
    ''')
    recorder = _Recorder(RETRY)
    for name in ("numbers", "ratio"):
        fn = getattr(mod, name)
        made = splice.spliced(fn, fn.__code__, Hook(recorder), stored(fn.__code__))  # type: ignore[arg-type]
        assert made is not None
        fn.__code__ = made

    async def fixed(a: int, b: int) -> int:
        return a + b

    recorder.func = fixed
    assert list(mod.numbers(3)) == [-5, -10, "the rest"]  # then the rest of the fixed generator
    assert asyncio.run(mod.ratio(1, 0)) == 1  # the fix awaited with the arguments as they entered
    assert [(type(exc), args) for exc, args, _ in recorder.calls] == [(ZeroDivisionError, (3,)),
                                                                     (ZeroDivisionError, (1, 0))]
    recorder.decision = RAISE
    with pytest.raises(ZeroDivisionError) as raised:
        list(mod.numbers(3))
    assert traceback.extract_tb(raised.value.__traceback__)[-1].line == "yield 10 // (i - 2)"
    gen = mod.numbers(5)
    assert next(gen) == -5
    gen.close()  # closing at a yield is not a failure
    with pytest.raises(KeyError):
        mod.numbers(5).throw(KeyError("the caller's"))  # nor is what the caller throws in
    gen = mod.numbers(5)
    next(gen)
    with pytest.raises(KeyError):
        gen.throw(KeyError("the caller's, at a yield"))
    assert len(recorder.calls) == 3


def test_a_method_that_calls_super_and_a_closure_over_a_local(make_module: Any) -> None:
    mod = make_module('''
        class Base:
            def price(self, text):
                return float(text)

        class Child(Base):
            def price(self, text, rate=1.0):
                text = text.strip()  # kept at entry, with the method's __class__ cell after the locals
                scale = rate * 2
                return super().price(text) * (lambda: scale)()
    ''')
    fn = mod.Child.price
    assert fn.__code__.co_freevars == ("__class__",) and fn.__code__.co_cellvars == ("scale",)
    recorder = _Recorder()
    made = splice.spliced(fn, fn.__code__, Hook(recorder), stored(fn.__code__))  # type: ignore[arg-type]
    assert made is not None and "_regrow_p0" in made.co_varnames
    fn.__code__ = made
    child = mod.Child()
    assert child.price(" 2 ", 3) == 12.0
    with pytest.raises(ValueError):
        child.price(" x ")
    assert [(type(exc), args) for exc, args, _ in recorder.calls] == [(ValueError, (child, " x ", 1.0))]


def test_closing_a_spliced_generator_runs_its_own_finally_and_nothing_of_the_hook(make_module: Any) -> None:
    mod = make_module('''
        done = []

        def lines(n):
            n = n - 1
            try:
                for i in range(n):
                    yield i
            finally:
                done.append(n)
            yield 1 // 0
    ''')
    recorder = _Recorder()
    made = splice.spliced(mod.lines, mod.lines.__code__, Hook(recorder), stored(mod.lines.__code__))  # type: ignore[arg-type]
    assert made is not None
    mod.lines.__code__ = made
    gen = mod.lines(4)
    assert [next(gen), next(gen)] == [0, 1]
    gen.close()
    assert mod.done == [3] and recorder.calls == []
    with pytest.raises(ZeroDivisionError):
        list(mod.lines(2))
    assert mod.done == [3, 1] and [args for _, args, _ in recorder.calls] == [(2,)]


def test_a_long_function_whose_jumps_take_two_bytes(make_module: Any) -> None:
    body = "".join(f"        total += {i} * a\n" for i in range(200))
    recorder = _Recorder()
    fn, copy = _spliced(f"def f(a, b):\n    a = a + 1\n    total = 0\n    if b:\n{body}    return total // (b - 1)\n",
                        recorder, make_module)
    assert opcode.opmap["EXTENDED_ARG"] in fn.__code__.co_code[0::2]  # the jump over the if's body
    assert copy(1, 2) == fn(1, 2) and recorder.calls == []
    with pytest.raises(ZeroDivisionError):
        copy(1, 1)
    assert [args for _, args, _ in recorder.calls] == [(1, 1)]

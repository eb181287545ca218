"""@heal without a wrapper: the function's own code is instrumented, and it stays the same object."""

from __future__ import annotations

import asyncio
import bdb
import inspect
import linecache
import pickle
import sys
import traceback
import types
from pathlib import Path
from typing import Any

import pytest

import regrow
from regrow._heal import _instrument_splice as splice
from regrow._heal._instrument import Hook, instrument
from regrow._heal._wrapper import RAISE
from regrow._target._fixed import fixed_code

PRICES = '''
import regrow

def test_dollars(fn):
    assert fn("$12.99") == 12.99

def parse_price(text: str) -> float:
    text = text.strip()
    if text and text[0] in "$€":
        text = text[2:]
    return float(text.replace(",", ""))

BEFORE = parse_price  # taken before decoration
HEALED = regrow.heal(tests=[test_dollars])(parse_price)
'''

FAILS = '''
import regrow

@regrow.heal(proposers=[], cooldown=60)
def ratio(a, b):
    total = a + b
    return a / (total - a - b)  # line 7

class Shapes:
    @regrow.heal(proposers=[], cooldown=60)
    def area(self, side):
        return side * side

def twin(a, b):
    total = a + b
    return a / (total - a - b)  # line 16
'''


def _line_of(mod: types.ModuleType, marker: str) -> int:
    with open(mod.__file__ or "", encoding="utf-8") as handle:
        return next(number for number, line in enumerate(handle, 1) if marker in line)


def test_the_decorated_function_is_the_original_object(make_module):
    mod = make_module(PRICES)
    assert mod.HEALED is mod.parse_price is mod.BEFORE
    assert regrow.state(mod.parse_price).mode == "instrumented"
    assert mod.BEFORE.__regrow__ is regrow.state(mod.HEALED)


def test_a_reference_taken_before_decoration_runs_the_fix(make_module):
    mod = make_module(PRICES)
    assert mod.BEFORE("7.5") == 7.5  # healthy: no session
    assert mod.BEFORE("$1") == 1.0  # fails, is repaired, and the call is run again
    result = regrow.state(mod.HEALED).last_result
    assert result is not None and result.ok and result.installed == "code"
    assert mod.BEFORE("$12.99") == 12.99 and len(regrow.state(mod.HEALED).results) == 1
    hook = regrow.state(mod.HEALED).hook
    assert hook is not None and mod.BEFORE.__code__ is hook.code  # the fix is hooked too: its failures reach regrow
    # the fix's code stands where the user's does (regrow._target._fixed), and its text is kept for a later repair
    assert hook.plain is not None and hook.plain.co_filename == mod.__file__
    fixed = fixed_code(hook.plain)
    assert fixed is not None and "text[1:]" in fixed.text and "text[2:]" in fixed.written


def test_traceback_lines_are_the_users_and_the_exception_is_unchanged(make_module):
    mod = make_module(FAILS)
    with pytest.raises(ZeroDivisionError) as healed:
        mod.ratio(1, 2)
    with pytest.raises(ZeroDivisionError) as plain:
        mod.twin(1, 2)
    frames = traceback.extract_tb(healed.value.__traceback__)
    assert (frames[-1].filename, frames[-1].lineno, frames[-1].name) == (mod.__file__, 7, "ratio")
    assert frames[-1].line == "return a / (total - a - b)  # line 7"
    assert len(frames) == len(traceback.extract_tb(plain.value.__traceback__))  # no extra frame
    if sys.version_info >= (3, 11):  # the caret columns are the user's too
        assert (frames[-1].colno, frames[-1].end_colno) == (11, 30)


def test_a_tracer_sees_only_the_users_lines(make_module):
    mod = make_module(FAILS)
    seen: list[tuple[str, int | None]] = []

    def tracer(frame: types.FrameType, event: str, arg: Any) -> Any:
        if frame.f_code in (mod.ratio.__code__, mod.Shapes.area.__code__):
            seen.append((event, frame.f_lineno))
        return tracer

    regrow.disable()
    try:
        sys.settrace(tracer)
        assert mod.Shapes().area(3) == 9
        healthy = list(seen)
        with pytest.raises(ZeroDivisionError):
            mod.ratio(1, 2)
    finally:
        sys.settrace(None)
        regrow.enable()
    assert healthy == [("call", 10), ("line", 12), ("return", 12)]  # as without regrow
    # the failing call: its lines, then the handler on the `def` line (5)
    assert [line for event, line in seen[len(healthy):] if event == "line"] == [6, 7, 5]


def test_a_debugger_stops_on_a_line_of_the_function(make_module):
    mod = make_module(FAILS)

    hits: list[int] = []

    class Stops(bdb.Bdb):
        def user_line(self, frame: types.FrameType) -> None:
            if self.break_here(frame):
                hits.append(frame.f_lineno)
            self.set_continue()

    debugger = Stops()
    debugger.set_break(mod.__file__, 7)
    debugger.runcall(mod.Shapes().area, 3)  # another function: no stop
    with pytest.raises(ZeroDivisionError):
        regrow.disable()
        try:
            debugger.runcall(mod.ratio, 1, 2)
        finally:
            regrow.enable()
            sys.settrace(None)
    assert hits == [7]


def test_pickling_by_reference_signature_and_unwrap(make_module):
    mod = make_module(FAILS)
    assert pickle.loads(pickle.dumps(mod.ratio)) is mod.ratio
    assert str(inspect.signature(mod.ratio)) == str(inspect.signature(mod.twin)) == "(a, b)"
    assert inspect.unwrap(mod.ratio) is mod.ratio and not hasattr(mod.ratio, "__wrapped__")
    assert regrow.state(mod.Shapes.area).mode == "instrumented" and mod.Shapes().area(3) == 9


class _Recorder:
    """A stand-in for the Healing state: keeps what the handler hands over, and lets the error propagate."""

    def __init__(self, decision: object = RAISE) -> None:
        self.calls: list[tuple[BaseException, tuple[Any, ...], dict[str, Any]]] = []
        self.decision = decision
        self.func: Any = None

    def on_error(self, exc: BaseException, args: tuple[Any, ...], kwargs: dict[str, Any]) -> object:
        self.calls.append((exc, args, kwargs))
        return self.decision

    async def aon_error(self, exc: BaseException, args: tuple[Any, ...], kwargs: dict[str, Any]) -> object:
        return self.on_error(exc, args, kwargs)


def _hooked(func: types.FunctionType, recorder: _Recorder) -> types.FunctionType:
    copy = types.FunctionType(func.__code__, func.__globals__, func.__name__, func.__defaults__, func.__closure__)
    copy.__kwdefaults__ = func.__kwdefaults__
    code = instrument(copy, Hook(recorder))  # type: ignore[arg-type]
    assert isinstance(code, types.CodeType), code
    copy.__code__ = code
    recorder.func = copy
    return copy


def rebinds(x, *rest, scale=2, **options):
    x = x * scale
    options.pop("drop")
    rest = ()
    return 1 / (x - x) + len(rest)


def keeps(a, b=1, *, c):
    return [a, b, c][a + b + c]


async def waits(a, b):
    await asyncio.sleep(0)
    return a / b


def test_the_arguments_are_handed_over_as_they_entered():
    recorder = _Recorder()
    fn = _hooked(rebinds, recorder)
    options = {"drop": 1, "keep": 2}
    with pytest.raises(ZeroDivisionError) as raised:
        fn(3, 4, 5, scale=3, **options)
    exc, args, kwargs = recorder.calls[0]
    assert exc is raised.value
    assert args == (3, 4, 5) and kwargs == {"scale": 3, "drop": 1, "keep": 2}


def test_parameters_never_rebound_are_read_again_with_no_copy_at_entry():
    recorder = _Recorder()
    fn = _hooked(keeps, recorder)
    with pytest.raises(IndexError):
        fn(1, c=3)
    assert recorder.calls[0][1:] == ((1, 1), {"c": 3})
    assert fn.__code__.co_nlocals == keeps.__code__.co_nlocals  # nothing kept at entry


def test_a_retry_returns_the_fixed_result_and_none_gives_none():
    from regrow._heal._wrapper import NONE, RETRY

    recorder = _Recorder(RETRY)
    fn = _hooked(keeps, recorder)
    recorder.func = lambda a, b=1, *, c: a + b + c  # the "fix" the retry calls
    assert fn(1, c=3) == 5
    recorder.decision = NONE
    assert fn(1, c=3) is None


def test_a_coroutine_failure_is_caught_in_its_own_frame():
    recorder = _Recorder()
    fn = _hooked(waits, recorder)
    assert asyncio.run(fn(4, 2)) == 2
    with pytest.raises(ZeroDivisionError) as raised:
        asyncio.run(fn(1, 0))
    assert recorder.calls[0][1:] == ((1, 0), {})
    assert traceback.extract_tb(raised.value.__traceback__)[-1].name == "waits"


def test_the_fallback_is_the_wrapper_and_state_says_so(make_module):
    mod = make_module('''
        import functools
        import regrow

        @regrow.heal(verify=lambda r: r is not None)
        def checked(a):
            return a

        @regrow.heal
        def numbers(n):
            yield from range(n)

        def logged(fn):
            @functools.wraps(fn)
            def inner(*args):
                return fn(*args)
            return inner

        @regrow.heal
        @logged
        def below(a):
            return a
    ''')
    for fn in (mod.checked, mod.below):
        assert regrow.state(fn).mode == "wrapped" and regrow.state(fn).func is not fn
    assert regrow.state(mod.numbers).mode == "instrumented"  # generators too (tests/heal/test_instrument_generators.py)
    assert list(mod.numbers(3)) == [0, 1, 2] and mod.checked(1) == 1 and mod.below(2) == 2


def test_no_source_is_a_reason_not_an_error():
    namespace: dict[str, Any] = {}
    exec(compile("def made(a):\n    return a\n", "<nowhere>", "exec"), namespace)
    reason = instrument(namespace["made"], Hook(_Recorder()))  # type: ignore[arg-type]
    if splice.APPLIES:  # 3.11: made from the running bytes, no source needed (tests/heal/test_instrument_splice.py)
        assert isinstance(reason, types.CodeType) and reason.co_code.startswith(namespace["made"].__code__.co_code)
    else:
        assert isinstance(reason, str) and "no source" in reason


def test_a_fix_that_adds_super_is_rebound_and_hooked(make_module):
    mod = make_module('''
        import regrow
        from scripted import Scripted

        class Base:
            def name(self):
                return "base"

        def child_of_base(fn):
            assert fn(Child()) == "child of base"

        class Child(Base):
            @regrow.heal(proposers=[Scripted("def name(self) -> str:\\n    return 'child of ' + super().name()\\n")],
                         tests=[child_of_base])
            def name(self) -> str:
                return missing_name
    ''')
    before = mod.Child.name
    assert mod.Child().name() == "child of base"
    state = regrow.state(mod.Child.name)
    assert state.last_result is not None and state.last_result.installed == "rebind"
    assert state.mode == "instrumented" and mod.Child.name is state.func is not before
    assert state.hook is not None and mod.Child.name.__code__ is state.hook.code  # the rebound fix is hooked


@pytest.mark.skipif(sys.version_info < (3, 11), reason="3.10 enters a try with SETUP_FINALLY: one more instruction")
def test_a_healthy_call_runs_the_functions_own_bytecode():
    fn = _hooked(keeps, _Recorder())
    assert fn.__code__.co_code.startswith(keeps.__code__.co_code)  # the body, byte for byte; the handler after it
    assert fn.__code__.co_varnames == keeps.__code__.co_varnames  # no local added
    assert fn(1, c=-1) == 1 and fn.__code__ is not keeps.__code__


@pytest.mark.parametrize("edit", [("a + b", "a - b - 0"), ("(a, b)", "(a, *, b)")])
def test_a_file_changed_since_import_is_wrapped_not_instrumented(make_module, edit):
    mod = make_module('''
        def total(a, b):
            return a + b
    ''')
    path = Path(mod.__file__ or "")
    path.write_text(path.read_text(encoding="utf-8").replace(*edit), encoding="utf-8")
    linecache.checkcache(str(path))
    assert "".join(linecache.getlines(str(path))).count(edit[1]) == 1
    healed = regrow.heal(mod.total)
    # 3.11 makes the instrumented code from the running bytes alone: the edited text is not read
    assert regrow.state(healed).mode == ("instrumented" if splice.APPLIES else "wrapped")
    assert healed(2, 1) == 3  # the code that runs, not the edited text


def test_repair_and_the_command_see_the_users_code_and_keep_the_hook(make_module):
    from scripted import Scripted

    from regrow._target._target import Target

    mod = make_module('''
        import regrow

        @regrow.heal(proposers=[], cooldown=60)
        def half(n):
            n = n + 0
            return n / 0
    ''')
    target = Target.of(mod.half)  # `regrow heal path::half`, agents: the source matches the code as written
    assert target.func is mod.half and "return n / 0" in target.source
    result = regrow.repair(mod.half, (4,), proposers=[Scripted("def half(n):\n    return n / 2\n")],
                           verify=lambda value: value == 2, sandbox="inprocess")
    assert result.ok and mod.half(6) == 3
    state = regrow.state(mod.half)
    assert state.hook is not None and mod.half.__code__ is state.hook.code  # the fix is instrumented too
    assert state.mode == "instrumented"


def test_inside_its_own_session_a_failure_raises_without_asking():
    import os
    import threading

    recorder = _Recorder()
    fn = _hooked(keeps, recorder)
    hook = fn.__code__.co_consts[[type(c) for c in fn.__code__.co_consts].index(Hook)]
    for owner, asked in (((os.getpid(), threading.get_ident()), 0),  # the session's thread: the engine observing
                         ((os.getpid() + 1, threading.get_ident()), 0),  # a child forked from the session
                         ((os.getpid(), -1), 1),  # another thread of the process: it joins the session
                         (None, 1)):
        hook.owner = owner
        recorder.calls.clear()
        with pytest.raises(IndexError):
            fn(1, c=3)
        assert len(recorder.calls) == asked


def test_wrappers_of_one_shape_share_a_compiled_text_and_keep_their_own_names(make_module):
    from regrow._heal import _wrapper

    mod = make_module('''
        import regrow

        @regrow.heal(verify=lambda r: r > 0)
        def first(a, b=1):
            return a / b

        @regrow.heal(verify=lambda r: r > 0)
        def second(a, b=1):
            return a - b
    ''')
    hits = _wrapper._compiled.cache_info().hits
    mod2 = make_module('''
        import regrow

        @regrow.heal(verify=lambda r: r > 0)
        def third(a, b=1):
            return a * b
    ''')
    assert _wrapper._compiled.cache_info().hits > hits  # the same text as first's and second's
    for fn, name in ((mod.first, "first"), (mod.second, "second"), (mod2.third, "third")):
        code = fn.__code__
        assert code.co_name == name and code.co_filename == f"<regrow wrapper of {name}>"
    assert mod.first(4, 2) == 2 and mod.second(3) == 2 and mod2.third(2, 3) == 6


ENDINGS = '''
def plain(a, b):
    total = a + b
    return a / (total - a - b)

def bracket(a, b):
    return [a,
            b / (a - a),
    ]

def passes(a, b):
    if a:
        return b / (a - a)
    else:
        pass
'''


def test_the_text_path_finds_where_a_definition_ends_from_its_code(make_module, monkeypatch):
    """Where a definition is compiled from its text (3.10; shapes the splice leaves), its end is the last line
    an instruction spans: no tokenizing, unless the text cut there does not compile (3.10 keeps no end lines:
    a bracket closed on a line of its own), and then the tokenized block is right."""
    from regrow._heal import _instrument_code

    monkeypatch.setattr(_instrument_code, "spliced", lambda *args: None)
    monkeypatch.setattr(_instrument_code, "load", lambda code, space: None)  # nothing kept by an earlier run
    monkeypatch.setattr(_instrument_code, "keep", lambda code, space, made: None)
    tokenized: list[int] = []
    real = inspect.getblock

    def getblock(lines: list[str]) -> list[str]:
        tokenized.append(len(lines))
        return real(lines)

    monkeypatch.setattr(inspect, "getblock", getblock)
    mod = make_module(ENDINGS)
    for name, tokenizes in (("plain", False), ("passes", False), ("bracket", sys.version_info < (3, 11))):
        tokenized.clear()
        healed = regrow.heal(proposers=[], cooldown=60)(getattr(mod, name))
        assert regrow.state(healed).mode == "instrumented", name
        assert bool(tokenized) == tokenizes, name
        with pytest.raises(ZeroDivisionError):
            healed(1, 2)
        assert regrow.state(healed).tally.failures == 1, name  # the failure reached regrow's handler

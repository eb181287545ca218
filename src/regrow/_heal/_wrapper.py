"""The decorated function's happy path: one ``try`` and nothing else.

The wrapper is generated with the target's own parameter list, so a call costs one extra frame and
no ``*args``/``**kwargs`` packing. Everything costly happens in the handler, after a failure.
"""

from __future__ import annotations

import functools
import inspect
import keyword
import sys
import types
from typing import Any

from .._frames import WRAPPER_FILE

_NAME = "_rg_wrapper"  # the name the wrapper is compiled under (see make_wrapper)
RAISE = object()  # re-raise the original exception
RETRY = object()  # a fix is installed: call the function again
NONE = object()  # give up quietly: return None

_TEMPLATE = '''
def _rg_make(_rg_fn, _rg_state, _rg_verify, _rg_RAISE, _rg_RETRY, _rg_ATOMS, _rg_type):
    {async_}def {name}({params}):
{snap}        try:
            {result}{await_}_rg_fn({call})
        except Exception as _rg_exc:
            _rg_d = {await_}_rg_state.{on_error}(_rg_exc, ({pos}), {{{kw}}}{snapped})
            if _rg_d is _rg_RETRY:
                return {await_}_rg_fn({call})
            if _rg_d is _rg_RAISE:
                raise
            return None
{after}    return {name}
'''
_VERIFY = '''        try:
            _rg_ok = _rg_verify(_rg_result)
        except Exception:
            _rg_ok = False
        if not _rg_ok:
            _rg_d = {await_}_rg_state.{on_rejected}(_rg_result, ({pos}), {{{kw}}}, _rg_snap)
            if _rg_d is _rg_RETRY:
                return {await_}_rg_fn({call})
            return None
'''
# A generator fails while its caller iterates: each item is passed through, and a failure starts a
# repair there. After a fix, the fixed generator is made again from the same arguments; where its
# first items are the ones the caller already has, the caller gets the rest (``state.resume``).
_GENERATOR = '''
def _rg_make(_rg_fn, _rg_state, _rg_verify, _rg_RAISE, _rg_RETRY, _rg_ATOMS, _rg_type):
    def {name}({params}):
        _rg_it = _rg_fn({call})
        _rg_n = 0
        _rg_sent = None
        while True:
            try:
                _rg_item = _rg_it.send(_rg_sent)
            except StopIteration as _rg_stop:
                return _rg_stop.value
            except Exception as _rg_exc:
                _rg_d = _rg_state.on_error(_rg_exc, ({pos}), {{{kw}}})
                if _rg_d is _rg_RETRY:
                    return (yield from _rg_state.resume(_rg_fn({call}), _rg_state.before({call}), _rg_n, _rg_exc))
                if _rg_d is _rg_RAISE:
                    raise
                return None
            _rg_n += 1
            _rg_sent = yield _rg_item
    return {name}
'''
_ASYNC_GENERATOR = '''
def _rg_make(_rg_fn, _rg_state, _rg_verify, _rg_RAISE, _rg_RETRY, _rg_ATOMS, _rg_type):
    async def {name}({params}):
        _rg_it = _rg_fn({call})
        _rg_n = 0
        _rg_sent = None
        while True:
            try:
                _rg_item = await _rg_it.asend(_rg_sent)
            except StopAsyncIteration:
                return
            except Exception as _rg_exc:
                _rg_d = await _rg_state.aon_error(_rg_exc, ({pos}), {{{kw}}})
                if _rg_d is _rg_RETRY:
                    async for _rg_item in _rg_state.aresume(_rg_fn({call}), _rg_state.before({call}), _rg_n, _rg_exc):
                        yield _rg_item
                    return
                if _rg_d is _rg_RAISE:
                    raise
                return
            _rg_n += 1
            _rg_sent = yield _rg_item
    return {name}
'''
_RECORD = '''        _rg_state.remember(_rg_snap, _rg_result)
'''
# With verify= or record= (the user's opt-in costs) the arguments are copied before each call, so a
# call that changes them before it fails is still replayed on what the caller passed.
_SNAPSHOT = '''        _rg_snap = (({pos}), {{{kw}}}) if {atoms} else _rg_state.snapshot(({pos}), {{{kw}}})
'''
# Immutable scalars need no copy: checked inline, so a call with only those pays no function call.
ATOMS = frozenset({int, float, str, bytes, bool, complex, type(None)})


def make_wrapper(func: types.FunctionType, state: Any, verify: Any, record: bool = False,
                 callee: Any = None) -> types.FunctionType:
    """A function with ``func``'s signature that calls it and hands failures to ``state``.

    ``callee`` is what is called instead, when heal stands above another decorator: that decorator's
    object, with its own signature (``(*args, **kwargs)`` when it is not a Python function).

    With ``verify`` each result is judged; with ``record`` each healthy call is handed to
    ``state.remember`` (both are the user's opt-in costs on the healthy path). With either, the
    arguments are copied by ``state.snapshot`` before each call and handed over with a failure.
    """
    shape: types.FunctionType = func if callee is None else callee if isinstance(callee, types.FunctionType) \
        else _anything  # type: ignore[assignment]
    parts = _signature_parts(shape)
    is_async = inspect.iscoroutinefunction(shape)
    fields = {
        "name": func.__name__ if func.__name__.isidentifier() and not keyword.iskeyword(func.__name__) else "wrapper",
        "async_": "async " if is_async else "",
        "await_": "await " if is_async else "",
        "on_error": "aon_error" if is_async else "on_error",
        "on_rejected": "aon_rejected" if is_async else "on_rejected",
        **parts,
    }
    # With neither option the result is returned straight from inside the ``try``.
    keeps = verify is not None or record
    fields["result"] = "_rg_result = " if keeps else "return "
    fields["snap"] = _SNAPSHOT.format(**fields) if keeps else ""
    fields["snapped"] = ", _rg_snap" if keeps else ""
    fields["after"] = (
        (_VERIFY.format(**fields) if verify is not None else "")
        + (_RECORD.format(**fields) if record else "")
        + ("        return _rg_result\n" if keeps else "")
    )
    template = _TEMPLATE
    if shape.__code__.co_flags & (inspect.CO_GENERATOR | inspect.CO_ASYNC_GENERATOR):
        if keeps:
            raise ValueError(f"{func.__qualname__} is a generator: verify= and record= would have to keep every "
                             "item it yields; give tests= instead")
        template = _GENERATOR if shape.__code__.co_flags & inspect.CO_GENERATOR else _ASYNC_GENERATOR
    namespace: dict[str, Any] = {}
    exec(_compiled(template.format(**{**fields, "name": _NAME})), namespace)
    wrapper: types.FunctionType = namespace["_rg_make"](callee or func, state, verify, RAISE, RETRY, ATOMS, type)
    # One compiled text serves every function of the same shape (a module of forty decorated functions
    # compiles a few); the code takes the function's name and file name here, as if written with them.
    named: dict[str, Any] = {"co_name": fields["name"], "co_filename": f"{WRAPPER_FILE}{func.__qualname__}>"}
    if sys.version_info >= (3, 11):
        named["co_qualname"] = f"_rg_make.<locals>.{fields['name']}"
    wrapper.__code__ = wrapper.__code__.replace(**named)
    wrapper.__name__ = fields["name"]
    wrapper.__defaults__ = shape.__defaults__
    wrapper.__kwdefaults__ = shape.__kwdefaults__
    return wrapper


@functools.lru_cache(maxsize=256)
def _compiled(text: str) -> types.CodeType:
    return compile(text, f"{WRAPPER_FILE}>", "exec")


def _anything(*args: Any, **kwargs: Any) -> None:
    """The signature of a callee that is not a Python function: anything goes."""


def _signature_parts(func: types.FunctionType) -> dict[str, str]:
    """The text of the parameter list, the call, and the positional/keyword argument packing."""
    params: list[str] = []
    call: list[str] = []
    pos: list[str] = []
    kw: list[str] = []
    code = func.__code__
    names = code.co_varnames
    npos, nposonly, nkw = code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount
    for i, name in enumerate(names[:npos]):
        params.append(name)
        call.append(name)
        pos.append(name)
        if i + 1 == nposonly:
            params.append("/")
    index = npos + nkw
    star = names[index] if code.co_flags & inspect.CO_VARARGS else None
    if star:
        index += 1
        params.append(f"*{star}")
        call.append(f"*{star}")
        pos.append(f"*{star}")
    elif nkw:
        params.append("*")
    for name in names[npos : npos + nkw]:
        params.append(name)
        call.append(f"{name}={name}")
        kw.append(f"{name!r}: {name}")
    if code.co_flags & inspect.CO_VARKEYWORDS:
        starstar = names[index]
        params.append(f"**{starstar}")
        call.append(f"**{starstar}")
        kw.append(f"**{starstar}")
    # Every default is a placeholder here; the real default objects are set on the wrapper after.
    defaults = len(func.__defaults__ or ())
    named = [p for p in params if p not in ("/", "*") and not p.startswith("*")]
    positional = named[:npos]
    for name in positional[npos - defaults :] if defaults else []:
        params[params.index(name)] = f"{name}=None"
    for name in (func.__kwdefaults__ or {}):
        params[params.index(name)] = f"{name}=None"
    packed_pos = ", ".join(pos) + ("," if len(pos) == 1 else "")
    plain = [name for name in named if not name.startswith("*")]
    atoms = " and ".join(f"_rg_type({name}) in _rg_ATOMS" for name in plain) if not (star or
                         code.co_flags & inspect.CO_VARKEYWORDS) else ""
    return {"params": ", ".join(params), "call": ", ".join(call), "pos": packed_pos, "kw": ", ".join(kw),
            "atoms": atoms or "False"}

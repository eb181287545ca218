"""The compiler as the oracle of the splice (regrow._heal._instrument_splice), function by function, on the
standard library: the spliced code's handler is the compiled text's (its instructions, constants, names,
positions and exception entries), its body the running code's, and every instruction of the body goes where the
compiled text sends it. Imported by tests/heal/test_instrument_splice.py; run as a script (``python
splice_oracle.py <regrow's src>``) under an interpreter with no test dependencies, it prints the counts as JSON.
"""

from __future__ import annotations

import dis
import importlib
import inspect
import json
import shutil
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

MODULES = ("argparse", "difflib", "textwrap", "email.utils", "shlex", "csv", "fractions", "statistics", "calendar",
           "configparser", "urllib.parse", "logging", "pprint", "tarfile", "zipfile", "ipaddress", "inspect",
           "json.decoder", "json.encoder", "http.cookies", "optparse", "tokenize", "_pydecimal", "pathlib")
# what cannot raise an Exception: the compiler leaves a constant returned after the try's end outside it, and
# 3.13 some jumps its optimizer moved
_CANNOT_FAIL = ("NOP", "RETURN_VALUE", "LOAD_CONST", "RETURN_CONST", "EXTENDED_ARG")


def python_3_12() -> str | None:
    """A Python 3.12 interpreter on this machine (pyenv's, or ``python3.12`` on the path), if there is one: CI
    runs 3.10, 3.11 and 3.13, so the tests of what 3.12 does differently run their checks in it by hand."""
    found = [*sorted(Path.home().glob(".pyenv/versions/3.12*/bin/python3.12")), shutil.which("python3.12")]
    check = "import sys; assert sys.version_info[:2] == (3, 12)"
    return next((str(p) for p in found if p and subprocess.run([str(p), "-c", check], capture_output=True,
                                                                timeout=60).returncode == 0), None)


def compare() -> dict[str, Any]:
    """How many functions were compared (and kept parameters at entry), and what differed, by function."""
    from regrow._heal import _instrument_code as instrument_code
    from regrow._heal import _instrument_splice as splice
    from regrow._heal._instrument_bytes import stored

    saved = instrument_code.spliced, instrument_code.load, instrument_code.keep
    # the text's path, for the oracle: no splice, no cache
    instrument_code.spliced = lambda *args: None  # type: ignore[assignment]
    instrument_code.load = lambda code, space: None  # type: ignore[assignment]
    instrument_code.keep = lambda code, space, made: None  # type: ignore[assignment]
    hook = object()
    compared, kept, bad = 0, 0, {}
    try:
        for fn in _functions():
            made = splice.spliced(fn, fn.__code__, hook, stored(fn.__code__))
            if made is None:
                continue
            compiled = instrument_code.instrumented(fn, hook, fn.__code__)
            if isinstance(compiled, str) or not any(e.depth == 0 and not e.lasti for e in _table(compiled)):
                continue  # the text does not compile alone, or a body that returns a constant and cannot fail
            compared += 1
            kept += "_regrow_p0" in compiled.co_varnames
            if wrong := differences(fn.__code__, made, compiled):
                bad[fn.__qualname__] = wrong
    finally:
        instrument_code.spliced, instrument_code.load, instrument_code.keep = saved
    return {"compared": compared, "kept": kept, "bad": bad}


def _functions() -> list[types.FunctionType]:
    found = []
    for name in MODULES:
        module = importlib.import_module(name)
        owners = [module, *(v for v in vars(module).values() if isinstance(v, type) and v.__module__ == name)]
        found += [v for owner in owners for v in vars(owner).values()
                  if isinstance(v, types.FunctionType) and v.__module__ == name]
    return found


def _same(a: object, b: object) -> bool:
    return a is b or (type(a) is type(b) and a == b and (isinstance(a, types.CodeType) or repr(a) == repr(b)))


def handler_at(code: types.CodeType) -> int:
    """Where the hook's handler begins: the target of the entries at depth 0 (the outer ``try``'s)."""
    return max(e.target for e in _table(code) if e.depth == 0 and not e.lasti)  # not 3.12+'s StopIteration handler


def _entries(code: types.CodeType) -> list[tuple[dis.Instruction, Any]]:
    table = _table(code)
    return [(i, next((e for e in table if e.start <= i.offset < e.end), None)) for i in dis.get_instructions(code)]


def differences(code: types.CodeType, made: types.CodeType, compiled: types.CodeType) -> list[str]:
    """What differs between ``made`` (``code`` spliced) and ``compiled`` (the text's), as far as it matters."""
    wrong = [a for a in ("co_stacksize", "co_flags", "co_argcount", "co_kwonlyargcount", "co_posonlyargcount",
                         "co_varnames", "co_qualname", "co_firstlineno") if getattr(made, a) != getattr(compiled, a)]
    at, theirs = handler_at(made), handler_at(compiled)
    if list(made.co_positions())[at // 2:] != list(compiled.co_positions())[theirs // 2:]:
        wrong.append("the handler's positions")
    ours = [x for x in _entries(made) if x[0].offset >= at]
    their = [x for x in _entries(compiled) if x[0].offset >= theirs]
    if len(ours) != len(their):
        wrong.append("the handler's length")
    for (a, ea), (b, eb) in zip(ours, their, strict=False):
        a_value = a.argval - at if a.opcode in dis.hasjrel else a.argval
        b_value = b.argval - theirs if b.opcode in dis.hasjrel else b.argval
        if a.opname != b.opname or not _same(a_value, b_value):
            wrong.append(f"the handler's {a.opname} {a.argrepr} against {b.opname} {b.argrepr}")
        if (ea and (ea.target - at, ea.depth, ea.lasti)) != (eb and (eb.target - theirs, eb.depth, eb.lasti)):
            wrong.append(f"the handler's exception entry at {a.offset - at}")
    # the body is the running code's: the same instructions, positions, and each where its own try sends it
    body = [x for x in _entries(made) if x[0].offset < at]
    original = _entries(code)
    first = 1 + next(n for n, (i, _) in enumerate(original) if i.opname == "RESUME")  # a generator's: 3
    ending = [i.opname for i, _ in original[-2:]] == ["CALL_INTRINSIC_1", "RERAISE"] and \
        bool(code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE))
    epilogue = original[-2][0].offset if ending else -1  # 3.12+: a generator's StopIteration handler, kept last
    original = original[:-2] if ending else original
    copies = len(body) - len(original)  # the kept parameters' copies at entry: two units each, four for a **kwargs
    copied = [i.opname for i, _ in body[first:first + copies]]
    if copied != [name for index in range(first, first + copies) for name in [body[index][0].opname]] or \
            any(name not in ("LOAD_FAST", "LOAD_DEREF", "STORE_FAST", "BUILD_MAP", "DICT_UPDATE") for name in copied):
        wrong.append(f"the copies at entry: {copied}")
    positions = list(made.co_positions())[:at // 2]
    if positions[:first] + positions[first + copies:] != list(code.co_positions())[:-2 if ending else None]:
        wrong.append("the body's positions")
    for (a, ea), (b, eb) in zip(body[first + copies:], original[first:], strict=True):
        b_value = b.argval + 2 * copies if b.opcode in dis.hasjrel else b.argval
        if a.opname != b.opname or not _same(a.argval, b_value):
            wrong.append(f"the body's {a.opname} at {a.offset}")
        theirs_at = (eb.target + 2 * copies, eb.depth, eb.lasti) if eb and eb.target != epilogue else (at, 0, False)
        if (ea.target, ea.depth, ea.lasti) != theirs_at:
            wrong.append(f"the body's exception entry at {a.offset}")
    # where the compiled body has the same instructions, each goes to the same handler as there (but for those
    # that cannot raise an Exception: the compiler leaves a constant returned after the try's end outside it, and
    # 3.13 some jumps its optimizer moved)
    if [i.opname for i, _ in _entries(made)] == [i.opname for i, _ in _entries(compiled)]:
        for (a, ea), (b, eb) in zip(_entries(made), _entries(compiled), strict=True):
            cannot_fail = b.opname in _CANNOT_FAIL or b.opname.startswith(("JUMP", "POP_JUMP"))
            if b.offset < theirs and not cannot_fail and \
                    (ea is not None and ea.target == at) != (eb is not None and eb.target == theirs):
                wrong.append(f"{a.opname} at {a.offset}: the handler where the compiler's is another")
    return wrong


def _table(code: types.CodeType) -> list[Any]:
    return dis._parse_exception_table(code)  # type: ignore[attr-defined,no-any-return]


if __name__ == "__main__":
    sys.path.insert(0, sys.argv[1])
    print(json.dumps(compare()))

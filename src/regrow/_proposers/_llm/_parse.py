"""From a model's reply to the source of one candidate definition, or a refusal with its reason.

Models answer in many shapes: fenced blocks tagged ``python``/``py``/``Python`` or not tagged,
code with no fence, code between paragraphs of prose, an echoed decorator, the whole class, a
``<think>`` preamble, a fence the token limit cut off — or local edits of the original
(SEARCH/REPLACE blocks, a unified diff; see :mod:`._edits`). Whatever the shape, the result is one bare
``def`` of the target — imports the reply put at the top moved inside it, decorators stripped (a
regrow decorator in a candidate must never nest a second repair loop) — or a reason, worded for
the model, since the next prompt shows it.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import re
import textwrap

from ..._target._target import FunctionNode
from ._docstring import has_docstring, kept_docstring
from ._edits import EditError, apply, edits_in
from ._fences import fence, fenced_blocks
from ._rules import MAX_REPLY_CHARS, Refused, Rules, check_changed, check_compiles, check_signature, syntax_where

__all__ = ["MAX_REPLY_CHARS", "Parsed", "Rules", "parse_reply"]

PYTHON_TAGS = frozenset({"", "python", "py", "python3", "py3", "ipython", "pycon"})

_THINK = re.compile(r"<(think|thinking|reasoning)>.*?(?:</\1>|\Z)", re.DOTALL | re.IGNORECASE)
_CODE_START = re.compile(r"^(?:async\s+def\s|def\s|class\s|@\w|import\s|from\s+[\w.]+\s+import\s)")
_REGROW_DECORATOR = re.compile(r"\b(regrow|heal)\b")


@dataclasses.dataclass(frozen=True)
class Parsed:
    """A candidate's source, or ``None`` and the reason the reply was refused."""

    source: str | None
    reason: str = ""
    notes: tuple[str, ...] = ()  # what was changed on the way (decorators stripped, imports moved in)
    code: str = ""  # the code the reply held, as found (shown to the model when refused)
    echo: bool = False  # refused as the original, unchanged
    edited: str = ""  # the kind of local edit the reply held ("SEARCH/REPLACE", "diff"), if any

    @property
    def ok(self) -> bool:
        return self.source is not None


@dataclasses.dataclass
class _Block:
    text: str
    tag: str = ""
    fenced: bool = False
    unclosed: bool = False


def parse_reply(text: str, rules: Rules, *, truncated: bool = False) -> Parsed:
    """Parse a model reply. ``truncated`` says the provider stopped it at the token limit."""
    try:
        return _parse(text, rules, truncated)
    except Refused as refused:
        return Parsed(None, str(refused), code=refused.code, echo=refused.echo, edited=_edit_kind(text))
    except (RecursionError, MemoryError) as exc:  # code nested too deeply for the parser, or for ast's walks
        return Parsed(None, f"the code is nested too deeply for Python to parse or check ({type(exc).__name__}); "
                            "write it with less nesting")


def _parse(text: str, rules: Rules, truncated: bool) -> Parsed:
    if len(text) > rules.max_chars:
        raise Refused(f"the reply is too long ({len(text)} characters, at most {rules.max_chars}); "
                       f"send only the function `{rules.name}`")
    text = _THINK.sub("", text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff"))
    if not text.strip():
        limit = " (the token limit was reached before any code)" if truncated else ""
        raise Refused(f"the reply was empty{limit}")
    notes: list[str] = []
    edited = _edited(text, rules, truncated, notes)
    blocks = [_Block(edited)] if edited is not None else _blocks(text, rules)
    if not blocks and truncated:
        raise Refused("the reply was cut off by the token limit before it held the function; "
                       "send the code first, with little or no explanation")
    if not blocks:
        raise Refused(f"the reply holds no Python code; send the complete function `{rules.name}` "
                       f"in one {fence(rules.source)}python block")
    chosen, tree = _choose(blocks, rules, truncated)
    if chosen.unclosed:
        notes.append("the code fence was not closed")
    node, lines = _target_in(tree, chosen.text, rules)
    source = _assemble(tree, node, lines, rules, notes)
    return Parsed(source, notes=tuple(notes), code=chosen.text, edited=_edit_kind(text) if edited else "")


def _edited(text: str, rules: Rules, truncated: bool, notes: list[str]) -> str | None:
    """The definition that the reply's local edits make of the original; ``None`` if it holds none."""
    try:
        found = edits_in(text)
        if found is None:
            return None
        edits, kind = found
        if not rules.source:
            raise EditError("this prompt showed no function to edit; send the complete function")
        source, how = apply(rules.source, edits, rules.hint)
    except EditError as exc:
        cut = " (the reply was cut off by the token limit)" if truncated else ""
        raise Refused(f"{exc}{cut}", text[:1500]) from None
    notes.append(f"applied {len(edits)} {kind} edit{'s' if len(edits) > 1 else ''} to the original")
    notes.extend(how)
    return source


def _edit_kind(text: str) -> str:
    try:
        found = edits_in(text)
    except EditError:
        return "SEARCH/REPLACE"
    return found[1] if found else ""


# -- finding the code ------------------------------------------------------------------------------
def _blocks(text: str, rules: Rules) -> list[_Block]:
    fenced = [_Block(textwrap.dedent(b.body), b.tag.lower(), fenced=True, unclosed=b.unclosed)
              for b in fenced_blocks(text)]
    if fenced:
        python = [b for b in fenced if b.tag in PYTHON_TAGS]
        if python:
            return python
        tags = ", ".join(sorted({b.tag for b in fenced}))
        raise Refused(f"the reply holds only ```{tags} blocks; send the complete function in one "
                       f"{fence(rules.source)}python block", fenced[0].text)
    wrapped = _from_json(text)
    if wrapped is not None:
        return [_Block(wrapped)]
    if _parses(text.strip("\n")):
        return [_Block(textwrap.dedent(text.strip("\n")))]
    return _code_in_prose(text)


def _from_json(text: str) -> str | None:
    """Code a model wrapped in a JSON object (``{"code": "def f(): ..."}``)."""
    stripped = text.strip()
    if not stripped.startswith("{"):
        return None
    try:
        data = json.loads(stripped)
    except ValueError:
        return None
    if isinstance(data, dict):
        for value in data.values():
            if isinstance(value, str) and re.search(r"^\s*(async\s+)?def\s", value, re.MULTILINE):
                return textwrap.dedent(value)
    return None


def _code_in_prose(text: str) -> list[_Block]:
    """Runs of lines that look like code between paragraphs of prose."""
    blocks: list[_Block] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        indent = len(line) - len(line.lstrip())
        if not _CODE_START.match(line.lstrip()):
            i += 1
            continue
        run = [line[indent:]]
        i += 1
        while i < len(lines):
            nxt = lines[i]
            body = nxt[indent:] if nxt[:indent].strip() == "" else nxt
            if nxt.strip() and not body[:1].isspace() and not _CODE_START.match(body) \
                    and not body.startswith((")", "]", "}")):
                break
            run.append(body)
            i += 1
        blocks.append(_Block(_shrink_to_parse("\n".join(run).rstrip("\n"))))
    return blocks


def _shrink_to_parse(code: str) -> str:
    """The longest leading part of ``code`` that parses (prose may follow code without a blank line)."""
    lines = code.split("\n")
    for end in range(len(lines), 0, -1):
        if _parses("\n".join(lines[:end])):
            return "\n".join(lines[:end])
    return code


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return bool(code.strip())


def _choose(blocks: list[_Block], rules: Rules, truncated: bool) -> tuple[_Block, ast.Module]:
    """The last block that parses and defines the target; otherwise the most telling refusal."""
    errors: list[tuple[_Block, Exception]] = []
    others: list[str] = []
    misplaced = ""
    for block in reversed(blocks):
        try:
            tree = ast.parse(block.text)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            errors.append((block, exc))
            continue
        if _defines(tree, rules):
            return block, tree
        misplaced = misplaced or _misplaced(tree, rules.name)
        others += [n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    mentions = [(b, e) for b, e in errors if re.search(rf"\bdef\s+{re.escape(rules.name)}\b", b.text)]
    if mentions:
        block, error = mentions[0]
        where = syntax_where(error)
        if truncated or block.unclosed:
            part = _complete_part(block.text, rules.name)
            if part is not None and _defines(tree := ast.parse(part), rules):
                return _Block(part, block.tag, block.fenced, block.unclosed), tree
            cause = "the token limit" if truncated else "the end of the reply"
            raise Refused(f"the code was cut off by {cause} before the function was complete ({where}); "
                           "send the complete function and nothing else", block.text)
        raise Refused(f"the code does not parse: {where}", block.text)
    if truncated:
        raise Refused("the reply was cut off by the token limit before it held the function", blocks[-1].text)
    if misplaced:
        want = "a function at top level" + (f" or a method of class `{rules.owner}`" if rules.owner else "")
        raise Refused(f"the reply defines `{rules.name}` as {misplaced}, not as {want}; send `{rules.name}` "
                       "alone, defined as the prompt showed it", blocks[-1].text)
    if others:
        names = ", ".join(f"`{n}`" for n in dict.fromkeys(others))
        raise Refused(f"the reply defines {names} but not `{rules.name}`; keep the name `{rules.name}`",
                       blocks[-1].text)
    if errors:
        raise Refused(f"the code does not parse: {syntax_where(errors[0][1])}", errors[0][0].text)
    raise Refused(f"the reply holds no function definition; send the complete function `{rules.name}`",
                   blocks[-1].text)


def _complete_part(text: str, name: str) -> str | None:
    """A cut-off block up to the first top-level line after the definition of ``name``, if that parses:
    the function was complete, and what the model went on with (the test's code, continued) was cut."""
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if re.match(rf"(async\s+)?def\s+{re.escape(name)}\b", line)),
                 None)
    if start is None:
        return None
    end = next((i for i in range(start + 1, len(lines)) if lines[i][:1] not in ("", " ", "\t", ")", "]", "}")),
               None)
    part = "\n".join(lines[:end]).rstrip() if end is not None else ""
    return part if part and _parses(part) else None


def _misplaced(tree: ast.Module, name: str) -> str:
    """Where a tree that does not define ``name`` where a candidate must has it (``""``: nowhere)."""
    for parent in ast.walk(tree):
        if isinstance(parent, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name for n in parent.body):
            kind = "a method of class" if isinstance(parent, ast.ClassDef) else "a function nested in"
            return f"{kind} `{parent.name}`"
    return ""


def _defines(tree: ast.Module, rules: Rules) -> bool:
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == rules.name:
            return True
        if isinstance(node, ast.ClassDef) and node.name == rules.owner and _method(node, rules.name) is not None:
            return True
    return False


def _method(cls: ast.ClassDef, name: str) -> FunctionNode | None:
    found = [n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name]
    return found[-1] if found else None


# -- checking and assembling -----------------------------------------------------------------------
def _target_in(tree: ast.Module, text: str, rules: Rules) -> tuple[FunctionNode, list[str]]:
    """The target's definition in ``tree`` (the last one; inside its class when the reply echoed the class)."""
    found: FunctionNode | None = None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == rules.name:
            found = node
        elif isinstance(node, ast.ClassDef) and node.name == rules.owner:
            found = _method(node, rules.name) or found
    assert found is not None  # _choose only returns blocks that define the target
    return found, text.split("\n")


def _assemble(tree: ast.Module, node: FunctionNode, lines: list[str], rules: Rules, notes: list[str]) -> str:
    imports, helpers = _top_level(tree, node, rules, notes)
    check_signature(node, rules)
    if _strip_decorators(node, notes) or imports or helpers:
        # Imports and helpers go inside the function: a candidate is one definition, and nothing at
        # module level is ever executed when a fix is installed.
        node.decorator_list = []
        position = 1 if has_docstring(node) else 0
        node.body[position:position] = [*imports, *helpers]
        source = ast.unparse(node) + "\n"
        if imports:
            notes.append("moved the reply's imports into the function")
        if helpers:
            names = ", ".join(h.name for h in helpers)
            notes.append(f"moved the helper(s) {names} into the function")
    else:
        body = lines[node.lineno - 1 : node.end_lineno]
        source = textwrap.dedent("\n".join(body)).rstrip() + "\n"
    source = kept_docstring(source, rules, notes)
    check_compiles(source, rules)
    check_changed(source, rules)
    return source


def _top_level(tree: ast.Module, node: FunctionNode, rules: Rules,
               notes: list[str]) -> tuple[list[ast.stmt], list[FunctionNode | ast.ClassDef]]:
    imports: list[ast.stmt] = []
    helpers: list[FunctionNode | ast.ClassDef] = []
    extras: list[str] = []
    tests: list[str] = []
    for stmt in tree.body:
        if stmt is node or (isinstance(stmt, ast.ClassDef) and stmt.name == rules.owner and node in stmt.body):
            continue
        if _is_test(stmt, rules.name):
            tests.append(_first_line(ast.unparse(stmt)))
        elif isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
            notes.append("dropped a __future__ import")
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            imports.append(stmt)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if stmt.name == rules.name:
                notes.append(f"took the last of several definitions of `{rules.name}`")
            elif rules.allow_helpers:
                stmt.decorator_list = [d for d in stmt.decorator_list if not _is_regrow(d)]
                helpers.append(stmt)
            else:
                raise Refused(f"the reply defines `{stmt.name}` besides `{rules.name}`; helper functions and "
                               f"classes are not allowed here — put all the code inside `{rules.name}`",
                               ast.unparse(tree))
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
            continue  # a module docstring: harmless, dropped
        else:
            extras.append(f"line {stmt.lineno}: `{_first_line(ast.unparse(stmt))}`")
    if tests:
        notes.append(f"dropped the reply's test code ({'; '.join(tests[:3])})")
    if extras:
        raise Refused("the reply has top-level statements other than imports, which are never run "
                       f"({'; '.join(extras[:3])}); send only the function definition", ast.unparse(tree))
    return imports, helpers


def _is_test(stmt: ast.stmt, name: str) -> bool:
    """Test code a model wrote after the function (a small model continues the prompt's test): a ``test_``
    function or ``Test`` class, a top-level ``assert``, an ``if __name__ == "__main__":`` block, or a bare
    call of the function (``print(f(3))``). None of it would run in a candidate, so it is dropped, not refused."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return stmt.name.startswith("test") and stmt.name != name
    if isinstance(stmt, ast.ClassDef):
        return stmt.name.startswith("Test")
    if isinstance(stmt, ast.If):
        return "__name__" in ast.unparse(stmt.test) and "__main__" in ast.unparse(stmt.test)
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        return any(isinstance(node, ast.Name) and node.id == name for node in ast.walk(stmt.value))
    return isinstance(stmt, ast.Assert)


def _strip_decorators(node: FunctionNode, notes: list[str]) -> bool:
    """Drop the target's decorators (regrow keeps the original's) and regrow decorators inside it.

    Returns whether the body changed (the target's own decorators are left out by slicing from ``def``).
    """
    if node.decorator_list:
        shown = ", ".join("@" + _first_line(ast.unparse(d)) for d in node.decorator_list)
        notes.append(f"stripped the decorator(s) {shown}")
        node.decorator_list = []
    inner_changed = False
    for inner in ast.walk(node):
        if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and inner is not node:
            kept = [d for d in inner.decorator_list if not _is_regrow(d)]
            if len(kept) != len(inner.decorator_list):
                notes.append(f"stripped a regrow decorator from `{inner.name}`")
                inner.decorator_list = kept
                inner_changed = True
    return inner_changed


def _is_regrow(decorator: ast.expr) -> bool:
    return bool(_REGROW_DECORATOR.search(ast.unparse(decorator)))


def _first_line(text: str) -> str:
    line = text.strip().split("\n", 1)[0]
    return line if len(line) <= 80 else line[:77] + "..."

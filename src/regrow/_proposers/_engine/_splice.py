"""Turning edits back into source text, keeping the user's text wherever the edit did not change it.

The edit is spliced into the original text at the node's position, so a fix's diff touches only
what changed. Inside the edited range too, every node the edit kept from the original (an operand,
an argument, a statement moved into a new block) is written as the user wrote it — quotes, digit
separators, parentheses and comments — and only the new tokens are rendered. Where a splice cannot
be done safely the whole function is unparsed instead.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import keyword
import re
from collections.abc import Callable, Sequence

from ._edits import Branch, Insert, Replacement
from ._module import Deferring, defer
from ._parens import ATOMIC, needs_parens
from ._scope import Scope, Site

_STAND_IN = "__regrow_kept_{}__"
_Kept = tuple[ast.AST, str, bool]  # a node kept as written, its text, whether the text is enclosed already
_END = 1 << 30  # a column past the end of any line


@dataclasses.dataclass
class _Original(Deferring):
    """The function as written: its text and its nodes, to copy the text of any node an edit kept."""

    source: str
    function: ast.AST
    lines: list[str]
    nodes: dict[int, ast.AST]
    parents: dict[int, ast.AST] = dataclasses.field(default_factory=dict)
    quote: str = dataclasses.field(default_factory=lambda: '"')  # the quote the function's strings mostly use

    @classmethod
    def of(cls, source: str, function: ast.AST) -> _Original:
        cached = _cache[0]
        if cached is not None and cached.function is function and cached.source == source:
            return cached
        nodes, parents = {id(function): function}, {}
        stack = [function]
        while stack:  # one walk for both (a 3,000-line function has ~100,000 nodes)
            node = stack.pop()
            for child in ast.iter_child_nodes(node):
                nodes[id(child)], parents[id(child)] = child, node
                stack.append(child)
        made = cls(source, function, source.splitlines(keepends=True), nodes, parents)
        defer(made, ("quote",), lambda: {"quote": made._quote()})  # only a new string needs it
        _cache[0] = made
        return made

    def _quote(self) -> str:
        docstrings = {id(n.value) for n in ast.walk(self.function) if isinstance(n, ast.Expr)}
        marks = [self.segment(n).lstrip("rRbBuU")[:1] for n in ast.walk(self.function)
                 if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings
                 and self.kept(n)]
        return "'" if marks.count("'") > marks.count('"') else '"'

    def kept(self, node: ast.AST) -> bool:
        return (isinstance(node, (ast.expr, ast.stmt)) and self.nodes.get(id(node)) is node
                and getattr(node, "end_col_offset", None) is not None)

    def segment(self, node: ast.AST) -> str:
        start: int = node.lineno  # type: ignore[attr-defined]
        end: int = node.end_lineno  # type: ignore[attr-defined]
        col: int = node.col_offset  # type: ignore[attr-defined]
        end_col: int = node.end_col_offset  # type: ignore[attr-defined]
        if start == end:
            return self.lines[start - 1].encode()[col:end_col].decode()
        first = self.lines[start - 1].encode()[col:].decode()
        last = self.lines[end - 1].encode()[:end_col].decode()
        return "".join([first, *self.lines[start:end - 1], last])

    def indent_of(self, node: ast.AST) -> str:
        line = self.lines[node.lineno - 1]  # type: ignore[attr-defined]
        return line[: len(line) - len(line.lstrip())]

    def grouped(self, node: ast.AST) -> bool:
        return self.parens(node) is not None

    def parens(self, node: ast.AST) -> tuple[int, int] | None:
        """Where the parentheses of its own (not a call's) that the node's text stands in open and close:
        the column of ``(`` on its first line and the one after ``)`` on its last; ``None`` without."""
        start: int = node.lineno  # type: ignore[attr-defined]
        end: int = node.end_lineno  # type: ignore[attr-defined]
        first = self.lines[start - 1].encode()
        last = self.lines[end - 1].encode()
        before = first[: node.col_offset].rstrip()  # type: ignore[attr-defined]
        after = last[node.end_col_offset :]  # type: ignore[attr-defined]
        if not (before.endswith(b"(") and after.lstrip().startswith(b")")):
            return None
        callee = re.search(rb"[A-Za-z_0-9]+$|[)\]]$", before[:-1].rstrip())  # what precedes a call's parenthesis
        if callee is not None and not keyword.iskeyword(callee.group().decode()):
            return None
        return len(before) - 1, len(last) - len(after.lstrip()) + 1

    def stand_ins(self, node: ast.AST, kept: list[_Kept], parent: ast.AST | None = None) -> ast.AST:
        """A copy of ``node`` in which every node of the original, and every new string, is a placeholder
        name whose text is in ``kept`` (the original's nodes as written, with their own parentheses
        where they stand in the same kind of place as they did)."""
        if self.kept(node):
            name = ast.Name(_STAND_IN.format(len(kept)), ast.Load())
            text = self.segment(node)
            was = self.parents.get(id(node))
            own = parent is not None and type(parent) is type(was) and isinstance(node, ast.expr) and self.grouped(node)
            kept.append((node, f"({text})" if own else text, own))
            return name if isinstance(node, ast.expr) else ast.Expr(name)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.kind is None:
            kept.append((node, _quoted(node.value, self.quote), False))
            return ast.Name(_STAND_IN.format(len(kept) - 1), ast.Load())
        if isinstance(node, ast.JoinedStr):
            return node
        twin = copy.copy(node)
        for field, value in ast.iter_fields(node):
            if isinstance(value, list):
                setattr(twin, field, [self.stand_ins(v, kept, node) if isinstance(v, ast.AST) else v for v in value])
            elif isinstance(value, ast.AST):
                setattr(twin, field, self.stand_ins(value, kept, node))
        return twin

    def expression(self, new: ast.expr) -> str:
        """``new`` as text, the original's nodes in it as written."""
        plain = ast.unparse(new)
        kept: list[_Kept] = []
        pattern = ast.unparse(self.stand_ins(new, kept))
        if not kept:
            return plain
        if pattern == _STAND_IN.format(0):
            return kept[0][1]
        return _filled(pattern, kept, _dump_expression, plain) or plain

    def statements(self, stmts: Sequence[ast.stmt], indent: str) -> str:
        """``stmts`` as lines at ``indent``, the original's nodes in them as written."""
        plain = _indented([ast.unparse(ast.fix_missing_locations(s)) for s in stmts], indent)
        kept: list[_Kept] = []
        twins = [self.stand_ins(s, kept) for s in stmts]
        if not kept:
            return plain
        pattern = _indented([ast.unparse(ast.fix_missing_locations(t)) for t in twins], indent)
        for i, (node, text, _) in enumerate(kept):
            if isinstance(node, ast.stmt):  # a whole statement: its own lines, moved to the new depth
                where = next(line for line in pattern.splitlines() if line.strip() == _STAND_IN.format(i))
                kept[i] = node, _moved(text, self.indent_of(node), where[: len(where) - len(where.lstrip())]), True
        return _filled(pattern, kept, _dump_block, plain) or plain


_cache: list[_Original | None] = [None]


def prepare(source: str, function: ast.AST) -> None:
    """Read the function's nodes for splicing now (kept for the next splice of it, and by forked children)."""
    _Original.of(source, function)


def _indented(texts: list[str], indent: str) -> str:
    return "".join(f"{indent}{line}\n" for text in texts for line in text.splitlines())


def _moved(text: str, old: str, new: str) -> str:
    """A statement's text with its continuation lines moved from indentation ``old`` to ``new``."""
    first, *rest = text.split("\n")
    return "\n".join([first, *(new + line[len(old):] if line.startswith(old) else line for line in rest)])


def _quoted(value: str, quote: str) -> str:
    text = repr(value)
    if quote == '"' and text.startswith("'") and '"' not in value:
        return f'"{text[1:-1]}"'
    return text


def _filled(pattern: str, kept: list[_Kept], dump: Callable[[str], str | None],
            plain: str) -> str | None:
    """``pattern`` with its placeholders replaced by the kept texts, parenthesised only where the meaning
    needs it (the result must parse as ``plain`` does)."""
    want = dump(plain)
    if want is None:
        return None
    wrap = [False] * len(kept)
    for turn in range(len(kept) + 1):
        if turn:
            node, _, enclosed = kept[turn - 1]
            if enclosed or isinstance(node, (*ATOMIC, ast.Constant)):
                continue
            wrap[turn - 1] = True
        text = pattern
        for i, (_, piece, _) in enumerate(kept):
            text = text.replace(_STAND_IN.format(i), f"({piece})" if wrap[i] else piece, 1)
        if dump(text) == want:
            return text
    return None


def _dump_expression(text: str) -> str | None:
    try:
        return ast.dump(ast.parse(f"(\n{text}\n)", mode="eval"))
    except (SyntaxError, ValueError):
        return None


def _dump_block(text: str) -> str | None:
    try:
        return ast.dump(ast.parse(f"if 1:\n{text}" if text[:1].isspace() else text))
    except (SyntaxError, ValueError):
        return None


def splice(source: str, function: ast.FunctionDef | ast.AsyncFunctionDef, site: Site, new: Replacement) -> str:
    """``source`` with ``site.node`` replaced by ``new``."""
    text = splice_text(source, function, site, new)
    return text if text is not None else _unparse_with(function, site, new)


def splice_text(source: str, function: ast.AST, site: Site, new: Replacement,
                original: str | None = None) -> str | None:
    """``source`` with ``site.node`` replaced by ``new`` in the text, or ``None`` where that is not safe.

    ``original`` is the text the function's nodes were parsed from, when ``source`` already holds
    another edit (later in the text, so that the positions up to this site still hold).
    """
    lines = source.splitlines(keepends=True)
    written = _Original.of(original if original is not None else source, function)
    node = site.node
    start, end = getattr(node, "lineno", 0), getattr(node, "end_lineno", None)
    col, end_col = getattr(node, "col_offset", 0), getattr(node, "end_col_offset", None)
    if not start or end is None or end_col is None:
        return None
    if isinstance(new, Branch):
        return _with_branch(lines, written, node, new)
    if isinstance(new, (list, Insert)):
        head = lines[start - 1].encode()[:col]
        tail = lines[end - 1].encode()[end_col:]
        if head.strip() or (tail.strip() and not tail.strip().startswith(b"#")) or _is_elif(lines, site):
            return None  # shares its line with other code, or is the `elif` of a chain
        indent = head.decode()
        if isinstance(new, Insert):
            at = end if new.after else start - 1
            return _inserted(lines, at, written.statements(new.stmts, indent))
        if not new and len(getattr(site.parent, site.field)) == 1:
            new = [ast.Pass()]
        return "".join([*lines[: start - 1], written.statements(new, indent), *lines[end:]])
    text = written.expression(new)
    if isinstance(site.parent, ast.FormattedValue):  # inside an f-string: its own quote would end it
        inside = _in_fstring(written, site.parent, text, ast.unparse(new))
        if inside is None:
            return None
        text = inside
    if _shares_parens(lines, site):
        text = f"({text})"  # `sum(x for x in xs)`: the generator's parentheses are the call's
    parens = written.parens(node) if written.kept(node) else None
    wraps = parens is not None and new is not node and any(n is node for n in ast.walk(new))
    if parens is not None and wraps:
        col, end_col = parens  # ``(a - b)`` wrapped: ``-(a - b)``, not ``(-(a - b))``
    # ``(a and\n b)`` wrapped, too: its lines go on only inside parentheses
    if (needs_parens(site, new, bare=parens is None) and (parens is None or wraps)) or (wraps and end > start):
        text = f"({text})"
    first, last = lines[start - 1].encode(), lines[end - 1].encode()
    joined = first[:col] + text.encode() + last[end_col:]
    return "".join([*lines[: start - 1], joined.decode(), *lines[end:]])


def _shares_parens(lines: list[str], site: Site) -> bool:
    """Whether the site is a generator expression written as a call's only argument without parentheses
    of its own: its position spans the call's, which its replacement must then bring."""
    call, node = site.parent, site.node
    if not (isinstance(node, ast.GeneratorExp) and isinstance(call, ast.Call) and len(call.args) == 1
            and not call.keywords):
        return False
    return not lines[node.lineno - 1].encode()[:node.col_offset].rstrip().endswith(b"(")


def _in_fstring(written: _Original, value: ast.AST, text: str, plain: str) -> str | None:
    fstring = written.parents.get(id(value))
    if fstring is None or not written.kept(fstring):
        return None
    quote = written.segment(fstring).lstrip("fFrRbBuU")[:1]
    return next((t for t in (text, plain) if quote not in t and "\\" not in t and "\n" not in t), None)


def _is_elif(lines: list[str], site: Site) -> bool:
    node = site.node
    return isinstance(node, ast.If) and site.field == "orelse" and isinstance(site.parent, ast.If) and \
        lines[node.lineno - 1].encode()[node.col_offset:].startswith(b"elif")


def _inserted(lines: list[str], at: int, text: str) -> str:
    before = lines[:at]
    if before and not before[-1].endswith("\n"):  # the last line of a file may have no newline
        before[-1] += "\n"
    return "".join([*before, text, *lines[at:]])


def _with_branch(lines: list[str], written: _Original, node: ast.AST, new: Branch) -> str | None:
    """A new ``elif`` put right after the body of the ``if`` statement ``node``."""
    if not isinstance(node, ast.If) or written.nodes.get(id(node)) is not node:
        return None
    last = node.body[-1]
    tail = lines[last.end_lineno - 1].encode()[last.end_col_offset:]  # type: ignore[operator]
    if tail.strip() and not tail.strip().startswith(b"#"):
        return None
    indent = written.indent_of(node)
    inner = written.indent_of(node.body[0]) if node.body[0].lineno > node.lineno else indent + "    "
    head = f"{indent}elif {written.expression(new.test)}:\n"
    return _inserted(lines, last.end_lineno or 0, head + written.statements(new.body, inner))


def span(site: Site, new: Replacement) -> tuple[tuple[int, int], tuple[int, int]]:
    """The stretch of text an edit rewrites, from where to where ((line, column) pairs)."""
    node = site.node
    start, end = getattr(node, "lineno", 0), getattr(node, "end_lineno", 0) or 0
    if isinstance(new, Branch) and isinstance(node, ast.If):
        at = node.body[-1].end_lineno or 0
        return (at, _END), (at, _END)
    if isinstance(new, Insert):
        return ((end, _END), (end, _END)) if new.after else ((start, -1), (start, -1))
    if isinstance(new, list):
        return (start, -1), (end, _END)
    return (start, getattr(node, "col_offset", 0)), (end, getattr(node, "end_col_offset", 0) or 0)


def splice_both(source: str, function: ast.FunctionDef | ast.AsyncFunctionDef,
                edits: Sequence[tuple[Site, Replacement]]) -> str | None:
    """``source`` with two edits at separate places, or ``None`` when they overlap or one cannot be spliced."""
    (first, _), (second, _) = ordered = sorted(edits, key=lambda edit: span(*edit))
    if span(*ordered[0])[1] > span(*ordered[1])[0] or span(*ordered[0]) == span(*ordered[1]) or first is second:
        return None
    text: str | None = source
    for site, new in reversed(ordered):  # the later one first: the earlier one's positions still hold
        text = splice_text(text, function, site, new, original=source) if text is not None else None
    return text


def _unparse_with(function: ast.FunctionDef | ast.AsyncFunctionDef, site: Site, new: Replacement) -> str:
    twin = copy.deepcopy(function)
    there = Scope.of(twin).sites[site.order]
    slot = getattr(there.parent, there.field)
    if isinstance(new, Branch):
        assert isinstance(there.node, ast.If)
        there.node.orelse = [ast.If(new.test, new.body, there.node.orelse)]
    elif isinstance(new, Insert):
        at = there.index + 1 if new.after else there.index
        slot[at:at] = new.stmts
    elif isinstance(new, list):
        body = new or ([ast.Pass()] if len(slot) == 1 else [])
        slot[there.index : there.index + 1] = body
    elif there.index >= 0:
        slot[there.index] = new
    else:
        setattr(there.parent, there.field, new)
    return ast.unparse(ast.fix_missing_locations(twin)) + "\n"

"""A docstring a model's reply left out, put back: the fix is written into the user's file as it is."""

from __future__ import annotations

import ast
import io
import tokenize

from ._rules import Rules


def has_docstring(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    first = node.body[0] if node.body else None
    return isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)


def kept_docstring(source: str, rules: Rules, notes: list[str]) -> str:
    """``source`` (one definition) with the original's docstring put back where the reply left it out:
    the fix is written back into the user's file as it is, and a docstring is not the model's to drop.
    The literal is copied as the original spells it, on its own line above the body's first statement."""
    original = rules.original
    if original is None or not has_docstring(original) or not rules.source:
        return source
    try:
        node = ast.parse(source).body[0]
    except (SyntaxError, ValueError, IndexError):
        return source
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or has_docstring(node) \
            or node.body[0].lineno == node.lineno:  # a body on the def line: no line of its own to put it on
        return source
    literal = _literal(rules.source, original.body[0], original.lineno - 1)  # rules.source begins at the def
    text = source.split("\n")
    first = node.body[0]
    indent = text[first.lineno - 1][: first.col_offset]
    after = _header_end(source, node.lineno)  # right below the signature, above a comment on the body
    if after is None or after >= first.lineno:
        return source
    made = "\n".join([*text[:after], indent + literal, *text[after:]])
    try:
        kept = ast.parse(made).body[0]
    except (SyntaxError, ValueError):
        return source
    if not isinstance(kept, (ast.FunctionDef, ast.AsyncFunctionDef)) \
            or ast.get_docstring(kept, clean=False) != ast.get_docstring(original, clean=False):
        return source
    notes.append("kept the original's docstring, which the reply left out")
    return made


def _literal(text: str, node: ast.stmt, shift: int) -> str:
    """The source of ``node``, whose lines in ``text`` are ``shift`` fewer than its own (offsets are UTF-8)."""
    lines = [line.encode() for line in text.split("\n")[node.lineno - 1 - shift: (node.end_lineno or 0) - shift]]
    if not lines:
        return ""
    end = node.end_col_offset if node.end_col_offset is not None else len(lines[-1])
    if len(lines) == 1:
        return lines[0][node.col_offset: end].decode(errors="replace")
    return b"\n".join([lines[0][node.col_offset:], *lines[1:-1], lines[-1][:end]]).decode(errors="replace")


def _header_end(source: str, line: int) -> int | None:
    """The line (1-based) on which the signature of the ``def`` at ``line`` ends, at its colon."""
    depth = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.start[0] < line or token.type != tokenize.OP:
                continue
            if token.string in "([{":
                depth += 1
            elif token.string in ")]}":
                depth -= 1
            elif token.string == ":" and depth == 0:
                return token.start[0]
    except (tokenize.TokenError, SyntaxError):
        return None
    return None

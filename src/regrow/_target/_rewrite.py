"""One definition replaced in the bytes of a source file, and nothing else changed.

The file is handled as bytes, split into lines the way Python's tokenizer splits them (``\\r\\n``,
``\\n``, ``\\r``): every line outside the definition is kept as it was, byte for byte, and so is
every line of the definition the fix did not change — its line ending included, so a CRLF file, or
one with mixed endings, keeps them. New lines get the ending most of the definition's lines have.
The encoding (a coding cookie, a UTF-8 BOM) is read as Python reads it and the new lines are
encoded with it. The definition is found by qualname with libcst (module functions, methods,
nested classes; through ``if``/``try`` blocks) and must still be the text the fix was proven on.
"""

from __future__ import annotations

import ast
import codecs
import collections
import dataclasses
import difflib
import io
import re
import tokenize
from collections.abc import Iterator, Sequence

from .._errors import RegrowError
from ._source import dedent

_LINE = re.compile(rb"[^\r\n]*(?:\r\n|\n|\r)|[^\r\n]+\Z")
_ENDING = re.compile(rb"(\r\n|\n|\r)\Z")


class RewriteError(RegrowError):
    """The definition cannot be replaced in this text (missing, ambiguous, changed, unparsable)."""


@dataclasses.dataclass(frozen=True)
class Edit:
    """Replace the definition of ``qualname``: it must read ``expected`` (decorators included,
    dedented by ``indent``, ``\\n`` line endings) and becomes ``replacement`` (same form, indented)."""

    qualname: str
    indent: str
    expected: str
    replacement: str
    line: int | None = None  # where the running code says the definition starts (its first decorator), if known


def lines_of(data: bytes) -> list[bytes]:
    """``data`` split after each ``\\r\\n``, ``\\n`` or ``\\r``, endings kept (``b"".join`` gives it back)."""
    return _LINE.findall(data)


def ending_of(line: bytes) -> bytes:
    found = _ENDING.search(line)
    return found.group(1) if found else b""


def encoding_of(data: bytes) -> tuple[str, bool]:
    """The codec Python reads ``data`` with (coding cookie or UTF-8), and whether it starts with a BOM."""
    try:
        name, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise RewriteError(f"its encoding cannot be read: {exc}") from exc
    bom = data.startswith(codecs.BOM_UTF8)
    return ("utf-8" if name == "utf-8-sig" else name), bom


def definitions(text: str, qualname: str) -> list[tuple[int, int]]:
    """The (first, last) lines, 1-based, of each definition of ``qualname`` in ``text``: from its
    first decorator to the end of its last statement, and the comments after it that are indented
    as its body is (as ``inspect.getblock`` reads a definition; other comments belong to what follows).

    With libcst (the ``delivery`` extra, which write-back needs) or, in a core install, with :mod:`ast`: a proven
    fix's diff needs this too, and a missing extra must not cost the user the fix."""
    try:
        import libcst
        from libcst.metadata import MetadataWrapper, PositionProvider
    except ImportError:
        return _definitions_ast(text, qualname)

    try:
        wrapper = MetadataWrapper(libcst.parse_module(text), unsafe_skip_copy=True)
    except libcst.ParserSyntaxError as exc:
        raise RewriteError(f"it does not parse ({exc.message}, line {exc.raw_line})") from exc
    positions = wrapper.resolve(PositionProvider)
    lines = _split(text.replace("\r\n", "\n").replace("\r", "\n"))
    found: list[tuple[int, int]] = []

    class Finder(libcst.CSTVisitor):
        def __init__(self) -> None:
            super().__init__()
            self.scope: list[str] = []

        def visit_ClassDef(self, node: libcst.ClassDef) -> None:
            self.scope.append(node.name.value)

        def leave_ClassDef(self, original_node: libcst.ClassDef) -> None:
            self.scope.pop()

        def visit_FunctionDef(self, node: libcst.FunctionDef) -> None:
            if ".".join([*self.scope, node.name.value]) == qualname:
                first = positions[node.decorators[0]] if node.decorators else positions[node]
                body = node.body
                last = positions[body.body[-1]] if isinstance(body, libcst.IndentedBlock) else positions[body]
                column = positions[body.body[0]].start.column if isinstance(body, libcst.IndentedBlock) else None
                found.append((first.start.line, _comments_after(lines, last.end.line, column)))
            self.scope += [node.name.value, "<locals>"]

        def leave_FunctionDef(self, original_node: libcst.FunctionDef) -> None:
            del self.scope[-2:]

    wrapper.module.visit(Finder())
    return found


def _definitions_ast(text: str, qualname: str) -> list[tuple[int, int]]:
    """:func:`definitions` read with :mod:`ast` (the same spans: first decorator to last statement, and the
    comments after it indented as the body is)."""
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise RewriteError(f"it does not parse ({exc.msg}, line {exc.lineno})") from exc
    lines = _split(text.replace("\r\n", "\n").replace("\r", "\n"))
    found: list[tuple[int, int]] = []

    def visit(node: ast.AST, scope: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, [*scope, child.name])
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if ".".join([*scope, child.name]) == qualname:
                    first = min([child.lineno, *(decorator.lineno for decorator in child.decorator_list)])
                    inline = child.body[0].lineno == child.lineno  # ``def f(): return 1``
                    column = None if inline else child.body[0].col_offset
                    found.append((first, _comments_after(lines, child.end_lineno or child.lineno, column)))
                visit(child, [*scope, child.name, "<locals>"])
            else:
                visit(child, scope)

    visit(tree, [])
    return found


def _comments_after(lines: Sequence[str], last: int, column: int | None) -> int:
    """``last``, or the last of the comment lines indented at least ``column`` that follow it (blank lines between)."""
    end = last
    for number in range(last, len(lines)):
        line = lines[number]
        if not line.strip():
            continue
        if column is None or not line.lstrip().startswith("#") or len(line) - len(line.lstrip()) < column:
            break
        end = number + 1
    return end


def _decode(lines: Sequence[bytes], encoding: str) -> list[str]:
    try:
        return [line.decode(encoding) for line in lines]
    except UnicodeDecodeError as exc:
        raise RewriteError(f"it is not valid {encoding}: {exc}") from exc


def _plain(line: str) -> str:
    return line.rstrip("\r\n")


def _split(text: str) -> list[str]:
    """Lines of ``\n``-ended text, without their endings (``str.splitlines`` also splits at form feeds)."""
    lines = text.split("\n")
    return lines[:-1] if lines and not lines[-1] else lines


def locate(lines: Sequence[str], qualname: str, edit: Edit) -> tuple[int, int]:
    """The 0-based [start, end) line span of the one definition of ``qualname`` that reads as expected.

    Where the edit knows the line the running code starts at, the block there is read (as
    ``inspect.getblock`` does: only its own lines are tokenized) and taken if it is a definition of
    that name reading as expected: the one that runs, found without parsing the file (libcst takes
    ~1 s on 3,000 lines, and ~0.4 s to import). Else every definition of ``qualname`` is found with libcst.
    """
    if edit.line is not None:
        span = _at_line(lines, qualname, edit)
        if span is not None:
            return span
    spans = definitions("".join(lines), qualname)
    if not spans:
        raise RewriteError(f"there is no definition of {qualname} in it")

    def reads_as_expected(span: tuple[int, int]) -> bool:
        region = [_plain(line) + "\n" for line in lines[span[0] - 1 : span[1]]]
        first = region[0]
        indent = first[: len(first) - len(first.lstrip())]
        return indent == edit.indent and dedent("".join(region), indent) == edit.expected

    matching = [span for span in spans if reads_as_expected(span)]
    where = ", ".join(str(first) for first, _ in spans)
    if len(matching) > 1:
        raise RewriteError(f"{qualname} is defined {len(matching)} times with the same text (lines {where}); "
                           "not guessing which one runs")
    if not matching:
        many = f"none of its {len(spans)} definitions (lines {where}) is" if len(spans) > 1 else "its definition is not"
        raise RewriteError(f"it changed since the fix of {qualname} was proven: {many} the text the fix was proven on")
    start, end = matching[0]
    return start - 1, end


def _at_line(lines: Sequence[str], qualname: str, edit: Edit) -> tuple[int, int] | None:
    """The span of the definition of ``qualname`` starting at ``edit.line`` that reads as expected, or None."""
    import inspect

    assert edit.line is not None
    start = edit.line - 1
    if not 0 <= start < len(lines):
        return None
    try:
        block = inspect.getblock([_plain(line) + "\n" for line in lines[start:]])
    except (SyntaxError, IndentationError, tokenize.TokenError):
        return None
    first = block[0] if block else ""
    indent = first[: len(first) - len(first.lstrip())]
    if indent != edit.indent or dedent("".join(block), indent) != edit.expected:
        return None
    try:  # the block alone: what the running code's first line starts must be a definition of that name
        head = ast.parse(edit.expected).body[:1]
    except SyntaxError:
        return None
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef)
    if not head or not isinstance(head[0], kinds) or head[0].name != qualname.rsplit(".", 1)[-1]:
        return None
    opening = _plain(lines[start])
    if any(_plain(line) == opening for number, line in enumerate(lines) if number != start):
        return None  # its first line is written elsewhere too: the full search tells twins apart, or refuses
    return start, start + len(block)


def rewrite(data: bytes, edit: Edit, check: bool = True) -> bytes:
    """``data`` (a source file) with ``edit`` made; raises :class:`RewriteError` with the reason. ``check``:
    the new text must parse and still define the edit's qualname (what is written is parsed; a diff shown
    need not be, and a 3,000-line file takes ~35 ms)."""
    encoding, bom = encoding_of(data)
    body = data[len(codecs.BOM_UTF8) :] if bom else data
    raw = lines_of(body)
    text = _decode(raw, encoding)
    start, end = locate(text, edit.qualname, edit)
    old = raw[start:end]
    new = _restyle(edit.replacement, _unit(text[start:end], edit.indent), edit.indent)
    region = _merge(old, text[start:end], _split(new), _dominant(old, raw), encoding)
    after = (codecs.BOM_UTF8 if bom else b"") + b"".join([*raw[:start], *region, *raw[end:]])
    if check:
        _reparse(after, edit.qualname)
    return after


def _dominant(region: Sequence[bytes], everything: Sequence[bytes]) -> bytes:
    """The line ending most of the definition's lines have (else the file's; else ``\\n``)."""
    for lines in (region, everything):
        counts = collections.Counter(ending for ending in map(ending_of, lines) if ending)
        if counts:
            return counts.most_common(1)[0][0]
    return b"\n"


def _merge(old: Sequence[bytes], old_text: Sequence[str], new: Sequence[str], ending: bytes,
           encoding: str) -> list[bytes]:
    """The new definition's lines as bytes: each line the fix kept is the old line itself."""
    matcher = difflib.SequenceMatcher(None, [_plain(line) for line in old_text], list(new), autojunk=False)
    out: list[bytes] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out += old[i1:i2]
            continue
        for text in new[j1:j2]:
            try:
                out.append(text.encode(encoding) + ending)
            except UnicodeEncodeError as exc:
                raise RewriteError(f"the fix holds text the file's encoding ({encoding}) cannot hold: {exc}") from exc
    for number, kept in enumerate(out[:-1]):  # an old last line without an ending, now followed by more
        if not ending_of(kept):
            out[number] = kept + ending
    if out and old and not ending_of(old[-1]):  # the definition ended the file without a newline: still so
        out[-1] = out[-1][: len(out[-1]) - len(ending_of(out[-1]))]
    return out


def _unit(lines: Sequence[str], indent: str) -> str:
    """One level of indentation inside the definition: a tab, or some spaces ("" when unknown)."""
    for line in _code_lines("".join(_plain(x) + "\n" for x in lines)):
        rest = line[len(indent):] if line.startswith(indent) else line
        step = rest[: len(rest) - len(rest.lstrip(" \t"))]
        if step and rest.strip():
            return step
    return ""


def _code_lines(text: str) -> Iterator[str]:
    from .._target._source import _string_continuations

    keep = _string_continuations(text)
    for number, line in enumerate(_split(text), start=1):
        if number not in keep:
            yield line


def _restyle(text: str, unit: str, indent: str) -> str:
    """``text`` with its indentation levels in the file's unit (tabs stay tabs, four spaces stay four)."""
    theirs = _unit(_split(text), indent)
    if not unit or not theirs or unit == theirs or theirs.strip(theirs[0]) or unit.strip(unit[0]):
        return text
    from .._target._source import _string_continuations

    keep = _string_continuations(text)
    out = []
    for number, line in enumerate(line + "\n" for line in _split(text)):
        rest = line[len(indent):] if line.startswith(indent) else None
        lead = rest[: len(rest) - len(rest.lstrip(theirs[0]))] if rest is not None else ""
        if number + 1 in keep or rest is None or not lead or len(lead) % len(theirs):
            out.append(line)
        else:
            out.append(indent + unit * (len(lead) // len(theirs)) + rest[len(lead):])
    return "".join(out)


def _reparse(data: bytes, qualname: str) -> None:
    """The new file must compile as Python reads it (encoding and all), with a definition of ``qualname``."""
    try:
        tree = compile(data, "<regrow write-back>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None)
        raise RewriteError(f"the fixed file would not parse ({getattr(exc, 'msg', exc)}, line {line})") from exc
    if qualname not in _qualnames(tree, ""):
        raise RewriteError(f"the fixed file has no definition of {qualname}")


def _qualnames(node: ast.AST, prefix: str) -> Iterator[str]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield prefix + child.name
            yield from _qualnames(child, f"{prefix}{child.name}.<locals>.")
        elif isinstance(child, ast.ClassDef):
            yield from _qualnames(child, f"{prefix}{child.name}.")
        elif not isinstance(child, ast.expr):  # an expression holds no definition: not walked (~30 ms at 3,000 lines)
            yield from _qualnames(child, prefix)

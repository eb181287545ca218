"""Local edits in a model's reply: SEARCH/REPLACE blocks and unified diffs, applied to the original.

A model asked for a minimal edit changes the lines that matter instead of copying the whole
function back (small models, asked for the whole function, often copy it unchanged). Each edit is
applied to the definition the prompt showed, in order; the result is one complete definition,
checked and judged like any other candidate. Matching forgives what models get wrong when they
copy lines — indentation, trailing spaces, runs of spaces, blank lines, a diff's line numbers and
the space a diff's blank context line lost — and re-indents the replacement to where it lands. An
edit that is malformed, matches nowhere, or matches in several places with nothing to tell them
apart is refused with the reason, which the next prompt shows.
"""

from __future__ import annotations

import ast
import dataclasses
import re

_MARK = re.compile(r"^[ \t]*(?P<kind><{5,9}|={5,9}|>{5,9})[ \t]*(?P<word>[A-Za-z]*)[ \t]*$")
_OPEN_WORDS = frozenset({"", "SEARCH", "ORIGINAL", "FIND"})
_CLOSE_WORDS = frozenset({"", "REPLACE", "UPDATED"})
_DIFF_FENCE = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})[ \t]*(?:diff|patch|udiff)\b[^\n]*\n(?P<body>.*?)"
                         r"(?:^[ \t]*(?P=fence)[ \t]*$|\Z)", re.MULTILINE | re.DOTALL | re.IGNORECASE)
_HUNK = re.compile(r"^@@ .*@@", re.MULTILINE)
_FENCE_LINE = re.compile(r"^[ \t]*(`{3,}|~{3,})[^`~]*$")


class EditError(ValueError):
    """An edit that cannot be applied; the message is the reason, worded for the model."""


@dataclasses.dataclass(frozen=True)
class Edit:
    """Replace the lines ``search`` with the lines ``replace``."""

    search: tuple[str, ...]
    replace: tuple[str, ...]
    label: str  # "SEARCH/REPLACE block 2", "diff hunk 1"


def edits_in(text: str) -> tuple[list[Edit], str] | None:
    """The edits a reply holds and their kind ("SEARCH/REPLACE", "diff"); ``None`` when it holds none.

    Raises :class:`EditError` for a malformed SEARCH/REPLACE block.
    """
    blocks = search_replace(text)
    if blocks is not None:
        return blocks, "SEARCH/REPLACE"
    diff = _diff_text(text)
    if diff is not None:
        return diff_hunks(diff), "diff"
    return None


def search_replace(text: str) -> list[Edit] | None:
    """The SEARCH/REPLACE blocks of ``text``, in order; ``None`` when there is no SEARCH marker."""
    lines = text.split("\n")
    marks = [_mark(line) for line in lines]
    if not any(mark == "<" for mark in marks):
        return None
    edits: list[Edit] = []
    state, number = "out", 0
    search: list[str] = []
    replace: list[str] = []
    for line, mark in zip(lines, marks, strict=True):
        if state == "out":
            if mark == "<":
                state, number, search = "search", number + 1, []
            elif mark == ">":
                raise EditError(f"a `{line.strip()}` line comes before any `<<<<<<< SEARCH` line")
        elif state == "search":
            if mark == "=":
                state, replace = "replace", []
            elif mark in ("<", ">"):
                raise EditError(f"SEARCH/REPLACE block {number} has no `=======` line between its parts")
            else:
                search.append(line)
        elif mark == ">":
            edits.append(Edit(_unfenced(search), _unfenced(replace), f"SEARCH/REPLACE block {number}"))
            state = "out"
        elif mark in ("<", "="):
            raise EditError(f"SEARCH/REPLACE block {number} is not closed with `>>>>>>> REPLACE`")
        else:
            replace.append(line)
    if state == "search":
        raise EditError(f"SEARCH/REPLACE block {number} ends before its `=======` line")
    if state == "replace":
        closed = _fence_closed(replace)
        if closed is None:
            raise EditError(f"SEARCH/REPLACE block {number} is not closed with `>>>>>>> REPLACE`")
        edits.append(Edit(_unfenced(search), closed, f"SEARCH/REPLACE block {number}"))
    return edits


def _fence_closed(lines: list[str]) -> tuple[str, ...] | None:
    """The REPLACE part of a last block that a closing code fence ended instead of `>>>>>>> REPLACE`
    (small models do that), or ``None`` when no bare fence follows its lines."""
    for number, line in enumerate(lines):
        if number and re.fullmatch(r"[ \t]*(`{3,}|~{3,})[ \t]*", line) and any(part.strip() for part in lines[:number]):
            return _unfenced(lines[:number])
    return None


def _mark(line: str) -> str:
    """``"<"``, ``"="`` or ``">"`` for a marker line of a SEARCH/REPLACE block, else ``""``."""
    match = _MARK.match(line)
    if match is None:
        return ""
    kind, word = match["kind"][0], match["word"].upper()
    if (kind == "<" and word in _OPEN_WORDS) or (kind == ">" and word in _CLOSE_WORDS) or (kind == "=" and not word):
        return kind
    return ""


def _unfenced(lines: list[str]) -> tuple[str, ...]:
    """The lines without code fences a model put around one part of a block."""
    kept = list(lines)
    while kept and (not kept[0].strip() or _FENCE_LINE.match(kept[0])):
        kept.pop(0)
    while kept and (not kept[-1].strip() or _FENCE_LINE.match(kept[-1])):
        kept.pop()
    return tuple(kept)


def _diff_text(text: str) -> str | None:
    fenced = [m["body"] for m in _DIFF_FENCE.finditer(text)]
    if fenced:
        return "\n".join(fenced)
    if _HUNK.search(text) or re.search(r"^--- .*\n\+\+\+ ", text, re.MULTILINE):
        return text
    return None


def diff_hunks(text: str) -> list[Edit]:
    """A unified diff's hunks as edits. Line numbers are ignored (models get them wrong); a diff with
    no ``@@`` line is one hunk; a context line that lost its leading space is still context."""
    hunks: list[tuple[list[str], list[str]]] = []
    current: tuple[list[str], list[str]] | None = None
    for line in text.split("\n"):
        if line.startswith(("--- ", "+++ ", "diff --git", "index ")) or line in ("---", "+++"):
            continue
        if line.startswith("@@"):
            current = ([], [])
            hunks.append(current)
            continue
        if current is None:
            if not line.startswith(("-", "+")):
                continue  # prose before the diff
            current = ([], [])
            hunks.append(current)
        before, after = current
        if line.startswith("\\"):  # "\ No newline at end of file"
            continue
        if line.startswith("-"):
            before.append(line[1:])
        elif line.startswith("+"):
            after.append(line[1:])
        else:
            body = line[1:] if line.startswith(" ") else line
            before.append(body)
            after.append(body)
    edits = [Edit(tuple(_trim(b)), tuple(_trim(a)), f"diff hunk {n}")
             for n, (b, a) in enumerate(hunks, start=1) if b != a]
    if not edits:
        raise EditError("the diff changes no line (no `-` or `+` lines)")
    return edits


def _trim(lines: list[str]) -> list[str]:
    """The lines without blank ones at either end (a fence's or the reply's trailing newline)."""
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return lines[start:end]


def apply(original: str, edits: list[Edit], hint: int | None = None) -> tuple[str, list[str]]:
    """``original`` with every edit applied in order, and notes on how; :class:`EditError` otherwise.

    ``hint`` (1 = the def line) chooses between equal matches: the one nearest it.
    """
    lines = original.rstrip("\n").split("\n")
    notes: list[str] = []
    for edit in edits:
        if not any(line.strip() for line in edit.search):
            raise EditError(f"{edit.label} has an empty SEARCH part; copy the lines to change into it")
        if edit.search == edit.replace:
            continue
        start, end, exact = _locate(lines, edit, hint)
        replacement = _reindented(lines[start:end], edit)
        if not exact:
            notes.append(f"{edit.label} matched with different whitespace")
        lines[start:end] = replacement
    return "\n".join(lines) + "\n", notes


def _locate(lines: list[str], edit: Edit, hint: int | None) -> tuple[int, int, bool]:
    """Where ``edit.search`` is in ``lines``: ``(start, end, exact)``."""
    search = [line.rstrip() for line in edit.search]
    n = len(search)
    spans = [(i, i + n) for i in range(len(lines) - n + 1) if [s.rstrip() for s in lines[i:i + n]] == search]
    exact = bool(spans)
    if not spans:
        spans = _loose(lines, search)
    if not spans:
        raise EditError(_why_not(lines, edit))
    if len(spans) > 1:
        if hint is None:
            raise EditError(f"the SEARCH part of {edit.label} matches {len(spans)} places in the function; "
                            "copy one more line around the change so that it matches one place")
        spans.sort(key=lambda span: abs(span[0] + 1 - hint))
    return spans[0][0], spans[0][1], exact


def _key(line: str) -> str:
    return " ".join(line.split())


def _loose(lines: list[str], search: list[str]) -> list[tuple[int, int]]:
    """Matches of the non-blank search lines, whitespace collapsed, against the non-blank lines."""
    want = [_key(line) for line in search if line.strip()]
    where = [i for i, line in enumerate(lines) if line.strip()]
    keys = [_key(lines[i]) for i in where]
    return [(where[j], where[j + len(want) - 1] + 1) for j in range(len(keys) - len(want) + 1)
            if keys[j:j + len(want)] == want]


def _why_not(lines: list[str], edit: Edit) -> str:
    have = {_key(line) for line in lines}
    missing = next((line for line in edit.search if line.strip() and _key(line) not in have), None)
    part = "the lines to remove" if edit.label.startswith("diff") else "the SEARCH part"
    if missing is not None:
        return (f"{edit.label} does not apply: {part} has the line `{missing.strip()}`, which is not in the "
                "function; copy the lines exactly as the function has them")
    return (f"{edit.label} does not apply: the lines of {part} are in the function, but not together in "
            "this order; copy a run of consecutive lines")


def _reindented(matched: list[str], edit: Edit) -> list[str]:
    """The replacement, shifted by the indentation the match differs by (when that yields code that parses)."""
    first_search = next(line for line in edit.search if line.strip())
    first_match = next(line for line in matched if line.strip())
    have, want = _indent(first_search), _indent(first_match)
    replace = list(edit.replace)
    if have == want:
        return replace
    if want.startswith(have):
        shifted = [want[len(have):] + line if line.strip() else line for line in replace]
    else:
        cut = len(have) - len(want)
        shifted = [line[cut:] if line[:cut].strip() == "" else line.lstrip() for line in replace]
    return shifted if _parses_alone(shifted, want) or not _parses_alone(replace, want) else replace


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _parses_alone(lines: list[str], indent: str) -> bool:
    """Whether the lines, placed where the match was, are consistently indented code."""
    text = "\n".join(line[len(indent):] if line.startswith(indent) else line for line in lines)
    try:
        ast.parse("if True:\n" + "\n".join("    " + line for line in text.split("\n")))
    except SyntaxError:
        return False
    return True

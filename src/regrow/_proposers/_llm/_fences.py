"""Markdown code fences, both ways: the fence a prompt puts code in, and the fenced blocks of a reply.

A function whose docstring holds a Markdown example (```` ``` ````) would close a 3-backtick fence
half-way: the prompt would show it cut, and a reply in the format asked for would not parse. So the
prompt's fence is longer than any run of backticks in what it holds (as CommonMark has it), and it asks
for a block in that fence. A reply's block is closed only by a line of the opening fence's character,
at least as long, indented at most 3 columns more than the opening (CommonMark's rule): a docstring's
own ```` ``` ````, indented with the code, or shorter than the fence, stays inside the block.
"""

from __future__ import annotations

import dataclasses
import re

_BACKTICKS = re.compile(r"`{3,}")
_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<tag>[^\s`]*)[^\n]*$")


def fence(*texts: str) -> str:
    """Three backticks, or one more than the longest run of three or more in ``texts``."""
    longest = max((len(run.group()) for text in texts for run in _BACKTICKS.finditer(text)), default=2)
    return "`" * max(3, longest + 1)


def block(code: str, tag: str = "python") -> str:
    """``code`` in a fenced block whose fence nothing in it can close."""
    mark = fence(code)
    return f"{mark}{tag}\n{code}\n{mark}"


@dataclasses.dataclass(frozen=True)
class Fenced:
    """A fenced block of a reply: its body as written, its info tag, and whether the reply ended inside it."""

    body: str
    tag: str
    unclosed: bool


def fenced_blocks(text: str) -> list[Fenced]:
    """The fenced blocks of ``text``, in order (``\\n`` line ends)."""
    lines = text.split("\n")
    found: list[Fenced] = []
    i = 0
    while i < len(lines) - 1:  # an opening fence on the last line opens nothing
        opening = _OPEN.match(lines[i])
        i += 1
        if opening is None:
            continue
        mark, indent = opening["fence"], _width(opening["indent"])
        start = i
        while i < len(lines) and not _closes(lines[i], mark, indent):
            i += 1
        unclosed = i >= len(lines)
        body = lines[start:i]
        found.append(Fenced("\n".join(body) + ("" if unclosed else "\n"), opening["tag"], unclosed))
        i += 1
    return found


def _closes(line: str, mark: str, indent: int) -> bool:
    """Whether ``line`` closes a block opened by ``mark`` at ``indent`` columns."""
    stripped = line.lstrip(" \t")
    run = len(stripped) - len(stripped.lstrip(mark[0]))
    return run >= len(mark) and not stripped[run:].strip() and _width(line[: len(line) - len(stripped)]) <= indent + 3


def _width(indent: str) -> int:
    return len(indent.expandtabs(4))

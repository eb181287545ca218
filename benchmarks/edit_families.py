"""The edit family of each real-code bug, read from its spec's ``old`` and ``new`` line, and a table of a run by family.

A fix turns the bug's line (``new``) back into the original (``old``). Counted in tokens (a negative number is
one token, as it is one constant), the fix is in one of four families:

- ``single-token``: it replaces, inserts or deletes one token, or permutes the tokens (a swap of two names or
  arguments): ``<`` for ``<=``, ``bisect_left`` for ``bisect_right``, ``(v, k)`` for ``(k, v)``;
- ``re-add``: it only inserts tokens, two or more, or a whole line: the bug dropped a piece (``, strip_value``,
  ``- 1``, ``.lower()``, ``multi=True``, a ``break``);
- ``drop-stray``: it only deletes tokens, two or more: the bug added a stray piece (``- 1``, ``[1:]``);
- ``new-code``: anything else: several tokens replaced (``zip(*tees)`` for ``zip_longest(*tees, fillvalue=fill)``).

    python benchmarks/edit_families.py RESULTS.json     # the table of a `regrow bench` run, by family
"""

from __future__ import annotations

import difflib
import io
import json
import statistics
import sys
import tokenize
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SPECS = Path(__file__).resolve().parent / "suites" / "realcode"
FAMILIES = ("single-token", "re-add", "drop-stray", "new-code")
_SKIP = (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT, tokenize.COMMENT)


def tokens(line: str) -> list[str]:
    try:
        found = [t.string for t in tokenize.generate_tokens(io.StringIO(line.strip() + "\n").readline)
                 if t.type not in _SKIP]
    except (tokenize.TokenError, IndentationError, SyntaxError):  # a line that opens a bracket it does not close
        found = line.split()
    merged: list[str] = []
    for token in found:  # ``-1`` is one constant where a minus cannot be an operator
        if merged and merged[-1] == "-" and token[:1].isdigit() and (len(merged) < 2 or merged[-2] in "([,=:"
                                                                       or merged[-2] in ("return", "[")):
            merged[-1] = "-" + token
        else:
            merged.append(token)
    return merged


def family(bug: dict[str, Any]) -> str:
    if not bug.get("new", "").strip():
        return "re-add"
    fixed, buggy = tokens(bug["old"]), tokens(bug["new"])
    ops = [op for op in difflib.SequenceMatcher(None, buggy, fixed, autojunk=False).get_opcodes() if op[0] != "equal"]
    size = sum(max(i2 - i1, j2 - j1) for _, i1, i2, j1, j2 in ops)
    if size == 1 or sorted(fixed) == sorted(buggy):
        return "single-token"
    if all(op[0] == "insert" for op in ops):
        return "re-add"
    if all(op[0] == "delete" for op in ops):
        return "drop-stray"
    return "new-code"


def families(specs: Path = SPECS) -> dict[str, str]:
    """Each task's name (``<library>-<id>``, as in the manifest) and its family."""
    found = {}
    for path in sorted(specs.glob("*.toml")):
        spec = tomllib.loads(path.read_text(encoding="utf-8"))
        for bug in spec.get("bug", []):
            found[f"{spec['library']['name']}-{bug['id']}"] = family(bug)
    return found


def table(results: list[dict[str, Any]], of: dict[str, str]) -> str:
    """Tasks, fixed, correct (and its share of the tasks), wrong, unjudged, not fixed and the median time, by family."""
    lines = ["| family | tasks | fixed | correct | wrong | unjudged | not fixed | median s |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name in (*FAMILIES, "all"):
        rows = [r for r in results if name == "all" or of.get(r["name"]) == name]
        if not rows:
            continue
        count = {status: sum(r["status"] == status for r in rows) for status in ("correct", "wrong", "unjudged")}
        fixed = sum(count.values())
        median = statistics.median(float(r.get("time") or 0.0) for r in rows)
        share = f"{count['correct']} ({100 * count['correct'] / len(rows):.0f} %)"
        lines.append(f"| {name} | {len(rows)} | {fixed} | {share} | {count['wrong']} | {count['unjudged']}"
                     f" | {len(rows) - fixed} | {median:.1f} |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    data = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    print(table(data["tasks"], families()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""A function that runs a fix: its tracebacks name the user's file and lines, and a later bug is repaired from
the fix (regrow._target._fixed), whether the fix was written back or not."""

from __future__ import annotations

import traceback
from pathlib import Path

import pytest

import regrow
from regrow._target._target import Target

PRICES = '''
import regrow

CASES = [("$12.99", 12.99)]


def test_cases(fn):
    for text, want in CASES:
        assert fn(text) == want


@regrow.heal(tests=[test_cases], write_back={mode!r})
def parse_price(text: str) -> float:
    text = text.strip()
    if text and text[0] in "$€":
        text = text[2:]
    return float(text.replace(",", "."))
'''


def _line(path: Path, text: str) -> int:
    return next(number for number, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def _second_bug(mod) -> regrow.RepairResult:
    assert mod.parse_price("$1") == 1.0  # the first bug (text[2:]) fails this call: fixed, one edit
    mod.CASES.append(("1,299", 1299.0))  # the second bug (a comma read as a decimal point) is seen now
    result = regrow.state(mod.parse_price).check()
    assert result is not None
    return result


REWRITTEN = '''
import regrow
from regrow.extend import Candidate, Engine

CASES = [("$12.99", 12.99), ("₹7", 7.0)]
REWRITE = (
    "def parse_price(text: str) -> float:\\n"
    "    digits = ''.join(c for c in text if c.isdigit() or c in '.,')\\n"
    "    return float(digits.replace(',', '.'))\\n"
)


class Model:  # stands in for a model whose fix rewrote the function (and kept its second bug)
    name = "model"

    def propose(self, request):
        yield Candidate(REWRITE, origin="model")


def test_cases(fn):
    for text, want in CASES:
        assert fn(text) == want


@regrow.heal(tests=[test_cases], proposers=[Model(), Engine()])
def parse_price(text: str) -> float:
    text = text.strip()
    if text and text[0] in "$€":
        text = text[2:]
    return float(text.replace(",", "."))
'''


def test_a_second_bug_is_repaired_one_edit_from_the_fix_that_runs(make_module) -> None:
    """Before, the second repair started from the code before the first fix, which no edit of the engine
    takes to one that reads rupees: it failed."""
    mod = make_module(REWRITTEN)
    state = regrow.state(mod.parse_price)
    assert mod.parse_price("₹7") == 7.0  # the model's rewrite
    assert state.last_result is not None and state.last_result.fix is not None
    assert "digits" in state.last_result.fix.source
    mod.CASES.append(("1,299", 1299.0))
    result = state.check()
    assert result is not None and result.ok and result.fix is not None, result
    assert result.fix.origin == "engine" and "digits.replace(',', '')" in result.fix.source
    assert mod.parse_price("₹1,299") == 1299.0 and mod.parse_price("$12.99") == 12.99
    assert Target.of(mod.parse_price).source.count("digits") == 2  # a repair starts from what runs
    # The diff is of the file, which still holds the code before both fixes.
    assert "-        text = text[2:]" in result.diff and "+    return float(digits.replace(',', ''))" in result.diff


def test_both_fixes_reach_the_file_when_written_back_after_the_second(make_module) -> None:
    mod = make_module(PRICES.format(mode="off"))
    path = Path(mod.__file__)
    assert _second_bug(mod).ok
    regrow.state(mod.parse_price).write_back("apply")  # the file holds the code before both fixes
    text = path.read_text()
    assert "text = text[1:]" in text and 'text.replace(",", "")' in text and "text[2:]" not in text


def test_a_second_fix_is_written_over_the_first_in_the_file(make_module) -> None:
    mod = make_module(PRICES.format(mode="apply"))
    path = Path(mod.__file__)
    result = _second_bug(mod)
    assert result.ok, result.reason
    text = path.read_text()
    assert "text = text[1:]" in text and 'text.replace(",", "")' in text and 'text.replace(",", ".")' not in text
    assert "-        text = text[2:]" not in result.diff  # the diff is against the file, which held the first fix
    assert '+    return float(text.replace(",", ""))' in result.diff


@pytest.mark.parametrize("mode", ["instrumented", "wrapped"])
def test_a_failure_inside_a_fix_is_shown_at_the_user_s_file_and_line(make_module, mode: str) -> None:
    """Before, the fix's frame read ``File "<regrow usermod_N.parse_price #2>", line 2``."""
    source = PRICES.format(mode="off")
    if mode == "wrapped":
        source = source.replace("@regrow.heal(tests=[test_cases], ", "@regrow.heal(tests=[test_cases], verify=bool, ")
    mod = make_module(source)
    assert regrow.state(mod.parse_price).mode == mode
    assert mod.parse_price("$1") == 1.0
    path = Path(mod.__file__)
    with pytest.raises(AttributeError) as raised:
        mod.parse_price(None)  # fails inside the fix, in its first line
    frames = traceback.extract_tb(raised.value.__traceback__)
    # (the wrapper's own frame, ``<regrow wrapper of …>``, is the one a wrapped function always shows)
    assert not any(frame.filename.startswith("<regrow") and "wrapper" not in frame.filename for frame in frames)
    inner = frames[-1]
    assert (inner.filename, inner.lineno, inner.name) == (mod.__file__, _line(path, "text = text.strip()"),
                                                          "parse_price")
    assert regrow.state(mod.parse_price).func.__code__.co_filename == mod.__file__

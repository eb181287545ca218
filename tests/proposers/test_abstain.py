"""Abstention: candidates that pass every check but disagree on derived inputs are not installed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import regrow
from regrow import Ambiguity, Separation

# ``n * 2`` and ``n + 3`` both pass the one test; on ``double(4)`` (a variation of its input) one says
# 8 and the other 7: the test cannot tell which was meant.
DOUBLE = '''
def double(n):
    return n + 2
'''


def check_double(fn):
    assert fn(3) == 6


def _check_ambiguity(ambiguity: Ambiguity | None) -> None:
    assert ambiguity is not None
    lines = sorted(source.strip().splitlines()[-1].strip() for source in ambiguity.candidates)
    assert lines == ["return n * 2", "return n + 3"]
    assert "4" in ambiguity.inputs  # n = 4 separates them
    at = ambiguity.inputs.index("4")
    outputs = sorted(output[at] for output in ambiguity.outputs)
    assert outputs == ["returned 7", "returned 8"]  # what each returned, as a reader says it
    assert "return n + 2" in ambiguity.original


def test_repair_reports_an_ambiguity_and_installs_nothing(make_module):
    mod = make_module(DOUBLE)
    result = regrow.repair(mod.double, args=(3,), tests=[check_double])
    assert not result.ok and result.fix is None and result.installed is None
    _check_ambiguity(result.ambiguous)
    assert result.reason.startswith("ambiguous: 2 candidates pass every check but disagree on f(")
    assert "nothing installed" in result.reason
    assert mod.double(3) == 5  # still the original


def test_a_second_test_decides(make_module):
    mod = make_module(DOUBLE)

    def test_four(fn):
        assert fn(4) == 8

    result = regrow.repair(mod.double, args=(3,), tests=[check_double, test_four])
    assert result.ok and result.ambiguous is None
    assert mod.double(5) == 10


def test_heal_reraises_the_original_error_and_keeps_the_ambiguity(make_module):
    mod = make_module('''
        import regrow

        def check_last(fn):
            assert fn([1, 2, 3]) == 3

        @regrow.heal(tests=[check_last])
        def last(xs):
            return xs[len(xs)]
    ''')
    with pytest.raises(IndexError):
        mod.last([1, 2, 3])
    state = regrow.state(mod.last)
    assert state.last_result is not None and not state.last_result.ok
    assert state.ambiguous is not None and state.ambiguous is state.last_result.ambiguous
    assert len(state.ambiguous.candidates) >= 2 and state.ambiguous.separations
    with pytest.raises(IndexError):  # nothing was installed
        mod.last([4, 5])


def test_regrow_heal_shows_the_ambiguity(tmp_path: Path) -> None:
    (tmp_path / "doubling.py").write_text(DOUBLE.lstrip())
    (tmp_path / "test_doubling.py").write_text("from doubling import double\n\n\ndef test_three():\n"
                                              "    assert double(3) == 6\n")
    done = subprocess.run([sys.executable, "-m", "regrow", "heal", "doubling.py::double", "--test",
                           "test_doubling.py", "--apply"], cwd=tmp_path, capture_output=True, text=True, timeout=240)
    assert done.returncode != 0, done.stdout
    assert "ambiguous: candidates pass every test but disagree; nothing installed" in done.stdout, done.stdout
    assert "separated by" in done.stdout and "f(4)" in done.stdout
    assert "`return n * 2`" in done.stdout and "`return n + 3`" in done.stdout
    assert (tmp_path / "doubling.py").read_text() == DOUBLE.lstrip()  # --apply wrote nothing


def test_an_ambiguity_is_plain_data() -> None:
    ambiguity = Ambiguity("def f(n):\n    return n\n", ("def f(n):\n    return 1\n", "def f(n):\n    return 2\n"),
                          (Separation("0", ("returned 1", "returned 2"), "returned 0"),), ("a", "b"))
    assert Ambiguity.from_plain(ambiguity.to_plain()) == ambiguity
    assert ambiguity.outputs == [["returned 1"], ["returned 2"]] and ambiguity.inputs == ["0"]
    assert "candidate 2 (b):" in ambiguity.describe() and "original: returned 0" in ambiguity.describe()
    with pytest.raises(ValueError, match="two candidates"):
        Ambiguity("", ("x",), (Separation("0", ("1",)),))
    with pytest.raises(ValueError, match="one output per candidate"):
        Ambiguity("", ("x", "y"), (Separation("0", ("1",)),))
    with pytest.raises(ValueError):
        Ambiguity.from_plain({"original": "", "candidates": [1, 2], "separations": []})
    with pytest.raises(ValueError):
        Separation.from_plain({"call": "0", "outputs": "returned 1"})


def test_only_real_disagreements_count() -> None:
    from regrow._candidate import Candidate
    from regrow._checks._inputs import Call
    from regrow._proposers._engine._abstain import undecided
    from regrow._proposers._engine._rank import Evidence, Ranking

    calls = [sealed for sealed in (Call((n,), {}).seal() for n in (1, 2, 3)) if sealed is not None]

    def ranking(*outcomes: tuple[str, ...], raised: tuple[int, ...] = (0, 0)) -> Ranking:
        found = [Evidence(Candidate(f"def f(n):\n    return {i}\n", "engine"), 1, i, raised=r, raised_given=r,
                          outcomes=o)
                 for i, (o, r) in enumerate(zip(outcomes, raised, strict=True))]
        return Ranking(found, calls, ["returned 0", "returned 0", "returned 0"], [True, True, False])

    # -0.0, 0.0 and 0 are one answer, so are 2.0 and 2; an input where the original changed its mind (the
    # third) says nothing.
    assert undecided(ranking(("returned (0.0,)", "returned (2, [1.5])", "returned 5"),
                             ("returned (-0.0,)", "returned (2.0, [1.5])", "returned 6")), "def f(n): ...") is None
    assert undecided(ranking(("returned (0,)", "returned 1", "x"), ("returned (0.0,)", "returned 1", "y")), "") is None
    assert undecided(ranking(("returned (2.5,)", "returned 1", "x"), ("returned (2.0,)", "returned 1", "y")), "")
    # A candidate that raises where the original returned on a passing test's own call is no rival of one that
    # does not; where it raises only on a variation of one, it is.
    assert undecided(ranking(("returned 1", "returned 2", "returned 3"), ("raised KeyError", "returned 2", "x"),
                             raised=(0, 1)), "def f(n): ...") is None
    varied = ranking(("returned 1", "returned 2", "returned 3"), ("raised KeyError", "returned 2", "x"))
    varied.ranked[1].raised = 1
    assert varied.ranked[1].key() > varied.ranked[0].key()  # still ranked below
    assert (apart := undecided(varied, "def f(n): ...")) is not None and apart.inputs == ["1"]
    found = undecided(ranking(("returned 1", "returned 2", "x"), ("returned 1", "returned 3", "x")), "def f(n): ...")
    assert found is not None and found.inputs == ["2"] and found.outputs == [["returned 2"], ["returned 3"]]
    assert found.separations[0].original == "returned 0"


# The tests give one label that holds "--" where the bug looks; every one-token edit of the slice or of the
# text that passes leaves the check dead at the place meant. Labels with the function's own "--" put in at
# other places (the guard's inputs made from its constants) show that they disagree: no guess is installed.
HYPHENS = '''
def tag_ok(label):
    if label[1:3] == "--":
        raise ValueError("hyphens in the 3rd and 4th places")
    return True
'''


def test_candidates_that_disagree_on_the_function_s_own_texts_put_into_a_string_are_not_installed(make_module):
    mod = make_module(HYPHENS)

    def check_tag(fn):
        assert fn("a--b") is True
        assert fn("plain") is True

    result = regrow.repair(mod.tag_ok, args=("a--b",), tests=[check_tag])
    assert not result.ok and result.fix is None and result.installed is None, result.reason
    assert result.ambiguous is not None and len(result.ambiguous.candidates) >= 2
    assert any("--" in shown for shown in result.ambiguous.inputs), result.ambiguous.inputs
    with pytest.raises(ValueError):
        mod.tag_ok("a--b")  # still the original


def test_the_other_uses_of_an_ignored_argument_in_the_statement_of_the_first_find_are_judged(make_module):
    # ``n`` is ignored. ``len(text[:n])`` puts it back to use and passes; so does the larger ``len(text) if n is
    # None else n`` in the same statement, which the search judges too: on an ``n`` past the end (``("ab", 3)``,
    # a variation of the call) they disagree.
    mod = make_module('''
        def width(text, n=None):
            """How many of the first ``n`` characters there are (all of them when ``n`` is None)."""
            end = len(text)
            return end
    ''')

    def test_width(fn):
        assert fn("abc", 2) == 2 and fn("ab") == 2

    result = regrow.repair(mod.width, args=("abc", 2), tests=[test_width])
    assert not result.ok and result.installed is None and result.ambiguous is not None
    lines = {line.strip() for source in result.ambiguous.candidates for line in source.splitlines()}
    assert "end = len(text) if n is None else n" in lines


def test_a_larger_edit_of_the_statement_of_the_first_find_is_no_rival_otherwise(make_module):
    # ``return high`` passes; ``return low + high`` (larger, in the same statement) would too, on this one
    # test, but nothing was ignored: the larger edit is not judged, and the smallest is installed.
    mod = make_module('''
        def clamp(value, low, high):
            if value < low:
                return low
            if value > high:
                return low
            return value
    ''')

    def test_above(fn):
        assert fn(11, 0, 10) == 10 and fn(5, 0, 10) == 5

    result = regrow.repair(mod.clamp, args=(11, 0, 10), tests=[test_above])
    assert result.ok and result.fix is not None and "return high" in result.fix.source, result.reason


def test_the_guard_compares_the_state_a_repr_hides() -> None:
    from regrow._checks._inputs import Call, behaviour
    from regrow._checks._render import render

    class Box:
        def __init__(self) -> None:
            self.count = 0

        def __repr__(self) -> str:
            return "Box()"

    def once(box: Box) -> None:
        box.count += 1

    def twice(box: Box) -> None:
        box.count += 2

    calls = [Call((Box(),), {})]
    assert behaviour(once, calls) == behaviour(twice, calls)  # the repr alone: alike
    assert behaviour(once, calls, show=render) != behaviour(twice, calls, show=render)
    assert "count=1" in behaviour(once, calls, show=render)[0]


class Tally:
    """A counter whose repr hides its count, as cachetools' LFUCache hides its use counts."""

    def __init__(self) -> None:
        self.count = 0

    def __repr__(self) -> str:
        return "Tally()"


def bump(tally: Tally) -> None:
    tally.count += 1


def test_the_engine_s_comparison_of_candidates_sees_the_state_a_repr_hides() -> None:
    from regrow._checks._inputs import Call
    from regrow._proposers._engine._rank import behaviour_of
    from regrow._target._target import Target

    target = Target.of(bump)
    calls = [Call((Tally(),), {})]
    twice = "def bump(tally: Tally) -> None:\n    tally.count += 2\n"
    original, candidate = behaviour_of(target, None, calls), behaviour_of(target, twice, calls)
    assert original != candidate
    assert "count=1" in original[0] and "count=2" in candidate[0]
    assert behaviour_of(target, "def bump(tally: Tally) -> None:\n    tally.count = tally.count + 1\n",
                        calls) == original  # the same state: alike


# The tests pass ``cur < prev`` (weaker: it says nothing of the gap between 1 and 5) as well as the
# meant ``cur != prev + 1``, a larger edit of the same condition; judged beside it, the weaker one
# is seen to disagree, and nothing is installed (a real one: cachetools' LFU touch, in docs/realcode.md).
# Without the larger edits of the condition, ``cur < prev`` (found first) was installed.
GAP = '''
def is_gap(prev, cur):
    prev, cur = int(prev), int(cur)
    if cur != prev:
        return True
    return False
'''


def test_a_condition_the_tests_pass_is_judged_beside_larger_edits_of_it(make_module):
    mod = make_module(GAP)

    def check_gaps(fn):
        assert fn(1, 2) is False
        assert fn(5, 3) is True

    result = regrow.repair(mod.is_gap, args=(1, 2), tests=[check_gaps])
    assert not result.ok and result.installed is None and result.ambiguous is not None, result.reason
    conditions = {source.strip().splitlines()[2].strip() for source in result.ambiguous.candidates}
    assert {"if cur < prev:"} < conditions, conditions
    assert conditions & {"if cur != prev + 1:", "if cur - 1 != prev:"}, conditions  # (one answer: either)
    assert mod.is_gap(1, 2) is True  # still the original


def test_a_behaviour_says_what_the_call_returned_and_how_it_left_its_arguments() -> None:
    from regrow._checks._inputs import Call, observe

    def in_place(xs, key=None):
        xs.sort(key=key)

    def copied(xs, key=None):
        return sorted(xs, key=key)

    assert observe(copied, Call(([3, 1, 2],), {})) == "returned [1, 2, 3]"  # its arguments as they came
    assert observe(in_place, Call(([3, 1, 2],), {})) == "returned None, leaving the arguments as ([1, 2, 3],)"
    assert observe(in_place, Call(([3, 1, 2],), {"key": None})) == (
        "returned None, leaving the arguments as ([1, 2, 3],) and {'key': None}")
    # Two calls that return the same but leave their arguments differently are two behaviours.
    assert observe(in_place, Call(([2, 1],), {})) != observe(lambda xs: None, Call(([2, 1],), {}))


def test_an_ambiguity_shows_the_caller_s_credentials_masked(make_module, tmp_path: Path, caplog):
    """The separating inputs come from the failing call, whose arguments may be a credential: the reason (in the
    log, the exception's note, the store) showed ``f('Bearer sk-…', [2, 3])`` verbatim before."""
    import logging
    import sqlite3

    planted = "sk-test-PLANTED1234567890abcdef"
    store = tmp_path / "regrow.db"
    mod = make_module(f'''
        import regrow

        def check_pay(fn):
            assert fn("x", [1, 2]) == {{"charged": 3, "auth": True}}

        @regrow.heal(tests=[check_pay], store={str(store)!r})
        def pay(authorization, values):
            total = 0
            for i in range(len(values) + 1):
                total += values[i]
            return {{"charged": total, "auth": authorization is not None}}
    ''')
    with caplog.at_level(logging.INFO, logger="regrow"), pytest.raises(IndexError) as raised:
        mod.pay(f"Bearer {planted}", [1, 2, 3])
    result = regrow.state(mod.pay).last_result
    assert result is not None and result.ambiguous is not None  # the case this test is about
    shown = [result.reason, result.ambiguous.describe(), regrow.ledger_of(raised.value), caplog.text]
    with sqlite3.connect(store) as db:
        shown += [str(row) for row in db.execute("SELECT * FROM sessions")]
    assert any("[REDACTED]" in text for text in shown)
    assert not [text for text in shown if "PLANTED" in text]


def test_a_part_dropped_in_the_statement_of_the_first_find_is_judged_as_its_rival(make_module):
    """``range(0, len(xs) - 1, n)``: ``len(xs) + 1`` passes the one test and was installed (``chunks([1, 2, 3, 4], 2)``
    then ended with an empty chunk), while ``len(xs)``, the part dropped, was never judged. It is now, as a rival:
    the two disagree on the test's own input shortened, and nothing is installed."""
    mod = make_module('''
        def chunks(xs, n):
            return [xs[i:i + n] for i in range(0, len(xs) - 1, n)]
    ''')

    def test_chunks(fn):
        assert fn([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]

    result = regrow.repair(mod.chunks, args=([1, 2, 3, 4, 5], 2), tests=[test_chunks], install=False)
    assert not result.ok and result.ambiguous is not None, result.reason
    assert any("len(xs))" in candidate or "len(xs), n)" in candidate for candidate in result.ambiguous.candidates)


# Under-tested bugs of the benchmark suite benchmarks/suites/thin, where a wrong fix was installed before.

def test_a_recursion_s_base_case_returning_its_argument_is_a_rival(make_module):
    """``if n < 10: return 0`` in a digit sum: ``return 1`` passes ``sum_digits(123) == 6`` (1 + 2 + 3) and was
    installed; ``return n``, what was meant, was never made. It is now, and the two disagree on ``sum_digits(5)``."""
    mod = make_module('''
        def sum_digits(n):
            if n < 10:
                return 0
            return n % 10 + sum_digits(n // 10)
    ''')

    def test_sum(fn):
        assert fn(123) == 6

    result = regrow.repair(mod.sum_digits, args=(123,), tests=[test_sum], install=False)
    assert not result.ok and result.ambiguous is not None, result.reason
    assert any("return n\n" in candidate for candidate in result.ambiguous.candidates)


def test_a_list_base_case_and_a_measured_one(make_module):
    """``return []`` → ``return [n]``; under ``if len(xs) == 1:``, ``return 0`` → ``return xs[0]``: both rivals."""
    mod = make_module('''
        def digits(n):
            if n < 10:
                return []
            return digits(n // 10) + [n % 10]

        def max_rec(xs):
            if len(xs) == 1:
                return 0
            rest = max_rec(xs[1:])
            return xs[0] if xs[0] > rest else rest
    ''')

    def test_digits(fn):
        assert fn(123) == [1, 2, 3]

    def test_max(fn):
        assert fn([3, 1, 2]) == 3
        assert fn([1, 7]) == 7

    result = regrow.repair(mod.digits, args=(123,), tests=[test_digits], install=False)
    assert not result.ok and result.ambiguous is not None, result.reason
    assert any("return [n]" in candidate for candidate in result.ambiguous.candidates)
    result = regrow.repair(mod.max_rec, args=([3, 1, 2],), tests=[test_max], install=False)
    assert not result.ok and result.ambiguous is not None, result.reason
    assert any("return xs[0]" in candidate for candidate in result.ambiguous.candidates)


def test_a_numerator_counted_from_one_is_a_rival(make_module):
    """``month // 3 + 1`` with ``quarter(1) == 1`` and ``quarter(12) == 4``: ``month // 4 + 1`` passes and was
    installed (``quarter(7)`` is then 2); ``(month - 1) // 3 + 1`` is judged too now, and they disagree."""
    mod = make_module('''
        def quarter(month):
            return month // 3 + 1
    ''')

    def test_quarter(fn):
        assert fn(1) == 1
        assert fn(12) == 4

    result = regrow.repair(mod.quarter, args=(12,), tests=[test_quarter], install=False)
    assert not result.ok and result.ambiguous is not None, result.reason
    assert any("(month - 1) // 3 + 1" in candidate for candidate in result.ambiguous.candidates)
    assert any("month // 4 + 1" in candidate for candidate in result.ambiguous.candidates)


def test_an_off_by_one_undone_on_another_line_is_a_rival(make_module):
    """``range(n - 1)`` in a Fibonacci loop: ``a, b = 1, 1`` passes ``fib(1) == 1`` and ``fib(10) == 55`` (the sequence
    shifted by one) and was installed, ``range(n)`` (a larger edit on another line) never judged."""
    mod = make_module('''
        def fib(n):
            a, b = 0, 1
            for _ in range(n - 1):
                a, b = b, a + b
            return a
    ''')

    def test_fib(fn):
        assert fn(1) == 1
        assert fn(10) == 55

    result = regrow.repair(mod.fib, args=(10,), tests=[test_fib], install=False)
    assert not result.ok and result.ambiguous is not None, result.reason
    assert any("range(n):" in candidate for candidate in result.ambiguous.candidates)


def test_no_candidate_reads_a_thrown_away_loop_variable(make_module):
    """``for _ in range(n + 1)``: ``a, b = b, _ + b`` passed ``lucas(5) == 11`` and was installed. ``_`` names a
    value thrown away: no edit reads it, and ``range(n)`` is the fix."""
    mod = make_module('''
        def lucas(n):
            a, b = 2, 1
            for _ in range(n + 1):
                a, b = b, a + b
            return a
    ''')

    def test_lucas(fn):
        assert fn(5) == 11

    result = regrow.repair(mod.lucas, args=(5,), tests=[test_lucas])
    assert result.ok, result.reason
    assert "range(n):" in result.fix.source and "_ +" not in result.fix.source
    assert [mod.lucas(n) for n in range(6)] == [2, 1, 3, 4, 7, 11]


def test_two_statements_in_the_wrong_order_are_swapped(make_module):
    """A running sum that appends before it adds: the swap is the fix (before, ``total = 1`` and ``total += x + 1``,
    a coincidence of ``[1, 2, 3]``, was installed)."""
    mod = make_module('''
        def cumsum(xs):
            out = []
            total = 0
            for x in xs:
                out.append(total)
                total += x
            return out
    ''')

    def test_cumsum(fn):
        assert fn([1, 2, 3]) == [1, 3, 6]

    result = regrow.repair(mod.cumsum, args=([1, 2, 3],), tests=[test_cumsum])
    assert result.ok, result.reason
    assert mod.cumsum([5]) == [5] and mod.cumsum([2, -1, 4]) == [2, 1, 5]
    assert result.fix.source.index("total += x") < result.fix.source.index("out.append(total)")


def test_a_number_inside_a_text_is_varied_near_the_failing_call(make_module):
    """``int(cents) * 10`` for ``"$3.01"``: ``int(cents) % 10`` passes and was installed; ``"$3.99"`` (the number in
    the text, another size) separates it from ``int(cents)``."""
    mod = make_module('''
        def to_cents(s):
            dollars, cents = s.lstrip("$").split(".")
            return int(dollars) * 100 + int(cents) * 10
    ''')

    def test_cents(fn):
        assert fn("$3.01") == 301

    result = regrow.repair(mod.to_cents, args=("$3.01",), tests=[test_cents], install=False)
    assert not result.ok and result.ambiguous is not None, result.reason
    assert any("+ int(cents)\n" in candidate for candidate in result.ambiguous.candidates)
    assert any("$3.99" in shown for shown in result.ambiguous.inputs)


def test_true_and_one_are_one_answer(make_module):
    """``return 1`` and ``return True`` in a binomial's base case both pass ``binomial(4, 2) == 6`` and differ only
    as ``==`` never tells: one answer, and the core edit is installed (it abstained on them)."""
    mod = make_module('''
        def binomial(n, k):
            if k == 0 or k == n:
                return 0
            return binomial(n - 1, k - 1) + binomial(n - 1, k)
    ''')

    def test_binomial(fn):
        assert fn(4, 2) == 6

    result = regrow.repair(mod.binomial, args=(4, 2), tests=[test_binomial])
    assert result.ok, result.reason
    assert "return 1\n" in result.fix.source
    assert [mod.binomial(5, k) for k in range(6)] == [1, 5, 10, 10, 5, 1]


def test_an_index_counted_from_the_wrong_end_is_a_rival(make_module):
    """``s[1]`` for the second largest of a sorted list: ``s[2]`` passes ``second_largest([5, 1, 4, 2]) == 4`` and was
    installed; ``s[-2]`` (counted from the other end) is judged now, and the two disagree on ``[5, 1, 4]``."""
    mod = make_module('''
        def second_largest(xs):
            s = sorted(set(xs))
            return s[1] if len(s) > 1 else None
    ''')

    def test_second(fn):
        assert fn([5, 1, 4, 2]) == 4

    result = regrow.repair(mod.second_largest, args=([5, 1, 4, 2],), tests=[test_second], install=False)
    assert not result.ok and result.ambiguous is not None, result.reason
    assert any("s[-2]" in candidate for candidate in result.ambiguous.candidates)


def test_a_slice_that_lost_its_other_end_is_a_rival_and_written_without_parentheses(make_module):
    """``is_pal_rec(s[1:])`` for ``s[1:-1]``: ``s[0] <= s[-1]`` passed both asserts and was installed; the slice with
    its other end is judged now (it was made, then written ``s[(1:-1)]``, which does not parse, and dropped)."""
    mod = make_module('''
        def is_pal_rec(s):
            if len(s) <= 1:
                return True
            return s[0] == s[-1] and is_pal_rec(s[1:])
    ''')

    def test_pal(fn):
        assert fn("racecar")
        assert not fn("abca")

    result = regrow.repair(mod.is_pal_rec, args=("abca",), tests=[test_pal], install=False)
    assert not result.ok and result.ambiguous is not None, result.reason
    assert any("is_pal_rec(s[1:-1])" in candidate for candidate in result.ambiguous.candidates)

"""Abstention, continued: candidates that drop what the original reads, and candidates that keep the original's
behaviour near the failing calls (issue 24)."""

from __future__ import annotations

import regrow
from regrow._candidate import Candidate
from regrow._checks._inputs import Call
from regrow._proposers._engine import Engine
from regrow._proposers._engine._abstain import undecided
from regrow._proposers._engine._rank import Evidence, Ranking, _crash, lost_bindings

# The entry should be ``[priority, count, task]``. The test looks only at its ends, and the one-token edits
# that pass it put ``priority`` first by giving up ``count``: none puts ``count`` back where it belongs (a swap
# of two elements is a larger edit, not reached once those pass). Installing one would drop the counter.
ENTRY = '''
def entry(task, priority, serials):
    count = len(serials)
    return [count, priority, task]
'''


def check_entry(fn):
    made = fn("a", 5, [7, 7])
    assert made[0] == 5 and made[-1] == "a"


def test_candidates_that_all_leave_unread_what_the_original_reads_are_not_offered(make_module):
    mod = make_module(ENTRY)
    result = regrow.repair(mod.entry, args=("a", 5, [7, 7]), tests=[check_entry])
    assert not result.ok and result.fix is None and result.installed is None
    assert "doubtful: every candidate that passes" in result.reason and "(count)" in result.reason, result.reason
    assert mod.entry("b", 1, [])[0] == 0  # still the original
    guess = regrow.repair(mod.entry, args=("a", 5, [7, 7]), tests=[check_entry], install=False,
                          proposers=[Engine(abstain=False)])
    assert guess.ok and guess.fix is not None and "count" not in guess.fix.source.splitlines()[-1]  # the guess


def _evidence(source: str, outcomes: tuple[str, ...], **flags: object) -> Evidence:
    evidence = Evidence(Candidate(source, "engine"), 1, 0, outcomes=outcomes)
    for name, value in flags.items():
        setattr(evidence, name, value)
    return evidence


def _ranking(*found: Evidence) -> Ranking:
    calls = [sealed for sealed in (Call((n,), {}).seal() for n in (1, 2)) if sealed is not None]
    return Ranking(list(found), calls, ["returned 0", "raised ZeroDivisionError"], [True, True])


def test_doubt_needs_every_candidate_to_drop_a_binding() -> None:
    dropping = _evidence("def f(n):\n    return 1\n", ("returned 1", "returned 1"), lost=frozenset({"n"}))
    keeping = _evidence("def f(n):\n    return n\n", ("returned 1", "returned 2"))
    assert "(n)" in _ranking(dropping).doubt()
    assert _ranking(dropping, keeping).doubt() == ""
    # ... and where one keeps it, the one that drops it is no rival: nothing to abstain on.
    assert undecided(_ranking(dropping, keeping), "def f(n):\n    return n + 1\n") is None


def test_a_candidate_that_keeps_a_crash_is_no_rival_but_one_that_keeps_a_return_is() -> None:
    changes = _evidence("def f(n):\n    return n\n", ("returned 1", "returned 2"))
    keeps_return = _evidence("def f(n):\n    return 0\n", ("returned 0", "returned 3"), kept=True)
    keeps_crash = _evidence("def f(n):\n    return 1 / 0\n", ("returned 0", "returned 3"), kept=True, crash=True)
    assert undecided(_ranking(changes, keeps_crash), "def f(n): ...") is None
    found = undecided(_ranking(changes, keeps_return), "def f(n): ...")
    assert found is not None and len(found.candidates) == 2


def test_a_crash_is_an_exception_the_function_does_not_name() -> None:
    source = "def f(n):\n    if n < 0:\n        raise ValueError(n)\n    return 1 / n\n"
    assert _crash("raised ZeroDivisionError", source)
    assert not _crash("raised ValueError", source)  # its own raise
    assert not _crash("returned 1", source) and not _crash("timeout", source)


def test_a_lost_binding_is_one_whose_value_the_original_computes_from_the_call() -> None:
    original = "def f(task, serials):\n    count = len(serials)\n    seen = set()\n    return [count, task in seen]\n"
    assert lost_bindings(original, original.replace("[count,", "[task,")) == {"count"}
    # ``seen`` is made from nothing of the call's: a fix that stops reading it drops nothing
    assert lost_bindings(original, original.replace("task in seen", "task in serials")) == set()
    # one that reads a binding the original left unread is no loss either
    revived = "def f(task, serials, n):\n    count = len(serials)\n    return [count]\n"
    assert lost_bindings(revived, revived.replace("[count]", "[n]")) == set()


def test_a_candidate_that_drops_a_binding_ranks_below_one_that_keeps_it() -> None:
    # Dominated, no rival (above), and never installed ahead of the one that dominates it: a held-out bug's
    # one-token `for ca in b` (dropping `a`) was installed over the candidate that kept `a` read, though
    # abstention had set it aside as no rival.
    dropping = Evidence(Candidate("def f(a, b):\n    return len(b)\n", "engine", edit_size=1), 1, 0,
                        lost=frozenset({"a"}))
    keeping = Evidence(Candidate("def f(a, b):\n    return len(a) + 0 * len(b)\n", "engine", edit_size=3), 1, 1)
    assert sorted([dropping, keeping], key=Evidence.key) == [keeping, dropping]

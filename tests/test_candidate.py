"""A candidate says which request made it (``via``), and a result and its ledger say it of the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

import regrow
from regrow._candidate import Candidate
from regrow._result import RepairResult

SOURCE = "def f(n):\n    return n * 2\n"


@pytest.mark.parametrize(("origin", "operator", "via"), [
    ("engine", "binary-op", "engine"),
    ("openai:gpt-5", "call 1 locate: suggested", "locate"),
    ("ollama:qwen2.5-coder:7b", "call 2 locate: replace-constant", "locate"),
    ("openai:gpt-5", "call 3", "rewrite"),
    ("anthropic:claude-x", "call 1 choose: candidate 2", "choose"),
    ("openai:gpt-5", "choose: candidate 1", "choose"),  # regrow.llm.choose, outside a chain
    ("mine", "call 1", "other"),  # a user's proposer
    ("unknown (labelled engine by an untrusted proposer)", "binary-op", "other"),
    ("openai:gpt-5", "", "other"),
])
def test_via_names_the_request(origin: str, operator: str, via: str) -> None:
    assert Candidate(SOURCE, origin=origin, operator=operator).via == via


def test_the_ledger_names_the_request_that_made_the_fix() -> None:
    fix = Candidate(SOURCE, origin="openai:gpt-5", operator="call 1 choose: candidate 2")
    result = RepairResult(True, "f", None, fix=fix)
    assert result.via == "choose"
    assert result.ledger().splitlines()[1] == "  fixed by choose: openai:gpt-5 call 1 choose: candidate 2"
    failed = RepairResult(False, "f", None, reason="every proposer ran out of candidates")
    assert failed.via == "" and "fixed by" not in failed.ledger()


def test_a_cached_fix_says_what_made_it_first(tmp_path: Path) -> None:
    store = regrow.Store(tmp_path / "regrow.db")
    fix = Candidate(SOURCE, origin="openai:gpt-5", operator="call 1 locate: suggested")
    store.record(RepairResult(True, "f", None, fix=fix), "key")
    cached = store.lookup("key")
    assert cached is not None and cached.via == "locate"


def test_the_ledger_gives_the_lines_of_the_file_where_it_knows_them() -> None:
    """The ledger (the note on the exception, the log) said ``engine binary-op at line 5``, counted from the ``def``,
    while the CLI said ``shapes.py:12``: a reader looked at line 5 of the file."""
    from regrow._verdict import Attempt, Verdict

    fix = Candidate(SOURCE, origin="engine", operator="swap", line=2)
    tried = Attempt(Candidate(SOURCE, origin="engine", operator="binary-op", line=3),
                    Verdict(False, check="replay", reason="raised TypeError"))
    result = RepairResult(True, "f", None, fix=fix, history=[tried], place=("shapes.py", 11))
    assert result.ledger().splitlines()[1:] == ["  fixed by engine: engine swap at shapes.py:12",
                                                "  - engine binary-op at shapes.py:13: replay: raised TypeError"]
    assert fix.describe() == "engine swap at line 2"  # where the file is not known: from the def

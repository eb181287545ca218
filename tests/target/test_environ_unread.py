"""A module that writes no read of the environment is not parsed to find one (issue 26: the session read a
3,000-line module's tree before every repair); one that may read it is, however it spells the name."""

from __future__ import annotations

import uuid

import pytest

from regrow._target import _environ
from regrow._target._environ import Reads


@pytest.fixture
def scans(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    seen: list[object] = []
    real = _environ.scan
    monkeypatch.setattr(_environ, "scan", lambda tree: seen.append(tree) or real(tree))
    return seen


def test_a_module_that_names_no_environment_is_not_parsed(scans: list[object]) -> None:
    source = f"# {uuid.uuid4()}\nimport os\n\ndef f(x):\n    return os.path.join(x, 'a')\n" * 300
    assert _environ._scan_text(source) == Reads()
    assert scans == []


@pytest.mark.parametrize("read", ['os.environ["KEY"]', 'os.getenv("KEY")', 'os.\uff45nviron["KEY"]'])
def test_a_module_that_may_read_it_is_parsed_however_it_spells_it(scans: list[object], read: str) -> None:
    # The fullwidth 'e' reads as 'environ' once Python normalizes the name (NFKC): only text that is all
    # ASCII is taken at its word.
    source = f"# {uuid.uuid4()}\nimport os\n\ndef f():\n    return {read}\n"
    assert _environ._scan_text(source) == Reads(("KEY",))
    assert len(scans) == 1

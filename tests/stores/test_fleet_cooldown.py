"""A failure one process found no fix for: the fleet's other processes are told so at once, for the cooldown, rather
than waiting the session's timeout and a lease for a fix that cannot land."""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

import pytest

import regrow
from regrow import Store

TARGET = '''
def compute(x):
    return {1: 2}[x] * 7


def test_it(fn):
    assert fn(4) == 99
'''


def _process(folder: Path, name: str):
    (folder / "unfix.py").write_text(textwrap.dedent(TARGET))
    spec = importlib.util.spec_from_file_location(name, folder / "unfix.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_fleet_does_not_wait_for_a_failure_another_process_found_no_fix_for(store_url, tmp_path):
    """Before, a second process's first failing call waited the timeout and the 30 s lease (90 s by default) and
    then said "no fix landed in the store in time"."""
    store = Store(store_url)
    first, second = _process(tmp_path, "unfix_a"), _process(tmp_path, "unfix_b")
    for module in (first, second):
        module.compute = regrow.heal(tests=[module.test_it], store=store, timeout=30, max_candidates=30)(module.compute)
    with pytest.raises(KeyError):
        first.compute(4)  # searched, no fix: the claim is kept for the cooldown, marked so
    assert regrow.state(first.compute).last_result.reason.startswith("every proposer ran out")
    with pytest.raises(KeyError):
        second.compute(4)
    result = regrow.state(second.compute).last_result
    assert result is not None and not result.ok and result.candidates == 0
    assert "found no fix for this failure; the fleet tries again after its cooldown" in result.reason, result.reason
    store.close()

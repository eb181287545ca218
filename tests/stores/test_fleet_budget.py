"""Budgets across the fleet: the store decides, after the claim and in one transaction, whether a session
may call a model — the calls for a failure in the last hour and the fleet's total spend (both backends)."""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

import pytest
from llm_servers import OpenAIServer, Text

import regrow
from regrow import Store
from regrow._proposers._llm import ModelLimits, RetryPolicy, proposer_for

TARGET = '''
def parse_price(text: str) -> float:
    return float(text.replace("$", ""))


def rupees(fn) -> None:
    assert fn("₹1,299") == 1299.0
'''
WRONG = '```python\ndef parse_price(text: str) -> float:\n    return float(text.replace("₹", ""))\n```'


def _process(folder: Path, name: str):
    """The target as a process of the fleet loads it: the same source, a module of its own."""
    (folder / "shop.py").write_text(textwrap.dedent(TARGET))
    spec = importlib.util.spec_from_file_location(name, folder / "shop.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def store(store_url):
    opened = Store(store_url)
    yield opened
    opened.close()


def _healed(module, store, server):
    model = proposer_for("openai:gpt-test", api_key="test-key", base_url=server.base_url,
                         limits=ModelLimits(max_calls=1),
                         retry=RetryPolicy(max_retries=0, base_delay=0.01, max_delay=0.05))
    return regrow.heal(tests=[module.rupees], proposers=[model], store=store, cooldown=0)(module.parse_price)


def test_the_hourly_calls_for_a_failure_are_counted_fleet_wide_by_the_store(store, tmp_path):
    store.set_budget(calls_per_failure_per_hour=1)
    first, second = _process(tmp_path, "shop_a"), _process(tmp_path, "shop_b")
    with OpenAIServer([Text(WRONG), Text(WRONG)]) as server:
        healed = _healed(first, store, server)
        with pytest.raises(ValueError):
            healed("₹1,299")
        assert len(server.requests) == 1  # the first session spent the failure's hourly call
        # Another process (its own model proposer, whose own limit of 12 an hour is far from spent)
        # meets the same failure of the same source: the store refuses it the model.
        other = _healed(second, store, server)
        with pytest.raises(ValueError):
            other("₹1,299")
        assert len(server.requests) == 1
    result = regrow.state(other).last_result
    assert result is not None and not result.ok
    assert "model calls across the fleet in the last hour (limit 1)" in result.reason


def test_the_fleets_spend_cap_stops_every_session_from_calling_a_model(store, tmp_path):
    store.set_budget(spend_cap=0.25)
    store.spend("another failure", 3, 0.30)  # spent elsewhere in the fleet
    module = _process(tmp_path, "shop_c")
    with OpenAIServer([Text(WRONG)]) as server:
        healed = _healed(module, store, server)
        with pytest.raises(ValueError):
            healed("₹1,299")
        assert server.requests == []
    result = regrow.state(healed).last_result
    assert result is not None and "the fleet's model spend cap of $0.25 is spent ($0.3000)" in result.reason
    store.set_budget()  # no cap: the model is asked again
    assert store.spend_refusal("another failure", None) == ""


def test_each_model_call_is_reserved_in_the_store_so_a_session_stops_at_the_fleets_hourly_limit(store, tmp_path):
    store.set_budget(calls_per_failure_per_hour=2)
    module = _process(tmp_path, "shop_d")
    with OpenAIServer([Text(WRONG)] * 6) as server:
        model = proposer_for("openai:gpt-test", api_key="test-key", base_url=server.base_url,
                             limits=ModelLimits(max_calls=6),
                             retry=RetryPolicy(max_retries=0, base_delay=0.01, max_delay=0.05))
        healed = regrow.heal(tests=[module.rupees], proposers=[model], store=store, cooldown=0,
                             max_attempts=6)(module.parse_price)
        with pytest.raises(ValueError):
            healed("₹1,299")
        # The session was allowed to start (no call yet), but the store refused its third call.
        assert len(server.requests) == 2
    with store._transaction(write=False) as tx:
        assert tx.rows("SELECT SUM(calls) FROM spend")[0][0] == 2  # counted once each: no double count at the end
    assert "limit 2" in store.spend_refusal(regrow.state(healed).last_result.failure.fingerprint, None)


def test_a_repair_with_a_store_a_worker_s_too_keeps_to_the_fleets_budget(store, tmp_path):
    """A worker heals with ``repair(store=…)``, which never set the fleet's budget gate: with a spend cap of 0 and no
    calls allowed an hour, a worker still asked the model three times and recorded no spend."""
    store.set_budget(spend_cap=0.0, calls_per_failure_per_hour=0)
    module = _process(tmp_path, "shop_w")
    with OpenAIServer([Text(WRONG)] * 3) as server:
        model = proposer_for("openai:gpt-test", api_key="test-key", base_url=server.base_url,
                             retry=RetryPolicy(max_retries=0, base_delay=0.01, max_delay=0.05))
        result = regrow.repair(module.parse_price, ("₹1,299",), tests=[module.rupees], proposers=[model],
                               store=store, install=False)
        assert server.requests == []
    assert not result.ok and "not sent to a model again yet" in result.reason, result.reason

"""Data drift: the code is fine but the data changed. Twelve scenarios, and the runner both suites share.

Each scenario is a loader written for the old format, decorated with ``@regrow.heal(record=...)``
and called on old-format inputs while healthy (those recorded calls are what proves that the old
format still works after the fix). Then the new format arrives: the loader fails (an exception, or
its own ``request_healing()`` when nothing raised but the data contract broke), the LLM proposer is
asked, and the fix must read both formats. ``fix`` is the reference adapter a good model writes:
the scripted loopback server returns it in CI (``tests/test_drift.py``), while a real endpoint
(``tests/test_drift_real.py``) must come up with its own.

The two must-refuse scenarios go on after the adaptation: an input whose required data is
genuinely missing, or where only a decoy column stands where the data should be. The healed code
must end with its own clear error, not invent values; a candidate that invents them is offered
(``invent``) and must be rejected. Such a scenario passes only when the error comes from the
loader's own code after a model call that answered, never from a provider outage.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
import textwrap
import traceback
import types
from collections.abc import Callable
from datetime import date as datetime_date
from pathlib import Path
from typing import Any

import regrow
from regrow._proposers._llm import LLMProposer

HEADER = "import csv\nimport datetime\nimport io\nimport json\nimport re\n\nfrom regrow import request_healing\n\n\n"


@dataclasses.dataclass(frozen=True)
class Scenario:
    name: str
    kind: str  # which drift
    loader: str  # the old loader: def load(payload)
    old: tuple[tuple[Any, Any], ...]  # (old-format input, what the loader returned for it)
    new: Any  # the new-format input
    expected: Any  # what the fixed loader returns for it
    fix: str  # the reference adapter (the scripted reply in CI)
    refuse: Any = None  # must-refuse: the input whose data is missing, after the adaptation
    refusal: str = ""  # ... and the start of the healed code's own error message
    invent: str = ""  # ... and a candidate that invents the missing values (it must be rejected)

    @property
    def must_refuse(self) -> bool:
        return bool(self.refusal)


def reply(source: str) -> str:
    return f"The input format changed; this version reads both formats.\n\n```python\n{textwrap.dedent(source)}```\n"


def load_module(scenario: Scenario, folder: Path) -> types.ModuleType:
    """The loader as a module of its own file (regrow heals code it can read)."""
    path = folder / f"drift_{scenario.name}.py"
    path.write_text(HEADER + textwrap.dedent(scenario.loader), encoding="utf-8")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


@dataclasses.dataclass
class Outcome:
    """What happened in one scenario, for the assertions."""

    new_value: Any = None
    new_error: BaseException | None = None
    old_values: list[Any] = dataclasses.field(default_factory=list)
    refused: BaseException | None = None  # must-refuse: what the refusing call raised
    refused_value: Any = None  # must-refuse: what it returned instead (it must not)
    events: list[regrow.Event] = dataclasses.field(default_factory=list)
    refusal_events: list[regrow.Event] = dataclasses.field(default_factory=list)  # the must-refuse call's own
    loader: Callable[..., Any] | None = None  # the healed loader
    results: list[tuple[bool, str]] = dataclasses.field(default_factory=list)  # each session: ok, reason
    new_after_refusal: Any = None  # must-refuse: the new input again, after the refusal


def run(scenario: Scenario, folder: Path, proposer: Callable[[], LLMProposer], timeout: float = 60.0,
        max_attempts: int = 1) -> Outcome:
    """The scenario end to end: healthy old calls, the new input, then (must-refuse) the missing data."""
    module = load_module(scenario, folder)
    outcome = Outcome()
    load = regrow.heal(proposers=[proposer()], record=len(scenario.old), max_attempts=max_attempts, timeout=timeout,
                       cooldown=0.0, on_event=outcome.events.append)(module.load)
    outcome.loader = load
    for payload, result in scenario.old:
        assert load(payload) == result, f"{scenario.name}: the old loader is wrong on its own format"
    try:
        outcome.new_value = load(scenario.new)
    except Exception as exc:
        outcome.new_error = exc
    outcome.old_values = [_value(load, payload) for payload, _ in scenario.old]
    if scenario.must_refuse and outcome.new_error is None:
        before = len(outcome.events)
        try:
            outcome.refused_value = load(scenario.refuse)
        except Exception as exc:
            outcome.refused = exc
        outcome.refusal_events = outcome.events[before:]
        outcome.new_after_refusal = _value(load, scenario.new)
    outcome.results = [(result.ok, result.reason) for result in regrow.state(load).results]
    return outcome


def _value(load: Callable[[Any], Any], payload: Any) -> Any:
    try:
        return load(payload)
    except Exception as exc:
        return exc


def answered(events: list[regrow.Event]) -> bool:
    """A model call finished with a reply, and no proposer failed: not a provider outage."""
    return any(e.type == "model_call" for e in events) and not any(e.type == "proposer_error" for e in events)


def own_error(exc: BaseException, loader: Callable[..., Any]) -> bool:
    """``exc`` was raised by the loader's own code as it runs now (the innermost frame runs the live code
    object of the healed function), and is not regrow's or a provider's."""
    if isinstance(exc, regrow.RegrowError):
        return False
    frames = [frame for frame, _ in traceback.walk_tb(exc.__traceback__)]
    return bool(frames) and frames[-1].f_code is regrow.state(loader).func.__code__


# -- the scenarios -----------------------------------------------------------------------------------
CSV_LOADER = '''\
def load(payload):
    """Products from a CSV export: name and price."""
    rows = csv.DictReader(io.StringIO(payload))
    return [{"name": row["name"], "price": float(row["price"])} for row in rows]
'''

SCENARIOS = [
    Scenario(
        "renamed_columns", "renamed columns", CSV_LOADER,
        old=(("name,price\nTea,3.5\nJam,4\n", [{"name": "Tea", "price": 3.5}, {"name": "Jam", "price": 4.0}]),
             ("name,price\nHoney,7.25\n", [{"name": "Honey", "price": 7.25}])),
        new="product,unit_price\nSoap,2.5\n", expected=[{"name": "Soap", "price": 2.5}],
        fix='''\
def load(payload):
    """Products from a CSV export: name and price (product/unit_price in the newer export)."""
    rows = csv.DictReader(io.StringIO(payload))
    products = []
    for row in rows:
        name = row["name"] if "name" in row else row["product"]
        price = row["price"] if "price" in row else row["unit_price"]
        products.append({"name": name, "price": float(price)})
    return products
'''),
    Scenario(
        "translated_columns", "translated columns", CSV_LOADER,
        old=(("name,price\nTea,3.5\n", [{"name": "Tea", "price": 3.5}]),
             ("name,price\nJam,4\nHoney,7\n", [{"name": "Jam", "price": 4.0}, {"name": "Honey", "price": 7.0}])),
        new="nom,prix\nSavon,2.5\nPain,1.2\n",
        expected=[{"name": "Savon", "price": 2.5}, {"name": "Pain", "price": 1.2}],
        fix='''\
def load(payload):
    """Products from a CSV export: name and price (nom/prix in the French export)."""
    columns = {"name": ("name", "nom"), "price": ("price", "prix")}
    products = []
    for row in csv.DictReader(io.StringIO(payload)):
        found = {key: next(row[c] for c in names if c in row) for key, names in columns.items()}
        products.append({"name": found["name"], "price": float(found["price"])})
    return products
'''),
    Scenario(
        "reordered_columns", "reordered columns", '''\
def load(payload):
    """Products from a CSV export whose first column is the name, the second the price."""
    lines = csv.reader(io.StringIO(payload))
    next(lines)  # the header
    return [{"name": row[0], "price": float(row[1])} for row in lines]
''',
        old=(("name,price\nTea,3.5\n", [{"name": "Tea", "price": 3.5}]),
             ("name,price\nJam,4\n", [{"name": "Jam", "price": 4.0}])),
        new="price,name\n2.5,Soap\n", expected=[{"name": "Soap", "price": 2.5}],
        fix='''\
def load(payload):
    """Products from a CSV export: the header says which column is the name and which the price
    (without both names in it, the name is the first column and the price the second)."""
    lines = csv.reader(io.StringIO(payload))
    header = next(lines)
    at_name, at_price = (header.index("name"), header.index("price")) if {"name", "price"} <= set(header) else (0, 1)
    return [{"name": row[at_name], "price": float(row[at_price])} for row in lines]
'''),
    Scenario(
        "renested_json", "re-nested JSON", '''\
def load(payload):
    """A user from the accounts API: name and email."""
    user = json.loads(payload)["user"]
    return {"name": user["name"], "email": user["email"]}
''',
        old=(('{"user": {"name": "Ada", "email": "ada@example.org"}}', {"name": "Ada", "email": "ada@example.org"}),
             ('{"user": {"name": "Alan", "email": "alan@example.org", "id": 7}}',
              {"name": "Alan", "email": "alan@example.org"})),
        new='{"data": {"attributes": {"name": "Grace", "contact": {"email": "grace@example.org"}}}}',
        expected={"name": "Grace", "email": "grace@example.org"},
        fix='''\
def load(payload):
    """A user from the accounts API: name and email (v1 under "user", v2 under data.attributes)."""
    document = json.loads(payload)
    if "user" in document:
        user = document["user"]
        return {"name": user["name"], "email": user["email"]}
    attributes = document["data"]["attributes"]
    return {"name": attributes["name"], "email": attributes["contact"]["email"]}
'''),
    Scenario(
        "date_format", "a new date format", '''\
def load(payload):
    """Orders from lines of "order-id;date"; the date as a datetime.date."""
    orders = []
    for line in payload.splitlines():
        order, day = line.split(";")
        orders.append((order, datetime.datetime.strptime(day, "%Y-%m-%d").date()))
    return orders
''',
        old=(("A1;2024-03-05\nA2;2024-12-31", [("A1", datetime_date(2024, 3, 5)), ("A2", datetime_date(2024, 12, 31))]),
             ("B7;2023-01-02", [("B7", datetime_date(2023, 1, 2))])),
        new="C3;05/03/2024\nC4;31/12/2024",
        expected=[("C3", datetime_date(2024, 3, 5)), ("C4", datetime_date(2024, 12, 31))],
        fix='''\
def load(payload):
    """Orders from lines of "order-id;date"; ISO dates, or day/month/year in the newer export."""
    orders = []
    for line in payload.splitlines():
        order, day = line.split(";")
        pattern = "%d/%m/%Y" if "/" in day else "%Y-%m-%d"
        orders.append((order, datetime.datetime.strptime(day, pattern).date()))
    return orders
'''),
    Scenario(
        "decimal_format", "a new decimal format", '''\
def load(payload):
    """Invoice totals, one per line, as floats."""
    return [float(line) for line in payload.splitlines() if line.strip()]
''',
        old=(("1234.50\n99\n", [1234.5, 99.0]), ("0.25\n", [0.25])),
        new="1.234,50\n99,00\n", expected=[1234.5, 99.0],
        fix='''\
def load(payload):
    """Invoice totals, one per line, as floats: 1234.50, or 1.234,50 with a decimal comma."""
    totals = []
    for line in payload.splitlines():
        text = line.strip()
        if not text:
            continue
        if "," in text:
            text = text.replace(".", "").replace(",", ".")
        totals.append(float(text))
    return totals
'''),
    Scenario(
        "byte_order_mark", "a BOM", CSV_LOADER,
        old=(("name,price\nTea,3.5\n", [{"name": "Tea", "price": 3.5}]),
             ("name,price\nJam,4\n", [{"name": "Jam", "price": 4.0}])),
        new="\ufeffname,price\nSoap,2.5\n", expected=[{"name": "Soap", "price": 2.5}],
        fix='''\
def load(payload):
    """Products from a CSV export: name and price (a byte order mark before the header is dropped)."""
    rows = csv.DictReader(io.StringIO(payload.removeprefix("\\ufeff")))
    return [{"name": row["name"], "price": float(row["price"])} for row in rows]
'''),
    Scenario(
        "pagination_envelope", "a new pagination envelope", '''\
def load(payload):
    """The items of one page of the catalogue API, and the cursor of the next page."""
    page = json.loads(payload)
    if "items" not in page:  # nothing raises, but the page is not what this code reads
        request_healing("a catalogue page without an items list", {"keys": sorted(page)})
    return {"items": [item["sku"] for item in page["items"]], "next": page.get("next")}
''',
        old=(('{"items": [{"sku": "T1"}, {"sku": "J2"}], "next": "p2"}', {"items": ["T1", "J2"], "next": "p2"}),
             ('{"items": [], "next": null}', {"items": [], "next": None})),
        new='{"data": [{"sku": "S9"}], "meta": {"cursor": {"next": "p3"}, "total": 5}}',
        expected={"items": ["S9"], "next": "p3"},
        fix='''\
def load(payload):
    """The items of one page of the catalogue API, and the cursor of the next page (v1 and v2 envelopes)."""
    page = json.loads(payload)
    if "data" in page:
        items, cursor = page["data"], page.get("meta", {}).get("cursor", {}).get("next")
    elif "items" in page:
        items, cursor = page["items"], page.get("next")
    else:
        request_healing("a catalogue page without an items list", {"keys": sorted(page)})
    return {"items": [item["sku"] for item in items], "next": cursor}
'''),
    Scenario(
        "epoch_timestamps", "timestamps as epoch seconds", '''\
def load(payload):
    """Sensor readings from JSON: (time, value), the time as an ISO string."""
    readings = json.loads(payload)
    return [(datetime.datetime.fromisoformat(r["at"]).isoformat(), r["value"]) for r in readings]
''',
        old=(('[{"at": "2024-03-05T10:00:00+00:00", "value": 1.5}]', [("2024-03-05T10:00:00+00:00", 1.5)]),
             ('[{"at": "2024-03-05T11:30:00+00:00", "value": 2}]', [("2024-03-05T11:30:00+00:00", 2)])),
        new='[{"at": 1709632800, "value": 3.0}]', expected=[("2024-03-05T10:00:00+00:00", 3.0)],
        fix='''\
def load(payload):
    """Sensor readings from JSON: (time, value); the time an ISO string or epoch seconds (UTC)."""
    readings = []
    for r in json.loads(payload):
        at = r["at"]
        if isinstance(at, (int, float)):
            moment = datetime.datetime.fromtimestamp(at, tz=datetime.timezone.utc)
        else:
            moment = datetime.datetime.fromisoformat(at)
        readings.append((moment.isoformat(), r["value"]))
    return readings
'''),
    Scenario(
        "semicolon_delimiter", "a new delimiter", CSV_LOADER,
        old=(("name,price\nTea,3.5\n", [{"name": "Tea", "price": 3.5}]),
             ("name,price\nJam,4\n", [{"name": "Jam", "price": 4.0}])),
        new="name;price\nSoap;2.5\n", expected=[{"name": "Soap", "price": 2.5}],
        fix='''\
def load(payload):
    """Products from a CSV export: name and price, comma- or semicolon-separated."""
    delimiter = ";" if ";" in payload.splitlines()[0] else ","
    rows = csv.DictReader(io.StringIO(payload), delimiter=delimiter)
    return [{"name": row["name"], "price": float(row["price"])} for row in rows]
'''),
]

# The must-refuse loaders check their own contract: a price must be a positive number, so a candidate
# that fills a missing price with 0 is caught by the code's own request_healing() (which a fix must keep).
_PRICED = '''\
def load(payload):
    """Products from a CSV export: name and a positive price."""
    products = []
    for row in csv.DictReader(io.StringIO(payload)):
        price = float(row["price"])
        if price <= 0:
            request_healing("a product without a positive price", {"row": row})
        products.append({"name": row["name"], "price": price})
    return products
'''
_PRICED_FIX = '''\
def load(payload):
    """Products from a CSV export: name and a positive price (price, or cost in the newer export)."""
    products = []
    for row in csv.DictReader(io.StringIO(payload)):
        column = next((c for c in ("price", "cost") if c in row), None)
        if column is None:
            raise ValueError(f"no price column in the export: expected 'price' or 'cost', found {sorted(row)}")
        price = float(row[column])
        if price <= 0:
            request_healing("a product without a positive price", {"row": row})
        products.append({"name": row["name"], "price": price})
    return products
'''
_INVENTING = '''\
def load(payload):
    """Products from a CSV export: name and a positive price."""
    products = []
    for row in csv.DictReader(io.StringIO(payload)):
        price = float(row.get("price") or row.get("cost") or {guess})
        if price <= 0:
            request_healing("a product without a positive price", {{"row": row}})
        products.append({{"name": row["name"], "price": price}})
    return products
'''
_OLD_PRICED = (("name,price\nTea,3.5\n", [{"name": "Tea", "price": 3.5}]),
               ("name,price\nJam,4\nHoney,7\n", [{"name": "Jam", "price": 4.0}, {"name": "Honey", "price": 7.0}]))

SCENARIOS += [
    Scenario(
        "missing_data", "genuinely missing data (must refuse)", _PRICED, old=_OLD_PRICED,
        new="name,cost\nSoap,2.5\n", expected=[{"name": "Soap", "price": 2.5}], fix=_PRICED_FIX,
        refuse="name,colour\nSoap,blue\n", refusal="no price column in the export",
        invent=_INVENTING.format(guess="0")),
    Scenario(
        "decoy_column", "a decoy column (must refuse)", _PRICED, old=_OLD_PRICED,
        new="name,cost\nSoap,2.5\n", expected=[{"name": "Soap", "price": 2.5}], fix=_PRICED_FIX,
        refuse="name,price_note\nSoap,ask in store\n", refusal="no price column in the export",
        invent=_INVENTING.format(guess='row.get("price_note")')),
]

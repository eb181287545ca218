"""Issue 19: what comes back from a sandbox is read as data, never rebuilt into objects that act.

The hostile cases run through ``regrow.repair()``. Where the attack needs a record no honest child
writes (a forged frame, which the issue shows a candidate can send), :class:`Forging` stands for that
child: it runs the real evaluation and changes the record of what the candidate returned.
"""

from __future__ import annotations

import dataclasses
import decimal
import fractions
import gc
import json
import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

import regrow
from regrow._checks._evaluate import evaluate
from regrow._plain import DataValue, Opaque, PlainError, RaisedElsewhere, decode, encode, read
from regrow._sandbox import InProcessSandbox, Limits, Outcome


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Lease:
    """A class of the user's whose ``__del__`` acts on its fields."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __del__(self) -> None:
        Path(self.path).unlink(missing_ok=True)


class Guarded:
    @property
    def path(self) -> str:
        return "fixed"

    @path.setter
    def path(self, value: str) -> None:
        raise AssertionError("a property setter ran in the host")


# -- the reader, on records a hostile child could send ------------------------------------------------------


def test_plain_user_values_are_rebuilt_as_the_users_own_types():
    assert decode(encode(Point(1, 2))) == Point(1, 2)
    assert type(decode(encode(Point(1, 2)))) is Point
    assert decode(encode({"a": [1, 2.5, (3, "x")], "b": {4}})) == {"a": [1, 2.5, (3, "x")], "b": {4}}


def test_a_class_with_del_is_compared_as_data_and_never_rebuilt(tmp_path: Path):
    victim = tmp_path / "victim.txt"
    victim.write_text("mine")
    node = ["A", f"{__name__}.Lease", [["path", ["S", str(victim)]]]]
    value = decode(node)
    assert type(value) is DataValue and value.path == str(victim)
    host = Lease.__new__(Lease)
    host.__dict__["path"] = str(victim)
    assert value == host  # same type name and fields
    host.path = str(tmp_path / "not-there")
    del value, host
    gc.collect()
    assert victim.read_text() == "mine"


def test_a_stdlib_class_is_never_rebuilt(tmp_path: Path):
    victim = tmp_path / "victim.txt"
    victim.write_text("mine")
    node = ["A", "tempfile._TemporaryFileCloser",
            [["delete", ["B", True]], ["file", ["O", "io.BytesIO", "<io>"]], ["name", ["S", str(victim)]]]]
    decoded = read(node)
    assert type(decoded.value) is DataValue and not decoded.exact
    del decoded
    gc.collect()
    assert victim.read_text() == "mine"


@pytest.mark.parametrize("key", ["__class__", "__dict__", "path"])
def test_fields_that_would_run_the_classs_code_make_it_data(key: str):
    value = decode(["A", f"{__name__}.Guarded", [[key, ["S", "chosen"]]]])
    assert type(value) is DataValue


@pytest.mark.parametrize("name", ["SystemExit", "KeyboardInterrupt", "GeneratorExit", "BaseException",
                                  f"{__name__}.UsersExit"])
def test_an_exception_outside_exception_becomes_a_plain_stand_in(name: str):
    decoded = read(["X", name, [["I", "3"]]])
    assert isinstance(decoded.value, RaisedElsewhere) and isinstance(decoded.value, Exception)
    assert name in str(decoded.value) and not decoded.exact


class UsersExit(BaseException):
    pass


class UsersError(ValueError):
    pass


def test_builtin_and_the_users_exceptions_are_rebuilt_others_stand_in():
    assert type(decode(["X", "KeyError", [["S", "k"]]])) is KeyError
    assert type(decode(["X", f"{__name__}.UsersError", [["S", "bad"]]])) is UsersError
    standing = decode(["X", "json.decoder.JSONDecodeError", [["S", "bad"]]])
    assert isinstance(standing, ValueError) and not isinstance(standing, json.JSONDecodeError)


@pytest.mark.parametrize("node", [
    ["K", "fractions.Fraction", "1e-999999999"],
    ["K", "decimal.Decimal", "1e999999999"],
    ["K", "decimal.Decimal", "1e-999999999"],
    ["I", "9" * 5000],
    ["I", "1_000"],
    ["F", "1" * 100_000],
    ["C", "(" + "1" * 100_000 + "j)"],
    ["K", "datetime.timedelta", "1e400"],
])  # fmt: skip
def test_numbers_past_the_bounds_are_malformed_not_computed(node: list[Any]):
    with pytest.raises(PlainError):
        decode(node)


def test_numbers_within_the_bounds_read_back():
    assert decode(["K", "fractions.Fraction", "-3/4"]) == fractions.Fraction(-3, 4)
    assert decode(["K", "decimal.Decimal", "1.25E-7"]) == decimal.Decimal("1.25E-7")
    assert decode(["I", "-" + "9" * 4300]) == -int("9" * 4300)


def test_too_many_values_or_keys_read_as_opaque():
    many = ["L", [["I", "1"]] * 250_000]
    assert isinstance(read(many).value, Opaque) and not read(many).exact
    colliding = ["E", [["I", str(index * (2**61 - 1))] for index in range(20_000)]]
    assert isinstance(read(colliding).value, Opaque)


def test_a_deep_record_is_malformed():
    node: list[Any] = ["N"]
    for _ in range(100):
        node = ["L", [node]]
    with pytest.raises(PlainError):
        decode(node)


def test_classes_are_found_without_running_a_modules_getattr(monkeypatch: pytest.MonkeyPatch):
    ran: list[str] = []
    module = types.ModuleType("regrow_test_lazy")
    module.__getattr__ = ran.append  # type: ignore[method-assign]
    monkeypatch.setitem(__import__("sys").modules, "regrow_test_lazy", module)
    assert type(decode(["A", "regrow_test_lazy.Thing", []])) is DataValue
    assert ran == []


# -- through repair(): a hostile candidate, and a child that forges its record ------------------------------


class Forging:
    """A sandbox whose child forged its record: each value the candidate returned is recorded as ``forged``."""

    name = "forging"

    def __init__(self, forged: list[Any]) -> None:
        self.inner, self.forged = InProcessSandbox(), forged

    def call(self, fn: Callable[..., Any], /, *args: Any, limits: Limits | None = None) -> Outcome:
        outcome = self.inner.call(fn, *args, limits=limits)
        if fn is not evaluate or not outcome.ok or not outcome.value.get("transcript"):
            return outcome
        for _, calls in outcome.value["transcript"]:
            for call in calls:
                call[1:3] = ["r", self.forged] if self.forged[0] != "X" else ["x", self.forged]
        return outcome

    def close(self) -> None:
        self.inner.close()


def _hostile(make_module: Callable[[str], types.ModuleType], candidate: str) -> types.ModuleType:
    return make_module(f'''
        from scripted import Scripted

        PROPOSER = Scripted({candidate!r})

        def total(rows: list) -> int:
            return sum(rows) + None  # the bug
    ''')


def _repair(mod: types.ModuleType, sandbox: Any, verify: Callable[[Any], object] = lambda n: n == 6,
            proposers: Sequence[Any] | None = None) -> regrow.RepairResult:
    return regrow.repair(mod.total, ([1, 2, 3],), verify=verify, proposers=proposers or [mod.PROPOSER],
                         sandbox=sandbox, install=False, timeout=60, candidate_timeout=30)


GENUINE = "def total(rows: list) -> int:\n    return sum(rows)\n"


@pytest.mark.parametrize("name", ["SystemExit", "KeyboardInterrupt", "GeneratorExit"])
def test_a_recorded_system_exit_does_not_leave_repair(make_module, name: str):
    mod = _hostile(make_module, GENUINE)
    result = _repair(mod, Forging(["X", name, [["I", "0"]]]))
    assert not result.ok
    assert name in result.history[0].verdict.reason


def test_a_recorded_fraction_that_would_hang_the_host_is_refused(make_module):
    mod = _hostile(make_module, GENUINE)
    result = _repair(mod, Forging(["K", "fractions.Fraction", "1e-999999999"]))
    assert not result.ok and "malformed" in result.history[0].verdict.reason


def test_a_recorded_stdlib_object_with_del_does_not_delete_the_users_file(make_module, tmp_path: Path):
    victim = tmp_path / "report.csv"
    victim.write_text("mine")
    mod = _hostile(make_module, GENUINE)
    forged = ["A", "tempfile._TemporaryFileCloser",
              [["delete", ["B", True]], ["file", ["O", "io.BytesIO", "<io>"]], ["name", ["S", str(victim)]]]]
    result = _repair(mod, Forging(forged), verify=lambda n: n is not None)
    del result
    gc.collect()
    assert victim.read_text() == "mine"


def test_a_candidate_returning_a_users_object_with_del_does_not_delete_the_users_file(make_module, tmp_path: Path):
    victim = tmp_path / "ledger.db"
    victim.write_text("mine")
    mod = make_module(f'''
        from pathlib import Path
        from scripted import Scripted

        LEDGER = {str(victim)!r}

        class Lease:
            def __init__(self, path):
                self.path = path

            def __del__(self):
                Path(self.path).unlink(missing_ok=True)

        def total(rows: list) -> dict:
            return {{"total": sum(rows) + None}}  # the bug

        PROPOSER = Scripted("""
        def total(rows: list, _kept=[]) -> dict:
            lease = Lease(LEDGER)
            _kept.append(lease)  # alive in the sandbox: its __del__ would be refused there
            return {{"total": sum(rows), "lease": lease}}
        """)
    ''')
    result = _repair(mod, "fork", verify=lambda r: r["total"] == 6)
    assert result.history, result.reason
    del result
    gc.collect()
    assert victim.read_text() == "mine"

"""What only the checks import is compiled once, by the host, not in every judging child (issue 24).

Sandboxed children never write ``__pycache__``: a module first imported by a test (a data table a library
loads on first use) was compiled from source in the tracing child and again in every judging child, inside
the time limit of the test that first imported it."""

from __future__ import annotations

import importlib.util
import os
import py_compile
import sys
import time
from pathlib import Path

import pytest

from regrow._checks._bytecode import MAX_SOURCES, sources_from_plain, uncompiled_sources, write_bytecode
from regrow._checks._oracles import TestCallable
from regrow._evidence._failure import check_failure
from regrow._proposers._engine import Engine
from regrow._proposers._proposer import Request
from regrow._target._target import Target

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="tracing runs in a forked child")


def scaled(x):
    return x * 3


def _request(tmp_path: Path) -> tuple[Request, Path]:
    name = f"regrow_table_{tmp_path.name.replace('-', '_')}"
    table = tmp_path / f"{name}.py"
    table.write_text("FACTOR = 2\nROWS = [(i, i * i) for i in range(100)]\n")

    def check_scaled(fn):  # imports the table lazily, as a library loads its data on first use
        sys.path.insert(0, str(tmp_path))
        try:
            factor = importlib.import_module(name).FACTOR
        finally:
            sys.path.remove(str(tmp_path))
        assert fn(5) == 5 * factor

    target = Target.of(scaled)
    request = Request(target, check_failure("test", target.func, "failing"), [], [TestCallable(check_scaled)], 1,
                      time.monotonic() + 60)
    return request, table


def test_a_module_only_the_checks_import_gets_its_bytecode_written_by_the_host(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    request, table = _request(tmp_path)
    cached = Path(importlib.util.cache_from_source(str(table)))
    engine = Engine(jobs=1)
    with engine._worker(request) as worker:
        engine.plan(request, worker)
    assert table.stem not in sys.modules  # imported in the tracing child only
    assert cached.is_file() and cached.stat().st_size > 0
    fixes = list(engine.propose(request))  # the judging children import it from there
    assert fixes and "x * 2" in fixes[0].source


def test_the_hosts_own_modules_without_bytecode_do_not_crowd_out_the_checks_imports(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A host run with PYTHONDONTWRITEBYTECODE has many modules without bytecode (CI's own test run had);
    # what its child imported is what is compiled, not the first 64 of the host's.
    many = tmp_path / "many"
    many.mkdir()
    names = [f"regrow_many_{tmp_path.name.replace('-', '_')}_{number}" for number in range(2 * MAX_SOURCES)]
    for name in names:
        (many / f"{name}.py").write_text("VALUE = 1\n")
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.syspath_prepend(str(many))
    try:
        for name in names:
            importlib.import_module(name)
        monkeypatch.setattr(sys, "dont_write_bytecode", False)
        request, table = _request(tmp_path)
        engine = Engine(jobs=1)
        with engine._worker(request) as worker:
            engine.plan(request, worker)
        assert Path(importlib.util.cache_from_source(str(table))).is_file()
        # (the last few of the host's are looked at again, in case it imported them after its child forked)
        assert sum(Path(importlib.util.cache_from_source(str(many / f"{name}.py"))).exists() for name in names) < \
            MAX_SOURCES
    finally:
        for name in names:
            sys.modules.pop(name, None)


def test_a_host_told_not_to_write_bytecode_writes_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    request, table = _request(tmp_path)
    engine = Engine(jobs=1)
    with engine._worker(request) as worker:
        engine.plan(request, worker)
    assert not Path(importlib.util.cache_from_source(str(table))).exists()


def test_the_childs_list_of_sources_is_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "plain.py"
    source.write_text("VALUE = 1\n")
    broken = tmp_path / "broken.py"
    broken.write_text("def (:\n")
    for bad in ({"a": 1}, [1, 2], "x.py", None):
        with pytest.raises(ValueError, match="list of paths"):
            sources_from_plain(bad)
    # Relative paths, files that are not Python sources and files that do not exist are dropped.
    assert sources_from_plain(["plain.py", str(tmp_path / "missing.py"), "/etc/passwd", str(source)]) == [str(source)]
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    assert write_bytecode([str(broken), str(source)], time.monotonic() + 30) == [str(source)]  # broken: left alone
    assert write_bytecode([str(source)], time.monotonic() - 1) == []  # past the deadline: nothing


def test_a_source_whose_bytecode_cannot_be_written_is_not_compiled(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "locked.py"
    source.write_text("VALUE = 1\n")
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    compiled: list[str] = []
    monkeypatch.setattr(py_compile, "compile", lambda path, **kwargs: compiled.append(path))
    monkeypatch.setattr(os, "access", lambda path, mode: False)  # root may write anywhere: say it may not
    assert write_bytecode([str(source)], time.monotonic() + 30) == [] and compiled == []
    monkeypatch.undo()
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    assert write_bytecode([str(source)], time.monotonic() + 30) == [str(source)]


def test_the_sources_job_lists_modules_without_fresh_bytecode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    name = f"regrow_fresh_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text("VALUE = 1\n")
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module(name)
    try:
        assert module.__file__ in uncompiled_sources()
        monkeypatch.setattr(sys, "dont_write_bytecode", False)
        write_bytecode([module.__file__], time.monotonic() + 30)
        assert module.__file__ not in uncompiled_sources()
    finally:
        sys.modules.pop(name, None)


def test_at_most_max_sources_are_written_per_search(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    paths = []
    for number in range(MAX_SOURCES + 5):
        source = tmp_path / f"module_{number}.py"
        source.write_text(f"VALUE = {number}\n")
        paths.append(str(source))
    assert write_bytecode(paths, time.monotonic() + 60) == paths[:MAX_SOURCES]
    assert not Path(importlib.util.cache_from_source(paths[-1])).exists()

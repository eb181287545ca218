"""The instrumented code kept in ``__pycache__`` (regrow._heal._instrument_cache): read back at the next
import instead of compiled, never reused for other text, another interpreter or another regrow, and never a
reason for an import to fail."""

from __future__ import annotations

import importlib
import linecache
import os
import subprocess
import sys
import textwrap
import traceback
import types
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import regrow
from regrow._heal import _instrument_cache as cache
from regrow._heal import _instrument_code

SOURCE = '''
import regrow

@regrow.heal(proposers=[], cooldown=60)
def ratio(a, b):
    total = a + b
    return a / (total - a - b)  # the failing line

@regrow.heal(proposers=[], cooldown=60)
def price(text, rate=1.0, **extra):
    text = text.strip()  # a parameter rebound: kept at entry
    return float(text) * rate
'''


class Folder:
    """A module written to a folder on ``sys.path``, imported afresh as a new process would import it."""

    def __init__(self, path: Path, name: str) -> None:
        self.path, self.name = path, name
        self.file = path / f"{name}.py"
        self.builds: list[str] = []

    def write(self, text: str) -> None:
        self.file.write_text(textwrap.dedent(text), encoding="utf-8")

    def load(self) -> types.ModuleType:
        """The module imported with nothing of an earlier import left in this process."""
        sys.modules.pop(self.name, None)
        linecache.cache.pop(str(self.file), None)
        cache._modules.clear()
        importlib.invalidate_caches()
        return importlib.import_module(self.name)

    @property
    def kept(self) -> Path:
        made = compile("def f(): pass", str(self.file), "exec")
        path = cache.path_of(made)
        assert path is not None
        return Path(path)


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Iterator[Folder]:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.syspath_prepend(str(tmp_path))
    made = Folder(tmp_path, f"cached_{abs(hash(request.node.name)):x}")
    made.write(SOURCE)
    real = _instrument_code._instrumented

    def counted(func: types.FunctionType, code: types.CodeType, exact: bool) -> types.CodeType | str:
        made.builds.append(func.__qualname__)
        return real(func, code, exact)

    monkeypatch.setattr(_instrument_code, "_instrumented", counted)
    # What the cache keeps is what the text compiles to: on 3.11 plain functions are made from their bytes
    # alone (regrow._heal._instrument_splice) and never reach it, so these take the text's path everywhere.
    monkeypatch.setattr(_instrument_code, "spliced", lambda *args: None)
    yield made
    sys.modules.pop(made.name, None)
    cache._modules.clear()


def _works(mod: types.ModuleType) -> None:
    """Both functions instrumented, healthy calls right, and a failure shown on the user's own line."""
    assert regrow.state(mod.ratio).mode == regrow.state(mod.price).mode == "instrumented"
    assert mod.price(" 2 ", 3) == 6.0
    with pytest.raises(ZeroDivisionError) as failed:
        mod.ratio(1, 2)
    last = traceback.extract_tb(failed.value.__traceback__)[-1]
    assert (last.filename, last.name) == (mod.__file__, "ratio")
    assert last.line == "return a / (total - a - b)  # the failing line"
    assert regrow.state(mod.ratio).tally.failures == 1  # the failure reached regrow from the cached code


def test_the_first_import_builds_and_keeps_the_next_reads(folder: Folder) -> None:
    _works(folder.load())
    assert folder.builds == ["ratio", "price"] and folder.kept.is_file()
    assert folder.kept.parent.name == "__pycache__" and folder.kept.name.endswith(
        f".regrow-{sys.implementation.cache_tag}.pyc")
    folder.builds.clear()
    _works(folder.load())
    assert folder.builds == []  # both read back: nothing parsed or compiled


def test_a_new_process_reads_what_the_last_one_kept(folder: Folder) -> None:
    script = textwrap.dedent(f'''
        import sys
        from regrow._heal import _instrument_code
        built = []
        real = _instrument_code._instrumented
        def counted(func, code, exact):
            built.append(func.__name__)
            return real(func, code, exact)
        _instrument_code._instrumented = counted
        _instrument_code.spliced = lambda *args: None
        import {folder.name} as mod
        assert mod.price(" 2 ") == 2.0
        print(sorted(built))
    ''')
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join([str(folder.path), *sys.path])

    def run() -> str:
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
        return done.stdout.strip()

    assert run() == "['price', 'ratio']"
    assert run() == "[]"


def test_changed_source_is_built_again(folder: Folder) -> None:
    folder.load()
    folder.write(SOURCE.replace("# the failing line", "# the failing line (edited)"))
    folder.builds.clear()
    mod = folder.load()
    assert folder.builds == ["ratio", "price"]
    with pytest.raises(ZeroDivisionError) as failed:
        mod.ratio(1, 2)
    assert traceback.extract_tb(failed.value.__traceback__)[-1].line.endswith("(edited)")
    folder.builds.clear()
    folder.load()
    assert folder.builds == []  # the file now holds the new text's code


@pytest.mark.parametrize("change", ["interpreter", "regrow"])
def test_another_interpreter_or_regrow_version_does_not_reuse_it(folder: Folder, monkeypatch: pytest.MonkeyPatch,
                                                                change: str) -> None:
    folder.load()
    if change == "interpreter":
        monkeypatch.setattr(cache, "_MAGIC", (int.from_bytes(cache._MAGIC[:2], "little") + 1).to_bytes(2, "little")
                            + cache._MAGIC[2:])
    else:
        monkeypatch.setattr(cache, "__version__", regrow.__version__ + ".post1")
    folder.builds.clear()
    _works(folder.load())
    assert folder.builds == ["ratio", "price"]


@pytest.mark.parametrize("damage", ["garbage", "cut short", "entries garbled"])
def test_a_damaged_file_is_a_miss_and_is_replaced(folder: Folder, damage: str) -> None:
    folder.load()
    data = folder.kept.read_bytes()
    header = len(cache._MAGIC) + 32
    damaged = {"garbage": b"\x00not a cache\xff" * 7,
               "cut short": data[:-5],  # the last entry (price) half written: the first one stands
               "entries garbled": data[:header + cache._ENTRY] + bytes(b ^ 0x5A for b in data[header + cache._ENTRY:])}
    folder.kept.write_bytes(damaged[damage])
    folder.builds.clear()
    _works(folder.load())
    assert folder.builds == (["price"] if damage == "cut short" else ["ratio", "price"])
    folder.builds.clear()
    folder.load()
    assert folder.builds == []  # rebuilt and kept again


def test_a_folder_that_cannot_be_written_fails_no_import(folder: Folder) -> None:
    (folder.path / "__pycache__").write_text("a file where the folder would be")  # makedirs and writes fail
    _works(folder.load())
    folder.builds.clear()
    _works(folder.load())
    assert folder.builds == ["ratio", "price"]  # nothing was kept: built each time


def test_dont_write_bytecode_writes_nothing_but_reads(folder: Folder, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    _works(folder.load())
    assert not folder.kept.exists()
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    folder.load()
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    folder.builds.clear()
    folder.load()
    assert folder.builds == []  # like bytecode: read when present, never written


def test_an_entry_for_other_code_is_not_installed(folder: Folder, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file whose key matches but whose code is not instrumented from the running code (forged, or a bug in
    the key) is refused by the check of the code itself."""
    mod = folder.load()
    other = compile("def ratio(a, b):\n    return 42\n", mod.__file__ or "", "exec")
    forged = next(c for c in other.co_consts if isinstance(c, types.CodeType))
    monkeypatch.setattr(_instrument_code, "load", lambda code, globals_: forged.replace(
        co_firstlineno=code.co_firstlineno))
    folder.builds.clear()
    mod = folder.load()
    assert folder.builds == ["ratio", "price"] and mod.ratio.__code__.co_code != forged.co_code


def test_code_with_no_module_file_is_not_kept() -> None:
    made: dict[str, Callable[[int], int]] = {}
    exec(compile("def f(a):\n    return a\n", "<string>", "exec"), made)
    assert cache.path_of(made["f"].__code__) is None
    assert cache.load(made["f"].__code__, made) is None


def test_the_file_follows_pycache_prefix(folder: Folder, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    prefix = tmp_path / "prefix"
    monkeypatch.setattr(sys, "pycache_prefix", str(prefix))
    folder.load()
    assert folder.kept.is_relative_to(prefix) and folder.kept.is_file()
    assert not (folder.path / "__pycache__").exists()

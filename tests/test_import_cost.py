"""What each way in pays in imports (issue 26, "a small fixed cost"): what a path does not use is not imported.

``import regrow`` (and the pytest plugin every pytest run loads) loads the errors and the version, and
every other public name on its first use; a decorated function loads the repair machinery but not the
model proposers, the engine, asyncio or unittest; ``regrow heal`` loads neither the model proposers,
asyncio nor the bench harness. Each is read from ``sys.modules``
in a fresh interpreter (``benchmarks/fixed_cost.py`` measures the time).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import regrow

SRC = str(Path(regrow.__file__).parent.parent)
# Imported only where used since issue 26 (asyncio ~30 ms, the model proposers ~40 ms under -X importtime).
DEFERRED = {"asyncio", "unittest", "regrow._proposers._llm"}


def imported(code: str, cwd: Path) -> set[str]:
    """The modules imported after ``code`` runs in a fresh interpreter (in ``cwd``)."""
    listing = textwrap.dedent(code) + "\nimport sys\nopen('modules.txt', 'w').write(' '.join(sys.modules))\n"
    done = subprocess.run([sys.executable, "-c", listing], capture_output=True, text=True, timeout=300, cwd=cwd,
                          env={**os.environ, "PYTHONPATH": SRC, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert done.returncode == 0, done.stderr
    return set((Path(cwd) / "modules.txt").read_text().split())


def test_import_regrow_loads_the_errors_and_the_version_alone(tmp_path: Path) -> None:
    modules = imported("import regrow", tmp_path)
    assert {name for name in modules if name.startswith("regrow")} == {"regrow", "regrow._errors", "regrow._version"}
    assert sorted(modules & (DEFERRED | {"sqlite3", "pytest", "typing"})) == []


def test_the_pytest_plugin_loads_no_more_of_regrow(tmp_path: Path) -> None:
    # Loaded by every pytest run where regrow is installed, asked for or not.
    modules = imported("import pytest, regrow.pytest_plugin", tmp_path)
    assert {name for name in modules if name.startswith("regrow")} == {
        "regrow", "regrow._errors", "regrow._version", "regrow.pytest_plugin"}
    assert sorted(modules & DEFERRED) == []


def test_a_public_name_is_loaded_on_its_first_use(tmp_path: Path) -> None:
    modules = imported("""
        import regrow

        store = regrow.Store
        import regrow._store

        assert store is regrow._store.Store and regrow.Store is store
    """, tmp_path)
    assert "regrow._heal._decorator" not in modules


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        regrow.no_such_name  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("regrow.no_such_name did not raise")
    assert set(regrow.__all__) <= set(dir(regrow))


def test_a_decorated_function_loads_no_model_proposer_asyncio_or_unittest(tmp_path: Path) -> None:
    modules = imported("""
        import regrow

        @regrow.heal
        def double(x):
            return 2 * x

        assert double(2) == 4
    """, tmp_path)
    assert "regrow._heal._healing" in modules
    # the engine, the session and the assembly of a repair: at the first failure
    assert sorted(modules & (DEFERRED | {"pytest", "regrow._proposers._engine", "regrow._session._loop",
                                         "regrow._heal._assembly"})) == []


def test_regrow_heal_loads_no_model_proposer_asyncio_or_bench(tmp_path: Path) -> None:
    (tmp_path / "clip.py").write_text("def clip(value, high):\n    if value > high:\n        return value\n"
                                      "    return value\n")
    (tmp_path / "test_clip.py").write_text("from clip import clip\n\ndef test_high():\n    assert clip(5, 3) == 3\n\n"
                                           "def test_low():\n    assert clip(1, 3) == 1\n")
    modules = imported("""
        import io, sys
        sys.path.insert(0, '.')
        from regrow._cli._main import main

        out = io.StringIO()
        assert main(['heal', 'clip.py::clip', '--test', 'test_clip.py', '--apply'], out=out) == 0, out.getvalue()
    """, tmp_path)
    assert "return high" in (tmp_path / "clip.py").read_text()
    assert "pytest" in modules and "regrow._heal._assembly" in modules
    # (unittest is pytest's own import: its unittest plugin loads it; the write-back's file lock is
    # filelock's, and some of its releases import asyncio themselves: 4.1, the newest on Python 3.10)
    theirs = imported("import filelock", tmp_path)
    assert sorted(modules & (DEFERRED - {"unittest"} - theirs | {"regrow._cli._bench"})) == []

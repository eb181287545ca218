"""Module identity: the module regrow heals is the one the tests import, in every project layout.

Each fixture project in ``tests/projects`` has a one-character bug that ``regrow heal`` (and
``pytest --heal``, which runs it) must fix. Each layout makes the module importable only through
pytest's own configuration, or under a name that importing the file by itself would not give.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from reach_projects import copy_project, pytest_run, regrow

from regrow._target._locate import loaded, module_for_file

LAYOUTS = {
    # name: (project, target, the fixed line, pytest options)
    "src layout, pythonpath = src, dotted target": (
        "src_layout", "tally.stats::mean", "-    return total / (len(values) + 1)", ()),
    "src layout, path target": (
        "src_layout", "src/tally/stats.py::mean", "-    return total / (len(values) + 1)", ()),
    "namespace package": (
        "namespace_pkg", "geometry/shapes.py::perimeter", "+    return 2 * (width + height)", ()),
    "conftest edits sys.path, dotted target": (
        "conftest_path", "mathx::clip", "+    if value > high:", ()),
    "conftest edits sys.path, path target": (
        "conftest_path", "lib/mathx.py::clip", "+    if value > high:", ()),
    "--import-mode=importlib, path target": (
        "importlib_mode", "billing/invoice.py::total", "+    gross = sum((quantity * price)",
        ("--import-mode=importlib",)),
    "--import-mode=importlib, dotted target": (
        "importlib_mode", "billing.invoice::total", "+    gross = sum((quantity * price)",
        ("--import-mode=importlib",)),
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_regrow_heal_fixes_the_module_the_tests_import(tmp_path: Path, layout: str) -> None:
    name, target, line, options = LAYOUTS[layout]
    project = copy_project(name, tmp_path)
    assert pytest_run(project, *options).returncode == 1  # the bug is there

    done = regrow(project, "heal", target, "--test", "tests", "--apply", *(["--", *options] if options else []))
    assert done.returncode == 0, done.stdout + done.stderr
    assert line in done.stdout, done.stdout
    after = pytest_run(project, *options)
    assert after.returncode == 0, after.stdout  # the fix is in the module the tests import


def test_a_namespace_package_module_is_healed_under_the_name_the_tests_use(tmp_path: Path) -> None:
    project = copy_project("namespace_pkg", tmp_path)
    done = regrow(project, "heal", "geometry/shapes.py::perimeter", "--test", "tests")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "regrow: healing geometry.shapes.perimeter against 2 tests" in done.stdout


@pytest.mark.parametrize(
    ("name", "options", "fixed"),
    [
        ("src_layout", (), "tally.stats.mean: fixed"),
        ("namespace_pkg", (), "geometry/shapes.py::perimeter: fixed"),
        ("conftest_path", (), "mathx.clip: fixed"),
        # Two test modules of one basename: only this import mode collects both, in the repair too.
        ("importlib_mode", ("--import-mode=importlib",), "billing.invoice.total: fixed"),
    ],
)
def test_pytest_heal_repairs_in_each_layout(tmp_path: Path, name: str, options: tuple[str, ...], fixed: str) -> None:
    project = copy_project(name, tmp_path)
    done = pytest_run(project, "--heal-apply", *options)
    assert fixed in done.stdout, done.stdout
    assert pytest_run(project, *options).returncode == 0


def test_the_default_import_mode_cannot_collect_the_importlib_project(tmp_path: Path) -> None:
    # What makes the option matter: without it the repair's own collection would fail.
    project = copy_project("importlib_mode", tmp_path)
    done = regrow(project, "heal", "billing/invoice.py::total", "--test", "tests")
    assert done.returncode == 2
    assert "cannot collect" in done.stderr and "Traceback" not in done.stderr


def test_a_loaded_module_is_found_by_its_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "outer" / "inner"
    folder.mkdir(parents=True)
    (folder / "leaf.py").write_text("def f():\n    return 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    module = importlib.import_module("outer.inner.leaf")  # namespace packages: no __init__.py anywhere
    try:
        assert loaded(folder / "leaf.py") == [module]
        assert module_for_file(folder / "leaf.py") is module  # not a second copy named "leaf"
        assert "leaf" not in sys.modules
    finally:
        for name in ("outer.inner.leaf", "outer.inner", "outer"):
            sys.modules.pop(name, None)


def test_a_module_the_tests_import_only_while_running_is_healed_under_their_name(tmp_path: Path) -> None:
    project = copy_project("namespace_pkg", tmp_path)
    (project / "tests" / "test_shapes.py").write_text(
        "def test_square():\n"
        "    from geometry.shapes import perimeter  # imported by the test, not at collection\n\n"
        "    assert perimeter(3, 3) == 12\n")
    done = regrow(project, "heal", "geometry/shapes.py::perimeter", "--test", "tests", "--apply")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "regrow: the tests import it as geometry.shapes; healing geometry.shapes.perimeter" in done.stdout
    assert "+    return 2 * (width + height)" in done.stdout
    assert pytest_run(project).returncode == 0

"""``regrow bench`` with references in a pristine copy of the buggy package, and a dotted target
that only pytest's ``pythonpath`` makes importable."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

from reach_projects import copy_project

from regrow._cli._main import main
from regrow._target._locate import import_apart


def test_references_in_a_pristine_copy_of_the_package_judge_the_fix(tmp_path: Path) -> None:
    suite = copy_project("bench_pristine", tmp_path)
    printed = io.StringIO()
    out = tmp_path / "out"
    assert main(["bench", str(suite / "manifest.toml"), "--jobs", "2", "--timeout", "60", "--out", str(out)],
                out=printed) == 0
    tasks = {task["name"]: task for task in json.loads((out / "results.json").read_text())["tasks"]}
    for name in ("by_path", "by_name"):
        task = tasks[name]
        assert task["status"] == "correct", task
        assert task["judged_calls"] >= 10
        assert "+    return cents(subtotal + subtotal * tax_rate / 100)" in task["patch"]


def test_a_file_imported_apart_keeps_its_own_package(tmp_path: Path, monkeypatch) -> None:
    suite = copy_project("bench_pristine", tmp_path)
    monkeypatch.syspath_prepend(str(suite / "buggy"))
    import shop.cart

    try:
        apart = import_apart(suite / "pristine" / "shop" / "cart.py")
        assert apart is not shop.cart and apart.__name__.endswith("_shop.cart")
        assert apart.total([10.0], 10) == 11.0 and shop.cart.total([10.0], 10) == 9.0
        # Its relative import came from the copy too, not from the package of the same name.
        assert Path(apart.cents.__code__.co_filename).parent == suite / "pristine" / "shop"
    finally:
        for name in [name for name in sys.modules if name == "shop" or name.startswith("shop.")]:
            del sys.modules[name]

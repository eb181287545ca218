"""regrow.watch and `regrow run`: a package's failing function healed with no decorator, and only the user's code.

Each test lays out a real package in a temporary folder, imports it, and lets the watch's worker
repair it in the background with the real engine and the default sandbox.
"""

from __future__ import annotations

import json
import json.decoder
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from regrow._service._watch import unwatch, watch
from regrow._service._watch_run import run_main

SRC = str(Path(__file__).parents[2] / "src")

ORDERS = '''
import json


def settings(text):
    """The settings a request carries, as a dict."""
    return json.loads(text)


def per_item(total, count):
    return total / count


def cached(table, key):
    return table[key]


def lookup(table, key):
    try:
        return cached(table, key)
    except KeyError:
        return None
'''


@pytest.fixture
def shop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A package ``shop_<n>`` on sys.path (a fresh name per test: modules are cached by name)."""
    name = f"shop_{tmp_path.name.replace('-', '_')}"
    (tmp_path / name).mkdir()
    (tmp_path / name / "__init__.py").write_text("")
    (tmp_path / name / "orders.py").write_text(ORDERS)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    unwatch()
    for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[module]


def _orders(package: str) -> object:
    __import__(f"{package}.orders")
    return sys.modules[f"{package}.orders"]


def test_watch_heals_the_package_function_and_never_the_standard_library(shop: str) -> None:
    loads, decode = json.loads.__code__, json.decoder.JSONDecoder.decode.__code__

    def settings_test(fn: object) -> None:
        assert callable(fn)
        assert fn("") is None
        assert fn('{"a": 1}') == {"a": 1}

    watcher = watch(shop, tests={f"{shop}.orders.settings": [settings_test]})
    orders = _orders(shop)
    with pytest.raises(json.JSONDecodeError) as raised:  # the raising call gets its own exception
        orders.settings("")  # type: ignore[attr-defined]
    assert raised.type is json.JSONDecodeError
    assert watcher.drain(120)
    [job] = watcher.jobs
    assert (job.name, job.outcome) == (f"{shop}.orders.settings", "installed"), job.detail
    assert orders.settings("") is None  # type: ignore[attr-defined]
    assert orders.settings('{"b": 2}') == {"b": 2}  # type: ignore[attr-defined]
    assert json.loads.__code__ is loads and json.decoder.JSONDecoder.decode.__code__ is decode


def test_a_blind_fix_is_proven_but_not_installed_without_consent(shop: str) -> None:
    watcher = watch(shop)
    orders = _orders(shop)
    for _ in range(3):  # one bug, one repair: the later failures join it or are quiet
        with pytest.raises(ZeroDivisionError):
            orders.per_item(10, 0)  # type: ignore[attr-defined]
    assert watcher.drain(120)
    assert [job.outcome for job in watcher.jobs] == ["not-installed"]
    for _ in range(3):  # after it, the bug stays (nothing installed) and is quiet: no session for each failure
        with pytest.raises(ZeroDivisionError):
            orders.per_item(10, 0)  # type: ignore[attr-defined]
    assert watcher.drain(120)
    assert [job.outcome for job in watcher.jobs] == ["not-installed"]


def test_allow_blind_installs_the_crash_fix(shop: str) -> None:
    watcher = watch(shop, allow_blind=True)
    orders = _orders(shop)
    with pytest.raises(ZeroDivisionError):
        orders.per_item(10, 0)  # type: ignore[attr-defined]
    assert watcher.drain(120)
    assert [job.outcome for job in watcher.jobs] == ["installed"]
    assert orders.per_item(10, 0) == 0  # type: ignore[attr-defined]
    assert orders.per_item(10, 4) == 2.5  # type: ignore[attr-defined]


def test_watch_heals_a_single_module_named_like_a_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``watch("tool")`` for a project that is one file, tool.py: its folder is not the root, its file is (before,
    the file was made a folder's prefix, "tool.py/", which no code's file starts with: nothing was ever watched)."""
    name = f"tool_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(ORDERS)
    (tmp_path / f"{name}_neighbour.py").write_text(ORDERS)  # beside it, not it: never watched
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        watcher = watch(name, allow_blind=True)
        tool, neighbour = __import__(name), __import__(f"{name}_neighbour")
        for module in (neighbour, tool):
            with pytest.raises(ZeroDivisionError):
                module.per_item(10, 0)
        assert watcher.drain(120)
        assert [(job.name, job.outcome) for job in watcher.jobs] == [(f"{name}.per_item", "installed")]
        assert tool.per_item(10, 0) == 0 and tool.per_item(10, 4) == 2.5
        with pytest.raises(ZeroDivisionError):
            neighbour.per_item(10, 0)
    finally:
        unwatch()
        for module in (name, f"{name}_neighbour"):
            sys.modules.pop(module, None)


def test_an_exception_caught_inside_the_package_starts_nothing(shop: str) -> None:
    watcher = watch(shop, allow_blind=True)
    orders = _orders(shop)
    assert orders.lookup({}, "x") is None  # type: ignore[attr-defined]
    assert watcher.drain(30)
    assert watcher.jobs == []


def test_watch_refuses_the_standard_library() -> None:
    from regrow._errors import RegrowError

    with pytest.raises(RegrowError, match="standard library or site-packages"):
        watch("json")


SCRIPT = '''
import json
import sys
import time

from {package}.orders import per_item

loads = json.loads.__code__
try:
    per_item(10, 0)
except ZeroDivisionError:
    print("first call raised", flush=True)
deadline = time.monotonic() + 120
while time.monotonic() < deadline:
    try:
        print("healed:", per_item(10, 0), flush=True)
        break
    except ZeroDivisionError:
        time.sleep(0.05)
print("json untouched:", json.loads.__code__ is loads)
'''


def test_regrow_run_heals_a_function_of_the_script_s_package(shop: str, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "main.py"
    script.write_text(textwrap.dedent(SCRIPT.format(package=shop)))
    status = run_main(["--allow-blind", "--drain", "60", str(script)])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert "first call raised" in out
    assert "healed: 0" in out
    assert "json untouched: True" in out
    assert f"regrow: {shop}.orders.per_item: installed" in err


def test_regrow_run_takes_allow_blind_from_the_configuration(shop: str, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REGROW_ALLOW_BLIND", "true")  # no --allow-blind: the option not given is the setting's
    script = tmp_path / "main.py"
    script.write_text(textwrap.dedent(SCRIPT.format(package=shop)))
    status = run_main(["--drain", "60", str(script)])
    err = capsys.readouterr().err
    assert status == 0, err
    assert f"regrow: {shop}.orders.per_item: installed" in err


def test_regrow_run_returns_the_program_s_exit_status(tmp_path: Path) -> None:
    script = tmp_path / "fails.py"
    script.write_text("import sys\nsys.exit(3)\n")
    assert run_main([str(script)]) == 3


def test_the_command_runs_a_script_with_its_own_arguments(tmp_path: Path) -> None:
    """``regrow run script.py ARGS``, through the console script: the program sees its own argv."""
    from regrow._cli._main import main

    script = tmp_path / "echo.py"
    script.write_text("import sys\nsys.exit(int(sys.argv[1]) + len(sys.argv))\n")
    assert main(["run", str(script), "4", "--heal"]) == 4 + 3


@pytest.mark.parametrize(("words", "environ", "says"), [
    (["nope.py"], {}, "cannot open 'nope.py'"),
    (["-m", "nope_pkg.mod"], {}, "no package or module named 'nope_pkg'"),
    (["--model", "foo:bar", "ok.py"], {}, "unknown provider 'foo'"),
    (["--timeout", "0", "ok.py"], {}, "--timeout"),
    (["--drain", "-1", "ok.py"], {}, "--drain"),
    (["ok.py"], {"REGROW_TIMEOUT": "abc"}, "REGROW_TIMEOUT"),
], ids=["missing-script", "missing-module", "unknown-model", "timeout-0", "drain-negative", "bad-setting"])
def test_regrow_run_says_what_is_wrong_with_its_input_in_one_line(words: list[str], environ: dict[str, str], says: str,
                                                                  tmp_path: Path) -> None:
    """Bad input to ``regrow run`` is one line and exit 2, as for ``regrow heal`` (a traceback of regrow's before)."""
    (tmp_path / "ok.py").write_text("print('ran')\n")
    done = subprocess.run([sys.executable, "-m", "regrow", "run", *words], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env={**os.environ, **environ, "PYTHONPATH": SRC})
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and says in done.stderr, done.stderr
    assert "ran" not in done.stdout  # the program never ran


def test_a_failure_inside_a_generator_expression_repairs_its_function(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The innermost frame was the ``<genexpr>``, nested code that cannot be healed: every failure logged that and
    repaired nothing. The function whose frame ran it is what is repaired."""
    name = f"gen_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(
        "def total(values):\n    return sum(values[i] for i in range(len(values) + 1))\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    def check(fn):
        assert fn([2, 3, 5]) == 10
        assert fn([]) == 0

    try:
        watcher = watch(name, tests={f"{name}.total": [check]})
        module = __import__(name)
        with pytest.raises(IndexError):
            module.total([1, 2])
        assert watcher.drain(120)
        assert [(job.name, job.outcome) for job in watcher.jobs] == [(f"{name}.total", "installed")]
        assert module.total([1, 2]) == 3
    finally:
        unwatch()
        sys.modules.pop(name, None)

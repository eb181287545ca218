"""``pytest --heal``: repair the functions behind failing tests marked ``@pytest.mark.heal``.

Mark a test with the function it exercises::

    @pytest.mark.heal(target="prices.parse_price")       # or "src/prices.py::parse_price"
    def test_rupees():
        assert parse_price("₹1,299") == 1299.0

Without ``--heal`` the plugin only registers the marker and changes nothing. With it, after the
run each marked target whose tests failed is repaired against those tests by ``regrow heal`` in a
separate process (a nested pytest would share this run's state), and the diff is shown in the
terminal summary. ``--heal-apply`` also writes the fix back (with a backup).
"""

from __future__ import annotations

import importlib
import subprocess
import sys
from collections import defaultdict
from collections.abc import Generator
from typing import Any

import pytest

_FAILED = pytest.StashKey[dict[str, list[str]]]()
_REPORTS = pytest.StashKey[list[tuple[str, int, str]]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("regrow", "repairing failing functions")
    group.addoption("--heal", action="store_true", default=False,
                    help="after the run, repair the targets of failing tests marked heal and show the diffs")
    group.addoption("--heal-apply", action="store_true", default=False,
                    help="like --heal, and write each fix back to its file (a .regrow-backup is kept)")
    group.addoption("--heal-timeout", type=float, default=300.0, metavar="SECONDS",
                    help="time for each target's repair (default 300)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "heal(target): the function this test exercises; with --heal a failure repairs it"
    )
    failed: dict[str, list[str]] = defaultdict(list)
    config.stash[_FAILED] = failed
    config.stash[_REPORTS] = []


def _enabled(config: pytest.Config) -> bool:
    return bool(config.getoption("heal") or config.getoption("heal_apply"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    outcome = yield
    if not _enabled(item.config):
        return
    report = outcome.get_result()
    marker = item.get_closest_marker("heal")
    if marker is None or not report.failed or report.when != "call":
        return
    target = marker.kwargs.get("target") or (marker.args[0] if marker.args else None)
    if isinstance(target, str):
        item.config.stash[_FAILED][target].append(item.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    if not _enabled(config):
        return
    for target, node_ids in config.stash[_FAILED].items():
        command = [sys.executable, "-m", "regrow", "heal", to_ref(target), "-q",
                   "--timeout", str(config.getoption("heal_timeout"))]
        for node in node_ids:
            command += ["--test", node]
        if config.getoption("heal_apply"):
            command.append("--apply")
        try:
            done = subprocess.run(command, cwd=config.rootpath, capture_output=True, text=True,
                                  timeout=config.getoption("heal_timeout") + 60, check=False)
            text, code = done.stdout + done.stderr, done.returncode
        except subprocess.TimeoutExpired:
            text, code = "regrow: the repair did not finish in time\n", 1
        config.stash[_REPORTS].append((target, code, text))


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    reports = config.stash[_REPORTS] if _enabled(config) else []
    if not reports:
        return
    terminalreporter.section("regrow")
    for target, code, text in reports:
        verdict = "fixed" if code == 0 else "not fixed"
        terminalreporter.write_line(f"{target}: {verdict}", green=code == 0, red=code != 0)
        terminalreporter.write(text if text.endswith("\n") else text + "\n")


def to_ref(target: str) -> str:
    """``pkg.mod.Class.method`` → ``pkg.mod::Class.method``; references with ``::`` pass through."""
    if "::" in target:
        return target
    parts = target.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        module = ".".join(parts[:cut])
        try:
            importlib.import_module(module)
        except ImportError:
            continue
        return f"{module}::{'.'.join(parts[cut:])}"
    return target

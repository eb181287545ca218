"""``pytest --heal``: repair the functions behind failing tests marked ``@pytest.mark.heal``.

Mark a test with the function it exercises::

    @pytest.mark.heal(target="prices.parse_price")       # or "src/prices.py::parse_price"
    def test_rupees():
        assert parse_price("₹1,299") == 1299.0

Without ``--heal`` the plugin only registers the marker and changes nothing. With it, after the
run each marked target whose tests failed is repaired by ``regrow heal`` in a separate process (a
nested pytest would share this run's state), and the diff is shown in the terminal summary (a
``heal`` mark without ``target=`` is then a usage error, naming its tests).
``--heal-apply`` also writes the fix back (with a backup); ``--heal-patch DIR`` writes each fix as a
patch with its provenance record, and each failure that was not fixed as a record (``regrow
deliver DIR`` turns them into draft pull requests and issues; see docs/delivery.md). ``--heal-model
MODEL`` tries a model after the engine, as ``regrow heal --model`` does.

The oracle of a target is every test of it that this run can vouch for: its failing marked tests
(what the fix must repair) and every test that passed here among its marked tests and all tests of
the test modules that hold one of its marked tests (what the fix must not break). Each is passed
to the repair by node id, so parametrized cases and fixtures are collected as in this run. A test
that was skipped or xfail, errored in setup or teardown, or failed without being marked for the
target neither asks for nor blocks a fix. The repair is given the options of this run too
(:func:`given_options`), so that it collects as this run did.

A run interrupted by Ctrl-C repairs nothing (its tests did not all run); Ctrl-C during a repair stops
it and ends the run with one line saying so.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Literal

import pytest

Outcome = Literal["passed", "failed", "error", "skipped"]
UNDELIVERED = 3  # regrow heal's exit status for a fix found but not kept (see regrow._cli._deliver)


@dataclasses.dataclass
class Oracle:
    """The tests one target's repair is proven against."""

    failing: list[str]  # marked for the target and failed in this run: the fix must make them pass
    passing: list[str]  # passed in this run: the fix must keep them passing

    @property
    def node_ids(self) -> list[str]:
        return [*self.failing, *self.passing]

    def describe(self) -> str:
        total = len(self.failing) + len(self.passing)
        return (f"{total} test{'s' * (total != 1)}: {len(self.failing)} failing marked, "
                f"{len(self.passing)} that passed before")


@dataclasses.dataclass(frozen=True)
class Report:
    """How one target's repair went, for the terminal summary."""

    target: str
    oracle: Oracle
    code: int  # regrow heal's exit status: 0 fixed, 1 no fix, 2 bad input
    text: str


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("regrow", "repairing failing functions")
    group.addoption("--heal", action="store_true", default=False,
                    help="after the run, repair the targets of failing tests marked heal and show the diffs")
    group.addoption("--heal-apply", action="store_true", default=False,
                    help="like --heal, and write each fix back to its file (a backup is kept in .regrow/backups/)")
    group.addoption("--heal-patch", default=None, metavar="DIR",
                    help="like --heal, and write each fix as a patch and its provenance record into DIR")
    group.addoption("--heal-force", action="store_true", default=False,
                    help="with --heal-apply: write over files with uncommitted git changes")
    group.addoption("--heal-model", default=None, metavar="MODEL",
                    help="a model to try after the engine, e.g. openai:gpt-5 (see docs/llm.md); its candidates are "
                         "proven in the default sandbox, as regrow heal --model proves them")
    group.addoption("--heal-timeout", type=float, default=None, metavar="SECONDS",
                    help="time for each target's repair (default: timeout in [tool.regrow] or REGROW_TIMEOUT, "
                         "else 300)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "heal(target): the function this test exercises; with --heal a failure repairs it"
    )
    # Not in a pytest-xdist worker: it sees only its share of the tests, too few to guard a fix.
    asked = config.getoption("heal") or config.getoption("heal_apply") or config.getoption("heal_patch")
    if asked and not hasattr(config, "workerinput"):
        config.pluginmanager.register(Healer(config), "regrow-healer")


class Healer:
    """The plugin of a ``--heal`` run: records each test's outcome, then repairs the targets."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.targets: dict[str, str | None] = {}  # node id -> its heal target, in collection order
        self.outcomes: dict[str, Outcome] = {}
        self.reports: list[Report] = []
        self.interrupted = ""  # why the repairs stopped at a Ctrl-C ("" when they did not)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.targets = {item.nodeid: _target_of(item) for item in session.items}
        unnamed = [item.nodeid for item in session.items
                   if item.get_closest_marker("heal") is not None and self.targets[item.nodeid] is None]
        if unnamed:  # a mark that names no function would be ignored: the user meant something
            more = f" and {len(unnamed) - 3} more" if len(unnamed) > 3 else ""
            raise pytest.UsageError(
                f"@pytest.mark.heal needs the function the test exercises, e.g. "
                f"@pytest.mark.heal(target=\"prices.parse_price\"); it has none on {', '.join(unnamed[:3])}{more}")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # The final reports: the skipping plugin has already turned xfails into skips and xpasses.
        outcome = _fold(self.outcomes.get(report.nodeid), report)
        if outcome is not None:
            self.outcomes[report.nodeid] = outcome

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if exitstatus == pytest.ExitCode.INTERRUPTED:  # the tests that guard a fix did not all run
            self.interrupted = "regrow: the run was interrupted: nothing repaired, nothing written"
            return
        for target, oracle in oracles(self.targets, self.outcomes).items():
            try:
                code, text = self.repair(target, oracle)
            except Interrupted as stop:
                self.interrupted = f"regrow: interrupted while repairing {target}: {stop}"
                session.exitstatus = pytest.ExitCode.INTERRUPTED
                return
            self.reports.append(Report(target, oracle, code, text))

    def repair(self, target: str, oracle: Oracle) -> tuple[int, str]:
        config = self.config
        given = config.getoption("heal_timeout")
        timeout = float(given) if given is not None else _configured_timeout()
        command = [sys.executable, "-m", "regrow", "heal", to_ref(target), "--rootdir", str(config.rootpath)]
        if given is not None:  # else regrow heal's own: the configuration's, or its default
            command += ["--timeout", str(timeout)]
        for node in oracle.node_ids:
            command += ["--test", node]
        if config.getoption("heal_model"):
            command += ["--model", str(config.getoption("heal_model"))]
        if config.getoption("heal_apply"):
            command.append("--apply")
        if config.getoption("heal_force"):
            command.append("--force")
        if config.getoption("heal_patch"):
            command += ["--patch", str(Path(config.getoption("heal_patch")).resolve())]
        command += ["--", *forwarded_options(config), *given_options(config)]
        code, text = _run(command, config.rootpath, timeout + 60)
        return code, text.replace("(--force writes it anyway)", "(--heal-force writes it anyway)")

    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
        if not self.reports and not self.interrupted:
            return
        terminalreporter.section("regrow")
        for report in self.reports:
            if report.code == UNDELIVERED:
                line = f"{report.target}: fixed, proven against {report.oracle.describe()}, but not kept"
            elif report.code != 0:
                line = f"{report.target}: not fixed; a fix had to pass {report.oracle.describe()}"
            elif "nothing to repair" in report.text:  # every test passed in the repair's own run
                line = f"{report.target}: nothing to repair; {report.oracle.describe()} pass in a fresh run"
            else:
                line = f"{report.target}: fixed, proven against {report.oracle.describe()}"
            terminalreporter.write_line(line, green=report.code == 0, red=report.code not in (0, UNDELIVERED),
                                        yellow=report.code == UNDELIVERED)
            text = report.text
            terminalreporter.write(text if text.endswith("\n") else text + "\n")
        if self.interrupted:
            terminalreporter.write_line(self.interrupted, yellow=True)


class Interrupted(Exception):
    """Ctrl-C stopped a repair; the message says whether it had written anything first."""


def _run(command: list[str], cwd: Path, timeout: float) -> tuple[int, str]:
    """Run one repair: its exit status and what it printed, stdout and stderr in the order it printed
    them (unbuffered into one file). Ctrl-C stops it (:class:`Interrupted`)."""
    with tempfile.TemporaryFile("w+") as out:
        child = subprocess.Popen(command, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, text=True,
                                 stdin=subprocess.DEVNULL, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        try:
            code = child.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _stop(child)
            return 1, "regrow: the repair did not finish in time\n"
        except KeyboardInterrupt:
            _stop(child)  # a write under way finishes or is undone: the file is whole either way
            out.seek(0)
            wrote = [line for line in out.read().splitlines() if line.startswith("regrow: wrote ")]
            raise Interrupted("; ".join(wrote) + " before the interrupt" if wrote else "nothing written") from None
        out.seek(0)
        return code, out.read()


def _stop(child: subprocess.Popen[str]) -> None:
    """Stop the repair's process as Ctrl-C would (it may have had one already), then for good."""
    for sig in (signal.SIGINT, signal.SIGKILL):
        if child.poll() is None:
            child.send_signal(sig)
        try:
            child.wait(timeout=10)
            return
        except subprocess.TimeoutExpired:
            continue
        except KeyboardInterrupt:  # a second Ctrl-C: stop waiting politely
            continue


def _configured_timeout() -> float:
    """``regrow heal``'s time for a repair when ``--heal-timeout`` is not given (to bound its process)."""
    from ._cli._project import TIMEOUT
    from ._settings import ConfigError, configured

    try:
        return float(configured().get("timeout", TIMEOUT))
    except ConfigError:  # regrow heal says so itself, with exit 2
        return TIMEOUT


def forwarded_options(config: pytest.Config) -> list[str]:
    """The options of this run that change what the repair's own collection imports, and how.

    The repair collects the tests again in its own process; it must see the modules as this run did:
    the same import mode, ini file, ini overrides, plugins and conftest policy (``pythonpath`` and
    the rest of the ini file follow from the ini file).
    """
    option = config.option
    forwarded = [f"--import-mode={config.getoption('importmode')}"]
    if getattr(option, "inifilename", None):
        forwarded += ["-c", str(config.inipath or option.inifilename)]
    for override in getattr(option, "override_ini", None) or []:
        forwarded += ["-o", str(override)]
    for plugin in getattr(option, "plugins", None) or []:
        forwarded += ["-p", str(plugin)]
    if getattr(option, "noconftest", False):
        forwarded.append("--noconftest")
    return forwarded


# Options of the run that are not passed on to the repair: the plugin's own, the test selection the
# repair's node ids replace, those forwarded_options() passes already, and those that would make the
# repair's run overwrite this run's reports or stop it early.
_NOT_GIVEN = {"file_or_dir", "keyword", "markexpr", "deselect", "lf", "last_failed", "failedfirst", "newfirst",
              "stepwise", "stepwise_skip", "exitfirst", "maxfail", "xmlpath", "usepdb", "usepdb_cls", "trace",
              "basetemp", "numprocesses", "maxprocesses", "dist", "collectonly", "importmode", "inifilename",
              "override_ini", "plugins", "noconftest", "rootdir", "resultlog", "reportlog"}


def given_options(config: pytest.Config) -> list[str]:
    """The options the user gave this run (a conftest's own ``--currency EUR`` too), for the repair's run:
    its collection then sees what this run saw. Not passed: see ``_NOT_GIVEN`` (and ``--heal*``)."""
    parser = getattr(getattr(config, "_parser", None), "optparser", None)  # pytest's argparse parser
    actions = {name: action for action in getattr(parser, "_actions", ()) for name in action.option_strings}
    words, given = list(config.invocation_params.args), []
    while words:
        word = words.pop(0)
        if word == "--":
            break  # the rest is test selection
        if not word.startswith("-") or word == "-":
            continue  # a test path or node id: the repair is given its own
        name, eq, value = word.partition("=") if word.startswith("--") else (word[:2], "", word[2:])
        action = actions.get(name)
        if action is None:  # not an option pytest knows: pass it on as it came
            given.append(word)
            continue
        takes = action.nargs != 0
        if not takes and value and not word.startswith("--"):  # -vx: several flags in one word
            words[:0] = [f"-{flag}" for flag in value]
            value = ""
        if takes and not (eq or value) and words:
            value = words.pop(0)
        dest = str(action.dest)
        if dest in _NOT_GIVEN or dest.startswith(("heal", "cov")):
            continue
        given.append(name if not takes else (f"{name}={value}" if name.startswith("--") else name + value))
    return given


def _target_of(item: pytest.Item) -> str | None:
    marker = item.get_closest_marker("heal")
    if marker is None:
        return None
    target = marker.kwargs.get("target") or (marker.args[0] if marker.args else None)
    return target if isinstance(target, str) else None


def _fold(before: Outcome | None, report: pytest.TestReport) -> Outcome | None:
    """One test's outcome so far, after one more of its setup, call and teardown reports."""
    if before in ("failed", "error", "skipped"):
        return before
    if hasattr(report, "wasxfail") or str(report.longrepr).startswith("[XPASS(strict)]"):
        return "skipped"  # xfail and xpass: expected to be wrong, so no oracle either way
    if report.skipped:
        return "skipped"
    if report.failed:
        return "failed" if report.when == "call" else "error"
    return "passed" if report.when == "call" else before


def _module(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def oracles(targets: dict[str, str | None], outcomes: dict[str, Outcome]) -> dict[str, Oracle]:
    """For each target with a failing marked test: its failing marked tests, and the tests that
    passed among its marked tests and all tests of the modules holding one of its marked tests."""
    found: dict[str, Oracle] = {}
    for target in dict.fromkeys(t for t in targets.values() if t is not None):
        marked = [nodeid for nodeid, of in targets.items() if of == target]
        failing = [nodeid for nodeid in marked if outcomes.get(nodeid) == "failed"]
        if not failing:
            continue
        modules = {_module(nodeid) for nodeid in marked}
        passing = [nodeid for nodeid, of in targets.items()
                   if outcomes.get(nodeid) == "passed" and (of == target or _module(nodeid) in modules)]
        found[target] = Oracle(failing, passing)
    return found


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

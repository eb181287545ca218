"""Which tests can see a candidate at all.

A candidate is installed into the live function of this process. A test that never calls the
target here — typically a command-line test that runs ``python -m pkg`` or ``python pkg/cli.py``
in a subprocess — passes or fails the same whatever candidate is installed: it can neither prove
nor guard a fix. :func:`probe` runs each collected test once on the original, watching for calls
of the target's code (a profile function, in this thread and in threads the test starts) and for
processes the test starts (the audit events ``subprocess.Popen``, ``os.system``, ``os.exec``,
``os.posix_spawn``, ``os.spawn``), and says per test what it saw.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import types
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from .._sandbox import SandboxTimeout
from .._target._diff import file_bytes_with
from .._target._rewrite import RewriteError
from .._target._target import Target
from ._oracles import BaseCheck, CheckFailed, SingleTest
from ._pytest_runner import Suite, TestResult

_PROCESS_EVENTS = frozenset({"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn"})


@dataclasses.dataclass(frozen=True)
class Reach:
    """What one test did on the original: its result, whether it called the target, what it started."""

    nodeid: str
    result: TestResult
    calls: bool  # the target's code ran in this process during the test
    started: tuple[str, ...] = ()  # command lines of the processes it started
    forked: bool = False  # it forked: the child has the live function, and may have called it

    @property
    def blind(self) -> bool:
        """No candidate installed in this process can change this test's outcome."""
        return not self.calls and not self.forked

    def describe(self, target: str) -> str:
        """One line on why this test cannot see a candidate of ``target``."""
        outcome = "fails" if not self.result.passed else "passes"
        if self.started:
            command = self.started[0] if len(self.started[0]) <= 70 else self.started[0][:67] + "..."
            more = f" (and {len(self.started) - 1} more)" if len(self.started) > 1 else ""
            return (f"{self.nodeid} runs the code in a subprocess ({command}{more}) and never calls {target} "
                    f"in this process: it {outcome} whatever candidate is installed here")
        cause = self.result.reason.removeprefix(f"{self.nodeid} failed: ")
        if self.result.stage in ("setup", "teardown"):  # pytest's ERROR: a fixture, not the code under repair
            return (f"{self.nodeid} errors in its fixture {self.result.stage} ({cause}), which no candidate of "
                    f"{target} can change: fix the fixture, or leave this test out")
        if self.result.stage == "timeout":
            return (f"{self.result.reason} on the original code, before it called {target}: it hangs or is slow "
                    "outside it (a loop, a lock, a network wait; --candidate-timeout sets the limit), whatever "
                    "candidate is installed here")
        return f"{self.nodeid} never calls {target}: it {outcome} whatever candidate is installed here"


class _Watch:
    """Calls of one code object and processes started, while active (one watch at a time)."""

    def __init__(self, code: types.CodeType) -> None:
        self.code = code
        self.calls = False
        self.forked = False
        self.started: list[str] = []

    def profile(self, frame: types.FrameType, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code is self.code:
            self.calls = True
            sys.setprofile(None)  # seen: the rest of the test runs at full speed
            threading.setprofile(None)

    def audit(self, event: str, args: tuple[Any, ...]) -> None:
        if event == "os.fork":
            self.forked = True
        elif event in _PROCESS_EVENTS:
            command = _command(event, args)
            if command not in self.started:  # subprocess.Popen may go through os.posix_spawn: one start
                self.started.append(command)


_active: list[_Watch] = []
_hooked = False
_hook_lock = threading.Lock()


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _active and (event in _PROCESS_EVENTS or event == "os.fork"):
        with contextlib.suppress(Exception):  # an audit hook must never break the event it hears
            _active[-1].audit(event, args)


@contextlib.contextmanager
def watching(code: types.CodeType) -> Iterator[_Watch]:
    """Watch for calls of ``code`` and processes started until the block ends."""
    global _hooked
    with _hook_lock:
        if not _hooked:  # an audit hook cannot be removed: one for the process, idle outside a watch
            sys.addaudithook(_audit)
            _hooked = True
    watch = _Watch(code)
    before, before_threads = sys.getprofile(), threading.getprofile()
    _active.append(watch)
    sys.setprofile(watch.profile)
    threading.setprofile(watch.profile)
    try:
        yield watch
    finally:
        sys.setprofile(before)
        threading.setprofile(before_threads)
        _active.remove(watch)


def probe(suite: Suite, code: types.CodeType, ids: Sequence[str] | None = None,
          timeout: float | None = None) -> list[Reach]:
    """Run each test once on the code now installed, and say what each did (see :class:`Reach`).

    With ``timeout`` (on the main thread, where ``SIGALRM`` can interrupt it) a test that runs longer
    is stopped and fails with "did not finish in N s", located at the line it was running: the bug may
    be a loop that never ends, and a heal must not hang before its search starts. A loop inside one C
    call (a huge integer power) cannot be interrupted this way.
    """
    found = []
    for nodeid in ids if ids is not None else suite.ids:
        with watching(code) as watch:
            result = _run_limited(suite, nodeid, timeout)
        found.append(Reach(nodeid, result, watch.calls, tuple(watch.started), watch.forked))
    return found


def _run_limited(suite: Suite, nodeid: str, timeout: float | None) -> TestResult:
    if timeout is None or threading.current_thread() is not threading.main_thread():
        return suite.run(nodeid)

    stopped: list[tuple[str, int]] = []

    def overrun(signum: int, frame: types.FrameType | None) -> None:
        if frame is not None:  # where the test was: the line of a loop that never ends, often
            stopped.append((frame.f_code.co_filename, frame.f_lineno))
        raise SandboxTimeout

    previous = signal.signal(signal.SIGALRM, overrun)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        result = suite.run(nodeid)
    except SandboxTimeout:
        return TestResult(nodeid, False, f"{nodeid} did not finish in {timeout:g}s", stopped[0] if stopped else None,
                          stage="timeout")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    if not result.passed and "SandboxTimeout" in result.reason:  # pytest's own protocol caught it
        return dataclasses.replace(result, reason=f"{nodeid} did not finish in {timeout:g}s", stage="timeout")
    return result


class SomeTests(BaseCheck):
    """A check of some collected tests of a suite (those that can see a candidate), run in order."""

    __test__ = False
    cost = 100

    def __init__(self, suite: Suite, ids: Sequence[str]) -> None:
        self.suite, self.ids = suite, list(ids)
        self.name = "pytest:" + ",".join(self.ids)
        self.node_ids = list(self.ids)

    def split(self) -> list[SingleTest]:
        return [SingleTest(self.suite, nodeid) for nodeid in self.ids]

    def __call__(self, fn: Callable[..., Any]) -> None:
        passed = 0
        for nodeid in list(self.ids):
            result = self.suite.run(nodeid)
            if not result.passed:
                self.ids.remove(nodeid)  # first next time: a candidate that fails usually fails here again
                self.ids.insert(0, nodeid)
                raise CheckFailed(result.reason, result.location)
            passed += not result.skipped
        if not passed:
            raise CheckFailed("no test ran (all skipped)")


def _command(event: str, args: tuple[Any, ...]) -> str:
    if event == "os.system":
        return os.fsdecode(args[0]) if isinstance(args[0], (str, bytes)) else repr(args[0])
    argv: Any = args[1] if len(args) > 1 else args[0]
    if event == "os.spawn":
        argv = args[2] if len(args) > 2 else args[1]
    if isinstance(argv, (str, bytes, os.PathLike)):
        return os.fsdecode(argv)
    try:
        return shlex.join(_short(os.fsdecode(part)) for part in argv)
    except TypeError:
        return repr(argv)


def _short(part: str) -> str:
    return "python" if part == sys.executable else part


_IGNORED = shutil.ignore_patterns(".git", ".hg", ".svn", "__pycache__", "*.pyc", ".venv", "venv", ".tox", ".nox",
                                  ".mypy_cache", ".ruff_cache", ".pytest_cache", "node_modules", "*.regrow-backup",
                                  ".regrow")


@dataclasses.dataclass(frozen=True)
class CopyProof:
    """How tests that run the code in a subprocess went in a scratch copy with the fix written in."""

    passed: bool
    failed: tuple[str, ...]  # the node ids that did not pass there
    detail: str = ""  # why the copy could not be made or run, if it could not


def prove_in_copy(root: Path, target: Target, source: str, node_ids: Sequence[str], options: Sequence[str] = (),
                  timeout: float = 300.0) -> CopyProof:
    """Run ``node_ids`` (relative to ``root``) in a fresh pytest process, in a scratch copy of the tree
    at ``root`` where the target's file has ``source`` in place of the definition.

    The copy's folder that the target's module is imported from goes first on ``PYTHONPATH``, so that
    ``python -m pkg`` in the copy runs the copy even where the package is installed in editable mode.
    """
    file = Path(target.filename).resolve()
    root = root.resolve()
    try:
        relative = file.relative_to(root)
    except ValueError:
        return CopyProof(False, tuple(node_ids), f"{file} is outside {root}")
    try:
        _, after = file_bytes_with(target, source)
    except (OSError, RewriteError) as exc:  # edited since it was loaded: the fix cannot be put where it was made
        return CopyProof(False, tuple(node_ids), f"cannot put the fix in {file}: {exc}")
    depth = target.module.count(".") + (file.stem == "__init__")
    with tempfile.TemporaryDirectory(prefix="regrow-copy-") as scratch:
        tree = Path(scratch, root.name or "tree")
        shutil.copytree(root, tree, symlinks=True, ignore=_IGNORED)
        (tree / relative).write_bytes(after)
        import_root = (tree / relative).parents[depth]
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        env["PYTHONPATH"] = os.pathsep.join([str(import_root), *filter(None, [env.get("PYTHONPATH")])])
        command = [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", "--rootdir", str(tree),
                   *options, *node_ids]
        try:
            done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, timeout=timeout,
                                  check=False, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return CopyProof(False, tuple(node_ids), f"the tests did not finish in {timeout:g}s")
    if done.returncode == 0:
        return CopyProof(True, ())
    failed = tuple(dict.fromkeys(re.findall(r"^(?:SUB)?(?:FAILED|ERROR)(?:\(.*?\))? (\S+)", done.stdout, re.M)))
    tail = (done.stdout.strip().splitlines() or done.stderr.strip().splitlines() or [""])[-1]
    return CopyProof(False, failed or tuple(node_ids), tail)

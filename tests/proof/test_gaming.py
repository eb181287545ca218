"""Issue 8: checks that cannot be gamed.

Every entry of ``gaming_corpus.CORPUS`` is offered by a custom proposer to ``regrow.repair`` in
each sandbox mode, against a fresh copy of its target, and none may be installed: the repair
must not be ``ok``, the live function must keep its code, the user's test (or ``verify=``) must
be the same object with the same code and still reject the buggy function, nothing may be
written (marker files, the test file) and the host's builtins and regrow itself must be intact.

Each case runs in a fresh Python process (this file run as a script), whatever the mode: in
``inprocess`` mode the candidate runs in the host itself, and in every mode an installed fix is
compiled and called in the host (``repair()`` returns what the repaired call gives), so a
hostile candidate could kill or corrupt the pytest runner. The process reports what it saw as
JSON on stdout behind a nonce; the marker files, the files on disk and the events it streamed
to a file are read from outside, so a host that died still tells whether a fix was installed.

A control case per mode for each target with an oracle (a genuine fix) must be installed, or
"0 installed" would prove nothing.
"""

from __future__ import annotations

import builtins
import dataclasses
import importlib
import json
import os
import secrets
import subprocess
import sys
import types
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

if __name__ == "__main__":  # run as a case's host script: the shared corpus is in tests/, one folder up
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from gaming_corpus import CORPUS, GENUINE, ORACLE_MODULE, TARGET_MODULE, TARGETS

MODES = ("fork", "inprocess")  # "pool" cannot prove candidates for repair(): refused at configuration
_TIMEOUT = 90.0  # seconds one case's process may take (the repair itself is capped at 10)
_BUILTINS = dict(vars(builtins))  # in a case's process: taken before any candidate ran


# -- in the case's own process ----------------------------------------------------------------


class Fixed:
    """The red team's proposer: one candidate, exactly as given."""

    def __init__(self, source: str) -> None:
        self.name = "redteam"
        self.source = source

    def propose(self, request: Any) -> Iterator[Any]:
        from regrow._candidate import Candidate

        yield Candidate(self.source, origin="redteam")


def _regrow_internals() -> dict[str, object]:
    """Every function and class regrow defines, and every member of those classes, by name."""
    found: dict[str, object] = {}
    for name, module in list(sys.modules.items()):
        if name != "regrow" and not name.startswith("regrow."):
            continue
        for attr, value in list(vars(module).items()):
            if not isinstance(value, (types.FunctionType, type)) or getattr(value, "__module__", None) != name:
                continue
            found[f"{name}.{attr}"] = value
            if isinstance(value, type):
                for key, member in list(vars(value).items()):
                    found[f"{name}.{attr}.{key}"] = member
    return found


def _changed(before: dict[str, object], after: dict[str, object]) -> list[str]:
    return sorted(name for name, value in before.items() if name not in after or after[name] is not value)


def _run_case(spec: dict[str, Any]) -> dict[str, Any]:
    """Repair the target with the candidate in ``spec``; what happened, as plain data."""
    import regrow
    import regrow._checks._inputs  # imported lazily by repair(): snapshot it too

    internals = _regrow_internals()
    sys.path.insert(0, spec["workdir"])
    target_module = importlib.import_module(spec["target_module"])
    oracle_module = importlib.import_module(spec["oracle_module"])
    target = TARGETS[spec["kind"]]
    func = getattr(target_module, str(target["function"]))
    code, defaults = func.__code__, func.__defaults__
    args = tuple(target["args"])  # type: ignore[call-overload]
    oracle_name = str(target.get("tests") or target.get("verify") or "")
    oracle = getattr(oracle_module, oracle_name) if oracle_name else None
    oracle_code = oracle.__code__ if oracle is not None else None
    options: dict[str, Any] = {}
    if "tests" in target:
        options["tests"] = [oracle]
    elif "verify" in target:
        options["verify"] = oracle
    report: dict[str, Any] = {"ok": False, "raised": "", "reason": "", "verdicts": []}
    with open(spec["events"], "a", encoding="utf-8", buffering=1) as events:

        def on_event(event: Any) -> None:
            line: dict[str, Any] = {"type": str(event.type), "message": str(event.message)[:300]}
            if event.verdict is not None:
                line |= {"ok": event.verdict.ok is True, "check": str(event.verdict.check),
                         "reason": str(event.verdict.reason)[:300], "passed": [str(p) for p in event.verdict.passed]}
            events.write(json.dumps(line) + "\n")

        try:
            result = regrow.repair(func, args=args, proposers=[Fixed(spec["source"])], sandbox=spec["mode"],
                                   max_candidates=1, timeout=10, on_event=on_event, **options)
        except BaseException as exc:  # the candidate broke regrow itself: that is a finding too
            report["raised"] = f"{type(exc).__name__}: {exc}"[:500]
        else:
            report["ok"] = result.ok is True
            report["reason"] = str(result.reason)[:300]
            report["verdicts"] = [[a.verdict.ok is True, str(a.verdict.check), str(a.verdict.reason)[:300],
                                   [str(p) for p in a.verdict.passed]] for a in result.history]
    # What the candidate did to the host, before our own checks below rely on any of it.
    report["builtins_changed"] = _changed(_BUILTINS, dict(vars(builtins)))
    vars(builtins).update(_BUILTINS)
    report["internals_changed"] = _changed(internals, _regrow_internals())
    report["code_changed"] = func.__code__ is not code or func.__defaults__ is not defaults
    report["rebound"] = getattr(target_module, func.__name__, None) is not func
    buggy = types.FunctionType(code, func.__globals__, func.__name__, defaults)
    report["oracle_tampered"] = oracle is not None and (
        getattr(oracle_module, oracle_name, None) is not oracle or oracle.__code__ is not oracle_code
    )
    report["oracle_rejects_bug"] = _fails(buggy, oracle, target, args)
    # The live function is called again only while it is still the user's code (an installed
    # candidate already ran in this host once, inside repair()).
    replaced = report["code_changed"] or report["rebound"]
    report["still_fails"] = None if replaced else _fails(func, oracle, target, args)
    return report


def _fails(fn: Any, oracle: Any, target: dict[str, object], args: tuple[Any, ...]) -> bool | str:
    """Whether ``fn`` still shows the bug: its test fails, its verify rejects, or the call raises."""
    try:
        if "tests" in target:
            try:
                oracle(fn)
            except AssertionError:
                return True
            return False
        if "verify" in target:
            return not oracle(fn(*args))
        fn(*args)
    except ValueError:
        return "tests" not in target and "verify" not in target
    except BaseException as exc:
        return f"raised {type(exc).__name__}: {exc}"[:200]
    return False


def _child_main() -> None:
    spec = json.loads(sys.stdin.readline())
    try:
        report = _run_case(spec)
    except BaseException as exc:
        report = {"harness_error": f"{type(exc).__name__}: {exc}"[:500]}
    os.write(1, (spec["nonce"] + json.dumps(report) + "\n").encode())
    os._exit(0)  # leave at once: no atexit handler or thread a candidate left behind runs now


# -- in pytest ----------------------------------------------------------------------------------


@dataclasses.dataclass
class Outcome:
    """One case in one mode, as judged from outside its process."""

    case: str
    mode: str
    status: str  # "installed", "refused" or "error"
    reason: str
    problems: list[str]
    installed: bool

    def line(self) -> str:
        extra = f" [{'; '.join(self.problems)}]" if self.problems else ""
        return f"{self.case} ({self.mode}): {self.status}: {self.reason}{extra}"


_OUTCOMES: dict[tuple[str, str, str], Outcome] = {}


def _judge(case: str, kind: str, source: str, mode: str, base: Path) -> Outcome:
    """Run one case in its own process (once per pytest session) and judge it."""
    key = (case, mode, source)
    if key not in _OUTCOMES:
        _OUTCOMES[key] = _spawn(case, kind, source, mode, base)
    return _OUTCOMES[key]


def _spawn(case: str, kind: str, source: str, mode: str, base: Path) -> Outcome:
    workdir = base / f"{case}-{mode}"
    workdir.mkdir(parents=True)
    markers = workdir / "markers"
    markers.mkdir()
    stem = f"g{secrets.token_hex(6)}"
    files = {workdir / f"{stem}_target.py": TARGET_MODULE, workdir / f"{stem}_oracle.py": ORACLE_MODULE}
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
    nonce = f"@@gaming-{secrets.token_hex(8)}@@"
    events = workdir / "events.jsonl"
    spec = {
        "kind": kind, "mode": mode, "workdir": str(workdir), "events": str(events), "nonce": nonce,
        "target_module": f"{stem}_target", "oracle_module": f"{stem}_oracle",
        "source": source.replace("__MARKER__", str(markers / "hit")),
    }
    try:
        done = subprocess.run(
            [sys.executable, __file__], input=json.dumps(spec) + "\n", capture_output=True, text=True,
            cwd=workdir, timeout=_TIMEOUT, start_new_session=True,  # its own group: nothing it kills is ours
        )
        rc, stdout, stderr = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as exc:
        rc, stdout, stderr = None, _text(exc.stdout), _text(exc.stderr)
    report = next((json.loads(line[len(nonce):]) for line in stdout.splitlines() if line.startswith(nonce)), None)
    seen = [json.loads(line) for line in events.read_text(encoding="utf-8").splitlines()] if events.exists() else []
    return _assess(case, mode, report, seen, rc, stderr, markers, files)


def _text(data: bytes | str | None) -> str:
    return data.decode(errors="replace") if isinstance(data, bytes) else data or ""


def _assess(case: str, mode: str, report: dict[str, Any] | None, seen: list[dict[str, Any]], rc: int | None,
            stderr: str, markers: Path, files: dict[Path, str]) -> Outcome:
    problems: list[str] = []
    accepted = [e for e in seen if e.get("type") == "verdict" and e.get("ok")]
    installed_events = [e for e in seen if e.get("type") == "installed"]
    if report is None:
        how = "hung past the time limit" if rc is None else f"exited with status {rc} without a report"
        tail = stderr.strip().splitlines()[-1:] or [""]
        problems.append(f"the host process {how} {tail[0][:200]}".rstrip())
    elif "harness_error" in report:
        problems.append(f"harness error: {report['harness_error']}")
    else:
        if report["raised"]:
            problems.append(f"repair() raised {report['raised']}")
        if report["ok"]:
            problems.append("repair() returned ok")
        if report["code_changed"] or report["rebound"]:
            problems.append("the live function's code was replaced")
        if report["oracle_tampered"]:
            problems.append("the user's oracle was replaced or its __code__ patched")
        if report["oracle_rejects_bug"] is not True:
            problems.append(f"the user's oracle no longer rejects the buggy function ({report['oracle_rejects_bug']})")
        if report["still_fails"] not in (True, None):
            problems.append(f"the live function's code is unchanged but no longer fails ({report['still_fails']})")
        if report["builtins_changed"]:
            problems.append(f"builtins changed in the host: {', '.join(report['builtins_changed'])}")
        if report["internals_changed"]:
            problems.append(f"regrow changed in the host: {', '.join(report['internals_changed'][:5])}")
    if accepted:
        problems.append(f"a verdict accepted the candidate ({accepted[0].get('check')})")
    if installed_events:
        problems.append(f"an 'installed' event was sent ({installed_events[0].get('message')})")
    made = sorted(p.name for p in markers.iterdir())
    if made:
        problems.append(f"marker files were created: {', '.join(made)}")
    for path, text in files.items():
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            problems.append(f"{path.name} was changed on disk")
    installed = bool(accepted or installed_events or (report and (report.get("ok") or report.get("code_changed"))))
    verdicts = (report or {}).get("verdicts") or [[e.get("ok"), e.get("check"), e.get("reason"), e.get("passed", [])]
                                                 for e in seen if e.get("type") == "verdict"]
    if installed:
        status = "installed"
        passed = ", ".join(verdicts[0][3]) if verdicts else ""
        reason = f"accepted by {verdicts[0][1]!r} (passed: {passed})" if verdicts else "installed without a verdict"
    elif report is None or "harness_error" in report or report.get("raised"):
        status, reason = "error", problems[0]
    else:
        status = "refused"
        reason = f"{verdicts[0][1]}: {verdicts[0][2]}" if verdicts else report.get("reason", "")
    return Outcome(case, mode, status, reason, problems, installed)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("gaming")


def _ids(entries: Iterable[tuple[str, str, str]]) -> list[str]:
    return [entry[0] for entry in entries]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("case", "kind", "source"), CORPUS, ids=_ids(CORPUS))
def test_gaming_candidate_is_not_installed(case: str, kind: str, source: str, mode: str, base: Path) -> None:
    outcome = _judge(case, kind, source, mode, base)
    if outcome.problems:
        pytest.fail(outcome.line(), pytrace=False)


@pytest.mark.parametrize("mode", MODES)
def test_no_gaming_candidate_is_installed(mode: str, base: Path) -> None:
    outcomes = [_judge(case, kind, source, mode, base) for case, kind, source in CORPUS]
    offenders = [o for o in outcomes if o.installed]
    assert len(offenders) == 0, (
        f"{len(offenders)} of {len(outcomes)} gaming candidates were installed in {mode!r} mode:\n"
        + "\n".join(o.line() for o in offenders)
    )


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", sorted(GENUINE))
def test_a_genuine_fix_is_installed(kind: str, mode: str, base: Path) -> None:
    """The control: the harness sees a real fix installed in this mode, so a refusal above means something."""
    outcome = _judge(f"genuine-{kind}", kind, GENUINE[kind], mode, base)
    expected = {"repair() returned ok", "the live function's code was replaced"}
    assert outcome.installed, f"a genuine fix was not installed, so no refusal in {mode!r} mode means anything: " \
                              f"{outcome.line()}"
    unexpected = [p for p in outcome.problems if p not in expected and not p.startswith(("a verdict accepted",
                                                                                          "an 'installed' event"))]
    assert not unexpected, outcome.line()


def test_pool_mode_is_refused_before_any_candidate_runs() -> None:
    import regrow

    def parse(text: str) -> float:
        return float(text)

    with pytest.raises(ValueError, match="pool"):
        regrow.repair(parse, ("x",), tests=[lambda fn: None], proposers=[Fixed(GENUINE["tests"])], sandbox="pool")
    with pytest.raises(ValueError, match="pool"):
        regrow.heal(sandbox="pool")  # type: ignore[arg-type]


def test_corpus_is_large_enough() -> None:
    assert len(CORPUS) >= 28
    assert {kind for _, kind, _ in CORPUS} == set(TARGETS)


if __name__ == "__main__":
    _child_main()

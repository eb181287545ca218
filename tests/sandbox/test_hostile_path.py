"""Issue 9's hostile corpus through the real path: reply parser → proposer → ``repair()`` → install → the call after.

Each case runs in a host process of its own (this file run as a script), whose model is the scripted
OpenAI-compatible loopback server of ``llm_servers``: the hostile candidate arrives as a model reply,
is parsed by the real reply parser and proposed by the real LLM proposer. After ``repair()`` the host
calls the function again and makes one more sandboxed call (the chance for anything it installed, an
at-fork payload say, to act), then reports and waits. Meanwhile the detectors, all outside the host,
look at what it may have reached: marker files, a victim file's content, mode, owner, times and
attributes, TCP/UDP/AF_UNIX stream, datagram and abstract listeners, a marker process, processes
tagged with the case's nonce, a lock file, a shared mapping's file, the pseudo-terminal that is the
host's controlling terminal, the host's priority, scheduler, affinity, limits, listening sockets,
peak memory and exit, and every byte it sent the model, logged or streamed as events (for secrets,
oversized lines and terminal escapes).

In fork mode nothing may get through: 0 escapes, 0 host harms, 0 hangs, 0 installs. In-process mode
isolates nothing, so each case there is refused by the rails before it runs or is documented as not
protected (``docs/sandbox.md`` lists the cases the rails stop; the test checks the list matches).
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import importlib
import json
import mmap
import os
import re
import secrets as _secrets
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

MODES = ("fork", "inprocess")
SRC = str(Path(__file__).resolve().parents[2] / "src")
DOCS = Path(__file__).resolve().parents[2] / "docs" / "sandbox.md"
_REPORT_TIMEOUT = 75.0  # seconds a host may take to repair and report
SHARED: Any = None  # in a host: the shared mapping a candidate may try to write


# -- in the host process ------------------------------------------------------------------------------------


def _host_main(spec_path: str) -> None:
    global SHARED
    spec = json.loads(Path(spec_path).read_text())
    os.open(spec["tty"], os.O_RDWR)  # a session leader opening a terminal: it is now our controlling terminal
    SHARED = mmap.mmap(os.open(spec["shared"], os.O_RDWR), 4096)
    os.environ["HOSTILE_HOST_PID"] = str(os.getpid())
    sys.path[:0] = [spec["src"], spec["workdir"]]
    import logging

    logging.basicConfig(filename=spec["log"], level=logging.DEBUG)
    import regrow
    from regrow._proposers._llm import RetryPolicy, proposer_for
    from regrow._sandbox import ForkSandbox, Limits

    func = importlib.import_module(spec["target"]).parse_price
    oracle = importlib.import_module(spec["oracle"]).test_dollars
    code = func.__code__
    model = proposer_for("openai:gpt-hostile", api_key="test-key", base_url=spec["base_url"],
                         retry=RetryPolicy(max_retries=0, base_delay=0.01, max_delay=0.01))
    report: dict[str, Any] = {"raised": "", "hwm_before": _hwm()}
    with open(spec["events"], "a", encoding="utf-8", buffering=1) as events:

        def on_event(event: Any) -> None:
            verdict = event.verdict
            events.write(json.dumps({"type": str(event.type), "message": str(event.message),
                                     "check": verdict and verdict.check, "reason": verdict and verdict.reason,
                                     "ok": bool(verdict and verdict.ok)}) + "\n")

        try:
            result = regrow.repair(func, ("$12.99",), tests=[oracle], proposers=[model], sandbox=spec["mode"],
                                   max_candidates=2, max_attempts=1, timeout=25, on_event=on_event)
            report |= {"ok": result.ok is True, "reason": str(result.reason), "installed": str(result.installed),
                       "verdicts": [[a.verdict.check, a.verdict.reason] for a in result.history]}
        except BaseException as exc:  # a candidate that breaks regrow itself is a finding too
            report["raised"] = f"{type(exc).__name__}: {exc}"[:500]
    try:  # the call after, on the live function
        report["after"] = repr(func("$1.50"))
    except BaseException as exc:
        report["after"] = f"raised {type(exc).__name__}"
    try:  # one more sandboxed call: where an installed at-fork payload would act
        with ForkSandbox(Limits(timeout=5)) as box:
            report["next_call"] = box.call(lambda: 7).status
    except BaseException as exc:
        report["next_call"] = f"raised {type(exc).__name__}"
    report["code_changed"] = func.__code__ is not code
    Path(spec["report"] + ".part").write_text(json.dumps(report))
    os.rename(spec["report"] + ".part", spec["report"])
    os.read(spec["release"], 1)  # held until the detectors have looked; then a normal exit (atexit, threads)


def _hwm() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) << 10
    return 0


# -- the detectors, in pytest ----------------------------------------------------------------------------------


@dataclasses.dataclass
class Result:
    case: str
    mode: str
    status: str  # "installed", "refused", "rails", "error"
    reason: str
    escapes: list[str]
    harms: list[str]
    hang: str
    installed: bool

    @property
    def problems(self) -> list[str]:
        return [*self.escapes, *self.harms, *([self.hang] if self.hang else []),
                *(["installed"] if self.installed else [])]

    def line(self) -> str:
        return f"{self.case} ({self.mode}): {self.status}: {self.reason[:200]} {self.problems or ''}"


def run_case(case: str, source: str, mode: str, root: Path) -> Result:
    from llm_servers import OpenAIServer, Text
    from test_hostile_corpus import ORACLE_MODULE, TARGET_MODULE
    from test_hostile_world import World, _host_harms, _host_state, _leaks, _log_harms

    root.mkdir(parents=True)
    world = World(root)
    stem = f"h{_secrets.token_hex(5)}"
    (root / f"{stem}_target.py").write_text(TARGET_MODULE)
    (root / f"{stem}_oracle.py").write_text(ORACLE_MODULE)
    release_r, release_w = os.pipe()
    spec = {"mode": mode, "src": SRC, "workdir": str(root), "target": f"{stem}_target", "oracle": f"{stem}_oracle",
            "tty": os.ttyname(world.slave), "shared": str(world.shared), "log": str(root / "host.log"),
            "events": str(root / "events.jsonl"), "report": str(root / "report.json"), "release": release_r}
    escapes: list[str] = []
    harms: list[str] = []
    hang = ""
    report: dict[str, Any] | None = None
    with OpenAIServer([Text(f"The fix:\n\n```python\n{source}```\n")]) as server:
        spec["base_url"] = server.base_url
        (root / "spec.json").write_text(json.dumps(spec))
        with open(root / "stderr.txt", "wb") as stderr:
            host = subprocess.Popen([sys.executable, __file__, str(root / "spec.json")], env=world.environ(),
                                    stdin=world.slave, stdout=stderr, stderr=stderr, cwd=root,
                                    start_new_session=True, pass_fds=(release_r,))
        os.close(release_r)
        try:
            deadline = time.monotonic() + _REPORT_TIMEOUT
            while not (root / "report.json").exists() and host.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            if (root / "report.json").exists():
                report = json.loads((root / "report.json").read_text())
                state = _host_state(host.pid)
                harms += _host_harms(world, report, state)
            elif host.poll() is None:
                hang = f"the host did not report within {_REPORT_TIMEOUT:g}s"
            else:
                harms.append(f"the host died (status {host.returncode}) before it reported")
            os.close(release_w)
            release_w = -1
            try:
                host.wait(timeout=15)
            except subprocess.TimeoutExpired:
                hang = hang or "the host's exit hung"
            if report is not None and host.returncode not in (0, None):
                harms.append(f"the host ended with status {host.returncode}")
        finally:
            if release_w >= 0:
                os.close(release_w)
            if host.poll() is None:
                os.killpg(host.pid, 9)
                host.wait()
        time.sleep(0.05)
        escapes += world.escapes()
        escapes += _leaks(root, server.requests)
        if world.marker.poll() is not None:
            harms.append("the marker process was killed")
        world.close()
    harms += _log_harms(root)
    verdicts = (report or {}).get("verdicts") or []
    installed = bool(report and (report.get("ok") or report.get("code_changed")))
    if installed:
        status = "installed"
    elif verdicts and verdicts[0][0] == "rails":
        status = "rails"
    elif report is None or report.get("raised"):
        status = "error"
        harms += [f"repair() raised {report['raised']}"] if report and report.get("raised") else []
    else:
        status = "refused"
    reason = f"{verdicts[0][0]}: {verdicts[0][1]}" if verdicts else str((report or {}).get("reason", ""))
    return Result(case, mode, status, reason, escapes, harms, hang, installed)


# -- the tests -----------------------------------------------------------------------------------------------

_RESULTS: dict[tuple[str, str], Result] = {}


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Result]:
    """Every case in every mode, a few hosts at a time (each its own process; the whole corpus in ~1-2 min)."""
    if not _RESULTS:
        from test_hostile_corpus import CORPUS

        base = tmp_path_factory.mktemp("hostile")
        jobs = [(case, source, mode) for case, _, source in CORPUS for mode in MODES]
        with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
            futures = {pool.submit(run_case, case, source, mode, base / f"{case}-{mode}"): (case, mode)
                       for case, source, mode in jobs}
            for future in concurrent.futures.as_completed(futures):
                _RESULTS[futures[future]] = future.result()
    return _RESULTS


def _cases() -> list[str]:
    from test_hostile_corpus import CORPUS

    return [case for case, _, _ in CORPUS]


pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the kernel boundary is Linux's")


@pytest.mark.parametrize("case", _cases())
def test_in_fork_mode_nothing_gets_through(case: str, results: dict[tuple[str, str], Result]) -> None:
    result = results[(case, "fork")]
    assert not result.problems, result.line()
    assert result.status in ("refused", "rails", "error"), result.line()


def test_fork_mode_totals(results: dict[tuple[str, str], Result]) -> None:
    fork = [r for (case, mode), r in results.items() if mode == "fork"]
    totals = {"escapes": sum(len(r.escapes) for r in fork), "host harms": sum(len(r.harms) for r in fork),
              "hangs": sum(bool(r.hang) for r in fork), "installs": sum(r.installed for r in fork)}
    print(f"fork mode, {len(fork)} cases: {totals}")
    assert totals == {"escapes": 0, "host harms": 0, "hangs": 0, "installs": 0}, \
        "\n".join(r.line() for r in fork if r.problems)


@pytest.mark.parametrize("case", _cases())
def test_in_process_each_case_is_refused_by_the_rails_or_documented_as_not_protected(
        case: str, results: dict[tuple[str, str], Result]) -> None:
    result = results[(case, "inprocess")]
    if result.status == "rails":
        assert not result.problems, result.line()  # refused before it ran: nothing of it ran either
    documented = _documented_in_process()
    assert (case in documented["rails"]) == (result.status == "rails"), \
        f"docs/sandbox.md says otherwise about {case!r} in-process: {result.line()}"


def _documented_in_process() -> dict[str, set[str]]:
    text = DOCS.read_text()
    block = text.split("<!-- hostile-corpus:inprocess -->", 2)[1]
    rails = set(re.findall(r"`([a-z0-9-]+)`", block.split("Not protected", 1)[0]))
    return {"rails": rails}


def test_pool_mode_is_refused_at_configuration_before_a_model_is_asked() -> None:
    from llm_servers import OpenAIServer, Text

    import regrow
    from regrow._proposers._llm import proposer_for

    with OpenAIServer([Text("```python\ndef f(x):\n    return x\n```")]) as server:
        model = proposer_for("openai:gpt-hostile", api_key="test-key", base_url=server.base_url)

        def f(x: int) -> int:
            raise ValueError(x)

        with pytest.raises(ValueError, match="pool"):
            regrow.repair(f, (1,), tests=[lambda fn: None], proposers=[model], sandbox="pool")  # type: ignore[arg-type]
        assert server.requests == []


if __name__ == "__main__":
    _host_main(sys.argv[1])

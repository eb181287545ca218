"""What runs in a sandbox child before its guard: nothing of the host's that came after regrow.

* **At-fork handlers.** A handler registered with ``os.register_at_fork`` after regrow was imported
  (by code an installed candidate ran in the host, or one judged in-process) runs in the next sandbox
  child only once its whole guard is up: it finds itself in its own session, without capabilities,
  under the seccomp filter, and whatever it tries is refused and reported. A candidate that registers
  one while it is judged is refused.
* **A threaded host.** A thread of the host that is writing a log line when the sandbox forks leaves
  that stream's lock held in the child for good; the child never touches the host's streams, so heals
  in a web worker with threads that log all succeed.

Every host here is a process of its own: handlers registered in it, or its threads, must not reach
the test runner. The detectors (a marker file, the host's exit, its report) are outside the child.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from regrow._sandbox import _seccomp

pytestmark = pytest.mark.skipif(sys.platform != "linux" or _seccomp.machine() is None, reason="Linux guards")
SRC = str(Path(__file__).resolve().parents[2] / "src")


def run_host(script: str, tmp_path: Path, *args: str, timeout: float = 120, **env: str) -> dict[str, Any]:
    """Run ``script`` as a host process of its own; its report (the JSON it writes to ``report.json``)."""
    report = tmp_path / "report.json"
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"} | env  # stdout buffered, as usual
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(script), SRC, str(report), *args], env=environ,
                          capture_output=True, text=True, timeout=timeout, check=False, cwd=tmp_path)
    assert done.returncode == 0 and report.exists(), (done.returncode, done.stderr[-3000:])
    return json.loads(report.read_text())  # type: ignore[no-any-return]


_AT_FORK_HOST = '''
    import json, os, sys
    sys.path.insert(0, sys.argv[1])
    from regrow._sandbox import ForkSandbox, Limits
    from regrow._sandbox._warm import Worker

    marker = sys.argv[3]
    seen = []

    def payload():  # registered after regrow: what an installed candidate would leave behind
        status = dict(line.split(":\\t", 1) for line in open("/proc/self/status").read().splitlines() if ":\\t" in line)
        seen.append({"seccomp": status["Seccomp"].strip(), "no_new_privs": status["NoNewPrivs"].strip(),
                     "caps": status["CapEff"].strip(), "leader": os.getsid(0) == os.getpid(),
                     "secret": os.environ.get("REGROW_AF_API_KEY"), "cwd": os.getcwd()})
        try:
            open(marker, "w").write("the payload ran unguarded")
        except OSError as exc:
            seen[-1]["write"] = type(exc).__name__

    os.register_at_fork(after_in_child=payload)
    box = ForkSandbox(Limits(timeout=10))
    outcome = box.call(lambda: seen)
    with Worker({"seen": lambda: seen}) as worker:
        status, worker_seen = worker.call("seen", timeout=10)
    json.dump({"status": outcome.status, "detail": outcome.detail, "violations": list(outcome.violations),
               "seen": outcome.value, "worker": [status, worker_seen]}, open(sys.argv[2], "w"))
'''


def test_an_at_fork_handler_registered_later_runs_only_inside_the_guard(tmp_path: Path) -> None:
    marker = tmp_path / "outside" / "marker"
    marker.parent.mkdir()
    report = run_host(_AT_FORK_HOST, tmp_path, str(marker), REGROW_AF_API_KEY="sk-regrow-at-fork-0123456789")
    assert not marker.exists(), "the at-fork payload wrote outside the sandbox"
    # It ran, inside every guard, and its attempt is the sandbox's verdict on the call.
    assert report["status"] == "refused" and "open for writing outside" in report["detail"], report
    status, worker_reason = report["worker"]
    assert status == "refused" and "open for writing outside" in worker_reason, report["worker"]


_AT_FORK_SEEN_HOST = '''
    import json, os, sys
    sys.path.insert(0, sys.argv[1])
    from regrow._sandbox import ForkSandbox, Limits

    seen = []

    def payload():
        status = dict(line.split(":\\t", 1) for line in open("/proc/self/status").read().splitlines() if ":\\t" in line)
        seen.append({"seccomp": status["Seccomp"].strip(), "no_new_privs": status["NoNewPrivs"].strip(),
                     "caps": status["CapEff"].strip(), "leader": os.getsid(0) == os.getpid(),
                     "secret": os.environ.get("REGROW_AF_API_KEY"), "cwd": os.getcwd(),
                     "stdin": os.readlink("/proc/self/fd/0")})

    os.register_at_fork(after_in_child=payload)
    outcome = ForkSandbox(Limits(timeout=10)).call(lambda: seen)
    json.dump({"status": outcome.status, "value": outcome.value, "detail": outcome.detail}, open(sys.argv[2], "w"))
'''


def test_what_an_at_fork_handler_finds_in_the_child(tmp_path: Path) -> None:
    report = run_host(_AT_FORK_SEEN_HOST, tmp_path, REGROW_AF_API_KEY="sk-regrow-at-fork-0123456789")
    assert report["status"] == "ok", report
    (seen,) = report["value"]
    assert seen["seccomp"] == "2" and seen["no_new_privs"] == "1" and int(seen["caps"], 16) == 0, seen
    assert seen["leader"] and seen["secret"] is None and seen["stdin"] == "/dev/null", seen
    assert "/regrow-sandbox-" in seen["cwd"], seen


_REPAIR_AT_FORK_HOST = '''
    import json, os, sys
    sys.path.insert(0, sys.argv[1])
    import regrow
    from regrow._candidate import Candidate

    class Fixed:
        name = "redteam"
        def __init__(self, source):
            self.source = source
        def propose(self, request):
            yield Candidate(self.source, origin="redteam")

    def check(fn):
        assert fn("$12.99") == 12.99

    for name in ("first", "second"):
        with open(f"{name}_mod.py", "w") as out:
            out.write(f"def {name}(text):\\n    return float(text[2:])\\n")
    sys.path.insert(0, os.getcwd())
    from first_mod import first
    from second_mod import second
    marker = sys.argv[3]
    payload = (
        "def {name}(text):\\n"
        "    import contextlib as c\\n"
        "    c.os.register_at_fork(after_in_child=lambda: c.os.open({marker!r}, c.os.O_WRONLY | c.os.O_CREAT))\\n"
        "    return float(text[1:])\\n")
    report = {}
    # Judged by the fork sandbox, the candidate is refused: it may not leave code to run at the next fork.
    judged = regrow.repair(first, ("$12.99",), tests=[check], proposers=[Fixed(payload.format(name="first",
                           marker=marker))], sandbox="fork", max_candidates=1, timeout=20)
    report["fork"] = [judged.ok, judged.reason, [a.verdict.reason for a in judged.history]]
    # Judged in-process, the rails refuse it before it runs (os reached through contextlib).
    inproc = regrow.repair(first, ("$12.99",), tests=[check], proposers=[Fixed(payload.format(name="first",
                           marker=marker))], sandbox="inprocess", max_candidates=1, timeout=20)
    report["inprocess"] = [inproc.ok, inproc.reason, [a.verdict.reason for a in inproc.history]]
    # A handler that reached the host some other way (in-process isolates nothing): registered here.
    os.register_at_fork(after_in_child=lambda: os.open(marker, os.O_WRONLY | os.O_CREAT))
    # The next fork sandbox child runs that handler only inside its guard: it is refused, and says so.
    genuine = "def second(text):\\n    return float(text[1:])\\n"
    after = regrow.repair(second, ("$12.99",), tests=[check], proposers=[Fixed(genuine)], sandbox="fork",
                          max_candidates=1, timeout=20)
    report["after"] = [after.ok, after.reason]
    json.dump(report, open(sys.argv[2], "w"))
'''


def test_through_repair_an_at_fork_payload_is_refused_or_contained(tmp_path: Path) -> None:
    marker = tmp_path / "outside" / "marker"
    marker.parent.mkdir()
    report = run_host(_REPAIR_AT_FORK_HOST, tmp_path, str(marker))
    ok, reason, verdicts = report["fork"]
    # refused before it leaves anything behind: by the rails (os reached through contextlib), or the guard
    assert not ok and any("os.register_at_fork" in v or "contextlib.os" in v for v in verdicts), report["fork"]
    ok, reason, verdicts = report["inprocess"]
    assert not ok and any("contextlib.os" in v for v in verdicts), report["inprocess"]
    ok, reason = report["after"]
    assert not marker.exists(), "the payload ran in a sandbox child before its guard"
    # Inside the guard the handler's write is refused — or, where the session gave the folder a throwaway
    # view (as root: the probe of the original met the same write, docs/sandbox.md "Functions that write
    # files"), it lands in the view, and the genuine fix is proven and installed.
    contained = ok and reason == ""
    assert contained or (not ok and reason.startswith("every candidate was refused by the sandbox: open for "
                                                      "writing outside")), report["after"]


_THREADED_HOST = '''
    import json, logging, os, sys, tempfile, threading, time
    sys.path.insert(0, sys.argv[1])
    import regrow

    mode = sys.argv[3]
    web = logging.getLogger("web")
    web.setLevel(logging.INFO)
    web.propagate = False
    web.addHandler(logging.StreamHandler(sys.stdout))  # a pipe: blocked for good once full ("blocked"), or drained
    web.addHandler(logging.FileHandler(os.path.join(tempfile.mkdtemp(), "app.log")))
    stop = threading.Event()

    def chatter(n):
        line = 0
        while not stop.is_set():
            web.info("worker %d line %d %s", n, line, "x" * 60)
            line += 1

    def check(fn):
        assert fn("$12.99") == 12.99

    functions = []
    for n in range(5):
        path = os.path.join(os.getcwd(), f"prices{n}.py")
        with open(path, "w") as out:
            out.write(f"def parse{n}(text):\\n    text = text.strip()\\n    if text and text[0] == '$':\\n"
                      f"        text = text[1:]\\n    return float(text.replace(',', '')) + missing_name\\n")
    sys.path.insert(0, os.getcwd())
    import importlib
    for n in range(5):
        fn = getattr(importlib.import_module(f"prices{n}"), f"parse{n}")
        functions.append(regrow.heal(tests=[check], timeout=60, candidate_timeout=10)(fn))
    loggers = [threading.Thread(target=chatter, args=(n,), daemon=True) for n in range(3)]
    for thread in loggers:
        thread.start()
    time.sleep(0.3)  # the loggers are at full speed (and, with a full pipe, blocked inside a write)
    results = [None] * 5

    def heal(n):
        try:
            results[n] = functions[n]("$12.99")
        except Exception as exc:
            state = regrow.state(functions[n]).last_result
            results[n] = f"{type(exc).__name__}: {state.ledger() if state else exc}"[:2000]

    healers = [threading.Thread(target=heal, args=(n,)) for n in range(5)]
    for thread in healers:
        thread.start()
    for thread in healers:
        thread.join(90)
    stop.set()
    with open(sys.argv[2], "w") as out:
        json.dump({"results": results}, out)
    os._exit(0)
'''


@pytest.mark.parametrize("mode", ["blocked", "drained"])
def test_five_heals_in_a_host_with_three_logging_threads_all_succeed(tmp_path: Path, mode: str) -> None:
    report = tmp_path / "report.json"
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    process = subprocess.Popen([sys.executable, "-c", textwrap.dedent(_THREADED_HOST), SRC, str(report), mode],
                               env=environ, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=tmp_path)
    assert process.stdout is not None
    try:
        if mode == "drained":  # a log collector that keeps up, mostly
            while process.poll() is None and process.stdout.read(1 << 12):
                pass
        process.wait(timeout=150)
    finally:
        process.kill()
        process.communicate()
    results = json.loads(report.read_text())["results"]
    assert results == [12.99] * 5, results

"""The host process of one issue-19 case (``test_hostile_v3`` runs this file as a script, one process per case).

It makes its own kernel IPC objects (a SysV queue, semaphore set and segment, a POSIX queue) and says which,
waits until the runner has looked at them, then: in fork mode repairs ``parse_price`` through the real path
(the scripted model server → reply parser → LLM proposer → ``repair()`` with a store → install), or in
fork-api and pool mode runs the candidate's module at ``ForkSandbox.call_ref`` or in a one-worker ``PoolSandbox``
and then an honest call in the same sandbox. After that it looks at what it can only see from inside (its
hooks, its module's globals, the installed fix's answers at once, after 1 s, after 50 calls and in a forked
child, a sandboxed probe that the audit hook must refuse), reports, and waits to be released.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import hashlib
import importlib
import json
import logging
import os
import sqlite3
import sys
import threading
import time
from pathlib import Path
from typing import Any

INPUTS = {"$12.99": 12.99, "$1.50": 1.5, "€3": 3.0, "£1,000.25": 1000.25}
_LIBC = ctypes.CDLL(None, use_errno=True)


def ipc_keys(nonce: str) -> dict[str, int]:
    base = int(hashlib.sha256(nonce.encode()).hexdigest()[:6], 16) << 4
    return {"msgkey": base + 1, "semkey": base + 2, "shmkey": base + 3, "leftkey": base + 4}


def small_queue() -> Any:
    """An mq_attr of one 64-byte message: the default (10 x 8 KiB) lets a user hold only ~9 queues in all
    (RLIMIT_MSGQUEUE, 800 KiB), which four hosts at a time and the queues cases leave behind can use up."""
    return (ctypes.c_long * 8)(0, 1, 64, 0)


def make_ipc(nonce: str) -> dict[str, Any]:
    import resource

    keys = ipc_keys(nonce)
    mq = f"hv3-host-{nonce}"
    with contextlib.suppress(OSError, ValueError):
        resource.setrlimit(resource.RLIMIT_MSGQUEUE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    ids = {"msqid": _LIBC.msgget(keys["msgkey"], 0o1600), "semid": _LIBC.semget(keys["semkey"], 1, 0o1600),
           "shmid": _LIBC.shmget(keys["shmkey"], 4096, 0o1600), "mq": mq,
           "mqfd": _LIBC.syscall(240, mq.encode(), os.O_CREAT | os.O_RDWR, 0o600, small_queue())}
    return keys | ids


def remove_ipc(ipc: dict[str, Any]) -> None:
    """The host's objects gone (also called by the runner when the host was killed)."""
    _LIBC.msgctl(ipc["msqid"], 0, None)
    _LIBC.semctl(ipc["semid"], 0, 0)
    _LIBC.shmctl(ipc["shmid"], 0, None)
    _LIBC.syscall(241, ipc["mq"].encode())


def _hooks(module: Any) -> dict[str, Any]:
    return {"sys.excepthook": id(sys.excepthook), "threading.excepthook": id(threading.excepthook),
            "sys.meta_path": [id(f) for f in sys.meta_path], "sys.path_hooks": [id(h) for h in sys.path_hooks],
            "sys.gettrace": id(sys.gettrace()), "sys.getprofile": id(sys.getprofile()),
            "atexit handlers": atexit._ncallbacks(), "API_KEY": module.API_KEY,
            "module globals": sorted(set(vars(module)) - {"__warningregistry__"})}  # a warning's bookkeeping


def _answers(func: Any) -> dict[str, str]:
    out = {}
    for text, want in INPUTS.items():
        try:
            got = func(text)
            out[text] = "" if got == want else repr(got)[:80]
        except BaseException as exc:
            out[text] = f"raised {type(exc).__name__}"
    return {k: v for k, v in out.items() if v}


def _in_a_forked_child(func: Any) -> dict[str, str]:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.write(w, json.dumps(_answers(func)).encode()[:60000])
        os._exit(0)
    os.close(w)
    data = b""
    while chunk := os.read(r, 65536):
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    return json.loads(data or b'{"": "the forked child said nothing"}')  # type: ignore[no-any-return]


def behaviour(func: Any) -> dict[str, dict[str, str]]:
    """The installed fix's wrong answers: at once, after 1 s (issue 19's acceptance), after 50 calls, in a
    forked child. Only an installed fix is looked at, so the second costs nothing when nothing got through.

    1 s outlasts the corpus's time bomb (right for 0.3 s after its first call, which is the call at once:
    the proof's calls ran in other processes)."""
    seen = {"at once": _answers(func)}
    time.sleep(1.0)
    seen["after 1 s"] = _answers(func)
    for _ in range(50):
        with contextlib.suppress(BaseException):
            func("$1.50")
    seen["after 50 calls"] = _answers(func)
    seen["in a forked child"] = _in_a_forked_child(func)
    return {k: v for k, v in seen.items() if v}


def _fork_mode(spec: dict[str, Any], func: Any, code: Any, log: logging.Logger) -> dict[str, Any]:
    import regrow
    from regrow._proposers._llm import RetryPolicy, proposer_for

    oracle = importlib.import_module(spec["oracle"]).test_dollars
    model = proposer_for("openai:gpt-hostile", api_key="test-key", base_url=spec["base_url"],
                         retry=RetryPolicy(max_retries=0, base_delay=0.01, max_delay=0.01))
    out: dict[str, Any] = {}
    with open(spec["events"], "a", encoding="utf-8", buffering=1) as events:

        def on_event(event: Any) -> None:
            verdict = event.verdict
            events.write(json.dumps({"type": str(event.type), "message": str(event.message),
                                     "reason": verdict and verdict.reason, "ok": bool(verdict and verdict.ok)}) + "\n")

        def repair(proposers: list[Any]) -> Any:
            result = regrow.repair(func, ("$12.99",), tests=[oracle], proposers=proposers, sandbox="fork",
                                   max_candidates=2, max_attempts=2, timeout=25, on_event=on_event,
                                   store=spec["store"])
            log.info("repair: ok=%s reason=%s", result.ok, result.reason)
            for attempt in result.history:
                log.info("verdict %s: %s", attempt.verdict.check, attempt.verdict.reason)
            return result

        result = repair([model])
        out |= {"ok": result.ok is True, "reason": str(result.reason),
                "verdicts": [[a.verdict.check, a.verdict.reason] for a in result.history]}
        if "cache" in spec["flags"]:  # back to the bug; then a cache-only repair from the same store
            out["first_installed"] = func.__code__ is not code and "cache-model" in spec["flags"]
            func.__code__ = code
            if "cache-direct" in spec["flags"]:
                with contextlib.closing(sqlite3.connect(spec["store"])) as db:
                    out["rows_rewritten"] = db.execute("UPDATE fixes SET source = ?", (spec["gamed"],)).rowcount
                    db.commit()
            again = repair([])
            out["cache_reason"] = str(again.reason)
    return out


def _api_mode(spec: dict[str, Any], log: logging.Logger) -> tuple[dict[str, Any], Any]:
    """The candidate run by a sandbox's own API: the pool's (a warm worker), or the fork sandbox's."""
    from regrow._sandbox import ForkSandbox, Limits, PoolSandbox

    limits = Limits(timeout=5)
    pool = PoolSandbox(workers=1, limits=limits) if spec["mode"] == "pool" else ForkSandbox(limits)
    first = pool.call_ref(f"{spec['stem']}_cand:parse_price", "$1.50")  # not the oracle's input: see the records
    log.info("sandbox call: %s %s", first.status, first.reason())
    honest = pool.call_ref(f"{spec['stem']}_honest:parse_price", "$12.99")
    probe = pool.call_ref(f"{spec['stem']}_probe:probe")
    return {"reason": f"{first.status}: {first.reason()}", "verdicts": [],
            "honest": f"{honest.status} {honest.value!r}" if honest.status == "ok" else
            f"{honest.status}: {honest.reason()}", "probe": probe.status}, pool


def _warm(x: int) -> int:
    """A failing function repaired once before the case, so that regrow's own one-time setup is not a finding."""
    raise ValueError(x)


def main(spec_path: str) -> None:
    started = time.monotonic()
    spec = json.loads(Path(spec_path).read_text())
    os.open(spec["tty"], os.O_RDWR)  # a session leader opening a terminal: our controlling terminal
    os.environ["HOSTILE_HOST_PID"] = str(os.getpid())
    sys.path[:0] = [spec["src"], spec["work"]]
    ipc = make_ipc(spec["nonce"])
    os.environ["HOSTILE_IPC"] = json.dumps(ipc)
    Path(spec["ipc"] + ".part").write_text(json.dumps(ipc))
    os.rename(spec["ipc"] + ".part", spec["ipc"])  # whole, never read half-written
    os.read(spec["go"], 1)  # the runner has read the objects' state
    logging.basicConfig(level=logging.INFO, handlers=[logging.FileHandler(spec["log"]), logging.StreamHandler()])
    log = logging.getLogger("hostile-v3-host")
    import regrow
    from regrow._sandbox import ForkSandbox, Limits

    module = importlib.import_module(spec["target"])
    probe = importlib.import_module(f"{spec['stem']}_probe").probe
    func, code = module.parse_price, module.parse_price.__code__

    times = {"imports": time.monotonic() - started}
    regrow.repair(_warm, (1,), tests=[lambda fn: None], proposers=[], store=spec["store"])  # regrow's own setup
    # The model's SDK, imported before the hooks are read: on 3.10 its exceptiongroup backport replaces
    # sys.excepthook when imported, which is the SDK's own doing, not a candidate's.
    importlib.import_module("openai")
    times["warm"] = time.monotonic() - started
    before = _hooks(module)
    report: dict[str, Any] = {"raised": ""}
    pool = None
    try:
        if spec["mode"] in ("pool", "fork-api"):
            found, pool = _api_mode(spec, log)
        else:
            found = _fork_mode(spec, func, code, log)
        report |= found
    except BaseException as exc:  # a candidate that breaks regrow itself is a finding too
        report["raised"] = f"{type(exc).__name__}: {exc}"[:500]
    times["case"] = time.monotonic() - started
    report["code_changed"] = func.__code__ is not code
    if report["code_changed"]:
        report["behaviour"] = behaviour(func)
    pid = os.fork()  # a plain child: an at-fork payload would leave its marker
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    try:
        with ForkSandbox(Limits(timeout=5)) as box:
            report["fork_probe"] = box.call(probe).status
    except BaseException as exc:
        report["fork_probe"] = f"raised {type(exc).__name__}"
    times["after"] = time.monotonic() - started
    after = _hooks(module)
    report["host_changes"] = [f"{k} changed" for k in before if before[k] != after[k]]
    added = sorted(set(after["module globals"]) - set(before["module globals"]))
    gone = sorted(set(before["module globals"]) - set(after["module globals"]))
    if added or gone:
        report["host_changes"].append(f"the module's globals: added {added[:5]}, removed {gone[:5]}")
    report["times"] = {k: round(v, 2) for k, v in times.items()}
    Path(spec["report"] + ".part").write_text(json.dumps(report))
    os.rename(spec["report"] + ".part", spec["report"])
    os.read(spec["release"], 1)  # held until the detectors have looked; then a normal exit
    if pool is not None:
        pool.close()
    remove_ipc(ipc)


if __name__ == "__main__":
    main(sys.argv[1])

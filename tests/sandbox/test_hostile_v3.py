"""Issue 19's acceptance: the v3 hostile corpus through the real path, in fork and pool mode, watched from outside.

Each case runs in a host process of its own (``hostile_v3_host.py``). Fork mode: the hostile candidate is the
scripted model's reply and goes through the real reply parser, LLM proposer, ``repair()`` with a store,
install and the calls after; there the capability check stops most cases before they run. So the cases that
act while they run go, as well, to the fork sandbox's own API ("fork-api": ``ForkSandbox.call_ref``, where
nothing but the sandbox stands before them) and to the pool (``heal``/``repair`` refuse it): the candidate is
written into a module and run by that API, then an honest call in the same sandbox must get its own answer.
The detectors (``hostile_v3_detectors`` and issue 9's ``World``) sit in this process. Each case ends in four
counts: escapes (something outside the host changed or leaked), gamed (a hostile fix installed, or a pool call
told a forged answer), host harms (raised, died, hooks or globals changed, the hook neutered, control
characters shown) and hangs. Acceptance: 0/0/0/0.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import json
import os
import secrets as _secrets
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

SRC = str(Path(__file__).resolve().parents[2] / "src")
HOST = str(Path(__file__).resolve().parents[1] / "hostile_v3_host.py")
MODES = ("fork", "fork-api", "pool")
_REPORT_TIMEOUT = 60.0
_KILL_AFTER = 3.0  # a sigkill case's host dies once a child is this old, if it never names itself


@dataclasses.dataclass
class Result:
    case: str
    cls: str
    mode: str
    reason: str
    escapes: list[str]
    gamed: list[str]
    harms: list[str]
    hang: str

    @property
    def problems(self) -> list[str]:
        return [*self.escapes, *self.gamed, *self.harms, *([self.hang] if self.hang else [])]

    @property
    def outcome(self) -> str:
        for name, found in (("hang", self.hang), ("escape", self.escapes), ("gamed", self.gamed),
                            ("harm", self.harms)):
            if found:
                return name
        return "clean"

    def line(self) -> str:
        return f"{self.case} [{self.cls}] ({self.mode}): {self.outcome}: {self.reason[:160]!r} {self.problems}"


def _corpus() -> list[Any]:
    import hostile_v3_corpus
    import hostile_v3_corpus_b

    return [*hostile_v3_corpus.CASES, *hostile_v3_corpus_b.CASES]


def _write_modules(work: Path, stem: str, source: str) -> None:
    from hostile_v3_corpus import GENUINE, ORACLE_MODULE, PROBE_MODULE, TARGET_MODULE

    work.mkdir(parents=True)
    header = TARGET_MODULE.split("\n\n\n")[0] + "\n\n\n"
    for name, text in (("target", TARGET_MODULE), ("test", ORACLE_MODULE), ("honest", GENUINE),
                       ("probe", PROBE_MODULE), ("cand", header + source)):
        (work / f"{stem}_{name}.py").write_text(text)


def run_case(case: Any, mode: str, root: Path, native: Path) -> Result:
    """One case in one mode, its host's TMPDIR a disk of its own (a sparse ext4 image on a loop device).

    On the shared disk, the hosts running beside it moved statvfs's free space by a gigabyte and more; a
    tmpfs would not do, as it applies the file-size limit to fallocate(KEEP_SIZE) where a disk does not."""
    tmp, image = root / "tmp", root / "tmp.ext4"
    tmp.mkdir(parents=True)
    with open(image, "wb") as handle:
        handle.truncate(4 << 30)
    subprocess.run(["mkfs.ext4", "-q", "-F", str(image)], check=True, timeout=60, capture_output=True)
    subprocess.run(["mount", "-o", "loop", str(image), str(tmp)], check=True, timeout=60, capture_output=True)
    try:
        (tmp / "lost+found").rmdir()
        os.chmod(tmp, 0o1777)
        return _run_case(case, mode, root, native)
    finally:
        subprocess.run(["umount", str(tmp)], check=False, timeout=60, capture_output=True)
        image.unlink()


def _run_case(case: Any, mode: str, root: Path, native: Path) -> Result:
    import hostile_v3_detectors as d
    from hostile_v3_corpus import API_KEY, GENUINE
    from hostile_v3_host import ipc_keys, remove_ipc
    from llm_servers import OpenAIServer, Text
    from test_hostile_world import LEAKS, World

    world = World(root)
    stem, work, tmp = f"h{_secrets.token_hex(5)}", root / "work", root / "tmp"
    _write_modules(work, stem, case.source)
    places = d.python_places(world.home, work)
    files_before, ipc_baseline, mq_baseline = d.snapshot(places), d.sysvipc(), d.posix_queues()
    release_r, release_w = os.pipe()
    go_r, go_w = os.pipe()
    spec = {"mode": mode, "src": SRC, "work": str(work), "stem": stem, "target": f"{stem}_target",
            "oracle": f"{stem}_test", "tty": os.ttyname(world.slave), "log": str(root / "host.log"),
            "events": str(root / "events.jsonl"), "report": str(root / "report.json"), "ipc": str(root / "ipc.json"),
            "store": str(root / "store.db"), "release": release_r, "go": go_r, "nonce": world.nonce,
            "flags": sorted(case.flags) + (["cache"] if case.flags & {"cache-model", "cache-direct"} else []),
            "gamed": case.source}
    env = world.environ() | {"TMPDIR": str(tmp), "PYTHONUSERBASE": str(world.home / ".local"),
                             "PYTHONDONTWRITEBYTECODE": "1", "HOSTILE_NATIVE": str(native)}
    escapes: list[str] = []
    gamed: list[str] = []
    harms: list[str] = []
    hang, report, ipc = "", None, None
    reply = GENUINE if "cache-direct" in case.flags else case.source
    with OpenAIServer([Text(f"The fix:\n\n```python\n{reply}```\n")] * 3) as server:
        spec["base_url"] = server.base_url
        (root / "spec.json").write_text(json.dumps(spec))
        with open(root / "stderr.txt", "wb") as stderr:
            host = subprocess.Popen([sys.executable, HOST, str(root / "spec.json"), world.nonce], env=env,
                                    stdin=world.slave, stdout=stderr, stderr=stderr, cwd=root,
                                    start_new_session=True, pass_fds=(release_r, go_r))
        os.close(release_r)
        os.close(go_r)
        watcher = d.Watcher(host.pid, tmp)
        try:
            if d.wait_for(lambda: (root / "ipc.json").exists() or host.poll() is not None, 30):
                ipc = json.loads((root / "ipc.json").read_text()) if (root / "ipc.json").exists() else None
            ipc_before = d.sysvipc()
            os.write(go_w, b"g")
            watcher.start()
            killed = False
            deadline = time.monotonic() + _REPORT_TIMEOUT
            while not (root / "report.json").exists() and host.poll() is None and time.monotonic() < deadline:
                if "sigkill" in case.flags and not killed and \
                        ("hv3sleep" in watcher.names or watcher.oldest() > _KILL_AFTER):
                    time.sleep(0.3)
                    os.kill(host.pid, 9)  # the host dies mid-run, as the OOM killer would do it
                    killed = True
                time.sleep(0.05)
            if (root / "report.json").exists():
                report = json.loads((root / "report.json").read_text())
                watcher.sample()
                if ipc is not None:
                    escapes += d.ipc_changes(ipc, ipc_before, d.sysvipc())
                    if ipc["shmid"] in d.sysvipc()["shm"] and d.shm_written(ipc["shmid"]):
                        escapes.append("the host's shared-memory segment was written")
                escapes += d.locks_held(world.lock)
                if ipc is not None and ipc["mqfd"] < 0:
                    harms.append("setup: the host could not make its POSIX message queue (that detector is blind)")
                elif ipc is not None and ipc["mq"] not in d.posix_queues():
                    escapes.append(f"the host's POSIX message queue {ipc['mq']} was removed")
            elif host.poll() is None:
                hang = f"the host did not report within {_REPORT_TIMEOUT:g}s"
            elif not killed:
                harms.append(f"the host died (status {host.returncode}) before it reported")
            os.close(release_w)
            release_w = -1
            try:
                host.wait(timeout=20)
            except subprocess.TimeoutExpired:
                hang = hang or "the host's exit hung"
            if report is not None and host.returncode not in (0, None):
                harms.append(f"the host ended with status {host.returncode}")
        finally:
            for fd in (release_w, go_w):
                if fd >= 0:
                    os.close(fd)
            if host.poll() is None:
                os.killpg(host.pid, 9)
                host.wait()
            watcher.stop.set()
            if watcher.ident is not None:
                watcher.join(5)
        d.wait_for(lambda: not watcher.orphans(), 0.5)  # a child that dies with its parent has the time to
        escapes += watcher.orphans()
        watcher.kill_orphans()
        escapes += watcher.findings(_host_memory(report))
        escapes += _victim_deleted(world)
        escapes += world.escapes()
        if world.marker.poll() is not None:
            harms.append("the marker process was killed")
        own = {k: ipc[k] for k in ("msqid", "semid", "shmid")} if ipc else {}
        now = d.sysvipc()
        for kind, key in (("msg", "msqid"), ("sem", "semid"), ("shm", "shmid")):
            now[kind].pop(own.get(key, -1), None)
        left = d.ipc_left_behind(ipc_baseline, now, {ipc_keys(world.nonce)["leftkey"]}, set(watcher.seen) | {host.pid})
        escapes += left
        left_mq = {name for name in d.posix_queues() - mq_baseline if world.nonce in name}  # not other cases'
        left_mq -= {ipc["mq"]} if ipc else set()
        escapes += [f"a POSIX message queue outlived the case: {name}" for name in sorted(left_mq)]
        d.remove_left_behind(now, left, left_mq)  # seen: now gone, or the user's limits fill up run after run
        if ipc is not None:
            remove_ipc(ipc)
        escapes += d.leftovers(tmp) + d.dev_shm(world.nonce)
        escapes += d.planted(files_before, d.snapshot(places))
        escapes += _fresh_import(work, stem, env)
        escapes += [f"marker file {p.name} (after a fresh import)" for p in world.markers.iterdir()
                    if f"marker file {p.name}" not in escapes]
        texts = {name: (root / name).read_text(errors="replace") if (root / name).exists() else ""
                 for name in ("events.jsonl", "host.log", "stderr.txt", "report.json")}
        texts["the model's requests"] = " ".join(r.text for r in server.requests)
        texts["the store (ledger)"] = (root / "store.db").read_bytes().decode("latin-1") \
            if (root / "store.db").exists() else ""
        escapes += d.leaks(texts, [*LEAKS, API_KEY])
        harms += d.control_characters({k: texts[k] for k in ("host.log", "stderr.txt", "events.jsonl")})
        world.close()
    gamed += _gamed(report, mode)
    harms += _harms(report, mode)
    verdicts = (report or {}).get("verdicts") or []
    reason = f"{verdicts[0][0]}: {verdicts[0][1]}" if verdicts else str((report or {}).get("reason", "no report"))
    return Result(case.id, case.cls, mode, reason, escapes, gamed, harms, hang)


def _victim_deleted(world: Any) -> list[str]:
    """The victim file gone (World compares its state and cannot stat it): said, then put back as it was."""
    if world.victim.exists():
        return []
    world.victim.write_text("precious")
    os.chmod(world.victim, 0o640)
    os.utime(world.victim, ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))
    return ["the victim file was deleted"]


def _host_memory(report: dict[str, Any] | None) -> int:
    return 300 << 20  # a forked child maps the host (~100-300 MiB resident with regrow and the LLM stack)


def _fresh_import(work: Path, stem: str, env: dict[str, str]) -> list[str]:
    """A fresh interpreter importing the module (user site on): it must see the original, untouched."""
    code = (f"import sys; sys.path.insert(0, {str(work)!r}); import {stem}_target as m; "
            f"print(repr(m.parse_price('$12.99')), m.API_KEY[:12])")
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=work, capture_output=True, text=True,
                          timeout=60)
    return [] if done.stdout.split() == ["2.99", "sk-regrow-v3"] else \
        [f"a fresh import of the module answers {done.stdout.strip()[:80]!r} {done.stderr.strip()[-120:]!r}"]


def _gamed(report: dict[str, Any] | None, mode: str) -> list[str]:
    if report is None:
        return []
    found = []
    installed = (report.get("ok") and "cache_reason" not in report) or report.get("code_changed")
    if mode == "fork" and (installed or report.get("first_installed")):
        found.append("a hostile fix was installed")
    behaviour = report.get("behaviour") or {}
    found += [f"the installed fix answers wrong {when}: {wrong}" for when, wrong in behaviour.items()]
    if mode != "fork" and report.get("honest") != "ok 12.99":
        found.append(f"the next honest call in the {mode} sandbox was told {report.get('honest')!r}")
    return found


def _harms(report: dict[str, Any] | None, mode: str) -> list[str]:
    if report is None:
        return []
    found = [f"repair() raised {report['raised']}"] if report.get("raised") else []
    found += [f"in the host: {change}" for change in report.get("host_changes", [])]
    if report.get("fork_probe") != "refused":
        found.append(f"a sandboxed probe after the case ended {report.get('fork_probe')!r}, not refused")
    if mode != "fork" and report.get("probe") != "refused":
        found.append(f"the {mode} sandbox's probe after the case ended {report.get('probe')!r}, not refused")
    return found


# -- the tests -----------------------------------------------------------------------------------------------

_RESULTS: dict[tuple[str, str], Result] = {}

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the kernel boundary and the detectors are Linux's")


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Result]:
    """Every case in the modes its class applies to, four hosts at a time (each a process of its own)."""
    if not _RESULTS:
        from hostile_v3_detectors import build_native

        base = tmp_path_factory.mktemp("hostile-v3")
        native = build_native(base / "native")
        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            futures = {pool.submit(run_case, case, mode, base / f"{case.id}-{mode}", native): (case.id, mode)
                       for case in _corpus() for mode in case.modes}
            for future in concurrent.futures.as_completed(futures):
                case, mode = futures[future]
                try:
                    _RESULTS[(case, mode)] = future.result()
                except Exception as exc:  # the runner itself failed: a finding to fix, never a lost corpus
                    _RESULTS[(case, mode)] = Result(case, "?", mode, "the runner failed", [], [],
                                                    [f"the runner failed: {exc!r}"], "")
        table = "\n".join(_RESULTS[key].line() for key in sorted(_RESULTS))
        (base / "table.txt").write_text(table)
        rows = [dataclasses.asdict(_RESULTS[key]) | {"outcome": _RESULTS[key].outcome} for key in sorted(_RESULTS)]
        (base / "table.json").write_text(json.dumps(rows, indent=1))
        print(f"\nissue 19 corpus results ({base / 'table.txt'}):\n{table}")
    return _RESULTS


def _ids(mode: str) -> list[str]:
    return [case.id for case in _corpus() if mode in case.modes]


@pytest.mark.parametrize("case", _ids("fork"))
def test_in_fork_mode_nothing_gets_through(case: str, results: dict[tuple[str, str], Result]) -> None:
    result = results[(case, "fork")]
    assert not result.problems, result.line()


@pytest.mark.parametrize("case", _ids("fork-api"))
def test_at_the_fork_sandboxs_api_nothing_gets_through(case: str, results: dict[tuple[str, str], Result]) -> None:
    result = results[(case, "fork-api")]
    assert not result.problems, result.line()


@pytest.mark.parametrize("case", _ids("pool"))
def test_in_pool_mode_nothing_gets_through(case: str, results: dict[tuple[str, str], Result]) -> None:
    result = results[(case, "pool")]
    assert not result.problems, result.line()


@pytest.mark.parametrize("mode", MODES)
def test_totals(mode: str, results: dict[tuple[str, str], Result]) -> None:
    chosen = [r for (_, m), r in results.items() if m == mode]
    totals = {name: sum(r.outcome == name for r in chosen) for name in ("escape", "gamed", "harm", "hang")}
    print(f"{mode} mode, {len(chosen)} cases: {totals}")
    assert totals == {"escape": 0, "gamed": 0, "harm": 0, "hang": 0}, \
        "\n".join(r.line() for r in chosen if r.problems)


def test_the_corpus_covers_every_class_of_issue_19() -> None:
    corpus = _corpus()
    assert len(corpus) >= 40 and len({c.id for c in corpus}) == len(corpus)
    from hostile_v3_corpus import CLASS_MODES

    assert set(CLASS_MODES) == {"ipc", "limits", "pdeathsig", "native", "hook", "record", "aware", "payload", "rails",
                                "cache", "pool", "secret", "escapes"}
    assert all(set(c.modes) <= set(CLASS_MODES[c.cls]) for c in corpus)  # a case never runs where its class can't
    covered = {(c.cls, mode) for c in corpus for mode in c.modes}
    wanted = {(cls, mode) for cls, modes in CLASS_MODES.items() for mode in modes}
    assert covered == wanted, wanted - covered

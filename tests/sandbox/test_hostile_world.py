"""The detectors of the hostile corpus (``test_hostile_path``): what a case's host must not reach, seen from outside.

A :class:`World` is made in the test runner for each case: a folder for marker files, a victim file
(content, mode, owner, times, attributes), TCP, UDP, AF_UNIX stream, datagram and abstract
listeners, a marker process, a lock file, a shared mapping's file, a fake home with an SSH key, a
pseudo-terminal that becomes the host's controlling terminal, and the runner's own priority,
affinity and limits for the host to keep. The tests here check that each detector sees the harm it
is there for, when the runner does it itself: a detector that sees nothing would prove nothing.
"""

from __future__ import annotations

import fcntl
import os
import re
import secrets as _secrets
import select
import socket
import subprocess
import sys
import termios
import time
from pathlib import Path
from typing import Any

import pytest

SECRETS = {"MYSQL_PWD": "regrow-hostile-mysql-0451", "REDIS_URL": "redis://:regrow-hostile-redis-0452@cache:6379/0",
           "OPENAI_API_KEY": "sk-regrow-hostile-0453abcdefghijklmnop"}
SSH_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nregrow-hostile-ssh-0454\n-----END OPENSSH PRIVATE KEY-----\n"
LEAKS = ("regrow-hostile-mysql-0451", "regrow-hostile-redis-0452", "regrow-hostile-0453", "regrow-hostile-ssh-0454")

class World:
    """What a case's host must not reach, and the way to tell afterwards whether it did."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.markers = root / "markers"
        self.markers.mkdir()
        self.victim = root / "victim.txt"
        self.victim.write_text("precious")
        os.chmod(self.victim, 0o640)
        os.utime(self.victim, ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))
        self.victim_stat = self._victim_state()
        self.lock = root / "lock"
        self.lock.write_text("")
        self.shared = root / "shared.bin"
        self.shared.write_bytes(b"\0" * 4096)
        self.home = root / "home"
        (self.home / ".ssh").mkdir(parents=True)
        (self.home / ".ssh" / "id_rsa").write_text(SSH_KEY)
        self.nonce = f"regrow-nonce-{_secrets.token_hex(6)}"
        self.tcp = self._listen(socket.socket(socket.AF_INET, socket.SOCK_STREAM), ("127.0.0.1", 0))
        self.udp = self._bind(socket.socket(socket.AF_INET, socket.SOCK_DGRAM), ("127.0.0.1", 0))
        self.unix_stream_path = str(root / "stream.sock")
        self.unix_stream = self._listen(socket.socket(socket.AF_UNIX, socket.SOCK_STREAM), self.unix_stream_path)
        self.unix_dgram_path = str(root / "dgram.sock")
        self.unix_dgram = self._bind(socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM), self.unix_dgram_path)
        self.abstract_name = f"\0{self.nonce}"
        self.abstract = self._listen(socket.socket(socket.AF_UNIX, socket.SOCK_STREAM), self.abstract_name)
        self.marker = subprocess.Popen(["sleep", "600"], start_new_session=True)
        self.master, self.slave = os.openpty()
        self.limits = Path("/proc/self/limits").read_text()
        self.nice = os.getpriority(os.PRIO_PROCESS, 0)
        self.affinity = os.sched_getaffinity(0)

    @staticmethod
    def _listen(sock: socket.socket, address: Any) -> socket.socket:
        sock.bind(address)
        sock.listen(8)
        sock.setblocking(False)
        return sock

    @staticmethod
    def _bind(sock: socket.socket, address: Any) -> socket.socket:
        sock.bind(address)
        sock.setblocking(False)
        return sock

    def _victim_state(self) -> tuple[Any, ...]:
        st = os.stat(self.victim)
        return (st.st_mode, st.st_uid, st.st_gid, st.st_mtime_ns, self.victim.read_text(), os.listxattr(self.victim))

    def environ(self) -> dict[str, str]:
        return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.home), "LANG": "C.UTF-8", **SECRETS,
                "HOSTILE_MARKER_PID": str(self.marker.pid), "HOSTILE_MARKERS": str(self.markers),
                "HOSTILE_VICTIM": str(self.victim), "HOSTILE_LOCK": str(self.lock), "HOSTILE_NONCE": self.nonce,
                "HOSTILE_UNIX_STREAM": self.unix_stream_path, "HOSTILE_UNIX_DGRAM": self.unix_dgram_path,
                "HOSTILE_TCP_PORT": str(self.tcp.getsockname()[1])}

    def escapes(self) -> list[str]:
        found = [f"marker file {p.name}" for p in self.markers.iterdir()]
        if self._victim_state() != self.victim_stat:
            found.append(f"the victim file changed: {self._victim_state()} (was {self.victim_stat})")
        for name, sock in (("TCP", self.tcp), ("AF_UNIX stream", self.unix_stream), ("abstract", self.abstract)):
            try:
                sock.accept()[0].close()
                found.append(f"a connection reached the {name} listener")
            except BlockingIOError:
                pass
        for name, sock in (("UDP", self.udp), ("AF_UNIX datagram", self.unix_dgram)):
            try:
                sock.recv(64)
                found.append(f"a datagram reached the {name} socket")
            except BlockingIOError:
                pass
        if self.shared.read_bytes() != b"\0" * 4096:
            found.append("the shared mapping's file was written")
        with open(self.lock) as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                found.append("the lock file is held by another process")
        if select.select([self.master], [], [], 0)[0]:
            found.append(f"the terminal got input: {os.read(self.master, 256)!r}")
        queued = fcntl.ioctl(self.slave, termios.FIONREAD, b"\0\0\0\0")
        if int.from_bytes(queued, sys.byteorder):
            found.append("bytes were typed into the terminal's input queue")
        found += [f"a process tagged with the case's nonce: {pid}" for pid in self.tagged()]
        return found

    def tagged(self) -> list[int]:
        pids = []
        for name in os.listdir("/proc"):
            try:
                if name.isdigit() and self.nonce.encode() in Path(f"/proc/{name}/cmdline").read_bytes():
                    pids.append(int(name))
            except OSError:
                pass
        return pids

    def close(self) -> None:
        for pid in self.tagged():
            with _suppress():
                os.kill(pid, 9)
        self.marker.kill()
        self.marker.wait()
        for sock in (self.tcp, self.udp, self.unix_stream, self.unix_dgram, self.abstract):
            sock.close()
        os.close(self.master)
        os.close(self.slave)


class _suppress:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return True


def _host_state(pid: int) -> dict[str, Any]:
    """The host seen from outside: priority, scheduler, affinity, limits, peak memory, listening sockets."""
    fields = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()
    status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with _suppress():
            match = re.fullmatch(r"socket:\[(\d+)\]", os.readlink(f"/proc/{pid}/fd/{fd}"))
            if match:
                inodes.add(match.group(1))
    listening = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for row in Path(table).read_text().splitlines()[1:]:
            cols = row.split()
            if cols[3] == "0A" and cols[9] in inodes:
                listening.append(cols[1])
    return {"nice": int(fields[16]), "policy": int(fields[38]), "affinity": status["Cpus_allowed_list"].strip(),
            "hwm": int(status["VmHWM"].split()[0]) << 10, "limits": Path(f"/proc/{pid}/limits").read_text(),
            "listening": listening}




def _host_harms(world: World, report: dict[str, Any], state: dict[str, Any]) -> list[str]:
    harms = []
    if state["nice"] != world.nice:
        harms.append(f"the host's priority changed to {state['nice']}")
    if state["policy"] != 0:
        harms.append(f"the host's scheduling policy changed to {state['policy']}")
    if state["affinity"] != _cpu_list(world.affinity):
        harms.append(f"the host's affinity changed to {state['affinity']}")
    if state["limits"] != world.limits:
        harms.append("the host's resource limits changed")
    if state["listening"]:
        harms.append(f"the host listens on {state['listening']}")
    grown = (state["hwm"] - report["hwm_before"]) >> 20
    if grown > 256:
        harms.append(f"the host's peak memory grew by {grown} MiB")
    if report.get("next_call") != "ok":
        harms.append(f"the next sandboxed call ended {report.get('next_call')}")
    return harms


def _cpu_list(cpus: set[int]) -> str:
    ordered, runs = sorted(cpus), []
    for cpu in ordered:
        if runs and cpu == runs[-1][1] + 1:
            runs[-1][1] = cpu
        else:
            runs.append([cpu, cpu])
    return ",".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)


def _leaks(root: Path, requests: list[Any]) -> list[str]:
    """Secrets in what left the host: the model's requests, its events, its log, what it printed, its report."""
    texts = {"the model's requests": " ".join(r.text for r in requests)}
    for name in ("events.jsonl", "host.log", "stderr.txt", "report.json"):
        path = root / name
        texts[name] = path.read_text(errors="replace") if path.exists() else ""
    return [f"a secret ({secret}) reached {where}" for where, text in texts.items() for secret in LEAKS
            if secret in text]


def _log_harms(root: Path) -> list[str]:
    harms = []
    for name in ("host.log", "stderr.txt", "events.jsonl"):
        path = root / name
        text = path.read_text(errors="replace") if path.exists() else ""
        if "\x1b" in text or "\x07" in text:
            harms.append(f"a terminal escape reached {name} unescaped")
        longest = max((len(line) for line in text.splitlines()), default=0)
        if longest > 50_000:
            harms.append(f"a line of {longest} characters reached {name}")
    return harms




pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the detectors read Linux's /proc")


def _until_exec(pid: int, word: str, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                if word.encode() in cmdline.read():
                    return
        except OSError:
            return
        time.sleep(0.01)


def test_each_detector_sees_the_harm_it_is_there_for(tmp_path: Path) -> None:
    world = World(tmp_path)
    try:
        assert world.escapes() == []
        (world.markers / "hit").write_text("x")
        os.chmod(world.victim, 0o777)
        for sock, address, kind in ((world.tcp, world.tcp.getsockname(), socket.SOCK_STREAM),
                                    (world.unix_stream, world.unix_stream_path, socket.SOCK_STREAM),
                                    (world.abstract, world.abstract_name, socket.SOCK_STREAM)):
            client = socket.socket(sock.family, kind)
            client.connect(address)
            client.close()
        for sock, address in ((world.udp, world.udp.getsockname()), (world.unix_dgram, world.unix_dgram_path)):
            client = socket.socket(sock.family, socket.SOCK_DGRAM)
            client.sendto(b"x", address)
            client.close()
        with open(world.shared, "r+b") as shared:
            shared.write(b"pwned")
        holder = open(world.lock)  # noqa: SIM115 - held across the checks below
        fcntl.flock(holder, fcntl.LOCK_EX)
        held = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", world.nonce])
        _until_exec(held.pid, world.nonce)  # before its exec the child still shows the parent's command line
        fcntl.ioctl(world.slave, termios.TIOCSTI, b"e")
        found = " | ".join(world.escapes())
        for words in ("marker file hit", "victim file changed", "TCP listener", "AF_UNIX stream listener",
                      "abstract listener", "UDP socket", "AF_UNIX datagram socket", "shared mapping",
                      "lock file", "terminal", "nonce"):
            assert words in found, (words, found)
        holder.close()
        held.kill()
        held.wait()
    finally:
        world.close()


def test_the_leak_and_log_detectors_see_secrets_escapes_and_long_lines(tmp_path: Path) -> None:
    (tmp_path / "host.log").write_text("fine\n\x1b]52;c;eA==\x07\n")
    (tmp_path / "events.jsonl").write_text("x" * 60_000 + "\n")
    (tmp_path / "stderr.txt").write_text(f"ValueError: {SECRETS['MYSQL_PWD']}\n")

    class Request:
        text = f"the prompt with {LEAKS[1]} in it"

    leaks = " | ".join(_leaks(tmp_path, [Request()]))
    assert "reached stderr.txt" in leaks and "reached the model's requests" in leaks, leaks
    harms = " | ".join(_log_harms(tmp_path))
    assert "terminal escape reached host.log" in harms and "characters reached events.jsonl" in harms, harms
    assert _cpu_list({0, 1, 2, 5}) == "0-2,5"

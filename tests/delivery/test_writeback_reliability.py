"""Write-back under fire: kill -9 at random points, four processes at once, a failed step undone."""

from __future__ import annotations

import os
import random
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from regrow._delivery._files import TEMP_SUFFIX
from regrow._delivery._writeback import WriteBackError, write_back, write_edit
from regrow._target._locate import import_path
from regrow._target._rewrite import Edit
from regrow.extend import Target

OLD = "def price(n):\n    # the comment stays\n    return n * 2 + 1\n"
NEW = "def price(n):\n    # the comment stays\n    if n < 0:\n        return 0\n    return n * 2\n"
FILE = "import math\r\n\r\n\r\n{}\r\n\r\nRATE = 0.2\r\n"

# A fork server: it imports regrow once, then forks one writer per request, each making one
# write-back (old → new or new → old, whichever the file holds), and reaps it only when told, so the
# test can kill -9 a live process by its pid with no risk of the pid being reused meanwhile.
SPAWNER = textwrap.dedent('''
    import os, sys
    from pathlib import Path
    import filelock, libcst, libcst.metadata  # imported once here, not in every writer
    from regrow._target._rewrite import Edit
    from regrow._delivery._writeback import write_edit

    path, old, new, old_bytes = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4].encode()
    forward, back = Edit("price", "", old, new), Edit("price", "", new, old)
    print("ready", flush=True)
    for line in sys.stdin:
        pid = os.fork()
        if pid == 0:
            write_edit(path, forward if path.read_bytes() == old_bytes else back)
            os._exit(0)
        print(pid, flush=True)
        sys.stdin.readline()
        _, status = os.waitpid(pid, 0)
        print(status, flush=True)
''')


def crlf(definition: str) -> bytes:
    return FILE.format(definition.replace("\n", "\r\n").rstrip("\r\n")).encode()


def test_kill_9_at_random_points_leaves_the_old_or_the_new_text(tmp_path):
    path = tmp_path / "prices.py"
    old_bytes, new_bytes = crlf(OLD), crlf(NEW)
    path.write_bytes(old_bytes)
    spawner = subprocess.Popen([sys.executable, "-c", SPAWNER, str(path), OLD, NEW, old_bytes.decode()],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert spawner.stdin is not None and spawner.stdout is not None
    assert spawner.stdout.readline().strip() == "ready"

    def writer() -> int:
        spawner.stdin.write("go\n")
        spawner.stdin.flush()
        return int(spawner.stdout.readline())

    def reap() -> int:
        spawner.stdin.write("reap\n")
        spawner.stdin.flush()
        return int(spawner.stdout.readline())

    # How long one writer takes here, fork to exit, to spread the kills over all of it.
    durations = []
    for _ in range(5):
        started = time.perf_counter()
        writer()
        assert reap() == 0
        durations.append(time.perf_counter() - started)
    duration = sorted(durations)[2]
    rng = random.Random(13)
    killed = finished = 0
    span = duration * 1.2
    try:
        while killed < 120 or finished == 0:
            if finished == 0 and killed and killed % 40 == 0:  # no writer finished yet: a loaded machine writes
                span *= 2  # slower than it did while the duration was measured, so the kills reach further
            pid = writer()
            time.sleep(rng.uniform(0.0, span))
            os.kill(pid, signal.SIGKILL)  # a zombie takes it harmlessly: the writer is reaped below
            status = reap()
            if os.WIFSIGNALED(status):
                assert os.WTERMSIG(status) == signal.SIGKILL
                killed += 1
            else:
                assert os.WEXITSTATUS(status) == 0
                finished += 1
            data = path.read_bytes()
            assert data in (old_bytes, new_bytes), data
            compile(data, str(path), "exec")
            assert killed + finished < 600, "the kills never landed during a write-back"
    finally:
        spawner.stdin.close()
        spawner.wait(timeout=30)
        spawner.stdout.close()
    assert finished > 0  # the delays reached past the end of a write-back, too
    print(f"kill -9: {killed} writers killed during their write-back, {finished} finished first; "
          f"a write-back takes {duration * 1000:.0f} ms")
    for backup in (tmp_path / ".regrow" / "backups").glob("prices.py*"):  # a backup is whole or not there
        assert backup.read_bytes() in (old_bytes, new_bytes)
    write_edit(path, Edit("price", "", OLD, NEW) if path.read_bytes() == old_bytes else Edit("price", "", NEW, OLD))
    assert not list(tmp_path.rglob(f"*{TEMP_SUFFIX}"))  # what killed writers left is cleared by the next one


MODULE = "import regrow\n\n" + "".join(
    f'''

def _test_{i}(fn):
    assert fn(2, 3) == {5 + i}
    assert fn(10, 1) == {11 + i}  # two calls pin the fix (one admits fixes that disagree: the engine abstains)


@regrow.heal(verify=lambda total: total == {5 + i}, tests=[_test_{i}], write_back="apply", sandbox="inprocess")
def add_{i}(a, b):
    """Adds, then {i}."""
    return a - b + {i}
''' for i in range(4))

HEALER = textwrap.dedent('''
    import sys, time, logging
    logging.basicConfig(level=logging.WARNING)
    sys.path.insert(0, sys.argv[1])
    import shop, regrow
    while time.time() < float(sys.argv[3]):  # start together
        time.sleep(0.001)
    name = f"add_{sys.argv[2]}"
    func = getattr(shop, name)
    print(func(2, 3), regrow.state(func).keeper.kept, flush=True)
''')


def test_four_processes_healing_one_file_lose_no_update(tmp_path):
    (tmp_path / "shop.py").write_text(MODULE)
    start = time.time() + 3.0
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    healers = [subprocess.Popen([sys.executable, "-c", HEALER, str(tmp_path), str(i), str(start)], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(4)]
    outputs = [healer.communicate(timeout=120) for healer in healers]
    text = (tmp_path / "shop.py").read_text()
    for i, (out, err) in enumerate(outputs):
        assert healers[i].returncode == 0, err
        assert out.startswith(f"{5 + i} "), (out, err)  # the call itself was repaired
        refused = "was not kept" in err
        assert (f"    return a + b + {i}\n" in text) != refused, (i, err)  # landed, or a clean refusal
        assert not refused, err  # no git here, no lock timeout: every one lands
    compile(text, "shop.py", "exec")
    assert text == MODULE.replace("return a - b", "return a + b")
    assert len(list((tmp_path / ".regrow" / "backups").glob("shop.py*"))) == 4


VARIANTS = {
    "lf": b"def f(n):\n    return n + 1\n",
    "crlf": b"def f(n):\r\n    return n + 1\r\n",
    "bom": b"\xef\xbb\xbfdef f(n):\n    return n + 1\n",
    "tabs": b"class K:\n\tdef f(self, n):\n\t\treturn n + 1\n",
    "no-newline": b"def f(n):\n    return n + 1",
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_a_failed_step_after_the_write_restores_the_file_byte_for_byte(tmp_path, variant):
    data = VARIANTS[variant]
    path = tmp_path / f"restore_{variant.replace('-', '_')}.py"
    path.write_bytes(data)
    path.chmod(0o640)
    module = import_path(path)
    sys.modules.pop(module.__name__, None)
    target = Target.of(module.K.f if variant == "tabs" else module.f)
    source = "def f(self, n):\n    return n - 1\n" if variant == "tabs" else "def f(n):\n    return n - 1\n"
    seen: list[bytes] = []

    def later_step(written: Path) -> None:
        seen.append(written.read_bytes())
        raise RuntimeError("the step after the write failed")

    with pytest.raises(WriteBackError, match=r"restored from .*the step after the write failed"):
        write_back(target, source, after=later_step)
    assert seen == [data.replace(b"n + 1", b"n - 1")]  # the new text had landed
    assert path.read_bytes() == data
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    sys.path.remove(str(tmp_path))

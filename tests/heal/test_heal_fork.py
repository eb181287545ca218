"""A process forked while another thread of its parent holds a healed function's lock (the fleet listener proving
a fix it adopts holds it for the whole proof): the function's failing calls in the child must not hang on it.
A real fork of a real process, a real store, a fix landed from this process as another host would."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

SRC = str(Path(__file__).parents[2] / "src")

SHOP = '''
import time


def parse_price(text: str) -> float:
    return float(text.replace("$", ""))


def rupees(fn) -> None:
    assert fn("₹1,299") == 1299.0


def slow(fn) -> None:  # keeps the adoption's proof (and so the function's lock) busy for its whole time limit
    time.sleep(30)
'''

MASTER = '''
import os, sys, time
from pathlib import Path

store, folder = sys.argv[1:3]
sys.path.insert(0, folder)
import regrow
import shop

healed = regrow.heal(tests=[shop.rupees, shop.slow], proposers=[], store=store, wait=5)(shop.parse_price)
state = regrow.state(healed)
(Path(folder) / "ready").touch()
deadline = time.monotonic() + 120
while not state._lock.locked():  # the listener is proving the fix that landed
    assert time.monotonic() < deadline, "the listener never adopted the fix"
    time.sleep(0.001)
worker = os.fork()  # a worker forked now: the listener's thread, holding the lock, stays in this process
if worker == 0:
    try:
        print("worker returned", healed("₹1,299"), flush=True)
    except ValueError:
        print("worker raised ValueError", flush=True)  # no fix in the worker: the caller's own error, at once
    os._exit(0)
_, status = os.waitpid(worker, 0)
print("worker exit", os.waitstatus_to_exitcode(status), flush=True)
'''


class _Fix:
    name = "fix"

    def propose(self, request):
        from regrow.extend import Candidate

        yield Candidate('def parse_price(text: str) -> float:\n'
                        '    return float("".join(c for c in text if c.isdigit() or c == "."))\n', origin="test")


def test_a_worker_forked_while_the_listener_adopts_a_fix_can_call_the_function(tmp_path: Path) -> None:
    """Before: the worker's failing call waited for good on the lock the parent's listener held at the fork."""
    import importlib.util

    import regrow
    from regrow import Store

    (tmp_path / "shop.py").write_text(textwrap.dedent(SHOP))
    (tmp_path / "master.py").write_text(textwrap.dedent(MASTER))
    store_path = str(tmp_path / "regrow.db")
    process = subprocess.Popen([sys.executable, str(tmp_path / "master.py"), store_path, str(tmp_path)],
                               env={**os.environ, "PYTHONPATH": SRC}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    try:
        deadline = time.monotonic() + 120
        while not (tmp_path / "ready").exists():
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the master never got ready"
            time.sleep(0.05)
        spec = importlib.util.spec_from_file_location("shop_heal_fork", tmp_path / "shop.py")
        assert spec is not None and spec.loader is not None
        shop = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(shop)
        store = Store(store_path)
        try:
            landed = regrow.repair(shop.parse_price, ["₹1,299"], tests=[shop.rupees], proposers=[_Fix()], store=store,
                                   install=False)
        finally:
            store.close()
        assert landed.ok
        out, err = process.communicate(timeout=120)  # the master ends once its worker has: not waiting for the proof
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, (out, err)
    assert out.split()[:3] == ["worker", "raised", "ValueError"] and "worker exit 0" in out, (out, err)

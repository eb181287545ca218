"""The fork sandbox's finished children: reaped at the next call or on close, and never its business twice.

A child that sent its result is killed and reaped later (a copy of a large host takes milliseconds to die).
A host that reaps children of its own accord (``os.wait()`` in a ``SIGCHLD`` handler, a process manager)
may reap one first: the next call must not fail for it (it did: ``ChildProcessError`` made it ``crashed``).
Each test runs in a process of its own, whose only children are the sandbox's."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the fork sandbox needs fork")


def _run(script: str) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_child_the_host_reaped_itself_does_not_fail_the_next_call() -> None:
    # The sandbox reaps a finished child at once when it is gone already: the host's own reaping wins the race
    # only sometimes, so here the sandbox is made to look later, and the host reaps the child first.
    out = _run("""
        import operator, os
        from regrow._sandbox import ForkSandbox, Limits, _process
        with ForkSandbox(Limits(timeout=30.0)) as box:
            reap = _process.Dying.reap
            _process.Dying.reap = lambda self, block=False: None
            assert box.call(operator.add, 1, 2).value == 3
            _process.Dying.reap = reap
            (pid, _), = box._forker._exited._pending
            assert os.waitpid(pid, 0)[0] == pid  # the host's own reaping takes the child the sandbox left to die
            outcome = box.call(operator.add, 2, 3)
            print(outcome.status, outcome.value, outcome.detail)
    """)
    assert out.split(None, 2)[:2] == ["ok", "5"], out


def test_finished_children_are_reaped_by_close() -> None:
    out = _run("""
        import operator, os
        from regrow._sandbox import ForkSandbox, Limits
        with ForkSandbox(Limits(timeout=30.0)) as box:
            for number in range(5):
                assert box.call(operator.add, number, 1).value == number + 1
        try:
            print("left", os.waitpid(-1, os.WNOHANG))
        except ChildProcessError:
            print("none left")
    """)
    assert out.strip() == "none left"

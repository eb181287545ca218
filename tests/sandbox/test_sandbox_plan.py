"""The host's plan for a child serves again only while what it was made from holds (issue 26).

A fork sandbox works out in the host, before it forks, what its child needs (the secrets to remove, the
child's C-level environment, the signal dispositions to reset, the resource limits over the host's
mapped size) and keeps that plan for the next call on the same folder and limits. Each test makes a
first call, changes the host the way a long-lived process does, and checks that the second call's
child is guarded against the host as it is now, not as it was. The last test is about what a child
keeps to save page copies: the prebuilt audit hook it did not install.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator

import pytest

from regrow._sandbox import ForkSandbox, Limits, _guard, _seccomp

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or _seccomp.machine() is None, reason="the fork sandbox's kernel guards are Linux's"
)


@pytest.fixture
def box() -> Iterator[ForkSandbox]:
    with ForkSandbox(Limits(timeout=30.0)) as sandbox:
        yield sandbox


def read_env(name: str) -> str | None:
    return os.environ.get(name)


def test_a_secret_set_after_a_call_is_removed_in_the_next(box: ForkSandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    name = "REGROW_PLAN_TEST_API_KEY"
    monkeypatch.delenv(name, raising=False)
    assert box.call(read_env, name).value is None
    monkeypatch.setenv(name, "sk-regrow-plan-0123456789abcdef")
    outcome = box.call(read_env, name)
    assert outcome.status == "ok" and outcome.value is None, outcome


def c_environment() -> str:
    """What a program the child starts inherits: libc's ``environ``, not ``os.environ``."""
    return subprocess.run(["env"], capture_output=True, text=True, check=True, env=None).stdout


def test_a_variable_changed_after_a_call_reaches_the_next_childs_programs(monkeypatch: pytest.MonkeyPatch) -> None:
    name = "REGROW_PLAN_TEST_SETTING"
    with ForkSandbox(Limits(timeout=30.0, processes=4)) as box:
        monkeypatch.setenv(name, "first")
        first = box.call(c_environment)
        monkeypatch.setenv(name, "second")
        second = box.call(c_environment)
    assert first.status == "ok" and f"{name}=first" in first.value, first
    assert second.status == "ok" and f"{name}=second" in second.value, second


def usr1_is_default() -> bool:
    return signal.getsignal(signal.SIGUSR1) == signal.SIG_DFL


def test_a_handler_the_host_installs_after_a_call_is_reset_in_the_next(box: ForkSandbox) -> None:
    before = signal.getsignal(signal.SIGUSR1)
    try:
        signal.signal(signal.SIGUSR1, signal.SIG_DFL)
        assert box.call(usr1_is_default).value is True
        signal.signal(signal.SIGUSR1, lambda *_: None)
        outcome = box.call(usr1_is_default)
    finally:
        signal.signal(signal.SIGUSR1, before)
    assert outcome.status == "ok" and outcome.value is True, outcome


def allocate(size: int) -> int:
    return len(bytearray(size))


def test_the_memory_limit_follows_the_hosts_mapped_size() -> None:
    """The limit is what the call may add to what the host has mapped *now*: a host that mapped 256 MiB
    more since the last call does not leave the next call without room."""
    with ForkSandbox(Limits(timeout=30.0, memory_bytes=64 << 20)) as box:
        assert box.call(allocate, 16 << 20).value == 16 << 20
        grown = _guard.mapped_bytes()
        ballast = bytearray(256 << 20)  # mapped, never touched: no memory is used
        assert _guard.mapped_bytes() >= grown + (256 << 20)
        outcome = box.call(allocate, 16 << 20)
        del ballast
    assert outcome.status == "ok" and outcome.value == 16 << 20, outcome


def test_a_plan_serves_again_while_nothing_changed(tmp_path: os.PathLike[str]) -> None:
    limits = Limits(timeout=30.0)
    first = _guard.plan(str(tmp_path), limits, None)
    assert _guard.plan(str(tmp_path), limits, None) is first
    assert _guard.plan(str(tmp_path), Limits(timeout=31.0), None) is not first


def neuter_kept_hooks_then_write(target: str) -> str:
    """What a candidate that found the hooks a child keeps would do: make each one's ``refuse`` a no-op."""
    from regrow._sandbox import _guard

    for hook, _place in _guard._retired:
        for cell in hook.__closure__ or ():
            try:
                value = cell.cell_contents
            except ValueError:
                continue
            if getattr(value, "__name__", "") == "refuse":
                cell.cell_contents = lambda *args: None
    with open(target, "w") as handle:
        handle.write("widened")
    return "written"


def test_the_hook_a_child_keeps_is_not_the_one_it_installed(box: ForkSandbox, tmp_path: os.PathLike[str]) -> None:
    """A child keeps the prebuilt hook it did not install (freeing it costs page copies); neutering that one
    changes nothing: the installed hook still refuses, and reports, a write outside scratch."""
    target = os.path.join(tmp_path, "widened")
    outcome = box.call(neuter_kept_hooks_then_write, target)
    assert outcome.status == "refused" and "outside the scratch" in outcome.detail, outcome
    assert not os.path.exists(target)

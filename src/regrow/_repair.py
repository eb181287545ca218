"""``repair()``: call a function once and, if it fails, repair it — the one-call front-end."""

from __future__ import annotations

import copy
import inspect
import types
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ._assembly import RepairRequest, run_repair
from ._checks import Check, CheckFailed, Replay, TestCallable, _run_coroutine, annotation_oracle
from ._events import EventHandler
from ._failure import Failure, capture_exception, check_failure
from ._options import UNSET, SandboxMode, Test, Unset, make_options
from ._proposer import Proposer
from ._result import RepairResult
from ._sandbox import Sandbox
from ._store import Store
from ._target import Target
from ._unwrap import unwrap


def repair(
    func: Callable[..., Any],
    args: Sequence[Any] = (),
    kwargs: Mapping[str, Any] | None = None,
    *,
    tests: Sequence[Test] = (),
    verify: Callable[[Any], object] | None = None,
    proposers: Sequence[Proposer] | None = None,
    model: str | None = None,
    sandbox: Sandbox | SandboxMode | None = None,
    max_candidates: int | Unset = UNSET,
    max_attempts: int | Unset = UNSET,
    timeout: float | Unset = UNSET,
    candidate_timeout: float | Unset = UNSET,
    on_event: EventHandler | Sequence[EventHandler] | None = None,
    install: bool = True,
    store: str | Path | Store | None = None,
    jobs: int | None = None,
    environ: bool | Sequence[str] | Unset = UNSET,
) -> RepairResult:
    """Call ``func(*args, **kwargs)`` once and, if it fails, repair it.

    Returns a :class:`RepairResult`: ``ok`` with ``value`` set to what the (repaired) call
    returned, or not ``ok`` with the reason. With ``install`` (the default) a fix is installed
    into the live function. Coroutine functions are run with ``asyncio.run``. Every run before
    the last is on copies of the arguments, so the call you asked for happens once, on yours.
    Without ``tests=`` or ``verify=`` the no-oracle policy applies (see the README). ``jobs``: workers
    judging the engine's candidates at once (default: every core). ``environ``: the environment
    variables candidates keep (see :func:`regrow.heal`). A keyword not given takes its value from the
    configuration (``[tool.regrow]``, ``REGROW_*``: docs/configuration.md), else the default of ``heal``.
    """
    options = make_options(
        verify=verify, tests=tests, proposers=proposers, model=model, sandbox=sandbox, max_candidates=max_candidates,
        max_attempts=max_attempts, timeout=timeout, candidate_timeout=candidate_timeout, on_failure="raise",
        on_event=on_event, cooldown=0.0, store=store, jobs=jobs, environ=environ,
    )
    raw = unwrap(func)
    args, kwargs = tuple(args), dict(kwargs or {})
    replay = Replay(args, kwargs, verify, annotation_oracle(raw, verify, tests))
    checks: list[Check] = [replay, *(TestCallable(t) for t in tests)]
    failure, exc = _first_failure(raw, checks, args, kwargs)
    if failure is None:
        return RepairResult(True, raw.__qualname__, None, reason="nothing to repair: every check passed",
                            value=_run(raw, args, kwargs))
    request = RepairRequest(Target.of(raw), failure, tuple(checks), options, raised=exc,
                            snapshot=_copyable(args, kwargs), install=install)
    result = run_repair(request)
    if result.ok and install:
        result.value = _run(raw, args, kwargs)
    return result


def _copyable(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether the checks ran on copies (so the caller's arguments are as passed)."""
    try:
        copy.deepcopy((args, kwargs))
    except Exception:
        return False
    return True


def _first_failure(raw: types.FunctionType, checks: Sequence[Check], args: tuple[Any, ...],
                   kwargs: dict[str, Any]) -> tuple[Failure | None, BaseException | None]:
    """Run the checks on the function as it is; the first failure (and what it raised), or ``None``."""
    for check in checks:
        try:
            check(raw)
        except CheckFailed as exc:
            return check_failure("verify" if check is checks[0] else "test", raw, str(exc), args, kwargs), None
        except Exception as exc:  # the function itself raised
            return capture_exception(exc, raw, args, kwargs), exc
    return None, None


def _run(raw: types.FunctionType, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    value = raw(*args, **kwargs)
    return _run_coroutine(value) if inspect.iscoroutine(value) else value

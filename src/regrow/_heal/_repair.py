"""``repair()``: call a function once and, if it fails, repair it — the one-call front-end."""

from __future__ import annotations

import copy
import inspect
import types
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._checks._oracles import Check, CheckFailed, Replay, TestCallable, _run_coroutine, annotation_oracle
from .._evidence._failure import Failure, capture_exception, check_failure
from .._result import RepairResult
from .._target._target import Target
from .._target._unwrap import unwrap
from ._assembly import RepairRequest, run_repair
from ._options import RepairOptions, Test, make_options

if TYPE_CHECKING:
    from typing_extensions import Unpack


def repair(
    func: Callable[..., Any],
    args: Sequence[Any] = (),
    kwargs: Mapping[str, Any] | None = None,
    *,
    tests: Sequence[Test] = (),
    verify: Callable[[Any], object] | None = None,
    install: bool = True,
    **options: Unpack[RepairOptions],
) -> RepairResult:
    """Call ``func(*args, **kwargs)`` once and, if it fails, repair it.

    Returns a :class:`RepairResult`: ``ok`` with ``value`` set to what the (repaired) call returned, or not
    ``ok`` with the reason (it never raises the call's own exception). A bound method (``box.top``) is
    repaired as its function called with the object first, which is what ``tests=`` get. With ``install``
    (the default) a fix is installed into the live function. Coroutine functions are run with
    ``asyncio.run``. Every run before the last is on copies of the arguments, so the call you asked for
    happens once, on yours. Without ``tests=`` or ``verify=`` the no-oracle policy applies (see the
    README). ``jobs``: workers judging the engine's candidates at once (default: every core). The other
    options (``proposers``, ``model``, ``sandbox``, the budget, ``on_event``, ``store``, ``environ``) are
    :class:`RepairOptions`, as :func:`regrow.heal` takes them. A keyword not given takes its value from the
    configuration (``[tool.regrow]``, ``REGROW_*``: docs/configuration.md), else the default of ``heal``.
    """
    if "on_failure" in options:
        raise TypeError("repair() takes no on_failure=: it returns a RepairResult whether or not a fix was found "
                        "(its ok and reason say which); on_failure= is heal()'s")
    checked = make_options(verify=verify, tests=tests, on_failure="raise", cooldown=0.0, **options)
    args, kwargs = tuple(args), dict(kwargs or {})
    if isinstance(func, types.MethodType):  # a bound method: its function's call, with what it is bound to first
        method: types.MethodType = func
        func, args = method.__func__, (method.__self__, *args)
    raw = unwrap(func)
    replay = Replay(args, kwargs, verify, annotation_oracle(raw, verify, tests))
    checks: list[Check] = [replay, *(TestCallable(t) for t in tests)]
    failure, exc = _first_failure(raw, checks, args, kwargs)
    if failure is None:
        return RepairResult(True, raw.__qualname__, None, reason="nothing to repair: every check passed",
                            value=_run(raw, args, kwargs))
    request = RepairRequest(Target.of(raw), failure, tuple(checks), checked, raised=exc,
                            snapshot=_copyable(args, kwargs), install=install)
    if checked.store is not None:  # the fleet's budgets hold for its model calls (a worker's repair, say)
        from ._fleet import budgeted

        result = budgeted(request, checked.store)
    else:
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

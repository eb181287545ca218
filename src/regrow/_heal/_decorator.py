"""The ``@heal`` decorator: where a function is wrapped, and what it refuses at decoration.

The wrapper (:mod:`._wrapper`) calls the :class:`~._heal.Healing` state on a failure; this module
only checks the options and the function and puts the two together.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, overload

from .._errors import RegrowError
from .._target._source import snapshot
from .._target._unwrap import refusal, unwrap
from ._healing import Healing
from ._instrument import hook
from ._options import HealOptions, make_options
from ._switches import SWITCHES
from ._wrapper import make_wrapper

if TYPE_CHECKING:
    from typing_extensions import Unpack

F = TypeVar("F", bound=Callable[..., Any])


@overload
def heal(func: F, /) -> F: ...
@overload
def heal(**options: Unpack[HealOptions]) -> Callable[[F], F]: ...
def heal(func: Any = None, /, **options: Any) -> Any:
    """Heal a function when it fails: repair it, prove the repair, and install it for every caller.

    A call that raises (an ``Exception``, not ``KeyboardInterrupt``/``SystemExit``), or whose
    result ``verify`` does not accept, starts a repair session; a proven fix replaces the live
    function's code and the call is run again. When no fix is found the original exception
    propagates unchanged, with the attempt ledger attached as a note.

    - ``verify``: a predicate on the result; it passes by returning a true value (``None`` fails).
    - ``tests``: callables that take the function and raise ``AssertionError`` when it is wrong;
      every fix must pass them. They run during repair and in ``f.__regrow__.check()``, never on
      healthy calls.
    - ``proposers``: the chain of proposers, tried in order (default: the built-in engine).
    - ``model``: a model string (``"openai:gpt-5"``, ``"anthropic:claude-sonnet-4-5"``,
      ``"ollama:qwen2.5-coder:7b"``…) to try after the engine; see ``docs/llm.md``. A missing SDK
      or key is an error here, at decoration, not at the first failure.
    - ``sandbox``: where candidates are proven: ``"fork"`` (the default on Linux and macOS: a
      guarded child process with the live state), ``"inprocess"`` (fastest, time limit only),
      or a :class:`Sandbox` (``"pool"`` is refused: it cannot hold the live target). See ``docs/sandbox.md``.
    - ``max_candidates``, ``max_attempts``, ``timeout``, ``candidate_timeout``: the budget.
    - ``jobs``: warm workers judging the engine's candidates at once (default: every core); the
      patches found are the same whatever the number.
    - ``environ``: the environment variables the candidates' sandbox keeps: ``True`` (default) those the
      function's module reads by name (``os.environ["DATABASE_URL"]``), ``False`` none of the secret-like
      ones, or a list of names to keep as well. Their values are masked in every prompt, log and ledger.
    - ``on_failure``: ``"raise"`` (default) or ``"return_none"`` when no fix is found.
    - ``on_event``: callbacks that receive each :class:`Event`.
    - ``cooldown``: seconds before a failure that could not be repaired is tried again (the same bug,
      whatever the input: the key is the failure's fingerprint).
    - ``wait``: seconds a failing call waits for its repair (``None``, the default: the whole session,
      within ``timeout``). Past it the call gets its original exception (or ``None`` with
      ``on_failure="return_none"``) and the session goes on in a background thread; later calls run
      its fix once it is proven and installed. One session per function runs at a time: a call
      failing while it runs joins it (waits as ``wait`` allows) and starts none. See docs/production.md.
    - ``sessions_per_minute``: repair sessions ``@heal`` may start per minute across the process
      (default 10; ``None``: no cap); a failure past it starts none and gets its error.
    - ``store``: a SQLite file (or :class:`Store`) for the repair cache and the attempt ledger; a
      failure fixed before is fixed from the cache (still proven by the checks) with no search.
    - ``record``: keep the last ``record`` healthy calls (deep copies of arguments and result);
      a fix must return the same results for them. Off by default: it costs time on every healthy
      call, and it assumes the results returned without a failure were right.
    - ``write_back``: what a proven fix is kept as besides the live code: ``"off"`` (default),
      ``"patch"`` (a patch and its provenance in ``.regrow/patches``), ``"apply"`` (the file). See docs/delivery.md.
    - ``install_missing``, ``allow_install``: on a ``ModuleNotFoundError`` inside it, install the pinned requirement
      ``allow_install`` names (``{"yaml": "PyYAML==6.0.2"}``) into the active venv and call again (docs/agents.md).

    ``regrow.state(f).tally`` counts the failures seen, the sessions run, the failures that started
    none and why, and the fixes installed that no oracle proved (each logged at WARNING with the
    value it returns where the original raised).

    The function itself is returned, its own code instrumented (its body inside a ``try`` whose handler
    hands a failure to regrow: no extra frame on a healthy call; a generator's too, caught in its own frame);
    with ``verify=``/``record=``, above another decorator, or where its source does not compile to the running
    code, a wrapper is returned instead. ``regrow.state(f).mode`` says which (docs/production.md).

    Refuses (``TargetError``), at decoration, what it cannot heal: lambdas, functions nested in
    other functions, builtins. With healing disabled the function is returned as is.
    """
    checked = make_options(**options)  # the options' one spelling, with their defaults (see regrow._heal._options)

    def decorate(fn: Any) -> Any:
        if SWITCHES.disabled or getattr(fn, "__regrow__", None) is not None:
            return fn  # off, or healed already: a second decorator must not nest a second loop
        if isinstance(fn, (staticmethod, classmethod)):
            return type(fn)(decorate(fn.__func__))
        if isinstance(fn, property):
            raise RegrowError("heal cannot stand above @property (the class attribute must stay a property): put "
                              "@regrow.heal below it, directly above the def")
        raw = unwrap(fn)
        reason = refusal(raw)
        if reason:
            raise RegrowError(reason)
        entry = None if raw is fn else fn  # heal above another decorator: calls go through it, to the def
        if entry is not None and raw.__code__.co_flags & (inspect.CO_GENERATOR | inspect.CO_ASYNC_GENERATOR):
            raise RegrowError(f"heal above another decorator of the generator {raw.__qualname__} cannot see the "
                              "failures of its iteration: put @regrow.heal directly above the def")
        snapshot(raw)  # the file as it is at import: the code that runs is the code regrow heals
        state = Healing(raw, checked, entry)
        if entry is None and checked.verify is None and not checked.record and not hook(raw, state):
            raw.__regrow__ = state  # type: ignore[attr-defined]
            state.ready()
            return fn  # its own code is instrumented: the function itself, no wrapper (docs/production.md)
        wrapper = make_wrapper(raw, state, checked.verify, record=checked.record > 0, callee=entry)
        functools.update_wrapper(wrapper, fn)
        if entry is not None:  # the decorator's own API (lru_cache's cache_clear, cache_info…) stays reachable
            for name in dir(entry):
                if not name.startswith("_") and not hasattr(wrapper, name):
                    with contextlib.suppress(Exception):  # an attribute that cannot be read stays the decorator's
                        setattr(wrapper, name, getattr(entry, name))
        wrapper.__regrow__ = state  # type: ignore[attr-defined]
        state.wrapper = wrapper
        state.ready()
        return wrapper

    return decorate(func) if func is not None else decorate


def state(func: Callable[..., Any]) -> Healing:
    """The :class:`Healing` state of a function decorated with :func:`heal`."""
    found = getattr(func, "__regrow__", None)
    if not isinstance(found, Healing):
        raise RegrowError(f"{func!r} is not decorated with regrow.heal")
    return found

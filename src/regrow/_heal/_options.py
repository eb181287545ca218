"""The options ``@heal`` and ``repair()`` are configured with, checked once at decoration."""

from __future__ import annotations

import dataclasses
import difflib
import inspect
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from .._delivery._keep import WriteBackMode, check_mode
from .._events import EventHandler
from .._proposers._proposer import Proposer
from .._result import Budget
from .._sandbox import PoolSandbox, Sandbox, make_sandbox
from .._sandbox import default_sandbox as platform_sandbox
from .._settings import ConfigError, Settings, current
from .._store import Store
from .._stores._shared import shared
from .._target._environ import Keep

if TYPE_CHECKING:
    from typing_extensions import Unpack

OnFailure = Literal["raise", "return_none"]
SandboxMode = Literal["fork", "inprocess"]
Test = Callable[[Callable[..., Any]], object]


# ``Name==1.2.3`` or ``Name[extra]==1.2.3``: a pinned requirement and nothing pip could read as an option.
_PINNED = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?(?:\[[A-Za-z0-9._,-]+\])?==[A-Za-z0-9.+!_-]+")

_shared_sandbox: Sandbox | None = None
_sandbox_lock = threading.Lock()


def default_sandbox() -> Sandbox:
    """The process-wide sandbox used when none is given: a guarded fork where the platform has one."""
    global _shared_sandbox
    with _sandbox_lock:
        if _shared_sandbox is None:
            _shared_sandbox = platform_sandbox()
        return _shared_sandbox


@dataclasses.dataclass(frozen=True)
class Options:
    """Everything ``@heal`` and ``repair()`` are configured with (see :func:`heal`)."""

    verify: Callable[[Any], object] | None = None
    tests: tuple[Test, ...] = ()
    proposers: tuple[Proposer, ...] | None = None
    sandbox: Sandbox | None = None
    budget: Budget = dataclasses.field(default_factory=Budget)
    on_failure: OnFailure = "raise"
    on_event: tuple[EventHandler, ...] = ()
    cooldown: float = 300.0
    store: Store | None = None
    record: int = 0
    write_back: WriteBackMode = "off"  # what a proven fix is kept as (see regrow._delivery._keep)
    install_missing: bool = False  # install a missing module from allow_install (see regrow._heal._missing)
    allow_install: Mapping[str, str] = dataclasses.field(default_factory=dict)
    # Where the engine's own edits are proven (``None``: in ``sandbox``). The command and the benchmark
    # keep the in-process fast path for them; a model's candidates always go to ``sandbox``.
    engine_sandbox: Sandbox | None = None
    # The environment variables a candidate's sandbox keeps (regrow._target._environ): True, those the function's
    # module reads; False, none; names, those and these. Their values are masked everywhere.
    environ: Keep = True
    # The latency policy of @heal (regrow._heal._live): seconds a failing call waits for its repair (None: the whole
    # session); past it the call gets its error at once and the session goes on in the background.
    wait: float | None = None
    sessions_per_minute: int | None = 10  # sessions @heal starts in the process per minute (None: no cap)

    @property
    def oracle(self) -> bool:
        """Whether the user said what is right (``verify=``, ``tests=``, ``record=``): see regrow._proof._policy."""
        return self.verify is not None or bool(self.tests) or self.record > 0

    def chain(self) -> tuple[Proposer, ...]:
        """The proposers in order: the cache (with a store), then the given ones or the engine."""
        from .._proposers._cache import CacheProposer  # the proposers: imported for a repair, not at decoration
        from .._proposers._engine import Engine

        chosen = self.proposers if self.proposers is not None else (Engine(),)
        return (CacheProposer(self.store), *chosen) if self.store is not None else chosen



class RepairOptions(TypedDict, total=False):
    """The options ``repair()``, ``regrow.watch`` and ``@heal`` share: spelled once, here (see :func:`regrow.heal`
    for what each means). A key not given takes the configuration's value, else the default below."""

    proposers: Sequence[Proposer] | None  # default: the built-in engine
    model: str | None  # default: none (the engine only)
    sandbox: Sandbox | SandboxMode | None  # default: "fork" where the platform has it
    max_candidates: int  # default: 200
    max_attempts: int  # default: 3
    timeout: float  # default: 60.0 seconds
    candidate_timeout: float  # default: 5.0 seconds
    on_event: EventHandler | Sequence[EventHandler] | None
    store: str | Path | Store | None
    jobs: int | None  # default: every core
    environ: Keep


class HealOptions(RepairOptions, total=False):
    """Every option of ``@heal``: the shared ones and those of a decorated function's life."""

    verify: Callable[[Any], object] | None
    tests: Sequence[Test]
    on_failure: OnFailure  # default: "raise"
    cooldown: float  # default: 300.0 seconds
    record: int  # default: 0
    write_back: WriteBackMode  # default: "off"
    install_missing: bool
    allow_install: Mapping[str, str] | None
    wait: float | None
    sessions_per_minute: int | None  # default: 10


KEYWORDS = frozenset(HealOptions.__annotations__) | frozenset(RepairOptions.__annotations__)


def make_options(*, settings: Settings | None = None, **given: Unpack[HealOptions]) -> Options:
    """The options checked, as ``@heal`` takes them: the one place they are read with their defaults
    (``heal``, ``repair()`` and ``watch`` pass theirs through here; the command and the agent tools build
    theirs here too). A key not given takes the configuration's value (``settings``, default:
    ``[tool.regrow]`` and ``REGROW_*``, see docs/configuration.md), which is the old default when nothing
    is configured. A keyword that is not an option is a TypeError naming it."""
    unknown = sorted(set(given) - KEYWORDS)
    if unknown:
        near = difflib.get_close_matches(unknown[0], sorted(KEYWORDS), n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        raise TypeError(f"unexpected keyword argument {unknown[0]!r}{hint}")
    conf = current() if settings is None else settings
    verify = given.get("verify")
    tests = given.get("tests", ())
    proposers = given.get("proposers")
    model = given.get("model")
    on_event = given.get("on_event")
    install_missing = given.get("install_missing", False)
    allow_install = given.get("allow_install")
    wait = given.get("wait")
    sessions_per_minute = given.get("sessions_per_minute", 10)
    max_candidates = given.get("max_candidates", conf.max_candidates)
    max_attempts = given.get("max_attempts", conf.max_attempts)
    timeout = given.get("timeout", conf.timeout)
    candidate_timeout = given.get("candidate_timeout", conf.candidate_timeout)
    on_failure = given.get("on_failure", conf.on_failure)
    cooldown = given.get("cooldown", conf.cooldown)
    record = given.get("record", conf.record)
    write_back = given.get("write_back", conf.write_back)
    environ = given.get("environ", conf.environ)
    sandbox = conf.sandbox if given.get("sandbox") is None else given.get("sandbox")
    store = conf.store if given.get("store") is None else given.get("store")
    jobs = conf.jobs if given.get("jobs") is None else given.get("jobs")
    configured = model is None and proposers is None and conf.model is not None
    if configured:
        model = conf.model
    if on_failure not in ("raise", "return_none"):
        raise ValueError(f"on_failure must be 'raise' or 'return_none', not {on_failure!r}")
    if verify is not None and not callable(verify):
        raise TypeError("verify= must be a callable that takes the result and returns True to accept it")
    for test in tests:
        if not callable(test):
            raise TypeError(f"tests= must hold callables that take the function; got {test!r}")
        _takes_the_function(test)
    handlers = () if on_event is None else (on_event,) if callable(on_event) else tuple(on_event)
    if jobs is not None and (not isinstance(jobs, int) or isinstance(jobs, bool) or jobs < 1):
        raise ValueError(f"jobs= is how many workers judge candidates at once: an int of at least 1, not {jobs!r}")
    budget = Budget(max_candidates=max_candidates, max_attempts=max_attempts, timeout=timeout,
                    candidate_timeout=candidate_timeout, jobs=jobs)
    if store is not None and not isinstance(store, Store):
        store = shared(store)  # one store per location, whichever functions name it
    if isinstance(sandbox, PoolSandbox) or sandbox == "pool":  # type: ignore[comparison-overlap]
        raise ValueError("sandbox='pool' runs importable functions on plain data, and a candidate's proof needs "
                         "the live target and its checks: heal and repair take 'fork' (the default) or 'inprocess'")
    if isinstance(sandbox, str):
        sandbox = make_sandbox(sandbox)
    if model is not None:
        if proposers is not None:
            raise ValueError("give proposers= or model=, not both (model= is the engine, then that model)")
        proposers = _chain_for(model, conf, configured)
    if record < 0:
        raise ValueError("record= is how many healthy calls to keep; it cannot be negative")
    allowed = check_allowlist(allow_install, install_missing)
    if not isinstance(environ, bool) and (isinstance(environ, str) or not all(
            isinstance(name, str) and name for name in environ)):
        raise TypeError(f"environ= is True, False or a list of variable names, not {environ!r}")
    if wait is not None and (isinstance(wait, bool) or not isinstance(wait, (int, float)) or not wait >= 0):
        raise ValueError(f"wait= is the seconds a failing call may wait for its repair: a number >= 0 or None "
                         f"(the whole session), not {wait!r}")
    if sessions_per_minute is not None and (isinstance(sessions_per_minute, bool)
                                            or not isinstance(sessions_per_minute, int) or sessions_per_minute < 1):
        raise ValueError("sessions_per_minute= is how many repair sessions may start per minute in the process: "
                         f"an int of at least 1 or None (no cap), not {sessions_per_minute!r}")
    return Options(verify, tuple(tests), tuple(proposers) if proposers is not None else None, sandbox, budget,
                   on_failure, handlers, cooldown, store, record, check_mode(write_back), install_missing, allowed,
                   environ=environ if isinstance(environ, bool) else tuple(environ),
                   wait=None if wait is None else float(wait), sessions_per_minute=sessions_per_minute)


def _chain_for(model: str, conf: Settings, configured: bool) -> tuple[Proposer, ...]:
    """The engine, then ``model``; a malformed model string from the configuration is a ConfigError."""
    from .._proposers._chain import default_chain

    try:
        if conf.api_key or conf.base_url:
            return default_chain(model, api_key=conf.api_key, base_url=conf.base_url)
        return default_chain(model)
    except ValueError as exc:
        if configured:
            raise ConfigError(f"model (REGROW_MODEL or [tool.regrow] model): {exc}") from None
        raise


def check_allowlist(allow: Mapping[str, str] | None, enabled: bool) -> dict[str, str]:
    """The allowlist as given to ``heal``, checked: import names to pinned requirements."""
    if not allow:
        if enabled:
            raise ValueError('install_missing=True needs allow_install={"import_name": "Package==1.2.3", ...}: '
                             "only the modules listed there are ever installed")
        return {}
    checked = {}
    for name, requirement in allow.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"allow_install: {name!r} is not an import name")
        if not isinstance(requirement, str) or not _PINNED.fullmatch(requirement):
            raise ValueError(f"allow_install: {name!r} must map to a pinned requirement such as 'Package==1.2.3', "
                             f"not {requirement!r}")
        checked[name] = requirement
    return checked


def _takes_the_function(test: Test) -> None:
    """Refuse, at decoration, a test that cannot be called with the function: it would fail every candidate, and
    the repair would report only that none passed (``def test_area():`` without its parameter)."""
    try:
        signature = inspect.signature(test)
    except (TypeError, ValueError):  # a builtin or an object whose signature cannot be read: tried as it is
        return
    try:
        signature.bind(None)
    except TypeError:
        name = getattr(test, "__qualname__", repr(test))
        raise TypeError(f"tests= must hold callables that take the function as their one argument; {name}{signature} "
                        "cannot be called so") from None

"""The one assembly of a repair: a typed request in, policy → session → store → install → keep.

Every front-end — ``@heal``, ``repair()``, the ``regrow heal`` command (and so the pytest plugin,
which runs it, and the agent tools and MCP server, which build its request), the benchmark — builds
a :class:`RepairRequest` and calls :func:`run_repair`. What differs between them is only what they
gather before (the failing call or the failing test, the checks) and what they do with the result;
the sandbox a model's candidate is proven in and the no-oracle policy are decided here, once.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from .._proof._policy import admit
from .._session._loop import Session
from ._ledger import refused_result
from ._options import Options, default_sandbox

if TYPE_CHECKING:
    from .._checks._oracles import Check
    from .._evidence._failure import Failure
    from .._result import RepairResult
    from .._target._target import Target

Keep = Callable[["Target", "RepairResult", "Sequence[Check]"], None]


@dataclasses.dataclass(frozen=True)
class RepairRequest:
    """One repair to run: the target, its failure, the checks a fix must pass and the options.

    ``raised``: what the failing call raised (the no-oracle policy reads where it was raised);
    ``None`` for a rejected result or a failing test. ``snapshot``: the failing call's arguments
    were copied before the call (``True``), or why they could not be (a string: no session runs).
    ``oracle``: the checks say what is right (pytest tests do); ``None``: as the options say
    (``verify=``, ``tests=``, ``record=``). ``install``: put a proven fix into the live function.
    ``keep``: called with the target, the result and the checks it was proven against when a fix is
    proven (write-back, patches).
    """

    target: Target
    failure: Failure
    checks: tuple[Check, ...]
    options: Options = dataclasses.field(default_factory=Options)
    raised: BaseException | None = None
    snapshot: bool | str = True
    oracle: bool | None = None
    install: bool = True
    rebind: Callable[[types.FunctionType], None] | None = None
    keep: Keep | None = None


def run_repair(request: RepairRequest) -> RepairResult:
    """Run ``request``: the policy decides whether a session may run and adds the checks it needs
    (``docs/trust.md``), the session searches and proves in the options' sandbox (untrusted
    candidates) and engine sandbox (the engine's own edits), records in the store, installs, and
    ``keep`` keeps the fix. A refusal is reported and recorded as a result that is not ``ok``."""
    options, target = request.options, request.target
    oracle = options.oracle if request.oracle is None else request.oracle
    sandbox = options.sandbox or default_sandbox()
    refused = request.snapshot if isinstance(request.snapshot, str) else ""
    checks: Sequence[Check] = request.checks
    if not refused:
        checks, refused = admit(target, request.failure, request.raised, checks, sandbox, oracle=oracle,
                                snapshot=request.snapshot is True, environ=options.environ)
    if refused:
        return refused_result(target.qualname, request.failure, refused, options)
    session = Session(target, request.failure, checks, options.chain(), sandbox=sandbox,
                      engine_sandbox=options.engine_sandbox, budget=options.budget, on_event=options.on_event,
                      rebind=request.rebind, store=options.store, oracle=oracle, environ=options.environ)
    result = session.run(install=request.install)
    if result.ok and request.keep is not None:
        request.keep(session.target, result, session.checks)
    return result

"""The fork sandbox: each call runs in a fresh forked child that keeps the live state of its parent.

By default the child is forked from the caller at the moment of the call, so a job that closes
over state created just now sees exactly that state. With ``server=True`` a small fork server is
forked from the host at first use and every call is forked from that pristine copy instead; jobs
then cross to it as ``"module:qualname"`` references with plain-data arguments (``_server``).

The child (``_child``) starts a session of its own and guards itself (``_guard.harden``: limits,
secrets, the kernel's layers, the seccomp filter, the audit hook); the result comes back as frames
of plain data on a dedicated pipe, and what the child prints comes back, capped, as
``Outcome.output``. The parent enforces the wall-clock limit with SIGKILL to the child's process
group, and kills that group whenever the child ends, so nothing the child started outlives the
verdict. A child the seccomp filter killed (SIGSYS) ends as ``refused``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ._base import ErrorInfo, Limits, Outcome, clean, globals_of, masked
from ._channel import resolve_ref
from ._process import Forker, importable, unplain

if TYPE_CHECKING:
    from ._server import ForkServer

__all__ = ["ForkSandbox"]


class ForkSandbox:
    """Runs each call in a forked child with resource limits, scrubbed secrets, the kernel's layers
    (session, no capabilities, seccomp, Landlock, an empty network namespace) and an audit hook.

    ``server=False`` (the default) forks from the caller at call time: correct for any job,
    including a closure created just now. ``server=True`` forks from a server made at first use:
    the job must then be an importable function (or a ``call_ref`` reference) with plain-data
    arguments, and it sees the host's state as it was when the server was made.
    """

    name = "fork"

    def __init__(self, limits: Limits | None = None, *, server: bool = False) -> None:
        if not hasattr(os, "fork"):
            raise RuntimeError("the fork sandbox needs os.fork (Linux or macOS)")
        self.limits = limits or Limits()
        self.server = server
        self._forker = Forker()
        self._server: ForkServer | None = None
        if server:
            from ._server import ForkServer  # it forks from a Forker of its own

            self._server = ForkServer()

    def call(self, fn: Callable[..., Any], /, *args: Any, limits: Limits | None = None) -> Outcome:
        if self._server is None:
            return masked(self._forker.call((lambda: fn(*args)) if args else fn, limits or self.limits), globals_of(fn))
        ref = importable(fn, "the fork server")
        return ref if isinstance(ref, Outcome) else self.call_ref(ref, *args, limits=limits)

    def call_ref(self, ref: str, /, *args: Any, limits: Limits | None = None) -> Outcome:
        """Run the function named ``"module:qualname"`` with plain-data arguments."""
        limits = limits or self.limits
        refused = unplain(args)
        if refused is not None:
            return refused
        if self._server is not None:
            try:
                return masked(self._server.call(ref, list(args), limits))
            except Exception as exc:  # MemoryError included: nothing escapes call
                return Outcome("crashed", detail=clean(f"the fork server failed: {type(exc).__name__}: {exc}"))
        try:
            fn = resolve_ref(ref)
        except Exception as exc:
            return Outcome("error", error=ErrorInfo.from_exception(exc), detail=f"cannot resolve {ref}")
        return masked(self._forker.call(lambda: fn(*args), limits), globals_of(fn))

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
        self._forker.close()

    def __enter__(self) -> ForkSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

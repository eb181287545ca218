"""What regrow tells the user about a repair that did not happen: the note on their exception,
and the result (recorded in the store) of a failure no session may run for."""

from __future__ import annotations

import contextlib
import logging
import sys

from .._events import Event, emit
from .._evidence._failure import Failure
from .._result import RepairResult
from ._options import Options

log = logging.getLogger("regrow")


def refused_result(qualname: str, failure: Failure, reason: str, options: Options) -> RepairResult:
    """The result of a failure no session may run for (see regrow._proof._policy), reported and recorded as one."""
    emit(options.on_event, Event("exhausted", qualname, message=reason))
    log.warning("%s: %s", qualname, reason)
    result = RepairResult(False, qualname, failure, reason=reason)
    if options.store is not None:
        try:
            options.store.record(result, key=None)
        except Exception as exc:  # a locked or broken store must not cost the user the refusal's reason
            log.warning("could not record the refusal in %s: %s", options.store, exc)
    return result


def ledger_of(exc: BaseException) -> str:
    """What regrow attached to ``exc`` when it could not repair it ("" when nothing): the notes on
    3.11+, the ``__regrow_ledger__`` attribute on 3.10. Works the same on every version."""
    notes = [note for note in getattr(exc, "__notes__", ()) if isinstance(note, str) and note.startswith("regrow")]
    return "\n".join(notes) if notes else str(getattr(exc, "__regrow_ledger__", ""))


def note(exc: BaseException, text: str) -> None:
    """Attach ``text`` to the user's exception: a note on 3.11+, ``__regrow_ledger__`` on 3.10."""
    if sys.version_info >= (3, 11):
        exc.add_note(text)
    else:
        previous = getattr(exc, "__regrow_ledger__", "")
        with contextlib.suppress(Exception):  # exceptions with __slots__ cannot take the attribute
            exc.__regrow_ledger__ = f"{previous}\n{text}" if previous else text  # type: ignore[attr-defined]

"""The arguments of a call as the caller passed them.

With ``verify=`` or ``record=`` the wrapper copies a call's arguments before it runs; when the call
changed them before it failed, they are put back in place before any proof, so the fix is proven
on — and the retry runs with — what the caller passed.
"""

from __future__ import annotations

import copy
import pickle
from typing import Any

from .._checks._transcript import Unjudged, restore
from ._wrapper import ATOMS

Snapshot = tuple[tuple[Any, ...], dict[str, Any]]


def take_snapshot(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Snapshot | None:
    """Copies of a call's arguments taken before it runs (``verify=``/``record=`` only); ``None``
    when they cannot be copied. Immutable scalars need no copy; plain data is copied through
    pickle (several times faster than ``deepcopy``), anything else with ``deepcopy``."""
    if all(type(value) in ATOMS for value in (*args, *kwargs.values())):
        return args, kwargs  # the wrapper builds a fresh kwargs dict for every call
    try:
        copied: Snapshot = pickle.loads(pickle.dumps((args, kwargs), pickle.HIGHEST_PROTOCOL))
        return copied
    except Exception:
        pass
    try:
        return copy.deepcopy((args, kwargs))
    except Exception:
        return None


def put_back(args: tuple[Any, ...], kwargs: dict[str, Any], snapshot: Snapshot | None) -> bool | str:
    """With a snapshot, put arguments the failing call changed back as the caller passed them.

    ``True`` when the arguments are now the caller's, ``False`` without a snapshot (the guard then
    finds out whether the function changes them), or the reason they cannot be put back.
    """
    if snapshot is None:
        return False
    try:
        restore(args, kwargs, [list(snapshot[0]), snapshot[1]])
    except Unjudged as exc:
        return (f"refused: the failing call changed its arguments before it failed and regrow cannot put them "
                f"back ({exc}), so no proof would be a proof on your input")
    return True

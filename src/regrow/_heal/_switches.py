"""Process-wide switches: turning healing off, for users' own test suites.

One private object with a lock, not module globals scattered around.
"""

from __future__ import annotations

import os
import threading


class _Switches:
    __slots__ = ("_disabled", "_lock")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._disabled = os.environ.get("REGROW_DISABLE", "").strip().lower() in {"1", "true", "yes", "on"}

    @property
    def disabled(self) -> bool:
        return self._disabled

    def set_disabled(self, value: bool) -> None:
        with self._lock:
            self._disabled = value


SWITCHES = _Switches()


def disable() -> None:
    """Turn healing off in this process.

    Functions decorated afterwards are returned unchanged; functions decorated before re-raise
    their failures as if they were not decorated. ``REGROW_DISABLE=1`` does the same at start-up.
    """
    SWITCHES.set_disabled(True)


def enable() -> None:
    """Turn healing back on (the default unless ``REGROW_DISABLE`` is set)."""
    SWITCHES.set_disabled(False)


def is_enabled() -> bool:
    """Whether healing is on in this process."""
    return not SWITCHES.disabled

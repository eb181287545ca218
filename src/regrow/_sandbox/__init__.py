"""Where candidate code runs: one interface, several modes of isolation.

``inprocess`` is fastest and isolates nothing but time; ``fork`` runs each call in a guarded child
forked from the caller (the default where ``os.fork`` exists); ``pool`` keeps warm guarded workers
for importable functions. ``docs/sandbox.md`` describes what each mode protects against.
"""

from __future__ import annotations

import os

from ._base import TEXT_LIMIT, ErrorInfo, Limits, Outcome, Sandbox, Status, clean
from ._fork import ForkSandbox
from ._guard import SandboxViolation
from ._inprocess import InProcessSandbox, SandboxTimeout
from ._pool import PoolSandbox

MODES = ("inprocess", "fork", "pool")

__all__ = [
    "MODES",
    "TEXT_LIMIT",
    "ErrorInfo",
    "ForkSandbox",
    "InProcessSandbox",
    "Limits",
    "Outcome",
    "PoolSandbox",
    "Sandbox",
    "SandboxTimeout",
    "SandboxViolation",
    "Status",
    "clean",
    "default_sandbox",
    "make_sandbox",
]


def default_sandbox(limits: Limits | None = None) -> Sandbox:
    """The fork sandbox where the platform can fork (Linux, macOS), else the in-process one."""
    return make_sandbox("fork" if hasattr(os, "fork") else "inprocess", limits)


def make_sandbox(name: str, limits: Limits | None = None) -> Sandbox:
    """A sandbox by mode name: ``"inprocess"``, ``"fork"`` or ``"pool"``."""
    if name == "inprocess":
        return InProcessSandbox(limits)
    if name == "fork":
        return ForkSandbox(limits)
    if name == "pool":
        return PoolSandbox(limits=limits)
    raise ValueError(f"unknown sandbox mode {name!r}; expected one of {', '.join(MODES)}")

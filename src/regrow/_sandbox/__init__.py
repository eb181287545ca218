"""Where candidate code runs: one interface, several modes of isolation."""

from ._base import ErrorInfo, Limits, Outcome, Sandbox, Status
from ._inprocess import InProcessSandbox, SandboxTimeout

__all__ = ["ErrorInfo", "InProcessSandbox", "Limits", "Outcome", "Sandbox", "SandboxTimeout", "Status"]

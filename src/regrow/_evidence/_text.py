"""The evidence of a failure as plain text for one destination (an issue body, a record on disk).

The policy decides what the destination may have (see :mod:`regrow._evidence._disclosure`); a withheld
section is named as withheld, an empty one is left out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._redact import redact_text
from ._disclosure import Destination

if TYPE_CHECKING:
    from ._failure import Failure

_LIMIT = 6000  # characters of the whole text


def evidence_text(failure: Failure, destination: Destination) -> str:
    """What ``destination`` may read of ``failure``: arguments, locals, causes, environment, logs."""
    shown = failure.disclosed(destination)
    parts: list[str] = []

    def named(title: str, values: dict[str, str]) -> None:
        if values:
            parts.append(f"{title}:\n" + "\n".join(f"  {name} = {value}" for name, value in values.items()))

    named("arguments", dict(shown.arguments))
    named("locals", {k: v for k, v in shown.locals.items() if k not in shown.arguments})
    named("details", dict(shown.details))
    named("exception attributes", dict(shown.attributes))
    if shown.causes:
        parts.append("chained exceptions:\n" + "\n".join(f"  {cause}" for cause in shown.causes))
    if shown.frames:
        parts.append("frames below the function:\n" + "\n".join(f"  {frame}" for frame in shown.frames))
    named("environment", dict(shown.environment))
    if shown.logs:
        parts.append("log records of the failing call:\n" + "\n".join(f"  {line}" for line in shown.logs))
    if shown.withheld:
        parts.append("withheld by the evidence policy: " + ", ".join(sorted(shown.withheld)))
    text = "\n".join(parts)
    return redact_text(text if len(text) <= _LIMIT else text[: _LIMIT - 4] + " ...")

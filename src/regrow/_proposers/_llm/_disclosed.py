"""The failure's evidence beyond its frame, for the model's prompt, as the evidence policy lets a
provider have it: the exception's attributes and chained causes, the frames below the function,
the allowed environment, the log records of the failing call, and what was withheld.

Each section is bounded here (a few lines of capped text), so that together they stay small
beside the function and the failure; a withheld section is named, an empty one left out.
"""

from __future__ import annotations

import dataclasses

from ..._errors import ProposerError
from ..._evidence._failure import Failure
from .._proposer import Request
from ._sections import cap

_LOG_LINES = 12


def disclosed(request: Request) -> Request:
    """``request`` with its failure as the provider may see it; refused when the source is withheld."""
    failure = request.failure.disclosed("provider")
    if "source" in failure.withheld:
        raise ProposerError("the evidence policy withholds the source from the provider: no model is asked")
    return request if failure is request.failure else dataclasses.replace(request, failure=failure)


def evidence_sections(failure: Failure) -> dict[str, list[str]]:
    """The sections, in prompt order; each has its full variant and an empty one."""
    parts: dict[str, list[str]] = {}
    if failure.details:
        parts["details"] = _listed("## Details given with request_healing()", failure.details, 300)
    if failure.attributes or failure.causes:
        lines = [f"- {name} = {cap(value, 200)}" for name, value in failure.attributes.items()]
        lines += [f"- {cap(cause, 300)}" for cause in failure.causes]
        parts["causes"] = ["## The exception's attributes and chained causes\n" + "\n".join(lines), ""]
    if failure.frames:
        parts["frames"] = ["## Frames below the function, up to the raise\n"
                           + "\n".join(f"- {cap(frame, 300)}" for frame in failure.frames), ""]
    if failure.environment:
        parts["environment"] = _listed("## Environment (allowed variables)", failure.environment, 200)
    if failure.logs:
        kept = failure.logs[-_LOG_LINES:]
        more = f"({len(failure.logs) - len(kept)} earlier records left out)\n" if len(failure.logs) > len(kept) else ""
        parts["logs"] = ["## Log records of the failing call (oldest first)\n" + more
                         + "\n".join(f"- {cap(line, 240)}" for line in kept), ""]
    if failure.withheld:
        parts["withheld"] = ["## Withheld by the user's evidence policy (not sent; do not guess them)\n"
                             + ", ".join(sorted(failure.withheld))]
    return parts


def _listed(title: str, values: object, limit: int) -> list[str]:
    items = values.items() if isinstance(values, dict) else dict(values).items()  # type: ignore[call-overload]
    return [title + "\n" + "\n".join(f"- {name} = {cap(text, limit)}" for name, text in items), ""]

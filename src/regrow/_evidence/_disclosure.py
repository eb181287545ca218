"""How much evidence goes where: a typed policy per destination (disk, provider, issue).

Every section of a :class:`~regrow.extend.Failure` (arguments, locals, environment, logs, source,
traceback) is either sent to a destination or *withheld* from it. A withheld section is absent —
the destination is told it exists and was kept back — which is not the same as an empty one
(nothing was captured). The same redaction runs for every destination, once, at capture; the
user's extension points (more secret names, more value shapes, a renderer for their own types)
are part of the policy and apply to every redaction in the process.
"""

from __future__ import annotations

import dataclasses
import re
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

from .. import _redact
from .._settings import FIELDS, Settings, on_load

Destination = Literal["disk", "provider", "issue"]
Section = Literal["arguments", "locals", "environment", "logs", "source", "traceback"]
SECTIONS: tuple[Section, ...] = ("arguments", "locals", "environment", "logs", "source", "traceback")


@dataclasses.dataclass(frozen=True)
class Sections:
    """Which sections of the evidence one destination receives (``True``: sent, ``False``: withheld)."""

    arguments: bool = True
    locals: bool = True
    environment: bool = True
    logs: bool = True
    source: bool = True
    traceback: bool = True

    def withheld(self) -> frozenset[Section]:
        return frozenset(name for name in SECTIONS if not getattr(self, name))


@dataclasses.dataclass(frozen=True)
class Redaction:
    """The user's redaction rules, on top of regrow's own.

    ``names``: regular expressions; a variable, key, attribute or header whose name matches one is
    masked. ``values``: regular expressions; any text matching one is masked wherever it appears.
    ``render``: called with each value shown as evidence; a string it returns is shown instead of
    regrow's own rendering (``None``: render as usual). Its text is redacted like any other.
    """

    names: Sequence[str | re.Pattern[str]] = ()
    values: Sequence[str | re.Pattern[str]] = ()
    render: Callable[[object], str | None] | None = None


@dataclasses.dataclass(frozen=True)
class EvidencePolicy:
    """What is captured, and how much of it each destination receives.

    - ``disk`` (``regrow.capture()`` snapshots), ``provider`` (a model's prompt), ``issue`` (an issue
      body on GitHub, often public: by default it gets no locals, environment or logs).
    - ``env_allowlist``: the names of environment variables captured; nothing else is read. A name
      that holds a secret (``*_TOKEN``, ``*_KEY``…) or a value shaped like one is masked even here.
    - ``frames``: also capture the frames between the decorated function and the raise (the
      helpers it called), each with its locals. Off by default.
    - ``value_limit``: characters one rendered value may take; ``repr_budget``: seconds every
      user ``repr`` of one capture may take together.
    - ``capture_dir``, ``capture_max_files``, ``capture_max_bytes``: where ``regrow.capture()``
      writes, and the bounds of that folder (older snapshots are removed first).
    """

    disk: Sections = Sections()
    provider: Sections = Sections()
    issue: Sections = Sections(locals=False, environment=False, logs=False)
    env_allowlist: Sequence[str] = ()
    frames: bool = False
    value_limit: int = 400
    repr_budget: float = 0.5
    redaction: Redaction = Redaction()
    capture_dir: str | Path = ".regrow/captures"
    capture_max_files: int = 50
    capture_max_bytes: int = 5_000_000

    def sections(self, destination: Destination) -> Sections:
        if destination not in ("disk", "provider", "issue"):
            raise ValueError(f"the destinations are 'disk', 'provider' and 'issue', not {destination!r}")
        found: Sections = getattr(self, destination)
        return found


class _Current:
    __slots__ = ("lock", "policy")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.policy = EvidencePolicy()


_CURRENT = _Current()


def configure_evidence(policy: EvidencePolicy) -> EvidencePolicy:
    """Use ``policy`` for every capture in this process from now on; returns the policy it replaces."""
    if not isinstance(policy, EvidencePolicy):
        raise TypeError(f"configure_evidence() takes an EvidencePolicy, not {type(policy).__name__}")
    names = tuple(_compiled(policy.redaction.names, "names"))
    values = tuple(_compiled(policy.redaction.values, "values"))
    if policy.value_limit < 40 or policy.capture_max_files < 1 or policy.capture_max_bytes < 1024:
        raise ValueError("value_limit must be at least 40, capture_max_files at least 1, capture_max_bytes 1024")
    with _CURRENT.lock:
        previous, _CURRENT.policy = _CURRENT.policy, policy
        _redact.extend(names, values)
    return previous


def evidence_policy() -> EvidencePolicy:
    """The policy captures use now (see :func:`configure_evidence`)."""
    return _CURRENT.policy


def _compiled(patterns: Sequence[str | re.Pattern[str]], field: str) -> list[re.Pattern[str]]:
    if isinstance(patterns, str):
        raise TypeError(f"Redaction.{field} is a sequence of patterns, not one string")
    out = []
    for pattern in patterns:
        try:
            out.append(pattern if isinstance(pattern, re.Pattern) else re.compile(pattern))
        except re.error as exc:
            raise ValueError(f"Redaction.{field}: {pattern!r} is not a regular expression: {exc}") from None
    return out


def _apply_settings(settings: Settings) -> None:
    """Settings that name the evidence policy make it the process's (docs/evidence.md); none: left alone."""
    names = [n for n in FIELDS if n.startswith("evidence_")]
    if all(getattr(settings, n) == FIELDS[n].default for n in names):
        return
    now = evidence_policy()
    redaction = Redaction(settings.evidence_redact_names, settings.evidence_redact_values, now.redaction.render)
    configure_evidence(dataclasses.replace(now, env_allowlist=settings.evidence_env_allowlist,
                                           frames=settings.evidence_frames,
                                           value_limit=settings.evidence_value_limit, redaction=redaction))


on_load(_apply_settings)

"""An ambiguous repair: several candidates pass every check but disagree with each other.

When the tests cannot decide between candidates that behave differently on inputs the engine can
derive (the tests' own calls and small variations of them), the engine does not pick one by rank: it
installs nothing and reports an :class:`Ambiguity` — the original source, the disagreeing candidates'
sources, and the inputs that separate them, with what each candidate (and the original) does there.

It is plain data (strings only) so that it can be stored, shown, sent over a pipe and put in a
model's prompt (a "choose" request takes exactly ``original``, ``candidates``, ``inputs`` and
``outputs``). An input is shown as the arguments' text (``"[1, 2], 3"``), never as the objects: the
host does not open recorded calls (see :mod:`regrow._checks._inputs`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

MAX_CANDIDATES = 4  # disagreeing candidates an ambiguity keeps
MAX_INPUTS = 5  # separating inputs it keeps


@dataclasses.dataclass(frozen=True)
class Separation:
    """One input on which the candidates disagree.

    ``call`` is the arguments as a reader sees them (``"[1, 2], 3"``); ``outputs`` holds one behaviour
    per candidate, in the order of :attr:`Ambiguity.candidates` (``"returned 3"``, ``"raised ValueError"``,
    ``"timeout"``; a returned value is shown with the arguments after the call); ``original`` is the
    original's behaviour there (``""`` if unknown).
    """

    call: str
    outputs: tuple[str, ...]
    original: str = ""

    def to_plain(self) -> dict[str, Any]:
        return {"call": self.call, "outputs": list(self.outputs), "original": self.original}

    @classmethod
    def from_plain(cls, data: Any) -> Separation:
        """From untrusted plain data; ``ValueError`` unless it has the right shape."""
        if type(data) is not dict or not {"call", "outputs"} <= set(data) <= {"call", "outputs", "original"}:
            raise ValueError("a separation must be an object with call, outputs and (optionally) original")
        call, outputs, original = data["call"], data["outputs"], data.get("original", "")
        if type(call) is not str or type(original) is not str or type(outputs) is not list \
                or not all(type(item) is str for item in outputs):
            raise ValueError("a separation's call, outputs and original must be strings")
        return cls(call, tuple(outputs), original)


@dataclasses.dataclass(frozen=True)
class Ambiguity:
    """Candidates that pass every check and disagree on derivable inputs: the repair is not decided.

    ``candidates`` are whole function sources, best ranked first; ``labels`` describe each (what edit
    made it); ``separations`` are the inputs that tell them apart, each with every candidate's output.
    """

    original: str
    candidates: tuple[str, ...]
    separations: tuple[Separation, ...]
    labels: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if len(self.candidates) < 2:
            raise ValueError("an ambiguity needs at least two candidates")
        if not self.separations:
            raise ValueError("an ambiguity needs at least one input that separates its candidates")
        for separation in self.separations:
            if len(separation.outputs) != len(self.candidates):
                raise ValueError("each separation holds one output per candidate")
        if self.labels and len(self.labels) != len(self.candidates):
            raise ValueError("labels, if given, are one per candidate")

    @property
    def inputs(self) -> list[str]:
        """The separating inputs, as the arguments' text."""
        return [separation.call for separation in self.separations]

    @property
    def outputs(self) -> list[list[str]]:
        """Each candidate's outputs on :attr:`inputs`: ``outputs[candidate][input]``."""
        return [[separation.outputs[i] for separation in self.separations] for i in range(len(self.candidates))]

    def summary(self) -> str:
        """One line: how many candidates disagree, and on which input."""
        first = self.separations[0]
        shown = first.call if len(first.call) <= 60 else first.call[:57] + "..."
        return (f"ambiguous: {len(self.candidates)} candidates pass every check but disagree on "
                f"f({shown})")

    def describe(self) -> str:
        """Several lines for a reader: each candidate, and what each does on the separating inputs."""
        lines = [self.summary()]
        for i, source in enumerate(self.candidates):
            label = f" ({self.labels[i]})" if self.labels else ""
            lines.append(f"  candidate {i + 1}{label}:")
            lines += [f"    {line}" for line in source.strip("\n").splitlines()]
        for separation in self.separations:
            lines.append(f"  on f({separation.call}):")
            if separation.original:
                lines.append(f"    original: {separation.original}")
            lines += [f"    candidate {i + 1}: {output}" for i, output in enumerate(separation.outputs)]
        return "\n".join(lines)

    def to_plain(self) -> dict[str, Any]:
        return {"original": self.original, "candidates": list(self.candidates), "labels": list(self.labels),
                "separations": [separation.to_plain() for separation in self.separations]}

    @classmethod
    def from_plain(cls, data: Any) -> Ambiguity:
        """From untrusted plain data; ``ValueError`` unless it has the right shape."""
        if type(data) is not dict or not {"original", "candidates", "separations"} <= set(data):
            raise ValueError("an ambiguity must be an object with original, candidates and separations")
        original, candidates, labels = data["original"], data["candidates"], data.get("labels", [])
        separations = data["separations"]
        if type(original) is not str or type(candidates) is not list or type(labels) is not list \
                or type(separations) is not list \
                or not all(type(item) is str for item in [*candidates, *labels]):
            raise ValueError("an ambiguity's original, candidates and labels must be strings")
        return cls(original, tuple(candidates), tuple(Separation.from_plain(item) for item in separations),
                   tuple(labels))

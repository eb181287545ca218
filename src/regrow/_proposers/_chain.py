"""The default chain of proposers: the built-in engine first, a model only for what it cannot fix.

The engine is free, offline and deterministic, so it always goes first; a model (when one is
configured) is asked only after the engine ran out, and its prompt summarises what the engine
already tried.
"""

from __future__ import annotations

from typing import Any

from ._engine import Engine
from ._proposer import Proposer


def default_chain(model: str | None = None, **llm_options: Any) -> tuple[Proposer, ...]:
    """``(Engine(),)``, or ``(Engine(), proposer_for(model, **llm_options))`` when ``model`` is given.

    ``model`` is a model string such as ``"openai:gpt-5"`` (see :func:`regrow.llm.proposer_for`);
    a missing SDK or API key raises :class:`~regrow.ProposerError` here, before any failure.
    """
    if model is None:
        if llm_options:
            raise TypeError(f"options {sorted(llm_options)} were given without a model")
        return (Engine(),)
    from ._llm import proposer_for

    return (Engine(), proposer_for(model, **llm_options))

"""What a model proposer is to the requests it makes: the protocol :class:`~._proposer.LLMProposer` meets.

A session's run (:mod:`._run`) and a one-off choose request (:mod:`._choose`) take the proposer by
this shape — its transport, budgets, sampling and prompt options, and its usage counters — so that
neither imports the proposer that starts them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ._accounting import ModelLimits, Price, Usage
    from ._prompt import PromptOptions
    from ._retry import RetryPolicy
    from ._strategy import EditFormat, Opening
    from ._transport import Transport


class ModelProposer(Protocol):
    """A model proposer's settings and counters, as its requests use them."""

    name: str
    transport: Transport
    params: dict[str, Any]
    stream: bool | None
    limits: ModelLimits
    retry: RetryPolicy
    price: Price | None
    prompt_options: PromptOptions
    compact: bool
    edit_format: EditFormat
    opening: Opening
    evidence: bool
    evidence_timeout: float
    locate: bool | None
    last_prompt_tokens: int
    last_stop: str  # what became of the latest session's choose request

    def _count(self, session: Usage, call: Usage) -> None: ...  # add a call to its usage and the session's

    def _noted(self, session: Usage, kind: str) -> None: ...  # count an echo or a repeat ("echoes", "repeats")

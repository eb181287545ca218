"""Language-model proposers: one per wire protocol, sharing prompt building and reply parsing.

Importing this package imports no SDK; each provider's SDK (an extra: ``regrow[openai]``,
``regrow[anthropic]``, ``regrow[gemini]``, ``regrow[litellm]``) is imported on the first call.
"""

from ._accounting import DEFAULT_PRICES, ModelLimits, Usage, process_usage
from ._choose import Choice, Chooser, choose
from ._proposer import LLMProposer
from ._providers import PRESETS, proposer_for, transport_for
from ._retry import RetryPolicy
from ._transport import Chat, Reply, Transport, TransportError

__all__ = [
    "DEFAULT_PRICES",
    "PRESETS",
    "Chat",
    "Choice",
    "Chooser",
    "LLMProposer",
    "ModelLimits",
    "Reply",
    "RetryPolicy",
    "Transport",
    "TransportError",
    "Usage",
    "choose",
    "process_usage",
    "proposer_for",
    "transport_for",
]

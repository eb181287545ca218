"""Language-model proposers for regrow: ``proposer_for("openai:gpt-5")`` and what configures it.

Importing this module imports no provider SDK; each SDK is an extra (``pip install 'regrow[openai]'``,
``'regrow[anthropic]'``, ``'regrow[gemini]'``, ``'regrow[litellm]'``) imported on the first call.
See ``docs/llm.md``.
"""

from ._proposers._chain import default_chain
from ._proposers._llm import (
    DEFAULT_PRICES,
    PRESETS,
    Chat,
    Choice,
    Chooser,
    LLMProposer,
    ModelLimits,
    Reply,
    RetryPolicy,
    Transport,
    TransportError,
    Usage,
    choose,
    process_usage,
    proposer_for,
    transport_for,
)

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
    "default_chain",
    "process_usage",
    "proposer_for",
    "transport_for",
]

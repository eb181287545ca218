"""Model strings (``provider:model``) to transports: which wire protocol, endpoint and key.

Keys and endpoints come from keyword arguments, else from the usual environment variables. A
missing SDK or key is a :class:`~regrow.ProposerError` here, before any call is made.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from typing import Any, Literal

from ..._errors import ProposerError
from ..._sandbox._scrub import register_secret
from ._anthropic import AnthropicTransport
from ._gemini import GeminiTransport
from ._litellm import LiteLLMTransport
from ._openai import OpenAITransport
from ._proposer import LLMProposer
from ._transport import Transport

Wire = Literal["openai", "anthropic", "gemini", "litellm"]


@dataclasses.dataclass(frozen=True)
class Preset:
    """How one provider name is reached."""

    wire: Wire
    key_env: tuple[str, ...] = ()
    base_url: str | None = None
    base_url_env: str | None = None
    key_required: bool = True
    default_key: str | None = None


PRESETS: Mapping[str, Preset] = {
    "openai": Preset("openai", ("OPENAI_API_KEY",), base_url_env="OPENAI_BASE_URL"),
    "anthropic": Preset("anthropic", ("ANTHROPIC_API_KEY",), base_url_env="ANTHROPIC_BASE_URL"),
    "gemini": Preset("gemini", ("GEMINI_API_KEY", "GOOGLE_API_KEY")),
    "litellm": Preset("litellm", key_required=False),
    "ollama": Preset("openai", (), "http://localhost:11434/v1", "OLLAMA_BASE_URL", key_required=False,
                     default_key="ollama"),
    "openrouter": Preset("openai", ("OPENROUTER_API_KEY",), "https://openrouter.ai/api/v1"),
    "groq": Preset("openai", ("GROQ_API_KEY",), "https://api.groq.com/openai/v1"),
    "together": Preset("openai", ("TOGETHER_API_KEY",), "https://api.together.xyz/v1"),
    "fireworks": Preset("openai", ("FIREWORKS_API_KEY",), "https://api.fireworks.ai/inference/v1"),
    "mistral": Preset("openai", ("MISTRAL_API_KEY",), "https://api.mistral.ai/v1"),
    "deepseek": Preset("openai", ("DEEPSEEK_API_KEY",), "https://api.deepseek.com/v1"),
}


def split_model(model: str) -> tuple[str, str]:
    """``"ollama:qwen2.5-coder:7b"`` → ``("ollama", "qwen2.5-coder:7b")``: the provider is before the first colon."""
    provider, sep, name = model.partition(":")
    provider = provider.strip().lower()
    if not sep or not provider or not name.strip():
        known = ", ".join(sorted(PRESETS))
        raise ValueError(f"model {model!r} must be 'provider:model', e.g. 'openai:gpt-5' (providers: {known})")
    if provider not in PRESETS:
        raise ValueError(f"unknown provider {provider!r} in {model!r}; known: {', '.join(sorted(PRESETS))} "
                         "(any OpenAI-compatible endpoint: 'openai:<model>' with base_url=)")
    return provider, name.strip()


def transport_for(
    model: str,
    *,
    api_key: str | None = None,
    base_url: str | None = None,
    client_options: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Transport:
    """The transport for ``model``; raises :class:`ProposerError` for a missing SDK or key."""
    env = os.environ if environ is None else environ
    provider, name = split_model(model)
    preset = PRESETS[provider]
    url = base_url or (env.get(preset.base_url_env) if preset.base_url_env else None) or preset.base_url
    key = api_key or next((env[k] for k in preset.key_env if env.get(k)), None) or preset.default_key
    if api_key:
        register_secret(api_key)  # a key passed in code: masked in what candidates send back, as the environment's
    custom_endpoint = provider == "openai" and url is not None  # a local or compatible server may need no key
    if key is None and preset.key_required and not custom_endpoint:
        where = " or ".join(preset.key_env)
        raise ProposerError(f"{provider}:{name} needs an API key: set {where} or pass api_key=")
    if preset.wire == "openai":
        field = "max_completion_tokens" if provider == "openai" and url is None else "max_tokens"
        return OpenAITransport(name, provider=provider, api_key=key or "not-needed", base_url=url,
                               max_tokens_field=field, client_options=client_options)
    if preset.wire == "anthropic":
        return AnthropicTransport(name, api_key=key or "", base_url=url, client_options=client_options)
    if preset.wire == "gemini":
        return GeminiTransport(name, api_key=key or "", base_url=url, client_options=client_options)
    return LiteLLMTransport(name, api_key=key, base_url=url, client_options=client_options)


def proposer_for(
    model: str,
    *,
    api_key: str | None = None,
    base_url: str | None = None,
    client_options: Mapping[str, Any] | None = None,
    **options: Any,
) -> LLMProposer:
    """An :class:`LLMProposer` for a model string.

    ``"openai:gpt-5"``, ``"anthropic:claude-sonnet-4-5"``, ``"gemini:gemini-2.5-pro"``,
    ``"ollama:qwen2.5-coder:7b"`` (at ``http://localhost:11434/v1`` unless ``base_url``),
    ``"litellm:bedrock/…"``, and the OpenAI-compatible ``openrouter:``, ``groq:``, ``together:``,
    ``fireworks:``, ``mistral:``, ``deepseek:``. Any OpenAI-compatible server: ``"openai:<model>"``
    with ``base_url=``. ``client_options`` go to the SDK's client; ``options`` to
    :class:`LLMProposer` (``temperature``, ``seed``, ``max_tokens``, ``limits``, ``retry``, …).
    """
    transport = transport_for(model, api_key=api_key, base_url=base_url, client_options=client_options)
    return LLMProposer(transport, **options)

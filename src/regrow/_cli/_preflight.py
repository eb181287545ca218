"""What ``regrow heal`` checks before any work: the extras its options need, the model's provider, the
patch folder. Each problem is one :class:`RegrowError` line (exit status 2), never a traceback after
the tests ran."""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path

from .._errors import RegrowError

# The modules each option needs, and the extra that installs them.
_DELIVERY = "pip install 'regrow[delivery]'"
_NEEDS: dict[str, tuple[tuple[str, ...], str]] = {
    "apply": (("libcst", "filelock"), _DELIVERY),
    "patch": (("libcst",), _DELIVERY),
    "pr": (("libcst", "httpx"), _DELIVERY),
    "issue": (("httpx",), _DELIVERY),
}
# The SDK of each wire a provider speaks (see regrow._proposers._llm._providers.PRESETS), and its extra.
_SDKS = {"openai": ("openai", "openai"), "anthropic": ("anthropic", "anthropic"),
         "gemini": ("google.genai", "gemini"), "litellm": ("litellm", "litellm")}


def installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package that is missing, or a broken one
        return False


def check_heal(args: argparse.Namespace) -> None:
    """Raise a one-line :class:`RegrowError` for what would fail only after the search."""
    for option, (modules, extra) in _NEEDS.items():
        if getattr(args, option, None) in (None, False):
            continue
        missing = [module for module in modules if not installed(module)]
        if missing:
            raise RegrowError(f"--{option} needs {', '.join(missing)}: {extra}")
    if args.patch is not None and Path(args.patch).exists() and not Path(args.patch).is_dir():
        raise RegrowError(f"--patch takes a folder, and {args.patch} is a file: name a folder (it is created if "
                          "missing)")
    if args.model is not None:
        check_model(args.model)


def check_model(model: str) -> None:
    """A model string whose provider is known and whose SDK is installed, or a one-line error."""
    from .._proposers._llm import PRESETS

    provider, sep, name = model.partition(":")
    provider = provider.strip().lower()
    known = ", ".join(sorted(PRESETS))
    if not sep or not provider or not name.strip():
        raise RegrowError(f"--model {model!r} must be 'provider:model', e.g. 'openai:gpt-5' (providers: {known})")
    if provider not in PRESETS:
        raise RegrowError(f"--model {model!r}: unknown provider {provider!r}; known: {known} (any OpenAI-compatible "
                          "endpoint: 'openai:<model>' with OPENAI_BASE_URL)")
    module, extra = _SDKS[PRESETS[provider].wire]
    if not installed(module):
        raise RegrowError(f"--model {model} needs the {module} SDK: pip install 'regrow[{extra}]'")

"""What comes back from a sandbox is clean: every text a candidate produced, masked by value and made safe.

A candidate runs next to the secrets of the process it was forked from: it can read the target
module's ``API_KEY`` and send it back inside an exception message, encoded so that no shape-based
rule (:mod:`regrow._redact`) sees it. So each text that came from a child — a verdict's reason and
check name, an error message — passes through a :class:`Scrubber` in the host before it reaches a
log, a terminal, an event handler, a model's prompt or the ledger. It masks every secret the host
knows (:func:`known_secrets`) plain and encoded — base64 (standard and URL-safe, at each of the
three byte alignments, so a secret inside a longer encoded text is found), hex (lower and upper
case), reversed, URL-encoded, escaped as in a ``repr`` — then applies :func:`regrow._redact.redact_text`,
then replaces control characters (:func:`regrow._sandbox.clean`) and caps the length.

The variants are computed once per session and matched by one compiled pattern; a small cache
answers the reasons that repeat (the engine judges a thousand candidates a second, most failing the
same way).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .._redact import MASK, redact_text
from .._secrets import MIN_SECRET, known_secrets, pattern_of, register_secret, user_module_secrets, variants
from . import TEXT_LIMIT, clean

__all__ = ["MIN_SECRET", "Scrubber", "known_secrets", "register_secret", "variants"]

_CACHED = 4096  # texts one scrubber remembers the clean form of


class Scrubber:
    """Makes texts that came from a sandbox clean (see the module's docs); one per session."""

    def __init__(self, secrets: Iterable[str | bytes] = ()) -> None:
        self.pattern, self.longest = pattern_of(frozenset(secrets))
        self._cache: dict[tuple[str, int], str] = {}

    @classmethod
    def of(cls, namespace: Mapping[str, Any] | None, more: Iterable[str | bytes] = ()) -> Scrubber:
        """A scrubber for the secrets the host knows around a target whose module globals are ``namespace``
        (and those named like secrets in the user's other modules loaded here), and ``more``."""
        return cls(known_secrets(namespace) | user_module_secrets() | frozenset(more))

    def __call__(self, text: str, limit: int = TEXT_LIMIT) -> str:
        """``text`` with every known secret masked (plain and encoded), control characters replaced, capped."""
        if type(text) is not str:
            text = str(text)
        key = (text, limit)
        done = self._cache.get(key)
        if done is None:
            done = self._scrub(text, limit)
            if len(self._cache) >= _CACHED:
                self._cache.clear()
            self._cache[key] = done
        return done

    def _scrub(self, text: str, limit: int) -> str:
        # Cut past the limit by the longest form first: a secret that straddles the cut is still whole.
        text = text[: limit + self.longest + 1]
        if self.pattern is not None:
            text = self.pattern.sub(MASK, text)
        return clean(redact_text(text), limit)


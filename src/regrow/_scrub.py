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

import base64
import functools
import os
import re
import threading
import urllib.parse
from collections.abc import Iterable, Mapping
from typing import Any

from ._redact import MASK, is_secret_name, is_secret_variable, redact_text
from ._sandbox import TEXT_LIMIT, clean

MIN_SECRET = 6  # characters (or bytes) a value needs to count as a secret: shorter ones would mask ordinary words
MIN_VARIANT = 6  # characters an encoded form needs to be looked for
_CACHED = 4096  # texts one scrubber remembers the clean form of

_registered: set[str | bytes] = set()
_lock = threading.Lock()


def register_secret(value: str | bytes) -> None:
    """Make every scrubber made from now on mask ``value`` (a credential the host holds, e.g. a store's or a
    model provider's key passed in code rather than through the environment). Shorter than
    :data:`MIN_SECRET`: ignored."""
    if isinstance(value, (str, bytes)) and len(value) >= MIN_SECRET:
        with _lock:
            _registered.add(value)


def known_secrets(namespace: Mapping[str, Any] | None = None) -> frozenset[str | bytes]:
    """Every secret the host knows: environment variables that hold credentials, the registered ones, and
    the globals of ``namespace`` (the target's module) whose names say they are secrets — ``API_KEY``,
    ``*_TOKEN``, ``PASSWORD`` … — with a ``str`` or ``bytes`` value, or such keys of a global ``dict``."""
    found: set[str | bytes] = {value for name, value in os.environ.items()
                               if is_secret_variable(name, value) and not _a_path(value)}
    with _lock:
        found |= _registered
    for name, value in (namespace or {}).items():
        if type(value) is dict:
            found |= {item for key, item in value.items() if type(key) is str and is_secret_name(key)
                      and isinstance(item, (str, bytes))}
        elif isinstance(value, (str, bytes)) and is_secret_name(name):
            found.add(value)
    return frozenset(secret for secret in found if len(secret) >= MIN_SECRET)


def _a_path(value: str) -> bool:
    """A file's path (``AWS_CA_BUNDLE``): named like a secret, but masking it would hide paths, not secrets."""
    return value.startswith("/") and os.path.exists(value)


def variants(secret: str | bytes) -> set[str]:
    """The forms of ``secret`` looked for: itself, reversed, hex, base64 (each alignment), URL-encoded, escaped."""
    raw = secret.encode("utf-8", "surrogatepass") if isinstance(secret, str) else secret
    text = secret if isinstance(secret, str) else raw.decode("latin-1")
    found = {text, text[::-1], raw.hex(), raw.hex().upper(), urllib.parse.quote(text, safe=""),
             urllib.parse.quote_plus(text), repr(text)[1:-1]}
    if isinstance(secret, bytes):
        found.add(repr(secret)[2:-1])
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + raw + b"\0\0").decode("ascii")
        # A character is the secret's alone when its six bits lie inside the secret's bits.
        first, last = -(-8 * shift // 6), (8 * (shift + len(raw))) // 6
        fixed = encoded[first:last]
        found |= {fixed, fixed.translate(_URLSAFE)}
    return {form for form in found if len(form) >= MIN_VARIANT}


_URLSAFE = str.maketrans("+/", "-_")


@functools.lru_cache(maxsize=32)
def _pattern(secrets: frozenset[str | bytes]) -> tuple[re.Pattern[str] | None, int]:
    """One pattern for every form of ``secrets`` (longest first) and the length of the longest form."""
    forms: set[str] = set().union(*(variants(secret) for secret in secrets)) if secrets else set()
    if not forms:
        return None, 0
    ordered = sorted(forms, key=len, reverse=True)
    return re.compile("|".join(map(re.escape, ordered))), len(ordered[0])


class Scrubber:
    """Makes texts that came from a sandbox clean (see the module's docs); one per session."""

    def __init__(self, secrets: Iterable[str | bytes] = ()) -> None:
        self.pattern, self.longest = _pattern(frozenset(secrets))
        self._cache: dict[tuple[str, int], str] = {}

    @classmethod
    def of(cls, namespace: Mapping[str, Any] | None) -> Scrubber:
        """A scrubber for the secrets the host knows around a target whose module globals are ``namespace``."""
        return cls(known_secrets(namespace))

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


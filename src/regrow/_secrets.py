"""The secrets the host knows, and every form of them a candidate could send back.

A candidate runs next to the secrets of the process it was forked from: it can read the target
module's ``API_KEY`` and send it back inside an exception message, encoded so that no shape-based rule
(:mod:`regrow._redact`) sees it. This module knows which values are secrets — environment variables
that hold credentials, values registered by the host (a key passed in code, a store's password), and
globals named like secrets in the target's module or in any module of the user's loaded in the host —
and masks each of them plain and encoded: base64 (standard and URL-safe, at each of the three byte
alignments, so a secret inside a longer encoded text is found), hex (lower and upper case), reversed,
URL-encoded and escaped as in a ``repr``. :mod:`regrow._sandbox._scrub` uses it for a session's verdicts, the
sandboxes for every text of an :class:`~regrow._sandbox.Outcome` (:func:`mask`).

It sits below the sandbox in the import order and needs nothing but :mod:`regrow._redact`.
"""

from __future__ import annotations

import base64
import functools
import os
import re
import sys
import threading
import urllib.parse
from collections.abc import Mapping
from typing import Any

from ._frames import users_file
from ._redact import MASK, is_secret_name, is_secret_variable

MIN_SECRET = 6  # characters (or bytes) a value needs to count as a secret: shorter ones would mask ordinary words
MIN_VARIANT = 6  # characters an encoded form needs to be looked for

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
    found |= _named_secrets(namespace or {})
    return frozenset(secret for secret in found if len(secret) >= MIN_SECRET)


def _named_secrets(namespace: Mapping[str, Any]) -> set[str | bytes]:
    """Values of ``namespace`` whose names say they are secrets (or such keys of a global ``dict``)."""
    found: set[str | bytes] = set()
    for name, value in list(namespace.items()):
        if type(value) is dict:
            found |= {item for key, item in list(value.items()) if type(key) is str and is_secret_name(key)
                      and isinstance(item, (str, bytes)) and len(item) >= MIN_SECRET}
        elif isinstance(value, (str, bytes)) and len(value) >= MIN_SECRET and type(name) is str \
                and is_secret_name(name):
            found.add(value)
    return found


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
def pattern_of(secrets: frozenset[str | bytes]) -> tuple[re.Pattern[str] | None, int]:
    """One pattern for every form of ``secrets`` (longest first) and the length of the longest form."""
    forms: set[str] = set().union(*(variants(secret) for secret in secrets)) if secrets else set()
    if not forms:
        return None, 0
    ordered = sorted(forms, key=len, reverse=True)
    return re.compile("|".join(map(re.escape, ordered))), len(ordered[0])




# -- every secret of the host, for texts that come back from a sandbox outside a session -------------

_user_modules: dict[str, Any] = {"count": None, "secrets": frozenset()}


def _modules_now() -> tuple[int, str]:
    """What tells a change of the loaded modules cheaply: how many, and the newest name (a module removed
    and another imported leave the count as it was, not the newest)."""
    try:
        return len(sys.modules), next(reversed(sys.modules.keys()), "")
    except RuntimeError:  # changed while read by another thread's import: read them again
        return -1, ""


def user_module_secrets() -> frozenset[str | bytes]:
    """Globals named like secrets in the user's modules loaded in this process (not the standard library,
    not installed packages, not regrow): read again whenever the loaded modules change."""
    now = _modules_now()
    if now[0] >= 0 and _user_modules["count"] == now:
        return _user_modules["secrets"]  # type: ignore[no-any-return]
    found: set[str | bytes] = set()
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        namespace = getattr(module, "__dict__", None)
        if type(path) is not str or type(namespace) is not dict:
            continue
        if not users_file(path):  # the standard library, an installed package, regrow
            continue
        found |= _named_secrets(namespace)
    _user_modules["count"], _user_modules["secrets"] = now, frozenset(found)
    return _user_modules["secrets"]  # type: ignore[no-any-return]


def mask(text: str, namespace: Mapping[str, Any] | None = None, more: frozenset[str] = frozenset()) -> str:
    """``text`` with every secret this process knows (and ``more``) masked, plain and encoded (not cleaned, not
    capped)."""
    if not text:
        return text
    pattern, _ = pattern_of(known_secrets(namespace) | user_module_secrets() | more)
    return pattern.sub(MASK, text) if pattern is not None else text

"""Redaction of secrets from evidence, by name and by the shape of the value.

It runs once, when evidence is captured, before anything leaves the capture (prompt, cache,
ledger, issue). Names are split into words so that ``auth_header`` is a secret while ``author``
and ``tokenizer`` are not.
"""

from __future__ import annotations

import itertools
import re

MASK = "[REDACTED]"

_SECRET_WORDS = frozenset(
    {
        "password", "passwd", "pwd", "passphrase", "secret", "secrets", "token", "tokens", "apikey",
        "auth", "authorization", "credential", "credentials", "cookie", "cookies", "privatekey",
        "sessionid", "signature", "bearer", "jwt", "dsn", "otp", "pin", "ssn",
    }
)
_SECRET_PAIRS = frozenset({("api", "key"), ("private", "key"), ("access", "key"), ("secret", "key"),
                           ("client", "secret"), ("session", "id"), ("x", "api"), ("session", "key"),
                           ("signing", "key"), ("encryption", "key"), ("master", "key"), ("license", "key"),
                           ("auth", "key"), ("shared", "key")})

# Values that look like credentials whatever they are called.
_VALUE_PATTERNS = [
    re.compile(r"\b(?:sk|pk|rk)-(?:[A-Za-z0-9_-]+-)?[A-Za-z0-9_-]{16,}"),  # OpenAI/Anthropic/Stripe style
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"),  # GitHub tokens
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}"),
    re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),  # Slack
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),  # AWS access key id
    re.compile(r"\bAIza[0-9A-Za-z_-]{30,}"),  # Google API key
    re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),  # JWT
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)"),
    re.compile(r"(?i)\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{12,}"),
    re.compile(r"(?i)(://[^/\s:@]*:)[^@\s/]+(@)"),  # password in a URL (redis://:pw@host has no user)
]
# key=value or "key": "value" inside text, where the key is a secret name.
_ASSIGNMENT = re.compile(
    # A key starts where no identifier character precedes it: a long identifier is tried once, not at
    # each of its characters (which made redaction quadratic).
    # Not ``password == x`` (a comparison) nor a URL's scheme (``postgresql://…?password=``); a quoted value
    # whole (``'SSWS 00QC…'``), an unquoted one up to a query string's or a cookie's next pair
    # (``password=pw&x=1``: ``user=bob&`` must not swallow it).
    r"""(?P<key>["']?(?<![A-Za-z0-9_.-])(?P<name>[A-Za-z_][A-Za-z0-9_.-]*)["']?\s*(?:=(?!=)|:(?!//))\s*)(?P<q>["']?)"""
    r"""(?P<value>(?<=["'])[^"'\n]*|[^"',}\s)\]\x00&;]+)"""
)
# "max_tokens", "token_count": counts of language-model tokens, not credentials.
_COUNT_WORDS = frozenset({"count", "counts", "max", "min", "limit", "num", "number", "len", "length", "size",
                          "usage", "budget", "total", "per", "input", "output", "index", "idx", "type", "kind"})
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
# Environment variables and constants (UPPER_SNAKE names) are judged more broadly: a name that says what it
# holds (*_KEY, *_TOKEN, *_SECRET, *PASSWORD*, *_PASS, MYSQL_PWD) or whose service's variables often do.
_ENV_NAME = re.compile(r"[A-Z0-9_]+")
_ENV_SECRET_NAME = re.compile(
    r"(?:^|_)(?:KEY|TOKEN|SECRET|PASS|PAT|DSN)S?$|_PWD$|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|PRIVATE_KEY|API_?KEY"
    r"|^DATABASE_URL$|^(?:AWS|GITHUB|GH|OPENAI|ANTHROPIC|GOOGLE|GCLOUD|AZURE|HF|HUGGING_?FACE)_"
)
# What the sandbox also removes from a child's environment (it needs no cookie, session or auth socket).
_ENV_ALSO_SECRET = re.compile(r"KEY|TOKEN|SECRET|PASSW|AUTH|COOKIE|SESSION|PRIVATE|SIGNATURE")
# Values that are credentials by their first characters (an environment variable holds one value).
_SECRET_PREFIX = re.compile(
    r"^(?:sk-|sk_|rk_|pk_live_|ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|xox[abeprs]-|AKIA|ASIA|AIza|ya29\.|hf_|"
    r"npm_|pypi-|eyJ)"
)


# The user's own rules (regrow.Redaction, set with regrow.configure_evidence): more names, more value shapes.
_extra_names: tuple[re.Pattern[str], ...] = ()
_extra_values: tuple[re.Pattern[str], ...] = ()


def extend(names: tuple[re.Pattern[str], ...], values: tuple[re.Pattern[str], ...]) -> None:
    """Make every redaction from now on also mask these names and these value shapes."""
    global _extra_names, _extra_values
    _extra_names, _extra_values = names, values


def mask_values(text: str) -> str:
    """Credentials by shape (``sk-…``, ``AKIA…``, private keys, the user's patterns), whatever they are called."""
    for pattern in _VALUE_PATTERNS:
        text = pattern.sub(_mask_match, text)
    for extra in _extra_values:
        text = extra.sub(MASK, text)
    return text


def words(name: str) -> list[str]:
    """``X-Api-Key`` → ``["x", "api", "key"]``; ``authToken`` → ``["auth", "token"]``."""
    return [w.lower() for w in _WORD.findall(name)]


def is_secret_name(name: str) -> bool:
    """Whether a variable, key or header called ``name`` holds a secret."""
    if _extra_names and any(pattern.search(name) for pattern in _extra_names):
        return True
    parts = words(name)
    if {"token", "tokens"} & set(parts) and _COUNT_WORDS & set(parts):
        return False
    if _ENV_NAME.fullmatch(name) and "_" in name.strip("_") and _ENV_SECRET_NAME.search(name):
        return True  # OPENAI_API_KEY, DB_PASS, MYSQL_PWD, AWS_SESSION_TOKEN, GITHUB_…
    if any(p in _SECRET_WORDS for p in parts) or (len(parts) > 1 and parts[-1] == "pass"):
        return True
    if any(pair in _SECRET_PAIRS for pair in itertools.pairwise(parts)):
        return True
    return "".join(parts) in _SECRET_WORDS


def redact_text(text: str) -> str:
    """``text`` with credential-shaped values and ``secret_name=value`` pairs masked."""
    text = mask_values(text)

    def assignment(match: re.Match[str]) -> str:
        masked = match.string.startswith(MASK, match.start("value"))  # a value pattern masked it already
        if not is_secret_name(match["name"]) or masked:
            return match.group(0)
        return f"{match['key']}{match['q']}{MASK}"

    return _ASSIGNMENT.sub(assignment, text)


def _mask_match(match: re.Match[str]) -> str:
    if match.re.groups == 2:  # URL userinfo: keep the scheme and user, hide the password
        return f"{match.group(1)}{MASK}{match.group(2)}"
    if match.re.groups == 1:  # "Bearer xyz": keep the scheme word
        return f"{match.group(1)} {MASK}"
    return MASK


def is_secret_variable(name: str, value: str) -> bool:
    """Whether an environment variable holds a credential, by its name or by its value.

    Any upper-case name matching the environment rules counts, with or without an underscore (``PASSWORD``);
    values by their prefix (``sk-``, ``ghp_``, ``AKIA``, ``xoxb-``, a JWT) or anywhere inside them (a
    private-key PEM block, a token, a URL with a password in it).
    """
    upper = name.upper()
    if upper in ("PWD", "OLDPWD"):  # the shell's working directories, not a password
        return bool(_SECRET_PREFIX.match(value)) or any(pattern.search(value) for pattern in _VALUE_PATTERNS)
    if _ENV_SECRET_NAME.search(upper) or _ENV_ALSO_SECRET.search(upper) or is_secret_name(name):
        return True
    return bool(_SECRET_PREFIX.match(value)) or any(pattern.search(value) for pattern in _VALUE_PATTERNS)


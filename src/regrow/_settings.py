"""The configuration: ``[tool.regrow]`` in ``pyproject.toml`` and ``REGROW_*`` variables, in one typed object.

Precedence, for each setting: a keyword argument (``heal(timeout=5)``) > the environment
(``REGROW_TIMEOUT=5``) > the file (``timeout = 5`` under ``[tool.regrow]``) > the default. The file is
the first ``pyproject.toml`` found from the current folder upwards; it is parsed as TOML (never
executed). An unknown key or a bad value is a :class:`ConfigError` naming it, before any work.
Secrets (``api_key``) come from the environment only. ``docs/configuration.md`` is generated from
:class:`Settings` (:func:`reference`; ``tests/test_settings.py`` fails when the page is out of date).

(:mod:`regrow._heal._switches` is a different thing: the process-wide on/off switch, ``regrow.disable()``.)
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import os
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from ._errors import RegrowError

PREFIX = "REGROW_"
TABLE = "[tool.regrow]"


class ConfigError(RegrowError):
    """A setting in ``pyproject.toml`` or a ``REGROW_*`` variable is unknown or has a bad value."""


def _setting(default: Any, kind: str, doc: str, *, secret: bool = False) -> Any:
    return dataclasses.field(default=default, metadata={"kind": kind, "doc": doc, "secret": secret})


@dataclasses.dataclass(frozen=True, slots=True)
class Settings:
    """Every setting regrow reads from ``[tool.regrow]`` and ``REGROW_*`` (see ``docs/configuration.md``)."""

    # The model and its provider.
    model: str | None = _setting(None, "text?", "a model tried after the built-in engine, `provider:model` "
                                 "(`openai:gpt-5`, `ollama:qwen2.5-coder:7b`; docs/llm.md). Default: the engine only.")
    base_url: str | None = _setting(None, "text?", "the model's endpoint, for a local or OpenAI-compatible server "
                                    "(default: the provider's own, or its usual variable such as `OPENAI_BASE_URL`).")
    api_key: str | None = _setting(None, "text?", "the model's API key (default: the provider's usual variable, such "
                                   "as `OPENAI_API_KEY`). A secret: read from the environment only.", secret=True)
    # Budgets.
    max_candidates: int = _setting(2000, "int>=1", "candidates judged at most in one repair.")
    max_attempts: int = _setting(3, "int>=1", "model calls a model proposer may make in one repair.")
    timeout: float = _setting(60.0, "seconds>0", "seconds for a whole repair.")
    candidate_timeout: float = _setting(2.0, "seconds>0", "seconds for one candidate's checks.")
    jobs: int | None = _setting(None, "int>=1?", "workers judging candidates at once (default: every core).")
    # Where candidates run, and what is kept.
    sandbox: Literal["fork", "inprocess"] | None = _setting(
        None, "choice?:fork,inprocess", "where candidates are proven: `fork` (the default on Linux and macOS) or "
        "`inprocess` (docs/sandbox.md).")
    store: str | None = _setting(None, "text?", "a SQLite file for the repair cache and the ledger (relative to the "
                                 "current folder). Default: none.")
    write_back: Literal["off", "patch", "apply"] = _setting(
        "off", "choice:off,patch,apply", "what `@regrow.heal` keeps a proven fix as besides the live code "
        "(docs/delivery.md); `regrow heal` keeps fixes with `--apply`/`--patch`.")
    environ: bool | tuple[str, ...] = _setting(
        True, "bool|names", "the environment variables candidates keep: `true` (those the code reads by name), "
        "`false`, or a list of names to keep as well. In the environment: `true`, `false` or `A,B`.")
    # Policy.
    on_failure: Literal["raise", "return_none"] = _setting(
        "raise", "choice:raise,return_none", "what a decorated call does when no fix is found.")
    cooldown: float = _setting(300.0, "seconds>=0", "seconds before a failure that could not be repaired is "
                               "tried again.")
    record: int = _setting(0, "int>=0", "healthy calls kept as an oracle (0: off).")
    allow_blind: bool = _setting(False, "bool", "`regrow.watch` and the web middleware install fixes proven "
                                 "without an oracle too (docs/production.md).")
    wait: float = _setting(5.0, "seconds>=0", "seconds the web middleware waits for a repair before it answers.")
    # Evidence (docs/evidence.md): applied to the process's evidence policy when set.
    evidence_env_allowlist: tuple[str, ...] = _setting((), "names", "environment variables captured as evidence.")
    evidence_frames: bool = _setting(False, "bool", "also capture the frames between the function and the raise.")
    evidence_value_limit: int = _setting(400, "int>=40", "characters one rendered value may take.")
    evidence_redact_names: tuple[str, ...] = _setting((), "names", "regular expressions: names whose values are "
                                                      "masked, on top of regrow's own.")
    evidence_redact_values: tuple[str, ...] = _setting((), "names", "regular expressions: text masked wherever "
                                                       "it appears.")


FIELDS = {f.name: f for f in dataclasses.fields(Settings)}


def env_name(name: str) -> str:
    return PREFIX + name.upper()


def _describe(kind: str) -> str:
    base, _, choices = kind.replace("?", "").partition(":")
    said = {"text": "a string", "int>=1": "an integer of at least 1", "int>=0": "an integer of at least 0",
            "int>=40": "an integer of at least 40", "seconds>0": "a number of seconds greater than 0",
            "seconds>=0": "a number of seconds, 0 or more", "bool": "true or false",
            "names": "a list of strings", "bool|names": "true, false or a list of names",
            "choice": "one of " + ", ".join(repr(c) for c in choices.split(","))}[base]
    return said


def _checked(kind: str, value: Any, from_env: bool) -> Any:
    """``value`` as the setting of ``kind`` holds it; raises ``ValueError`` (the caller names the setting)."""
    optional = "?" in kind
    base, _, choices = kind.replace("?", "").partition(":")
    if from_env:
        value = _from_text(base, value)
    if optional and value is None:
        return None
    if base == "text" and isinstance(value, str) and value.strip():
        return value
    if base.startswith("int") and isinstance(value, int) and not isinstance(value, bool) \
            and value >= int(base[5:]):
        return value
    if base.startswith("seconds") and isinstance(value, (int, float)) and not isinstance(value, bool) \
            and math.isfinite(value) and (value > 0 if base == "seconds>0" else value >= 0):
        return float(value)
    if base in ("bool", "bool|names") and isinstance(value, bool):
        return value
    if base in ("names", "bool|names") and isinstance(value, (list, tuple)) \
            and all(isinstance(v, str) and v for v in value):
        return tuple(value)
    if base == "choice" and value in choices.split(","):
        return value
    raise ValueError(_describe(kind))


def _from_text(base: str, text: str) -> Any:
    """The typed value of an environment variable's text (left as text when it does not parse)."""
    word = text.strip()
    if base in ("bool", "bool|names") and word.lower() in ("1", "true", "yes", "on", "0", "false", "no", "off"):
        return word.lower() in ("1", "true", "yes", "on")
    if base in ("names", "bool|names"):
        return tuple(part.strip() for part in word.split(",") if part.strip())
    convert: Callable[[str], Any] | None = int if base.startswith("int") else \
        float if base.startswith("seconds") else None
    if convert is None:
        return word
    try:
        return convert(word)
    except ValueError:
        return text


def find_pyproject(start: Path | None = None) -> Path | None:
    """The first ``pyproject.toml`` from ``start`` (default: the current folder) upwards."""
    found = _pyproject(start)
    return Path(found) if found is not None else None


def _pyproject(start: Path | None) -> str | None:
    """:func:`find_pyproject` as text: :func:`current` asks at each decoration (so ``os.path``, not ``pathlib``).
    The working folder is canonical already (no symlinks in it): only another ``start`` is resolved."""
    folder = os.getcwd() if start is None else os.path.realpath(start)
    while True:
        candidate = os.path.join(folder, "pyproject.toml")
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def read_file(path: Path) -> dict[str, Any]:
    """The ``[tool.regrow]`` table of ``path``, checked (empty when there is none).

    A file that does not name regrow is not parsed (so importing regrow never needs a TOML parser: on
    3.10 that is the ``tomli`` package, a dependency there, which an environment may still lack)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read it ({exc})") from None
    if "regrow" not in text:
        return {}
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - 3.10
        try:
            import tomli as tomllib  # type: ignore[import-not-found, no-redef, unused-ignore]
        except ImportError:
            raise ConfigError(f"{path}: reading [tool.regrow] on Python 3.10 needs tomli: pip install tomli") \
                from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: cannot read it as TOML ({exc})") from None
    table = data.get("tool", {}).get("regrow", {}) if isinstance(data.get("tool"), dict) else {}
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: {TABLE} must be a table")
    found = {}
    for key, value in table.items():
        where = f"{path} {TABLE} {key}"
        spec = FIELDS.get(key.replace("-", "_"))
        if spec is None:
            close = difflib.get_close_matches(key, FIELDS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else f"; the keys: {', '.join(FIELDS)}"
            raise ConfigError(f"{path}: unknown key {key!r} in {TABLE}{hint}")
        if spec.metadata["secret"]:
            raise ConfigError(f"{where}: {spec.name} is a secret, never read from a file: set "
                              f"{env_name(spec.name)} in the environment")
        if isinstance(value, dict):
            raise ConfigError(f"{where}: must be {_describe(spec.metadata['kind'])}, not a table")
        try:
            found[spec.name] = _checked(spec.metadata["kind"], value, from_env=False)
        except ValueError as exc:
            raise ConfigError(f"{where}: must be {exc}, not {value!r}") from None
    return found


def read_environ(environ: Mapping[str, str]) -> dict[str, Any]:
    """The settings ``REGROW_<NAME>`` variables give, checked (an empty variable is unset)."""
    found = {}
    for name, spec in FIELDS.items():
        text = environ.get(env_name(name))
        if text is None or not text.strip():
            continue
        try:
            found[name] = _checked(spec.metadata["kind"], text, from_env=True)
        except ValueError as exc:
            shown = "(hidden)" if spec.metadata["secret"] else repr(text)
            raise ConfigError(f"{env_name(name)}: must be {exc}, not {shown}") from None
    return found


def configured(start: Path | None = None, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The settings the environment and the file give (the environment's over the file's), without defaults:
    for a front-end whose own defaults differ from :class:`Settings`' (``regrow heal``'s longer budgets)."""
    path = find_pyproject(start)
    values = read_file(path) if path is not None else {}
    values.update(read_environ(os.environ if environ is None else environ))
    return values


def load(start: Path | None = None, environ: Mapping[str, str] | None = None) -> Settings:
    """The settings for a process started in ``start``: the environment over the file over the defaults."""
    return Settings(**configured(start, environ))


class _Loaded:
    __slots__ = ("key", "listeners", "lock", "settings")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.key: object = None
        self.settings = Settings()
        self.listeners: list[Callable[[Settings], None]] = []


_LOADED = _Loaded()


def current() -> Settings:
    """The settings now: read again only when the file (path, mtime) or a ``REGROW_*`` variable changed."""
    path = _pyproject(None)
    try:
        stamp = os.stat(path).st_mtime_ns if path is not None else None
    except OSError:
        stamp = None
    names = [name for name in os.environ if name.startswith(PREFIX)]  # keys first: only these values are decoded
    key = (path, stamp, tuple(sorted((name, os.environ[name]) for name in names)))
    with _LOADED.lock:
        if key != _LOADED.key:
            _LOADED.settings = load()
            _LOADED.key = key
            for apply in _LOADED.listeners:
                apply(_LOADED.settings)
        return _LOADED.settings


def on_load(apply: Callable[[Settings], None]) -> None:
    """Call ``apply`` with the settings each time they are read anew (and now, if they were read already):
    how a part that the configuration tunes (the evidence policy, regrow._evidence._disclosure) takes its values
    without this module importing it."""
    with _LOADED.lock:
        _LOADED.listeners.append(apply)
        loaded = _LOADED.settings if _LOADED.key is not None else None
    if loaded is not None:
        apply(loaded)


def reference() -> str:
    """``docs/configuration.md``, generated from :class:`Settings` (``scripts/configuration-reference.py``)."""
    rows = []
    for name, spec in FIELDS.items():
        default = "—" if spec.default in (None, ()) else f"`{_toml(spec.default)}`"
        where = f"`{env_name(name)}`" if spec.metadata["secret"] else f"`{name}`, `{env_name(name)}`"
        rows.append(f"| {where} | {_describe(spec.metadata['kind'])} | {default} | {spec.metadata['doc']} |")
    return _PAGE.format(rows="\n".join(rows))


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return f'"{value}"' if isinstance(value, str) else str(value)


_PAGE = """\
# Configuration

<!-- Generated from regrow._settings.Settings by `PYTHONPATH=src python scripts/configuration-reference.py`;
tests/test_settings.py fails when this page is out of date. Do not edit by hand. -->

regrow reads its settings from `[tool.regrow]` in `pyproject.toml` and from `REGROW_*` environment
variables into one typed, frozen object (`regrow._settings.Settings`). For each setting the first of
these that gives it wins:

1. a keyword argument of `@regrow.heal`, `regrow.repair`, `regrow.watch` or the web middleware
   (`@regrow.heal(timeout=5)`, `WSGIMiddleware(app, "shop", wait=2.0)`); for `model`, `sandbox`,
   `store`, `jobs`, `watch(allow_blind=)` and the middleware's `wait=`, `None` means "not given";
2. the environment: `REGROW_TIMEOUT=5` (booleans `true`/`false`/`1`/`0`/`yes`/`no`/`on`/`off`,
   lists as `A,B`; an empty variable is unset);
3. the file: the first `pyproject.toml` from the current folder upwards, parsed as TOML and never
   executed (`timeout = 5` under `[tool.regrow]`; `max-candidates` is read as `max_candidates`);
4. the default below, which is what regrow does with no configuration at all.

An unknown key in `[tool.regrow]` or a bad value (in the file or the environment) is an error
(`ConfigError`, a `regrow.RegrowError`) naming the key or the variable, raised when options are made
(at decoration, at `repair()`); `regrow heal` prints it in one line and exits 2. Secrets are read
from the environment only: `api_key` in the file is an error. Other `REGROW_*` names (such as
`REGROW_DISABLE`, the off switch) are not settings and are not checked. The settings are read again
when the file or a `REGROW_*` variable changes.

```toml
[tool.regrow]
model = "ollama:qwen2.5-coder:7b"
timeout = 120
write_back = "patch"
evidence_env_allowlist = ["APP_MODE"]
```

| setting | value | default | what it does |
| --- | --- | --- | --- |
{rows}

`regrow heal` follows the same order, its options in the place of keyword arguments: an option given
on the command line (`--timeout 30`) > `REGROW_TIMEOUT` > `timeout` in the file > the command's own
default. Its defaults differ from the table's for a whole test suite: `--timeout` 300 s and
`--candidate-timeout` 10 s (`--max-candidates` 2000 as above); `--environ NAME ...` gives `environ`
as a list of names. `pytest --heal` passes `--heal-timeout` on only when it is given. `regrow run`
takes `allow_blind`, `timeout` and `model` from the configuration unless `--allow-blind`, `--timeout`
or `--model` is given. A bad configuration ends `regrow heal` with exit 2 before any work.
"""

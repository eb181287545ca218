"""How the next call asks: the reply format, the sampling, the window of the function it shows.

An echo (the original sent back unchanged) or a repeat (an earlier candidate sent again) is a
verdict like any other, and the call after one must change something that matters to the model,
since a model decoding greedily answers the same prompt the same way. Each echo or repeat climbs
one rung: the requested format switches (whole function ↔ local edit), the temperature rises
(0.4, 0.7, 1.0; the seed moves on where one is set and the wire takes it), and from the second
rung on the prompt narrows to the lines around the suspected fault. An edit that could not be
applied switches the format too. The prompt also says what was wrong with the last reply.

The first call's format comes from :data:`FORMATS`: local edits for small and local models,
the whole function for the rest (see docs/llm.md for why).

A small model (by its name: up to 12B parameters, or a small open family) gets the compact
prompt (:mod:`._compact`) and a ladder built for greedy decoding, where a new temperature changes
nothing. With ``edit_format="auto"`` a plain function gets only *rewrites* — the function asked for
again from its signature, docstring and tests, the old body left out, so that there is nothing to
copy — in two instructions taken in turn (:data:`REWRITES`): from the docstring and the test, then
step by step from the docstring and the tests' examples, told the suspected line. In bench-llm
(Qwen2.5-Coder-1.5B, greedy, b28fc1d) rewrites drew 0 echoes in 34 calls and the only correct fixes;
the SEARCH/REPLACE fallback rung drew 6 echoes in 18 and no correct fix. A chosen format is asked
first, then a rewrite and the narrowed other format in turn. A method, whose body says what the
class holds, is never rewritten (rewritten, the 1.5B model invented the class, both times): its
first format, then the other one narrowed, in turn. Every reply climbs a rung here, a judged one
too: a greedy model sends a wrong candidate again when the prompt only grew by it.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import re
import urllib.parse
from collections.abc import Mapping
from typing import Any, Literal

EditFormat = Literal["whole", "edit"]
FormatOption = Literal["auto", "whole", "edit"]
Opening = Literal["whole", "edit", "rewrite"]  # what the first call of a session asks for

# What a model's name or endpoint says about it, and the format it is asked for first. Earlier rows win.
FORMATS: tuple[tuple[str, EditFormat, str], ...] = (
    (r"(?<![\d.x])(1[3-9]|[2-9]\d|\d{3,})(\.\d+)?b\b", "whole", "13B parameters or more: copies a function faithfully"),
    (r"(?<![\d.x])(\d|1[0-2])(\.\d+)?b\b", "edit", "up to 12B parameters: prone to echo a whole function"),
    (r"smollm|tinyllama|phi-?[1-3]\b|gemma|starcoder|codegemma|granite-code|stable-code", "edit",
     "a small open model family"),
    ("<local>", "edit", "served by a local runtime (ollama, llama.cpp, vLLM or LM Studio on this machine or network)"),
)
LOCAL_PROVIDERS = frozenset({"ollama"})
PromptSize = Literal["auto", "full", "compact"]
_SMALL = (FORMATS[1][0], FORMATS[2][0])  # what makes a model small enough for the compact prompt
# A small model's first request for a plain function, when the format is "auto": the one that drew
# no echo in bench-llm (Qwen2.5-Coder-1.5B, greedy: rewrite 0 echoes of 14 calls, SEARCH/REPLACE 12 of 18).
SMALL_OPENING: Opening = "rewrite"
REWRITES = 2  # the rewrite instructions a small model's plain function is asked in turn (see ._compact.ask)
_TEMPERATURES = (0.4, 0.7, 1.0)


def default_format(provider: str, model: str, base_url: str | None) -> EditFormat:
    """The format a model is asked for first (see :data:`FORMATS`)."""
    for pattern, chosen, _ in FORMATS:
        if pattern == "<local>":
            if provider in LOCAL_PROVIDERS or is_local(base_url):
                return chosen
        elif re.search(pattern, model, re.IGNORECASE):
            return chosen
    return "whole"


def is_small(model: str) -> bool:
    """Whether the model's name says it is small: up to 12B parameters, or a small open family."""
    large = re.search(FORMATS[0][0], model, re.IGNORECASE)
    return not large and any(re.search(pattern, model, re.IGNORECASE) for pattern in _SMALL)


def is_local(url: str | None) -> bool:
    """Whether ``url`` points at this machine or a private network."""
    host = _host(url)
    if host in ("localhost", "host.docker.internal") or host.endswith((".local", ".localhost", ".internal")):
        return True
    address = _address(host)
    return address is not None and (address.is_loopback or address.is_private or address.is_link_local)


def on_this_machine(url: str | None) -> bool:
    """Whether ``url`` points at this machine: its host is ``localhost`` or a loopback address (an ``ollama:``
    model's default). A server elsewhere, on a private network too, or no URL (the SDK's own) is not."""
    host = _host(url).rstrip(".")
    address = _address(host)
    return host == "localhost" or host.endswith(".localhost") or (address is not None and address.is_loopback)


def _host(url: str | None) -> str:
    return (urllib.parse.urlsplit(url if "//" in url else f"//{url}").hostname or "") if url else ""


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def other(format: EditFormat) -> EditFormat:
    return "whole" if format == "edit" else "edit"


@dataclasses.dataclass(frozen=True)
class Strategy:
    """How one call asks."""

    format: EditFormat
    level: int = 0  # rungs climbed: echoes, repeats and prompts that would have been sent twice
    narrow: bool = False  # show the lines around the suspected fault and ask for a change there
    params: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    problem: str = ""  # what was wrong with the last reply, said in the prompt ("was the original, unchanged")
    compact: bool = False  # the short prompt for small models (see ._compact)
    rewrite: bool = False  # ask for the function again without showing its old body
    variant: int = 0  # which rewrite instruction (0: from the docstring and the test; 1: step by step)


class Ladder:
    """The rungs one session climbs. ``rewrite_first`` (a small model's plain function, the format
    not chosen by the caller): every rung a rewrite. ``method``: never a rewrite."""

    def __init__(self, first: EditFormat, params: Mapping[str, Any], compact: bool = False,
                 rewrite_first: bool = False, method: bool = False) -> None:
        self.first = first
        self.compact = compact
        self.rewrite_first = rewrite_first
        self.method = method
        self.params = dict(params)
        self.level = 0
        self.flips = 0
        self.problem = ""

    def climb(self, problem: str) -> None:
        """After an echo or a repeat (or a prompt already sent): change what matters."""
        self.level += 1
        self.problem = problem

    def switch(self, problem: str) -> None:
        """After a reply in the requested format that could not be used (an edit that does not apply)."""
        self.flips += 1
        self.problem = problem

    def settle(self) -> None:
        """After a reply that was judged: nothing to complain about in the next prompt. A small model
        climbs all the same: greedy, it answers a prompt that only grew by its last candidate with that
        candidate again."""
        self.problem = ""
        if self.compact:
            self.level += 1

    def current(self) -> Strategy:
        if self.compact:
            return self._compact()
        chosen = self.first if (self.level + self.flips) % 2 == 0 else other(self.first)
        return Strategy(chosen, self.level, self.level >= 2, self._sampling(), self.problem)

    def _compact(self) -> Strategy:
        """Rewrites, or rewrites and the narrowed other format in turn (see the module's docstring)."""
        rung = self.level
        if self.rewrite_first:  # 0: rewrite, 1: the other rewrite, 2: the first again (its history grown), …
            return self._rewrite(rung % REWRITES)
        if not self.method and rung % 2 == 1:  # 0: `first`, 1: rewrite, 2: the other format narrowed, 3: …
            return self._rewrite((rung // 2) % REWRITES)
        chosen = self.first if rung % 2 == 0 and (rung == 0 or self.method) else other(self.first)
        chosen = chosen if self.flips % 2 == 0 else other(chosen)
        return Strategy(chosen, rung, rung > 0, self._sampling(), self.problem, compact=True)

    def _rewrite(self, variant: int) -> Strategy:
        return Strategy("whole", self.level, False, self._sampling(), self.problem, compact=True, rewrite=True,
                        variant=variant)

    def _sampling(self) -> dict[str, Any]:
        if self.level == 0:
            return dict(self.params)
        params = dict(self.params)
        floor = _TEMPERATURES[min(self.level, len(_TEMPERATURES)) - 1]
        given = params.get("temperature")
        params["temperature"] = max(float(given), floor) if isinstance(given, (int, float)) else floor
        if isinstance(params.get("seed"), int):
            params["seed"] += self.level
        return params

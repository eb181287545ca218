"""What model calls cost, and the budgets that refuse them.

Every call is counted three ways: in its session's :class:`Meter`, on the proposer, and in the
process-wide :class:`Ledger`. Budgets are checked *before* a call: calls, tokens and cost per
session, and calls per failure fingerprint per rolling hour (process-wide), so a function failing
in a loop cannot call the model a thousand times.
"""

from __future__ import annotations

import collections
import contextvars
import dataclasses
import threading
import time
from collections.abc import Callable, Mapping

# USD per million tokens (input, output). Estimates for the budget, not invoices: prices change,
# and ``prices=`` overrides or extends this table. Local models cost nothing.
Price = tuple[float, float]
DEFAULT_PRICES: Mapping[str, Price] = {
    "gpt-5": (1.25, 10.0),
    "gpt-5-mini": (0.25, 2.0),
    "gpt-5-nano": (0.05, 0.40),
    "gpt-4.1": (2.0, 8.0),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4o": (2.50, 10.0),
    "gpt-4o-mini": (0.15, 0.60),
    "o4-mini": (1.10, 4.40),
    "claude-opus-4-1": (15.0, 75.0),
    "claude-sonnet-4-5": (3.0, 15.0),
    "claude-haiku-4-5": (1.0, 5.0),
    "gemini-2.5-pro": (1.25, 10.0),
    "gemini-2.5-flash": (0.30, 2.50),
    "gemini-2.5-flash-lite": (0.10, 0.40),
}
FREE_PROVIDERS = frozenset({"ollama"})
_HOUR = 3600.0


@dataclasses.dataclass
class Usage:
    """Counts of model calls: tokens as the provider reported them, latency in seconds, cost in USD."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    latency: float = 0.0
    cost: float = 0.0
    retries: int = 0
    echoes: int = 0  # replies that were the original, unchanged
    repeats: int = 0  # replies that were an earlier candidate again
    streamed: int = 0  # calls whose reply streamed in (those timed below)
    first_token: float = 0.0  # seconds from sending to the first token, summed over streamed calls
    generating: float = 0.0  # seconds from the first token to the last, summed over streamed calls
    generated: int = 0  # output tokens of the streamed calls

    @property
    def mean_first_token(self) -> float | None:
        """The mean seconds to a streamed reply's first token (``None`` when nothing streamed)."""
        return self.first_token / self.streamed if self.streamed else None

    @property
    def tokens_per_second(self) -> float | None:
        """Output tokens per second of the streamed replies, after their first token."""
        return self.generated / self.generating if self.generating > 0 else None

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def add(self, other: Usage) -> None:
        self.calls += other.calls
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.latency += other.latency
        self.cost += other.cost
        self.retries += other.retries
        self.echoes += other.echoes
        self.repeats += other.repeats
        self.streamed += other.streamed
        self.first_token += other.first_token
        self.generating += other.generating
        self.generated += other.generated

    def copy(self) -> Usage:
        return dataclasses.replace(self)

    def summary(self) -> str:
        retries = f", {self.retries} retries" if self.retries else ""
        echoes = f", {self.echoes} echoes" if self.echoes else ""
        repeats = f", {self.repeats} repeats" if self.repeats else ""
        first, rate = self.mean_first_token, self.tokens_per_second
        speed = f", first token {first:.2f}s" if first is not None else ""
        speed += f", {rate:.1f} tokens/s" if rate is not None else ""
        return (f"{self.calls} calls, {self.input_tokens} in / {self.output_tokens} out tokens, "
                f"{self.latency:.2f}s{speed}, ${self.cost:.4f}{retries}{echoes}{repeats}")


@dataclasses.dataclass(frozen=True)
class ModelLimits:
    """Budgets for model calls. ``None`` means unlimited. (Named apart from the sandbox's ``Limits``, the
    resources of one sandboxed call: ``regrow.llm.Limits`` and ``regrow.Limits`` meant different things.)

    ``max_calls``, ``max_tokens`` (input + output) and ``max_cost`` (USD) are per repair session;
    ``max_calls_per_failure_per_hour`` counts calls for one failure fingerprint in this process over
    the last hour, across sessions.
    """

    max_calls: int | None = None
    max_tokens: int | None = None
    max_cost: float | None = None
    max_calls_per_failure_per_hour: int | None = 12

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0):
                raise ValueError(f"ModelLimits.{field.name} is a number of at least 0 or None, not {value!r}")


def price_of(model: str, prices: Mapping[str, Price]) -> Price | None:
    """The price of ``model``: an exact entry, else the longest entry it starts with
    (``gpt-5-mini-2025-08-07`` → ``gpt-5-mini``), also after a routing prefix (``openrouter/…``)."""
    for name in (model, model.rsplit("/", 1)[-1]):
        if name in prices:
            return prices[name]
        matches = [key for key in prices if name.startswith(key)]
        if matches:
            return prices[max(matches, key=len)]
    return None


# The fleet's gate for one session's model calls, set by the fleet's single flight (regrow._heal._fleet)
# while it runs a session with a store: called before each call with the failure's fingerprint, the
# hourly limit and the call's estimated cost, it reserves the call in the store in one transaction
# with the check of the fleet's budgets, and answers why not ("": reserved).
FleetGate = Callable[[str, "int | None", float], str]
FLEET_GATE: contextvars.ContextVar[FleetGate | None] = contextvars.ContextVar("regrow_fleet_gate", default=None)


class Ledger:
    """Process-wide totals and the per-fingerprint call times; safe across threads."""

    __slots__ = ("_lock", "_recent", "_total")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._total = Usage()
        self._recent: dict[str, collections.deque[float]] = {}

    def calls_within_hour(self, fingerprint: str, now: float) -> int:
        with self._lock:
            times = self._recent.get(fingerprint)
            if not times:
                return 0
            while times and times[0] <= now - _HOUR:
                times.popleft()
            return len(times)

    def start_call(self, fingerprint: str, now: float) -> None:
        with self._lock:
            self._recent.setdefault(fingerprint, collections.deque()).append(now)

    def record(self, model: str, usage: Usage) -> None:
        with self._lock:
            self._total.add(usage)

    def total(self) -> Usage:
        with self._lock:
            return self._total.copy()

    def reset(self) -> None:
        with self._lock:
            self._total = Usage()
            self._recent.clear()


PROCESS = Ledger()


def process_usage() -> Usage:
    """Model usage of every LLM proposer in this process so far."""
    return PROCESS.total()


class Meter:
    """One session's accounting for one proposer: checks budgets before each call, counts after it."""

    def __init__(
        self,
        origin: str,
        limits: ModelLimits,
        price: Price | None,
        fingerprint: str,
        *,
        ledger: Ledger = PROCESS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.origin = origin
        self.limits = limits
        self.price = price
        self.fingerprint = fingerprint
        self.ledger = ledger
        self.clock = clock
        self.usage = Usage()

    def refusal(self, prompt_tokens: int) -> str:
        """Why the next call (with a prompt of about ``prompt_tokens``) must not be made, or ``""``."""
        limits, usage = self.limits, self.usage
        if limits.max_calls is not None and usage.calls >= limits.max_calls:
            return f"the session's budget of {limits.max_calls} model calls is spent"
        if limits.max_tokens is not None and usage.tokens + prompt_tokens > limits.max_tokens:
            return (f"the session's budget of {limits.max_tokens} tokens would be exceeded "
                    f"({usage.tokens} used, the next prompt is ~{prompt_tokens})")
        if limits.max_cost is not None:
            next_cost = self.cost(prompt_tokens, 0)
            if usage.cost + next_cost > limits.max_cost:
                return (f"the session's budget of ${limits.max_cost:g} would be exceeded "
                        f"(${usage.cost:.4f} spent, the next prompt costs ~${next_cost:.4f})")
        hourly = limits.max_calls_per_failure_per_hour
        if hourly is not None:
            recent = self.ledger.calls_within_hour(self.fingerprint, self.clock())
            if recent >= hourly:
                return (f"this failure ({self.fingerprint}) already had {recent} model calls in the last hour "
                        f"(limit {hourly}); it keeps recurring, so it is not sent to the model again yet")
        gate = FLEET_GATE.get()
        if gate is not None:  # the last word, as it counts the call when it allows it
            return gate(self.fingerprint, hourly, self.cost(prompt_tokens, 0))
        return ""

    def start(self) -> None:
        """Count a call against the per-failure hourly budget (before it is made: failed calls count too)."""
        self.ledger.start_call(self.fingerprint, self.clock())

    def record(self, input_tokens: int, output_tokens: int, latency: float, retries: int,
               first_token: float | None = None, generating: float = 0.0) -> Usage:
        """Count a finished call; returns that call's usage. ``first_token`` (seconds to the first token
        of a streamed reply) and ``generating`` (seconds from it to the last) time a streamed call."""
        call = Usage(1, input_tokens, output_tokens, latency, self.cost(input_tokens, output_tokens), retries)
        if first_token is not None:
            call.streamed, call.first_token, call.generating, call.generated = 1, first_token, generating, output_tokens
        self.usage.add(call)
        self.ledger.record(self.origin, call)
        return call

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        if self.price is None:
            return 0.0
        return (input_tokens * self.price[0] + output_tokens * self.price[1]) / 1_000_000

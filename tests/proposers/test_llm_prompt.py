"""The prompt: evidence, memory of every earlier candidate, the engine's summary, trimming, privacy."""

from __future__ import annotations

import functools
import re

from llm_servers import failing_request

import regrow
import regrow.extend
from regrow._proposers._llm._prompt import Prior, PromptOptions, build_prompt, estimate_tokens, priors_from
from regrow.extend import Attempt, Candidate, TestCallable, Verdict


def rupees(fn):  # type: ignore[no-untyped-def]
    assert fn("₹1,299") == 1299.0


@functools.cache
@regrow.heal(tests=[rupees])
def parse_price(text: str) -> float:
    """The price in a text."""
    cleaned = text.replace("$", "")
    return float(cleaned)


def connect(url: str, api_key: str, headers: dict[str, str]) -> None:
    token_count = 3
    raise ConnectionError(f"refused {url} after {token_count} tries")


def leaky() -> str:
    return str(int("sk-proj-abcdefghijklmnopqrstuvwxyz012345"))


def engine_attempt(i: int, passed: tuple[str, ...] = ()) -> Attempt:
    candidate = Candidate(f"def parse_price(text):\n    return {i}\n", "engine", operator=f"op{i % 3}", line=2)
    return Attempt(candidate, Verdict(False, "replay", f"raised ValueError {i}", passed=passed))


def model_attempt(source: str, reason: str) -> Attempt:
    return Attempt(Candidate(source, "openai:m", operator="call 1"), Verdict(False, "test:test_rupees", reason))


def test_prompt_holds_the_function_the_failure_and_the_tests() -> None:
    request = failing_request(parse_price, "₹1,299", checks=[regrow.extend.Replay(("₹1,299",), {}),
                                                               TestCallable(rupees)])
    prompt = build_prompt(request, [], PromptOptions(prompt_extra="Use only the standard library."))
    user = prompt.user
    assert 'cleaned = text.replace("$", "")' in user
    assert "@regrow.heal" not in user and "@heal" not in user  # regrow's own decorator is stripped
    assert "@functools.cache" in user  # the other decorators are named, as regrow keeps them
    assert "ValueError: could not convert string to float: '₹1,299'" in user
    assert "Failing line (line 4 of the definition): `return float(cleaned)`" in user
    assert "- text = '₹1,299'" in user
    assert "- cleaned = '₹1,299'" in user  # a local that is not an argument
    assert 'assert fn("₹1,299") == 1299.0' in user  # the test's source
    assert "- test:rupees" in user
    assert "Use only the standard library." in user
    assert "keep the name and the signature exactly" in prompt.system
    assert "```python" in prompt.system
    assert prompt.tokens == estimate_tokens(prompt.system) + estimate_tokens(user)
    assert prompt.trimmed == ()


def test_every_earlier_candidate_is_shown_with_its_reason_refused_ones_included() -> None:
    history = [engine_attempt(0),
               model_attempt("def parse_price(text):\n    return 1.0\n", "returned 1.0, wanted 1299.0"),
               engine_attempt(1)]
    # (len(history) when the reply was refused, what it was): call 2 came after call 1's verdict.
    refused = [(2, Prior("openai:m call 2", "def parse_cost(text): ...", "defines `parse_cost`", ran=False)),
               (3, Prior("openai:m call 3", "oops", "the reply was empty", ran=False))]
    priors = priors_from(history, refused)
    assert [p.label for p in priors] == ["openai:m call 1", "openai:m call 2", "openai:m call 3"]
    request = failing_request(parse_price, "₹1,299", history=history)
    user = build_prompt(request, priors, PromptOptions()).user
    first = user.index("returned 1.0, wanted 1299.0")
    second = user.index("defines `parse_cost`")
    third = user.index("the reply was empty")
    assert first < second < third
    assert "openai:m call 1: rejected by the checks" in user
    assert "openai:m call 2: refused before it ran" in user
    assert "return 1.0" in user


def test_thousands_of_engine_attempts_are_summarised_in_a_few_lines() -> None:
    history = [engine_attempt(i, passed=("replay",) if i == 7 else ()) for i in range(3000)]
    request = failing_request(parse_price, "₹1,299", history=history)
    prompt = build_prompt(request, priors_from(history, []), PromptOptions())
    assert "It judged 3000 candidates" in prompt.user
    assert "op0 x1000" in prompt.user and "Failed on: replay x3000" in prompt.user
    closest = prompt.user.split("The ones that came closest", 1)[1]
    assert closest.splitlines()[1].endswith("(op1): replay: raised ValueError 7")  # it passed a check first
    assert "return 2999" not in prompt.user
    assert prompt.tokens < 1200


def test_evidence_is_trimmed_cheapest_first_to_the_budget() -> None:
    long_reason = "mismatch " * 400
    history = [model_attempt(f"def parse_price(text):\n    return {i}.0\n" + "    # pad\n" * 40, f"{long_reason}{i}")
               for i in range(6)]
    request = failing_request(parse_price, "₹1,299" * 100, history=history)
    full = build_prompt(request, priors_from(history, []), PromptOptions(token_budget=100_000))
    prompt = build_prompt(request, priors_from(history, []), PromptOptions(token_budget=2500))
    assert full.tokens > 2500 >= prompt.tokens
    assert prompt.trimmed[0] == "locals"  # the cheapest evidence goes first
    assert "locals" in prompt.trimmed and "older" in prompt.trimmed
    # What must never go: the function, the failure, the latest candidate and why it failed.
    assert 'cleaned = text.replace("$", "")' in prompt.user
    assert "could not convert string to float" in prompt.user
    assert "return 5.0" in prompt.user
    assert "openai:m call 1: rejected by the checks" in prompt.user  # older ones keep a line and a reason


def test_a_budget_too_small_for_the_essentials_still_sends_them() -> None:
    request = failing_request(parse_price, "₹1,299")
    prompt = build_prompt(request, [], PromptOptions(token_budget=10))
    assert 'cleaned = text.replace("$", "")' in prompt.user
    assert "could not convert string to float" in prompt.user


def test_secrets_in_the_evidence_and_the_source_do_not_reach_the_prompt() -> None:
    secret = "sk-live-0123456789abcdefghijklmnop"
    request = failing_request(connect, "https://user:hunter2@db.example", secret,
                              {"Authorization": "Bearer abcdefghijklmnopqrstuvwxyz", "Accept": "json"})
    user = build_prompt(request, [], PromptOptions()).user
    assert secret not in user
    assert "hunter2" not in user
    assert "abcdefghijklmnopqrstuvwxyz" not in user
    assert "'Accept': 'json'" in user  # evidence that is not secret stays
    assert "- token_count = 3" in user  # a count of tokens is not a credential
    leaked = build_prompt(failing_request(leaky), [], PromptOptions()).user
    assert "sk-proj-abcdefghijklmnopqrstuvwxyz012345" not in leaked
    assert "[REDACTED]" in leaked


def test_token_estimate_tracks_text_size() -> None:
    code = 'def parse_price(text: str) -> float:\n    return float(re.sub(r"[^0-9.]", "", text))\n'
    assert 20 <= estimate_tokens(code) <= 40  # BPE tokenizers give ~27 for this line pair
    assert estimate_tokens(code * 10) == 10 * estimate_tokens(code)
    words = "internationalization " * 10
    assert estimate_tokens(words) >= 20  # long words cost more than one token
    assert re.search(r"\d", str(estimate_tokens("")))  # empty text is 0, not an error

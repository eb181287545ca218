"""The compact prompt and the greedy ladder of small models, through the real SDKs against loopback servers.

A model of a few billion parameters, decoding greedily, answers the same prompt the same way and
copies what it is shown: the function, or a format example's placeholder. So it gets a short
prompt with the evidence a fix is made from, an edit example with nothing to copy, and after an
echo a request that changes what it reads: the function asked for again with its old body left
out, or the other format with the window around the fault.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from llm_servers import OpenAIServer, Text, failing_request, greedy
from llm_servers import chat_of as sent

import regrow
from regrow._llm import LLMProposer, RetryPolicy, proposer_for
from regrow._llm._compact import gist
from regrow._llm._edits import search_replace
from regrow._llm._prompt import Prior, build_prompt, estimate_tokens
from regrow._llm._proposer import _Run
from regrow._llm._strategy import is_small

FAST = RetryPolicy(max_retries=1, base_delay=0.01)
SMALL = "qwen2.5-coder-1.5b-instruct"
BODY = ('    """The middle value; the mean of the two middle values for an even count."""\n'
        "    ordered = sorted(values)\n    if len(ordered) % 2:\n        return ordered[len(ordered) // 2]\n")
WRONG = "    return ordered[len(ordered) // 2]\n"
RIGHT = "    return (ordered[len(ordered) // 2 - 1] + ordered[len(ordered) // 2]) / 2\n"


def original(name: str) -> str:
    return f"def {name}(values):\n{BODY}{WRONG}"


def fixed(name: str) -> str:
    return f"def {name}(values):\n{BODY}{RIGHT}"


def median_a(values):  # type: ignore[no-untyped-def]
    """The middle value; the mean of the two middle values for an even count."""
    ordered = sorted(values)
    if len(ordered) % 2:
        return ordered[len(ordered) // 2]
    return ordered[len(ordered) // 2]


def median_b(values):  # type: ignore[no-untyped-def]
    """The middle value; the mean of the two middle values for an even count."""
    ordered = sorted(values)
    if len(ordered) % 2:
        return ordered[len(ordered) // 2]
    return ordered[len(ordered) // 2]


def median_c(values):  # type: ignore[no-untyped-def]
    """The middle value; the mean of the two middle values for an even count."""
    ordered = sorted(values)
    if len(ordered) % 2:
        return ordered[len(ordered) // 2]
    return ordered[len(ordered) // 2]


def median_d(values):  # type: ignore[no-untyped-def]
    """The middle value; the mean of the two middle values for an even count."""
    ordered = sorted(values)
    if len(ordered) % 2:
        return ordered[len(ordered) // 2]
    return ordered[len(ordered) // 2]


def check_even(fn: Any) -> None:
    assert fn([1, 2, 3, 10]) == 2.5


def check_odd(fn: Any) -> None:
    assert fn([3, 1, 2]) == 2


def price(text: str) -> float:
    return float(text.replace("$", ""))


class Basket:
    def __init__(self) -> None:
        self.prices: list[float] = [2.0, 3.0]

    def total(self, discount: float) -> float:
        """The sum of the prices, less ``discount`` of it."""
        if not discount:
            return sum(self.prices)
        return sum(self.prices) * discount


def check_total(fn: Any) -> None:
    assert fn(Basket(), 0.25) == 3.75


def check_no_discount(fn: Any) -> None:
    assert fn(Basket(), 0) == 5.0


def repair(func: Any, proposer: LLMProposer, *args: Any, tests: Any = (check_even, check_odd)) -> Any:
    return regrow.repair(func, args or ([1, 2, 3, 10],), tests=list(tests), proposers=[proposer], install=False)


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer() as running:
        yield running


def small(server: OpenAIServer, **options: Any) -> LLMProposer:
    return proposer_for(f"openai:{SMALL}", api_key="k", base_url=server.base_url, retry=FAST, **options)


def fenced(code: str) -> str:
    return f"```python\n{code}```"


def test_a_small_model_gets_a_short_prompt_with_the_evidence_a_fix_is_made_from(server: OpenAIServer) -> None:
    server.add(Text(fenced(fixed("median_a"))))
    result = repair(median_a, small(server))

    assert result.ok
    system, user, _ = sent(server.requests[0])
    assert estimate_tokens(system) + estimate_tokens(user) < 650  # the estimate errs ~20% high
    # The failing call with its arguments, what it returned, the failing assertion and the test's source.
    assert "the call `median_a(values=[1, 2, 3, 10])` returned 3" in user
    assert "assert fn([1, 2, 3, 10]) == 2.5" in user
    assert "## The failing test\n```python\ndef check_even(fn: Any) -> None:" in user
    assert "## Most suspicious lines\n- line 6: `return ordered[len(ordered) // 2]`" in user
    # What costs a small model time and attention is left out: tracebacks, the list of checks, passing tests.
    assert "Traceback" not in user and "## Checks a fix must pass" not in user and "def check_odd" not in user
    assert user.endswith("Reply with SEARCH/REPLACE blocks that fix `median_a`.")  # a small model: edits first


@pytest.mark.parametrize("size", ["compact", "full"])
def test_the_edit_example_has_nothing_a_model_could_copy_as_it_stands(size: str) -> None:
    proposer = proposer_for(f"openai:{SMALL}", api_key="k", base_url="http://127.0.0.1:9/v1", prompt_size=size,
                            evidence=False)
    run = _Run(proposer, failing_request(price, "₹1,299"))
    run.prepare()
    chat = run.next_chat()
    assert chat is not None and "<<<<<<< SEARCH" in chat.system
    assert "(consecutive lines" not in chat.system and "(the lines that replace them)" not in chat.system
    example = search_replace(chat.system[chat.system.index("<<<<<<< SEARCH"):])
    assert example is not None and [edit.search for edit in example] == [("        total -= price",)]
    assert "total" not in chat.user  # the example is about some other code


def test_after_an_echo_a_greedy_small_model_is_asked_for_the_function_without_its_old_body(
        server: OpenAIServer) -> None:
    def decide(system: str, user: str, params: dict[str, Any]) -> str:
        if "its old body is wrong and left out" in user:  # nothing to copy: it writes the function anew
            return fenced(fixed("median_b"))
        return fenced(original("median_b"))  # an echo

    server.add(*[greedy(decide)] * 3)
    proposer = small(server)
    assert repair(median_b, proposer).ok
    assert (proposer.last_usage.calls, proposer.last_usage.echoes) == (2, 1)
    system, user, _ = sent(server.requests[1])
    assert "ordered = sorted(values)" not in user  # the old body is not shown …
    assert ('def median_b(values):  # type: ignore[no-untyped-def]\n    """The middle value; the mean of the two '
            'middle values for an even count."""\n    ...\n```') in user  # … its signature and docstring are
    assert "Your previous reply was the original function, unchanged: it cannot pass." in user
    assert "Most suspicious lines" not in user  # lines of a body it does not see
    assert "in one ```python block" in system and "SEARCH" not in system


def test_three_echoes_three_different_requests_never_the_same_prompt(server: OpenAIServer) -> None:
    server.add(*[greedy(lambda system, user, params: fenced(original("median_c")))] * 3)
    proposer = small(server)
    assert not repair(median_c, proposer).ok
    assert proposer.last_usage.echoes == 3

    calls = [sent(request) for request in server.requests]
    assert len({repr(call) for call in calls}) == 3
    (system1, user1, _), (_, user2, _), (system3, user3, _) = calls
    assert "<<<<<<< SEARCH" in system1 and "old body is wrong" not in user1
    assert "old body is wrong and left out" in user2
    # Call 3: the other format, narrowed to the numbered lines around the fault.
    assert "in one ```python block" in system3 and "<<<<<<< SEARCH" not in system3
    assert "## Focus: lines 4-6" in user3 and "  6 |     return ordered[len(ordered) // 2]" in user3
    assert "Change the code around line 6: `return ordered[len(ordered) // 2]`." in user3


def test_a_method_gets_the_narrowed_other_format_before_a_rewrite(server: OpenAIServer) -> None:
    echo = fenced('def total(self, discount: float) -> float:\n    """The sum of the prices, less ``discount`` of '
                  'it."""\n    if not discount:\n        return sum(self.prices)\n'
                  '    return sum(self.prices) * discount\n')
    server.add(*[greedy(lambda system, user, params: echo)] * 3)
    assert not repair(Basket.total, small(server), Basket(), 0.25, tests=[check_total, check_no_discount]).ok

    users = [sent(request)[1] for request in server.requests]
    assert "## The method of class `Basket` `total`" in users[0]
    assert "## Focus: lines 3-5" in users[1] and "old body" not in users[1]  # the body says what `self` holds
    assert "old body is wrong and left out" in users[2] and "if not discount" not in users[2]


def test_the_evidence_of_a_compact_prompt_keeps_to_its_budget() -> None:
    proposer = proposer_for(f"openai:{SMALL}", api_key="k", evidence=False, base_url="http://127.0.0.1:9/v1")
    request = failing_request(price, "₹1,299")
    priors = [Prior(f"openai:{SMALL} call {i}", f"def price(text):\n    return {i}.0\n" * 20,
                    "replay: ValueError " + "because " * 200) for i in range(4)]
    strategy = _Run(proposer, request).ladder.current()
    essentials = build_prompt(request, [], proposer.prompt_options, None, strategy)
    prompt = build_prompt(request, priors, proposer.prompt_options, None, strategy)
    assert prompt.trimmed and prompt.tokens <= essentials.tokens + proposer.prompt_options.evidence_budget + 60
    assert all(f"call {i}" in prompt.user for i in range(4))  # every earlier candidate still named


def test_a_last_block_a_closing_fence_ended_still_applies(server: OpenAIServer) -> None:
    # The small model's way: no `>>>>>>> REPLACE`, the code fence closed instead.
    server.add(Text(f"```python\n<<<<<<< SEARCH\n{WRONG}=======\n{RIGHT}```\n"))
    result = repair(median_d, small(server))
    assert result.ok and result.fix is not None and RIGHT in result.fix.source


@pytest.mark.parametrize(("model", "expected"), [
    ("qwen2.5-coder-1.5b-instruct-q4_k_m", True), ("qwen2.5-coder:7b", True), ("llama-3.1-8b-instant", True),
    ("smollm2", True), ("qwen2.5-coder-32b", False), ("gpt-5", False), ("claude-sonnet-4-5", False),
])
def test_small_is_told_by_the_name(model: str, expected: bool) -> None:
    assert is_small(model) is expected


def test_the_prompt_size_can_be_chosen() -> None:
    url = "http://127.0.0.1:9/v1"
    assert proposer_for(f"openai:{SMALL}", api_key="k", base_url=url).compact
    assert not proposer_for(f"openai:{SMALL}", api_key="k", base_url=url, prompt_size="full").compact
    assert proposer_for("openai:gpt-5", api_key="k", prompt_size="compact").compact
    with pytest.raises(ValueError, match="prompt_size must be"):
        proposer_for("openai:gpt-5", api_key="k", prompt_size="tiny")  # type: ignore[arg-type]


def test_a_large_model_keeps_the_full_prompt(server: OpenAIServer) -> None:
    server.add(Text(fenced(fixed("median_a"))))
    proposer = proposer_for("openai:gpt-5", api_key="k", base_url=server.base_url, retry=FAST)
    assert repair(median_a, proposer).ok
    assert "## Checks a fix must pass" in sent(server.requests[0])[1]


def test_a_unittest_report_is_told_by_its_failing_line_and_error() -> None:
    report = ("self = <tests.test_cached.CacheWrapperTest testMethod=test_decorator>\n\n"
              "    def test_decorator(self):\n        cache = self.cache(2)\n"
              ">       self.assertEqual(wrapper(0), 0)\nE       AssertionError: None != 0\n")
    assert gist(report) == "self.assertEqual(wrapper(0), 0) / AssertionError: None != 0"
    assert gist("assert 4 == 2\n +  where 4 = levenshtein('flaw', 'lawn')") == (
        "assert 4 == 2 / +  where 4 = levenshtein('flaw', 'lawn')")


def test_chain_mode_sends_a_small_model_the_prompts_model_only_mode_sends() -> None:
    def echo(system: str, user: str, params: dict[str, Any]) -> str:
        return fenced(original("median_c"))

    prompts = []
    for proposers in (lambda p: [p], lambda p: [regrow.Engine(), p]):
        with OpenAIServer() as server:
            server.add(*[greedy(echo)] * 3)
            proposer = small(server)
            regrow.repair(median_c, ([1, 2, 3, 10],), tests=[check_even, check_odd], proposers=proposers(proposer),
                          install=False)
            prompts.append([sent(request)[:2] for request in server.requests])
    assert len(prompts[0]) == 3 and prompts[1] == prompts[0]  # the same calls: not one more


def test_after_a_wrong_candidate_a_small_model_is_asked_another_way(server: OpenAIServer) -> None:
    wrong = fenced(f"def median_a(values):\n{BODY}    return ordered[0]\n")
    server.add(*[greedy(lambda system, user, params: wrong)] * 3)
    proposer = small(server)
    assert not repair(median_a, proposer).ok
    assert (proposer.last_usage.calls, proposer.last_usage.repeats) == (3, 2)  # greedy: the same reply

    users = [sent(request)[1] for request in server.requests]
    assert "old body is wrong and left out" in users[1]  # the rung after a judged reply: a rewrite …
    assert "## Focus: lines 4-6" in users[2]  # … then the other format, narrowed
    assert "Your previous reply" not in users[1]  # a judged reply is shown with its reason, not scolded

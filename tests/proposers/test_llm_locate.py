"""The locate request: the model names the line, the kind of edit and an expression; the engine makes
and judges the edits there. Malformed and hostile replies end in clear verdicts (through the real SDKs)."""

from __future__ import annotations

import ast
import asyncio
import importlib.util
import json
import time
import types
from collections.abc import Callable
from typing import Any

import pytest
from llm_servers import SERVERS, OpenAIServer, Text

import regrow
from regrow._checks._oracles import TestCallable
from regrow._evidence._failure import capture_exception
from regrow._proposers._llm import ModelLimits, RetryPolicy, proposer_for
from regrow._proposers._llm._locate import MAX_REPLY, locate_prompt, parse_locate
from regrow._proposers._llm._prompt import PromptOptions, build_prompt
from regrow.extend import Request, Target

FAST = RetryPolicy(max_retries=1, base_delay=0.01, max_delay=0.05)
UNLIMITED = ModelLimits(max_calls_per_failure_per_hour=None)  # the same failure is sent many times here
MODELS = {"openai": "openai:gpt-test", "anthropic": "anthropic:claude-test", "gemini": "gemini:gemini-test"}
SDKS = {"openai": "openai", "anthropic": "anthropic", "gemini": "google.genai"}
WIRES = [w for w in sorted(SERVERS) if importlib.util.find_spec(SDKS[w]) is not None]

TAXED = '''
def taxed(price):
    """The price with 20% tax."""
    rate = 1.07
    return round(price * rate, 2)


def test_ten(fn):
    assert fn(10) == 12.0


def test_five(fn):
    assert fn(5) == 6.0
'''
RIGHT = '{"line": 3, "edit": "constant", "use": "1.2"}'
REWRITE = "```python\ndef taxed(price):\n    return round(price * 1.2, 2)\n```"


def taxed_request(module: types.ModuleType, *, max_attempts: int = 3, events: tuple[Any, ...] = ()) -> Any:
    """The request a session sends after ``test_ten`` failed on ``taxed`` (it returns a wrong value)."""
    target = Target.of(module.taxed)
    try:
        module.test_ten(module.taxed)
    except AssertionError as exc:
        failure = capture_exception(exc, target.func, (10,), {})
    checks = [TestCallable(module.test_ten), TestCallable(module.test_five)]
    return Request(target, failure, [], checks, 1, time.monotonic() + 60, 2000,
                   max_attempts, events)


# -- parsing ----------------------------------------------------------------------------------------------
def test_a_reply_names_places_in_order() -> None:
    located = parse_locate('Sure:\n```json\n[{"line": 4, "edit": "constant", "use": "1.2"}, '
                           '{"line": "5", "edit": "weird", "use": "price * 1.2"}]\n```', 5)
    assert [(s.line, s.kind, s.use) for s in located.spots] == [(4, "constant", "1.2"), (5, "other", "price * 1.2")]
    assert located.reason == ""


@pytest.mark.parametrize(("reply", "verdict"), [
    ('{"line": 99, "edit": "constant", "use": "1"}', "line 99 is not a line of the function (1-5)"),
    ('{"line": 0, "edit": "constant"}', "line 0 is not a line of the function"),
    ('{"line": true, "edit": "constant"}', "line True is not a line number"),
    ('{"line": 2, "use": "__import__(\'os\').system(\'rm -rf /\')"}', "reaches for `__import__`"),
    ('{"line": 2, "use": "eval(text)"}', "reaches for `eval`"),
    ('{"line": 2, "use": "x.__class__.__bases__"}', "reaches for `__bases__`"),
    ('{"line": 2, "use": "(lambda: 1)()"}', "holds a lambda"),
    ('{"line": 2, "use": "x = __import__(\'os\')"}', "reaches for `__import__`"),
    ('{"line": 2, "use": "if eval(text):"}', "reaches for `eval`"),
    ('{"line": 2, "use": ["1"]}', "is not text"),
    ('{"line": 2, "use": "' + "1+" * 150 + '1"}', "characters (at most 200)"),
    ("the bug is on line 2", "not the JSON asked for (no JSON object in it)"),
    ('{"line": 2, "edit": ', "not the JSON asked for (invalid JSON"),
    ("[1, 2]", "is not an object with line, edit and use"),
    ("x" * (MAX_REPLY + 1), f"the reply is {MAX_REPLY + 1} characters"),
])
def test_malformed_and_hostile_replies_are_refused_with_their_reason(reply: str, verdict: str) -> None:
    located = parse_locate(reply, 5)
    assert located.spots == ()
    assert verdict in located.reason, located.reason


@pytest.mark.parametrize(("use", "taken"), [
    ("if x == y:", "x == y"),  # a header gives its test
    ("elif ch == 's':", "ch == 's'"),
    ("while n > 1:", "n > 1"),
    ("for i in range(len(xs) - 1):", "range(len(xs) - 1)"),  # and a for its iterable
    ("ch in '([{':", "ch in '([{'"),  # an expression ended with its line's colon
    ("distance += 0", "distance += 0"),  # a simple statement is kept whole
    ("xs[i], xs[j] = xs[j], xs[i];", "xs[i], xs[j] = (xs[j], xs[i])"),
    ("return self", "return self"),
    ("raise ValueError('no')", "raise ValueError('no')"),
    ("`n - 1`", "n - 1"),
])
def test_a_whole_fixed_line_is_taken_as_the_engine_can_use_it(use: str, taken: str) -> None:
    located = parse_locate(json.dumps({"line": 2, "edit": "operator|constant|name", "use": use}), 5)
    assert [(s.line, s.kind) for s in located.spots] == [(2, "other")]  # a copied template: other
    assert ast.dump(ast.parse(located.spots[0].use)) == ast.dump(ast.parse(taken))  # unparse's spelling varies
    assert located.notes == ()


@pytest.mark.parametrize("use", ["import os", "a = 1; b = 2", "def f(): pass", "with open(p) as f:", "x ="])
def test_code_the_engine_cannot_use_leaves_its_line_searched_without_it(use: str) -> None:
    located = parse_locate(json.dumps({"line": 2, "edit": "other", "use": use}), 5)
    assert [(s.line, s.use) for s in located.spots] == [(2, "")]
    assert len(located.notes) == 1 and "is not a Python expression or one simple statement" in located.notes[0]


def test_the_answer_format_shows_placeholders_not_a_template_to_copy(
        make_module: Callable[[str], types.ModuleType]) -> None:
    prompt = locate_prompt(taxed_request(make_module(TAXED)), None)
    assert "operator|constant" not in prompt.user  # a 1.5B model copied that string as its "edit" every time
    assert '"edit": "<one of: operator, constant, name' in prompt.user


def test_usable_places_are_kept_beside_refused_ones() -> None:
    located = parse_locate('[{"line": 12}, {"line": 3, "use": "n - 1"}]', 5)
    assert [s.line for s in located.spots] == [3]
    assert located.notes == ("line 12 is not a line of the function (1-5)",)


# -- through the real SDKs -------------------------------------------------------------------------------------
@pytest.mark.parametrize("wire", WIRES)
def test_the_engine_makes_the_fix_at_the_located_line_with_the_models_token(
        wire: str, make_module: Callable[[str], types.ModuleType]) -> None:
    module = make_module(TAXED)
    with SERVERS[wire]([Text(RIGHT)]) as server:
        llm = proposer_for(MODELS[wire], api_key="k", base_url=server.base_url, retry=FAST, locate=True,
                           evidence=False, limits=UNLIMITED)
        candidates = list(llm.propose(taxed_request(module, max_attempts=1)))
        (sent,) = server.requests
    assert candidates, "the engine found nothing at the located line"
    assert "rate = 1.2" in candidates[0].source
    assert candidates[0].origin == MODELS[wire] and candidates[0].operator.startswith("call 1 locate: suggested")
    assert "3 |     rate = 1.07" in sent.prompt and "JSON only" in sent.prompt


SWAPPED = '''
def swapped(pair):
    """The pair's items, the other way round."""
    first, second = pair
    first = second
    return [first, second]


def test_swapped(fn):
    assert fn((1, 2)) == [2, 1]
    assert fn(("a", "b")) == ["b", "a"]
'''


def test_a_statement_the_model_wrote_is_put_in_place_of_the_line(
        make_module: Callable[[str], types.ModuleType]) -> None:
    module = make_module(SWAPPED)
    target = Target.of(module.swapped)
    try:
        module.test_swapped(module.swapped)
    except AssertionError as exc:
        failure = capture_exception(exc, target.func, ((1, 2),), {})
    request = Request(target, failure, [], [TestCallable(module.test_swapped)], 1, time.monotonic() + 60, 2000, 1)
    reply = '```json\n[{"line": 4, "edit": "operator|constant", "use": "first, second = second, first"}]\n```'
    with OpenAIServer([Text(reply)]) as server:
        llm = proposer_for("openai:gpt-test", api_key="k", base_url=server.base_url, retry=FAST, locate=True,
                           evidence=False, limits=UNLIMITED)
        candidates = list(llm.propose(request))
    assert candidates, "the engine found nothing with the model's statement"
    assert "first, second = " in candidates[0].source and "second, first" in candidates[0].source
    assert candidates[0].operator.startswith("call 1 locate: suggested")
    namespace: dict[str, Any] = {}
    exec(candidates[0].source, namespace)
    assert namespace["swapped"]((1, 2)) == [2, 1]


HOSTILE = [
    "not json at all",
    '{"line": 42, "edit": "constant", "use": "1.2"}',
    '{"line": 4, "edit": "constant", "use": "__import__(\'os\').system(\'touch /tmp/pwned\')"}',
    '{"line": 4, "edit": "call", "use": "open(\'/etc/passwd\').read()"}',
    "[" * 5000,
    "y" * 20000,
]


@pytest.mark.parametrize("wire", WIRES)
def test_hostile_locate_replies_end_in_verdicts_and_the_rewrite_follows(
        wire: str, make_module: Callable[[str], types.ModuleType]) -> None:
    module = make_module(TAXED)
    for reply in HOSTILE:
        events: list[Any] = []
        with SERVERS[wire]([Text(reply), Text(REWRITE)]) as server:
            llm = proposer_for(MODELS[wire], api_key="k", base_url=server.base_url, retry=FAST, locate=True,
                               evidence=False, limits=UNLIMITED)
            request = taxed_request(module, max_attempts=2, events=(events.append,))
            candidates = list(llm.propose(request))
            assert len(server.requests) == 2
        refused = [e.message for e in events if e.type == "reply_refused"]
        assert refused and "a locate reply that could not be used" in refused[0], (reply[:40], refused)
        assert [c.operator for c in candidates] == ["call 2"], reply[:40]  # the rewrite request, as before


PRICE = """
def parse_price(text):
    return float(text.replace("$", ""))


def test_rupees(fn):
    assert fn("\u20b91,299") == 1299.0


def test_dollars(fn):
    assert fn("$5") == 5.0
"""
PRICE_SPOT = json.dumps({"line": 2, "edit": "call", "use": "float(text.replace('$', '').replace('\u20b9', '')"
                                                          ".replace(',', ''))"})


def test_in_chain_mode_the_first_call_locates(make_module: Callable[[str], types.ModuleType]) -> None:
    module = make_module(PRICE)
    with OpenAIServer([Text(PRICE_SPOT)]) as server:
        llm = proposer_for("openai:gpt-test", api_key="k", base_url=server.base_url, retry=FAST, limits=UNLIMITED)
        fixed = regrow.heal(tests=[module.test_rupees, module.test_dollars],
                            proposers=[regrow.extend.Engine(), llm])(module.parse_price)
        assert fixed("\u20b91,299") == 1299.0
        (sent,) = server.requests  # one call: the locate request, and the engine made the fix there
    assert "JSON only" in sent.prompt and sent.body["max_tokens"] == 300  # a line of JSON, not a function
    result = regrow.state(fixed).last_result
    assert result is not None and result.screened > 0  # the engine searched on its own first
    assert result.fix is not None and "locate" in result.fix.operator and not result.trusted


def test_locate_prompts_are_smaller_than_rewrite_prompts(make_module: Callable[[str], types.ModuleType]) -> None:
    module = make_module(TAXED)
    request = taxed_request(module)
    locate = locate_prompt(request, None)
    rewrite = build_prompt(request, [], PromptOptions())
    assert locate.tokens < rewrite.tokens
    assert json.loads(RIGHT)["line"] == 3


def test_a_place_where_nothing_passes_is_said_in_the_next_prompt(
        make_module: Callable[[str], types.ModuleType]) -> None:
    module = make_module(TAXED)
    with OpenAIServer([Text('{"line": 2, "edit": "other"}'), Text(REWRITE)]) as server:  # the docstring's line
        llm = proposer_for("openai:gpt-test", api_key="k", base_url=server.base_url, retry=FAST, locate=True,
                           evidence=False, limits=UNLIMITED)
        candidates = list(llm.propose(taxed_request(module, max_attempts=2)))
        second = server.requests[1].prompt
    assert [c.operator for c in candidates] == ["call 2"]
    assert "located line 2 (other); no edit there passed the checks" in second


def test_the_async_proposer_locates_too(make_module: Callable[[str], types.ModuleType]) -> None:
    module = make_module(TAXED)
    with OpenAIServer([Text(RIGHT)]) as server:
        llm = proposer_for("openai:gpt-test", api_key="k", base_url=server.base_url, retry=FAST, locate=True,
                           evidence=False, limits=UNLIMITED)

        async def collect() -> list[Any]:
            return [candidate async for candidate in llm.apropose(taxed_request(module, max_attempts=1))]

        candidates = asyncio.run(collect())
    assert candidates and "rate = 1.2" in candidates[0].source and "locate" in candidates[0].operator

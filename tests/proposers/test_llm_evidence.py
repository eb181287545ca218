"""The evidence in the prompt, from real failures through each front-end: the decorator, ``repair()``,
``regrow heal`` and ``regrow bench``, each against a scripted OpenAI-compatible loopback server.

Whatever started the repair, the model is shown what the checks saw when they ran on the
original: the failing test's source, the failing call with its (redacted) arguments and what it
returned, the assertion's explanation, the traceback of the user's frames with their source lines,
the suspicious lines with their scores and, for a test that never finishes, the loop it was stuck in.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import textwrap
import time
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from llm_servers import OpenAIServer, Text

import regrow
import regrow._proposers._engine
import regrow.extend
from regrow._cli._main import main
from regrow._proposers._llm import LLMProposer, RetryPolicy, proposer_for
from regrow._proposers._llm._evidence import gather
from regrow._proposers._llm._prompt import PromptOptions, build_prompt

FAST = RetryPolicy(max_retries=1, base_delay=0.01)
SECRET = "sk-live-0123456789abcdefghijklmnop"

PRICES = '''\
def tag_price(text, api_key=None):
    """The amount in a price tag."""
    if text.startswith("$"):
        return float(text[1:])
    cleaned = text.replace(",", "")
    return float(cleaned)


def test_dollars(fn):
    assert fn("$12.50") == 12.5


def test_rupees(fn):
    assert fn("₹1,299", api_key="{secret}") == 1299.0
'''.replace("{secret}", SECRET)
FIXED = ('```python\ndef tag_price(text, api_key=None):\n    cleaned = text.lstrip("$₹").replace(",", "")\n'
         '    return float(cleaned)\n```')

SEARCH = '''\
def search(items, x):
    """The index of the first item that is not less than x."""
    lo, hi = 0, len(items)
    while lo < hi:
        mid = (lo + hi) // 2
        if items[mid] < x:
            lo = mid
        else:
            hi = mid
    return lo
'''
SEARCH_TESTS = '''\
from {module} import search


def test_found():
    assert search([1, 2, 3, 4], 3) == 2


def test_empty():
    assert search([], 3) == 0
'''
MEDIAN = '''\
def median(values):
    """The middle value (the mean of the two middle ones for an even count)."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return sum(ordered) / len(ordered)
'''
MEDIAN_TESTS = '''\
from {module} import median


def test_odd():
    assert median([9, 1, 2]) == 2


def test_even():
    assert median([1, 2, 3, 10]) == 2.5
'''


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer() as running:
        yield running


def model(server: OpenAIServer, **options: Any) -> LLMProposer:
    return proposer_for("openai:gpt-test", api_key="k", base_url=server.base_url, retry=FAST, **options)


def prices(make_module: Callable[[str], types.ModuleType]) -> types.ModuleType:
    return make_module(PRICES)


def assert_price_evidence(prompt: str) -> None:
    # The failing test, its call with the arguments (the key masked by its name), what the call did.
    assert 'def test_rupees(fn):\n    assert fn("₹1,299", api_key="[REDACTED]") == 1299.0' in prompt
    assert "The call: `tag_price(text='₹1,299', api_key=[REDACTED])` raised ValueError: could not convert " \
           "string to float: '₹1299'" in prompt
    # The traceback of the user's frames, with their source lines (the test's and the function's).
    assert re.search(r'line 14, in test_rupees\n\s+assert fn\("₹1,299", api_key="\[REDACTED\]"\) == 1299.0',
                     prompt)
    assert re.search(r"line 6, in tag_price\n\s+return float\(cleaned\)", prompt)
    # Fault localization: the lines only the failing test runs first, with their scores.
    # (The failing checks: the replay of the failing call and test_rupees; the passing one: test_dollars.)
    suspicious = prompt.split("## Suspicious lines (fault localization over 2 failing and 1 passing checks", 1)[1]
    assert suspicious.split("\n\n")[0].splitlines()[1:] == ["- line 6: `return float(cleaned)` (1.00)",
                                                           "- line 5: `cleaned = text.replace(\",\", \"\")` (1.00)",
                                                           "- line 3: `if text.startswith(\"$\"):` (0.82)"]
    assert SECRET not in prompt


def test_the_decorators_prompt_carries_the_evidence_of_its_tests(
        server: OpenAIServer, make_module: Callable[[str], types.ModuleType]) -> None:
    module = prices(make_module)
    server.add(Text(FIXED))
    healed = regrow.heal(tests=[module.test_dollars, module.test_rupees], proposers=[model(server)])(
        module.tag_price)

    assert healed("₹1,299", api_key=SECRET) == 1299.0

    (request,) = server.requests
    assert_price_evidence(request.prompt)
    assert SECRET not in request.text


def test_repairs_prompt_carries_the_evidence(server: OpenAIServer,
                                             make_module: Callable[[str], types.ModuleType]) -> None:
    module = prices(make_module)
    server.add(Text(FIXED))
    result = regrow.repair(module.tag_price, ("₹1,299",), {"api_key": SECRET},
                           tests=[module.test_dollars, module.test_rupees], proposers=[model(server)])

    assert result.ok and result.value == 1299.0
    assert_price_evidence(server.requests[0].prompt)
    assert SECRET not in server.requests[0].text


def write_project(root: Path, module: str, source: str, tests: str) -> None:
    (root / f"{module}.py").write_text(source)
    (root / f"test_{module}.py").write_text(tests.format(module=module))


def test_the_clis_one_line_failure_becomes_the_tests_evidence(server: OpenAIServer, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    write_project(tmp_path, "stats_cli", MEDIAN, MEDIAN_TESTS)
    monkeypatch.chdir(tmp_path)
    llm = model(server)
    # The model stands in for the engine here (the default chain of every front-end's options), with
    # the failure and checks the command builds (a one-line reason, the pytest tests).
    monkeypatch.setattr(regrow._proposers._engine, "Engine", lambda: llm)  # where Options.chain finds it
    server.add(Text("```python\ndef median(values):\n    ordered = sorted(values)\n    middle = len(ordered) // 2\n"
                    "    if len(ordered) % 2:\n        return ordered[middle]\n"
                    "    return (ordered[middle - 1] + ordered[middle]) / 2\n```"))

    assert main(["heal", "stats_cli.py::median", "--test", "test_stats_cli.py"], out=io.StringIO()) == 0

    prompt = server.requests[0].prompt
    assert "Error: AssertionError: test_stats_cli.py::test_even failed: assert 4.0 == 2.5" in prompt  # all it had
    assert "### test_stats_cli.py::test_even\nassert 4.0 == 2.5\n +  where 4.0 = median([1, 2, 3, 10])" in prompt
    assert "The call: `median(values=[1, 2, 3, 10])`" in prompt
    assert "def test_even():\n    assert median([1, 2, 3, 10]) == 2.5" in prompt
    assert re.search(r"line 9, in test_even\n\s+assert median\(\[1, 2, 3, 10\]\) == 2.5", prompt)
    suspicious = prompt.split("## Suspicious lines", 1)[1]
    assert "- line 7: `return sum(ordered) / len(ordered)` (1.00)" in suspicious
    assert "<function median at 0x" not in prompt  # addresses say nothing and change every run


def test_a_test_that_never_finishes_is_shown_as_the_loop_it_was_stuck_in(server: OpenAIServer,
                                                                        make_module: Callable[..., Any]) -> None:
    module = make_module(SEARCH + "\n\n" + SEARCH_TESTS.split("\n\n", 1)[1].replace("search(", "fn(")
                         .replace("():", "(fn):"))
    request = _request(module.search, [regrow.extend.TestCallable(module.test_found),
                                       regrow.extend.TestCallable(module.test_empty)],
                       "test:test_found did not finish")
    evidence = gather(request, timeout=0.5)

    prompt = build_prompt(request, [], PromptOptions(), evidence).user

    stuck = re.search(r"It did not finish in 0.5s; the `while` loop at line 4: `while lo < hi:` ran "
                      r"(?:at least )?([\d,]+) iterations \(at most 0 in a passing check\)\. "
                      r"It was stopped at line (\d): `([^`]+)`, with "
                      r"items = \[1, 2, 3, 4\], x = 3, lo = 1, hi = 2, mid = 1\.", prompt)
    assert stuck is not None, prompt
    assert int(stuck[1].replace(",", "")) > 1000
    assert "The call: `search(items=[1, 2, 3, 4], x=3)` did not return (stopped)" in prompt
    assert "- line 5: `mid = (lo + hi) // 2` (1.00)" in prompt  # the passing test never enters the loop


def _request(func: Callable[..., Any], checks: list[Any], reason: str) -> regrow.extend.Request:
    from regrow._evidence._failure import check_failure

    target = regrow.extend.Target.of(func)
    failure = check_failure("test", target.func, reason)
    return regrow.extend.Request(target, failure, [], checks, 1, time.monotonic() + 30)


def test_the_benchs_prompt_says_where_a_hanging_test_hangs(server: OpenAIServer, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    suite = tmp_path / "suite"
    (suite / "programs").mkdir(parents=True)
    (suite / "checks").mkdir()
    (suite / "programs" / "__init__.py").write_text("")
    (suite / "programs" / "bsearch.py").write_text(SEARCH)
    (suite / "checks" / "check_bsearch.py").write_text(SEARCH_TESTS.format(module="programs.bsearch"))
    (suite / "manifest.toml").write_text(textwrap.dedent('''\
        [suite]
        name = "hang"
        root = "."

        [[task]]
        name = "bsearch"
        target = "programs/bsearch.py::search"
        tests = ["checks/check_bsearch.py"]
        fixable = false
        family = "loop"
        '''))
    server.add(Text("```python\n" + SEARCH.replace("lo = mid\n", "lo = mid + 1\n") + "```"))
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    out = tmp_path / "out"
    assert main(["bench", str(suite / "manifest.toml"), "--proposer", "llm", "--model", "openai:gpt-test",
                 "--timeout", "40", "--out", str(out)], out=io.StringIO()) == 0

    data = json.loads((out / "results.json").read_text())
    assert data["tasks"][0]["status"] == "fixed", data["tasks"][0]
    prompt = server.requests[0].prompt
    assert "failed: Overrun" not in prompt  # what the bench's own failure said before
    assert re.search(r"checks/check_bsearch.py::test_found did not finish in [\d.]+s", prompt), prompt
    assert re.search(r"the `while` loop at line 4: `while lo < hi:` ran (?:at least )?[\d,]+ iterations", prompt)
    assert "The call: `search(items=[1, 2, 3, 4], x=3)`" in prompt
    assert "def test_found():\n    assert search([1, 2, 3, 4], 3) == 2" in prompt


def test_the_evidence_is_bounded_and_redacted_in_the_worker(make_module: Callable[[str], types.ModuleType]) -> None:
    module = make_module('''\
        def connect(url, password):
            raise ConnectionError("refused " + url + " for " + password)


        def test_connect(fn):
            fn("https://admin:hunter2@db.example/" + "x" * 5000, password="swordfish")
        ''')
    request = _request(module.connect, [regrow.extend.TestCallable(module.test_connect)], "test:test_connect failed")
    evidence = gather(request)
    assert evidence is not None
    text = json.dumps([run.to_plain() for run in evidence.runs])
    assert "hunter2" not in text and "swordfish" not in text
    assert "password=[REDACTED]" in evidence.runs[0].call
    assert max(len(run.explanation) for run in evidence.runs) <= 3000
    shutil.rmtree(Path(module.__file__).parent / "__pycache__", ignore_errors=True)

"""Code fences both ways: a function whose docstring holds a Markdown ``` example is shown in a longer
fence, the model is asked for a block in that fence, and a reply's block is closed only as CommonMark
closes it (the opening's fence or longer, indented at most 3 columns more), so the docstring's own
``` stays inside it. Through the real OpenAI SDK against a loopback server."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

import pytest
from llm_servers import OpenAIServer, Text
from llm_servers import chat_of as sent

import regrow
from regrow._proposers._llm import LLMProposer, RetryPolicy, proposer_for
from regrow._proposers._llm._fences import block, fence, fenced_blocks
from regrow._proposers._llm._parse import Rules, parse_reply


def slugify(text: str) -> str:
    """Make a URL slug.

    ```
    >>> slugify("Hello World!")
    'hello-world'
    ```
    """
    return text.lower()


FIX = '''def slugify(text: str) -> str:
    """Make a URL slug.

    ```
    >>> slugify("Hello World!")
    'hello-world'
    ```
    """
    import re
    return "-".join(re.findall(r"[a-z0-9]+", text.lower()))
'''


def check_slug(fn: Any) -> None:
    assert fn("Hello World!") == "hello-world"


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer() as running:
        yield running


def model(server: OpenAIServer, **options: Any) -> LLMProposer:
    return proposer_for("openai:gpt-test", api_key="k", base_url=server.base_url,
                        retry=RetryPolicy(max_retries=1, base_delay=0.01), evidence=False, locate=False, **options)


def rules() -> Rules:
    original = ast.parse(FIX.replace('    import re\n    return "-".join(re.findall(r"[a-z0-9]+", '
                                     'text.lower()))\n', "    return text.lower()\n")).body[0]
    assert isinstance(original, ast.FunctionDef)
    return Rules("slugify", original, source=ast.unparse(original))


def test_the_prompt_fence_is_longer_than_any_backticks_in_the_function_and_the_reply_asked_for_uses_it(
        server: OpenAIServer) -> None:
    server.add(Text(f"```python\n{FIX}```\n"))  # the format asked for before: a 3-backtick fence
    healed = regrow.heal(tests=[check_slug], proposers=[model(server, edit_format="whole")], cooldown=0)(slugify)

    regrow.state(healed).check()  # the test fails on the original: the repair runs
    assert healed("Hello World!") == "hello-world"  # before: refused, "unterminated triple-quoted string literal"
    system, user, _ = sent(server.requests[0])
    assert "one fenced ````python code block" in system
    assert "in one ````python block." in user
    shown = user.split("## The function", 1)[1].split("\n## ", 1)[0]
    assert "\n````python\ndef slugify(text: str) -> str:\n" in shown and shown.rstrip().endswith("\n````")
    assert '    ```\n    >>> slugify("Hello World!")' in shown  # the docstring's own fence, whole, inside


@pytest.mark.parametrize("mark", ["```", "````", "~~~"])
def test_a_docstring_fence_indented_with_the_code_does_not_close_the_reply_block(mark: str) -> None:
    parsed = parse_reply(f"Here it is:\n\n{mark}python\n{FIX}{mark}\n\nThe regex keeps runs of letters.", rules())
    assert parsed.source is not None, parsed.reason
    assert "re.findall" in parsed.source and '    ```\n    """' in parsed.source


def test_a_fence_closes_on_its_own_character_at_least_as_long_within_3_columns_of_its_indent() -> None:
    text = "   ````python\n   a = 1\n   ```\n       ````\n   ~~~~\n  `````  \nafter\n"
    (only,) = fenced_blocks(text)
    assert (only.tag, only.unclosed) == ("python", False)
    assert only.body == "   a = 1\n   ```\n       ````\n   ~~~~\n"
    (cut,) = fenced_blocks("```py\ndef f():\n    ```\n")
    assert cut.unclosed and cut.body == "def f():\n    ```\n"


def test_the_prompts_fence_outgrows_the_longest_run_of_backticks() -> None:
    assert fence("def f():\n    return 1\n") == "```"
    assert fence('"""\n```\n"""') == "````"
    assert fence("x = '`````'") == "``````"
    assert block("print('``` and ````')") == "`````python\nprint('``` and ````')\n`````"

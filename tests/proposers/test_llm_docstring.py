"""A model's function without the docstring the original has: the docstring is put back, as the original
spells it, so a fix written into the user's file does not take the function's documentation with it."""

from __future__ import annotations

import ast
import textwrap
import types
from collections.abc import Callable

import pytest
from llm_servers import OpenAIServer, Text

import regrow
from regrow._proposers._llm import RetryPolicy, proposer_for
from regrow._proposers._llm._parse import Rules, parse_reply
from regrow.extend import Target

ORIGINAL = '''\
def net(price, rate):
    """The price without tax — «rate» is a fraction.

    Rounded to cents:  net(1.2, 0.2) == 1.0
    """
    return round(price * (1 - rate), 2)
'''
REPLY = ("```python\ndef net(price, rate):\n    # the tax is on top of the price\n"
         "    return round(price / (1 + rate), 2)\n```")


def rules(source: str = ORIGINAL) -> Rules:
    return Rules("net", ast.parse(source).body[0], source=source)  # type: ignore[arg-type]


def docstring(source: str) -> str | None:
    return ast.get_docstring(ast.parse(source).body[0], clean=False)  # type: ignore[arg-type]


def test_a_docstring_the_reply_left_out_is_put_back_as_the_original_spells_it() -> None:
    parsed = parse_reply(REPLY, rules())
    assert parsed.source is not None, parsed.reason
    assert docstring(parsed.source) == docstring(ORIGINAL)
    assert '    """The price without tax — «rate» is a fraction.\n\n    Rounded to cents:' in parsed.source
    assert "    # the tax is on top of the price\n    return round(price / (1 + rate), 2)" in parsed.source
    assert "kept the original's docstring, which the reply left out" in parsed.notes


def test_a_reply_with_a_docstring_of_its_own_keeps_it() -> None:
    reply = REPLY.replace("    # the tax", '    """Net of tax."""\n    # the tax')
    parsed = parse_reply(reply, rules())
    assert parsed.source is not None and docstring(parsed.source) == "Net of tax."
    assert not any("docstring" in note for note in parsed.notes)


@pytest.mark.parametrize("original", [
    "def net(price, rate):\n    return round(price * (1 - rate), 2)\n",  # no docstring to keep
    "def net(price, rate): return round(price * (1 - rate), 2)\n",
])
def test_nothing_is_added_where_the_original_has_no_docstring(original: str) -> None:
    parsed = parse_reply(REPLY, rules(original))
    assert parsed.source is not None and docstring(parsed.source) is None


def test_a_body_on_the_def_line_is_left_as_the_model_wrote_it() -> None:
    parsed = parse_reply("```python\ndef net(price, rate): return round(price / (1 + rate), 2)\n```", rules())
    assert parsed.source == "def net(price, rate): return round(price / (1 + rate), 2)\n"


def test_a_reply_whose_imports_are_moved_in_keeps_the_docstring_first() -> None:
    reply = ("```python\nimport math\n\ndef net(price, rate):\n"
             "    return math.floor(100 * price / (1 + rate)) / 100\n```")
    parsed = parse_reply(reply, rules())
    assert parsed.source is not None
    body = ast.parse(parsed.source).body[0].body  # type: ignore[attr-defined]
    assert docstring(parsed.source) == docstring(ORIGINAL) and isinstance(body[1], ast.Import)


def test_a_decorated_method_keeps_its_docstring(make_module: Callable[[str], types.ModuleType]) -> None:
    module = make_module(textwrap.dedent('''
        import functools

        class Till:
            @functools.cache
            def net(self, price, rate):
                """Net of tax:
                   on two lines."""
                return round(price * (1 - rate), 2)
    '''))
    target = Target.of(module.Till.net)
    rules_ = Rules("net", target.node, "Till", source=target.bare_source)
    parsed = parse_reply("```python\ndef net(self, price, rate):\n    return round(price / (1 + rate), 2)\n```", rules_)
    assert parsed.source is not None
    # the method's text as regrow reads it is dedented (and indented again when written back)
    kept = docstring(parsed.source)
    assert kept == ast.get_docstring(target.node, clean=False) == "Net of tax:\n           on two lines."


def test_the_fix_written_back_keeps_the_docstring(tmp_path: object,
                                                  make_module: Callable[[str], types.ModuleType]) -> None:
    raising = ORIGINAL.replace("return round(price * (1 - rate), 2)", "return round(price * (1 - rate) / int(rate), 2)")
    module = make_module(raising + "\n\ndef test_net(fn):\n    assert fn(1.2, 0.2) == 1.0\n")
    with OpenAIServer([Text(REPLY)]) as server:
        llm = proposer_for("openai:gpt-test", api_key="k", base_url=server.base_url,
                           retry=RetryPolicy(max_retries=1, base_delay=0.01, max_delay=0.05))
        fixed = regrow.heal(tests=[module.test_net], proposers=[llm], write_back="apply")(module.net)
        assert fixed(1.2, 0.2) == 1.0
    with open(module.__file__, encoding="utf-8") as file:  # type: ignore[arg-type]
        written = file.read()
    assert "return round(price / (1 + rate), 2)" in written  # the fix is in the file
    assert '"""The price without tax — «rate» is a fraction.\n\n    Rounded to cents:  net(1.2, 0.2) == 1.0\n    """' \
        in written

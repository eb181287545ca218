"""What the docs promise about evidence and messages: kept, through the decorator as users meet it."""

from __future__ import annotations

import logging
import types
from collections.abc import Callable
from typing import Any

import pytest
from llm_servers import OpenAIServer, Text

import regrow
from regrow._proposers._llm import RetryPolicy

MakeModule = Callable[[str], types.ModuleType]
FAST = RetryPolicy(max_retries=1, base_delay=0.01, max_delay=0.02)
RIGHT = "```python\nimport re\n\ndef {name}(text):\n    return float(re.sub(r'[^0-9.]', '', text))\n```"
BROKEN = '''
def helper(text):
    return float(text.replace("$", ""))

def {name}(text):
    return helper(text)
'''


def rupees(fn: Any) -> None:
    assert fn("₹1,299") == 1299.0


@pytest.fixture
def server(openai_env: OpenAIServer) -> OpenAIServer:
    return openai_env


def test_the_prompt_after_the_engine_says_what_it_tried(server: OpenAIServer, make_module: MakeModule) -> None:
    mod = make_module(BROKEN.format(name="price"))
    server.add(Text("no idea"), Text(RIGHT.format(name="price")))  # the locate request first (test_llm_locate.py)
    healed = regrow.heal(tests=[rupees], model="openai:gpt-test")(mod.price)
    assert healed("₹1,299") == 1299.0
    result = regrow.state(healed).last_result
    assert result is not None and result.ok and result.screened > 0
    prompt = server.requests[1].prompt
    assert f"## Already tried by the built-in engine\nIt judged {result.screened} candidates" in prompt


def test_the_traceback_of_your_code_has_no_regrow_frames(server: OpenAIServer, make_module: MakeModule) -> None:
    mod = make_module(BROKEN.format(name="fee"))
    server.add(Text("no idea"), Text(RIGHT.format(name="fee")))  # the locate request first (test_llm_locate.py)
    healed = regrow.heal(tests=[rupees], model="openai:gpt-test")(mod.fee)
    assert healed("₹1,299") == 1299.0
    result = regrow.state(healed).last_result
    assert result is not None and result.failure is not None
    traceback = result.failure.traceback
    assert "in fee" in traceback and "in helper" in traceback  # the user's frames are all there
    assert "<regrow" not in traceback and "regrow" not in traceback.replace(mod.__file__ or "", "")
    prompt = server.requests[1].prompt
    assert "## Traceback (your code only)" in prompt and "<regrow wrapper" not in prompt


def test_log_messages_do_not_repeat_the_loggers_name(make_module: MakeModule,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    mod = make_module('''
        import regrow

        @regrow.heal(tests=[lambda fn: None], proposers=[])
        def ratio(a, b):
            return a / b
    ''')
    caplog.set_level(logging.DEBUG, logger="regrow")
    with pytest.raises(ZeroDivisionError):
        mod.ratio(1, 0)
    messages = [record.getMessage() for record in caplog.records if record.name == "regrow"]
    assert any("could not repair ratio" in message for message in messages)
    assert not [message for message in messages if message.startswith("regrow")]
    # Python's default format names the logger: the user reads "WARNING:regrow:could not repair …".
    formatted = [logging.Formatter(logging.BASIC_FORMAT).format(record) for record in caplog.records]
    assert not [line for line in formatted if "regrow:regrow" in line or "regrow: regrow" in line]


def test_the_ledger_on_the_exception_still_says_regrow(make_module: MakeModule) -> None:
    mod = make_module('''
        import regrow

        @regrow.heal(tests=[lambda fn: None], proposers=[])
        def share(a, b):
            return a / b
    ''')
    with pytest.raises(ZeroDivisionError) as raised:
        mod.share(1, 0)
    assert regrow.ledger_of(raised.value).startswith("regrow: could not repair share")

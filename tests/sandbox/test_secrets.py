"""Secrets the host knows never come back in what a sandboxed call produced, at the sandbox's own API."""

from __future__ import annotations

import base64
import sys
from collections.abc import Callable
from types import ModuleType

import pytest

from regrow._sandbox import InProcessSandbox, Limits, make_sandbox
from regrow._secrets import mask, user_module_secrets

KEY = "sk-user-module-0123456789abcdef"
LEAKY = f'''
import base64

SERVICE_TOKEN = "{KEY}"


def leak(how):
    raw = SERVICE_TOKEN.encode()
    text = {{"b64": base64.b64encode(b"x" + raw).decode(), "hex": raw.hex(), "rev": SERVICE_TOKEN[::-1]}}[how]
    print("printed:", text)
    raise ValueError("leaked " + text)
'''


@pytest.fixture
def leaky(make_module: Callable[[str], ModuleType]) -> ModuleType:
    return make_module(LEAKY)


@pytest.mark.parametrize("mode", ["fork", "pool", "inprocess"])
@pytest.mark.parametrize("how", ["b64", "hex", "rev"])
def test_a_secret_of_a_user_module_never_comes_back_in_an_outcome(leaky: ModuleType, mode: str, how: str) -> None:
    if mode != "inprocess" and sys.platform != "linux":
        pytest.skip("the fork sandbox's guards are Linux's")
    sandbox = InProcessSandbox() if mode == "inprocess" else make_sandbox(mode)
    try:
        outcome = sandbox.call(leaky.leak, how, limits=Limits(timeout=10))
    finally:
        sandbox.close()
    raw = KEY.encode()
    forms = [KEY, KEY[::-1], raw.hex(), base64.b64encode(raw).decode()[:20], base64.b64encode(b"x" + raw).decode()]
    texts = [outcome.reason(), str(outcome.error), outcome.output, outcome.detail, *outcome.violations]
    assert outcome.status == "error" and "[REDACTED]" in outcome.reason()
    assert not [form for form in forms for text in texts if form in text]


def test_a_module_loaded_later_is_read_again(make_module: Callable[[str], ModuleType]) -> None:
    before = user_module_secrets()
    make_module('DB_PASSWORD = "a-password-loaded-later"\n')
    assert "a-password-loaded-later" not in before
    assert "a-password-loaded-later" in user_module_secrets()
    assert mask("x a-password-loaded-later y") == "x [REDACTED] y"


def test_installed_and_standard_library_modules_are_not_read() -> None:
    import tokenize  # holds a global named Token: a regular expression, not a secret

    assert tokenize.Token not in user_module_secrets()

"""Evidence end to end: the log ring buffer, the environment allowlist, capture(), bounded values,
causes and frames, the policy per destination — and a secret corpus that must leak nowhere."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import threading
import types
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from llm_servers import OpenAIServer, Text

import regrow
from regrow._delivery._keep import issue_body, record_of
from regrow._evidence._failure import Failure, capture_exception
from regrow._evidence._render import ReprBudget, render
from regrow._proposers._llm import RetryPolicy, proposer_for

MakeModule = Callable[[str], types.ModuleType]
FAST = RetryPolicy(max_retries=1, base_delay=0.01, max_delay=0.02)


@pytest.fixture(autouse=True)
def fresh_policy(tmp_path: Path) -> Iterator[None]:
    previous = regrow.configure_evidence(regrow.EvidencePolicy(capture_dir=tmp_path / "captures"))
    yield
    regrow.configure_evidence(previous)
    regrow.disable_log_capture()


def _fail(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Failure:
    try:
        fn(*args, **kwargs)
    except Exception as exc:
        return capture_exception(exc, fn, args, kwargs)  # type: ignore[arg-type]
    raise AssertionError("expected a failure")


# -- bounded values -------------------------------------------------------------------------------------
class Slow:
    """A repr that waits until it is let go (or 30 s): whether capture waited for it is seen, not timed."""

    def __init__(self) -> None:
        self.go, self.returned = threading.Event(), threading.Event()

    def __repr__(self) -> str:
        self.go.wait(30)
        self.returned.set()
        return "slow"


class Raising:
    def __repr__(self) -> str:
        raise RuntimeError("no repr for you")


class Reading:
    def __init__(self, path: Path) -> None:
        self.path = path

    def __repr__(self) -> str:  # a repr that does I/O, and a lot of it
        return self.path.read_text() * 1000


class Lazy:
    """An ORM-style object: attribute access runs a query."""

    def __init__(self) -> None:
        self.id = 7
        self.queries = 0

    @property
    def rows(self) -> list[int]:
        self.queries += 1
        return list(range(10))


def test_a_slow_raising_or_huge_repr_never_stalls_capture(tmp_path: Path) -> None:
    (tmp_path / "data.txt").write_text("x" * 10_000)
    values = {"raising": Raising(), "reading": Reading(tmp_path / "data.txt"),
              "text": "y" * 10_000_000, "numbers": list(range(1_000_000)), "blob": b"\0" * 5_000_000,
              "big": 10**5000, "nested": [[[[[1]]]]], "lazy": Lazy(), "slow": Slow(), "after": Raising()}
    budget = ReprBudget(seconds=0.3, limit=400)
    shown = {name: render(value, budget) for name, value in values.items()}
    slow: Slow = values["slow"]  # type: ignore[assignment]
    assert not slow.returned.is_set()  # capture went on without waiting for the repr
    slow.go.set()
    # timed out, or (a loaded machine spent the capture's budget before it) never called
    assert ("repr timed out" in shown["slow"] or "repr not called" in shown["slow"]) and \
        "repr raised RuntimeError" in shown["raising"]
    assert all(len(text) <= 400 for text in shown.values())
    assert shown["text"].startswith("<10000000 characters> 'yyy")
    assert shown["numbers"].startswith("<1000000 items> [0, 1")
    assert shown["blob"].startswith("<5000000 bytes> b'\\x00") and "bits" in shown["big"]
    assert values["lazy"].queries == 0  # type: ignore[attr-defined]
    assert "repr not called" in shown["after"]  # after a repr that hung, no more user code in this capture


def test_dataclasses_render_their_fields_and_mask_secret_ones() -> None:
    @dataclasses.dataclass
    class Account:
        owner: str
        api_token: str

    assert render(Account("ann", "hunter2-very-secret")) == "test_evidence.Account(owner='ann', api_token=[REDACTED])" \
        or "api_token=[REDACTED]" in render(Account("ann", "hunter2-very-secret"))


# -- causes, attributes, frames -----------------------------------------------------------------------
CHAIN = '''
class ApiError(Exception):
    def __init__(self, message, status_code, api_key):
        super().__init__(message)
        self.status_code = status_code
        self.api_key = api_key

def low(url):
    raise ConnectionError("refused " + url)

def middle(url):
    depth = 2
    try:
        low(url)
    except ConnectionError as exc:
        raise ApiError("upstream failed", 503, "sk-live-abcdefghijklmnopqrstuvwx") from exc

def top(url):
    return middle(url)
'''


def test_causes_attributes_and_frames_are_captured_redacted(make_module: MakeModule) -> None:
    mod = make_module(CHAIN)
    regrow.configure_evidence(regrow.EvidencePolicy(frames=True))
    failure = _fail(mod.top, "https://bob:pa55w0rd-xyz@db.example.com/x")
    assert failure.attributes["status_code"] == "503" and failure.attributes["api_key"] == "[REDACTED]"
    (cause,) = failure.causes
    assert cause.startswith("caused by ConnectionError: refused https://bob:[REDACTED]@db.example.com/x")
    assert [frame.split("(")[0] for frame in failure.frames] == ["middle"]  # low() is in the cause's traceback
    assert "depth=2" in failure.frames[0]
    assert "pa55w0rd" not in repr(failure) and "abcdefghijklmnop" not in repr(failure)


def test_frames_are_opt_in(make_module: MakeModule) -> None:
    mod = make_module(CHAIN)
    assert _fail(mod.top, "x").frames == ()


# -- locals and arguments from the user's failing frame -------------------------------------------------
FRAMES = '''
import regrow

def check(fn):
    import asyncio, inspect
    got = fn(3)
    if inspect.isawaitable(got):
        got = asyncio.run(got)
    if inspect.isgenerator(got):
        got = list(got)
    assert got in (3, [3])

@regrow.heal(tests=[check], proposers=[])
def plain(count):
    marker = "in-plain"
    return count / 0

@regrow.heal(tests=[check], proposers=[])
async def coroutine(count):
    marker = "in-coroutine"
    return count / 0

@regrow.heal(tests=[check], proposers=[])
def generator(count):
    marker = "in-generator"
    yield count / 0

class Box:
    @regrow.heal(tests=[lambda fn: None], proposers=[])
    def method(self, count):
        marker = "in-method"
        return count / 0
'''


def test_locals_and_arguments_come_from_the_users_failing_frame(make_module: MakeModule) -> None:
    mod = make_module(FRAMES)
    calls = {"plain": lambda: mod.plain(5), "coroutine": lambda: asyncio.run(mod.coroutine(5)),
             "generator": lambda: list(mod.generator(5)), "method": lambda: mod.Box().method(5)}
    for name, call in calls.items():
        with pytest.raises(ZeroDivisionError):
            call()
        fn = mod.Box.method if name == "method" else getattr(mod, name)
        result = regrow.state(fn).last_result
        assert result is not None and result.failure is not None
        failure = result.failure
        assert failure.locals["marker"] == f"'in-{name}'", name
        assert failure.arguments["count"] == "5" and failure.locals["count"] == "5"
        assert "_rg_" not in " ".join(failure.locals)  # nothing of the wrapper's frame


# -- the log ring buffer ----------------------------------------------------------------------------------
def test_the_failing_calls_log_records_are_its_own_per_thread(make_module: MakeModule) -> None:
    regrow.enable_log_capture(size=500, level=logging.INFO)
    logger = logging.getLogger("shop.orders")
    logger.setLevel(logging.INFO)
    failures: dict[str, Failure] = {}
    barrier = threading.Barrier(2)

    def work(name: str) -> None:
        for i in range(5):
            logger.info("%s step %d password=%s", name, i, f"pw-{name}-secret")
            barrier.wait()
        try:
            raise KeyError(name)
        except KeyError as exc:
            failures[name] = capture_exception(exc, work, (name,), {})  # type: ignore[arg-type]

    threads = [threading.Thread(target=work, args=(n,)) for n in ("alpha", "beta")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for name, other in (("alpha", "beta"), ("beta", "alpha")):
        logs = failures[name].logs
        assert logs is not None and len(logs) == 5
        assert all(f"{name} step" in line and other not in line for line in logs)
        assert all("password=[REDACTED]" in line and "secret" not in line for line in logs)


def test_concurrent_asyncio_tasks_do_not_mix_their_records(make_module: MakeModule) -> None:
    mod = make_module('''
        import asyncio, logging
        import regrow

        log = logging.getLogger("shop.tasks")

        @regrow.heal(tests=[lambda fn: None], proposers=[])
        async def handle(request_id, fail):
            for step in range(3):
                log.warning("request %s step %d", request_id, step)
                await asyncio.sleep(0)
            if fail:
                return 1 / 0
            return request_id
    ''')
    regrow.enable_log_capture(size=200, level=logging.WARNING)

    async def main() -> list[Any]:
        return await asyncio.gather(mod.handle("r1", False), mod.handle("r2", True), mod.handle("r3", False),
                                    return_exceptions=True)

    outcomes = asyncio.run(main())
    assert isinstance(outcomes[1], ZeroDivisionError)
    result = regrow.state(mod.handle).last_result
    assert result is not None and result.failure is not None and result.failure.logs is not None
    assert [line.split(": ", 1)[1] for line in result.failure.logs] == [f"request r2 step {i}" for i in range(3)]


def test_without_log_capture_logs_are_absent_not_empty(make_module: MakeModule) -> None:
    failure = _fail(make_module(CHAIN).low, "x")
    assert failure.logs is None
    regrow.enable_log_capture(size=10)
    assert _fail(make_module(CHAIN).low, "x").logs == ()


# -- environment -------------------------------------------------------------------------------------------
def test_only_allowed_environment_variables_are_read(monkeypatch: pytest.MonkeyPatch, make_module: MakeModule) -> None:
    monkeypatch.setenv("APP_MODE", "staging")
    monkeypatch.setenv("APP_DB_PASSWORD", "hunter2hunter2")
    monkeypatch.setenv("APP_URL", "postgres://app:s3cr3tpw@db/app")
    monkeypatch.setenv("UNLISTED", "never-read")
    regrow.configure_evidence(regrow.EvidencePolicy(env_allowlist=("APP_MODE", "APP_DB_PASSWORD", "APP_URL", "NOPE")))
    failure = _fail(make_module(CHAIN).low, "x")
    assert failure.environment == {"APP_MODE": "staging", "APP_DB_PASSWORD": "[REDACTED]", "APP_URL": "[REDACTED]"}


# -- capture() -------------------------------------------------------------------------------------------
def test_capture_writes_a_redacted_snapshot_of_the_callers_frame(tmp_path: Path) -> None:
    def checkout(cart: list[int], api_key: str) -> Path | None:
        total = sum(cart)  # noqa: F841 (captured from the frame)
        note = "charged with sk-proj-abcdefghijklmnopqrstuvwxyz0123"  # noqa: F841
        return regrow.capture("odd total")

    path = checkout([1, 2], "sk-abcdefghijklmnopqrstuvwxyz")
    assert path is not None and path.parent == tmp_path / "captures"
    data = json.loads(path.read_text())
    assert data["label"] == "odd total" and data["function"].endswith("checkout")
    assert data["locals"]["total"] == "3" and data["arguments"]["cart"] == "[1, 2]"
    assert data["arguments"]["api_key"] == "[REDACTED]" and "abcdefghij" not in path.read_text()
    assert data["source"] == 'return regrow.capture("odd total")' and data["withheld"] == []
    assert data["logs"] is None  # log capture is off: absent


def test_capture_is_bounded_in_files_and_bytes_and_never_raises(tmp_path: Path) -> None:
    folder = tmp_path / "bounded"
    regrow.configure_evidence(regrow.EvidencePolicy(capture_dir=folder, capture_max_files=3, capture_max_bytes=20_000))
    for i in range(8):
        payload = [str(i) * 100] * 12  # noqa: F841 (captured from the frame)
        assert regrow.capture(f"n{i}") is not None
    files = sorted(folder.glob("*.json"))
    assert len(files) == 3 and sum(f.stat().st_size for f in files) <= 20_000
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    regrow.configure_evidence(regrow.EvidencePolicy(capture_dir=blocked / "sub"))
    assert regrow.capture("nowhere") is None  # the folder cannot be made: None, no exception


def test_capture_honours_the_disk_policy(tmp_path: Path) -> None:
    regrow.configure_evidence(regrow.EvidencePolicy(capture_dir=tmp_path, disk=regrow.Sections(locals=False)))
    secret_sauce = "recipe"  # noqa: F841
    path = regrow.capture("policy")
    assert path is not None
    data = json.loads(path.read_text())
    assert data["locals"] is None and data["withheld"] == ["locals"] and "recipe" not in path.read_text()


# -- the policy per destination --------------------------------------------------------------------------
def test_absent_is_not_empty(make_module: MakeModule) -> None:
    regrow.configure_evidence(regrow.EvidencePolicy(provider=regrow.Sections(locals=False, environment=False)))
    failure = _fail(make_module(CHAIN).middle, "x")
    shown = failure.disclosed("provider")
    assert shown.locals == {} and shown.withheld == {"locals", "environment"}
    assert failure.disclosed("disk").withheld == frozenset() and failure.disclosed("disk").locals
    assert failure.disclosed("issue").withheld == {"locals", "environment", "logs"}  # the default for issues
    with pytest.raises(ValueError):
        failure.disclosed("elsewhere")  # type: ignore[arg-type]


def test_the_users_redaction_rules_apply_everywhere(make_module: MakeModule) -> None:
    regrow.configure_evidence(regrow.EvidencePolicy(redaction=regrow.Redaction(
        names=[r"(?i)^acct"], values=[r"\bEMP-\d{6}\b"],
        render=lambda value: "<a Widget>" if type(value).__name__ == "Widget" else None)))
    mod = make_module('''
        class Widget:
            pass

        def f(acct_no, note, widget):
            raise ValueError("employee EMP-123456 failed")
    ''')
    failure = _fail(mod.f, "12345678", "for EMP-654321", mod.Widget())
    assert failure.arguments == {"acct_no": "[REDACTED]", "note": "'for [REDACTED]'", "widget": "<a Widget>"}
    assert failure.message == "employee [REDACTED] failed"
    with pytest.raises(ValueError):
        regrow.configure_evidence(regrow.EvidencePolicy(redaction=regrow.Redaction(values=["("])))


def test_the_issue_body_gets_the_issues_share(make_module: MakeModule) -> None:
    mod = make_module('''
        import regrow

        @regrow.heal(tests=[lambda fn: None], proposers=[])
        def charge(amount, card_token):
            fee = amount * 0.1
            raise RuntimeError("gateway said no")
    ''')
    with pytest.raises(RuntimeError):
        mod.charge(10, "tok_live_abcdefghijklmnop")
    state = regrow.state(mod.charge)
    assert state.last_result is not None
    body = issue_body(record_of(state.target, state.last_result), "full")
    assert "### Evidence (redacted)" in body and "amount = 10" in body
    assert "fee = " not in body  # locals are withheld from issues by default
    assert "withheld by the evidence policy: environment, locals, logs" in body
    assert "tok_live" not in body


def test_the_prompt_gets_the_providers_share(make_module: MakeModule) -> None:
    regrow.configure_evidence(regrow.EvidencePolicy(provider=regrow.Sections(locals=False)))
    regrow.enable_log_capture(size=50, level=logging.WARNING)
    mod = make_module('''
        import logging

        def rupees(fn):
            assert fn("₹1,299") == 1299.0

        def rate(text):
            logging.getLogger("shop").warning("parsing %r", text)
            local_only = "do-not-" + "send"
            return float(text.replace("$", ""))
    ''')
    with OpenAIServer() as server:
        server.add(Text("```python\nimport re\n\ndef rate(text):\n    return float(re.sub(r'[^0-9.]', '', text))\n```"))
        llm = proposer_for("openai:gpt-test", api_key="k", base_url=server.base_url, retry=FAST)
        healed = regrow.heal(tests=[mod.rupees], proposers=[llm])(mod.rate)
        assert healed("₹1,299") == 1299.0
        prompt = server.requests[0].prompt
    assert "do-not-send" not in prompt and "## Locals of the failing frame" not in prompt
    assert "## Withheld by the user's evidence policy" in prompt and "locals" in prompt
    assert "## Log records of the failing call" in prompt and "parsing '₹1,299'" in prompt


def test_uuids_render_as_themselves() -> None:
    value = uuid.UUID("12345678-1234-5678-1234-567812345678")
    assert render(value) == "UUID('12345678-1234-5678-1234-567812345678')"

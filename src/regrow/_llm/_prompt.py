"""The prompt: the target, the evidence of its failure, and every earlier candidate with its reason.

Every candidate a model proposed before — those the checks rejected *and* those refused before
they ran (unparsable, wrong name, changed signature) — is shown with its reason, so a model never
repeats itself; the built-in engine's thousands of attempts are summarised in a few lines. The
evidence is already redacted at capture. When the prompt is over its token budget, evidence is
trimmed cheapest-to-lose first: locals, the engine's examples, the traceback, the sources of older
candidates, test sources, argument reprs — never the function, the failure or the reasons.
"""

from __future__ import annotations

import ast
import collections
import dataclasses
import inspect
import re
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from .._proposer import Attempt, Request
from .._redact import _VALUE_PATTERNS, _mask_match

ENGINE = "engine"
_TOKEN = re.compile(r"[A-Za-z]+|\d{1,3}|\n|[ \t]{2,}|[^\sA-Za-z\d]")


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate of the tokens ``text`` costs a BPE model (words of 6+ letters count more)."""
    count = 0
    for match in _TOKEN.finditer(text):
        piece = match.group()
        count += 1 + (len(piece) - 1) // 7 if piece.isalpha() else 1
    return count


@dataclasses.dataclass(frozen=True)
class Prior:
    """An earlier candidate and why it failed; ``ran`` is False for a reply refused before it ran."""

    label: str
    source: str
    reason: str
    ran: bool = True


@dataclasses.dataclass(frozen=True)
class PromptOptions:
    """How the prompt is built. ``token_budget`` bounds the estimated system + user tokens."""

    token_budget: int = 6000
    prompt_extra: str = ""
    allow_signature_change: bool = False
    allow_helpers: bool = False


@dataclasses.dataclass(frozen=True)
class Prompt:
    system: str
    user: str
    tokens: int  # estimated, for system + user
    trimmed: tuple[str, ...] = ()  # the evidence that was cut to fit the budget


def priors_from(history: Sequence[Attempt], refused: Sequence[tuple[int, Prior]]) -> list[Prior]:
    """Every non-engine attempt in ``history`` and every refused reply, in the order they happened.

    ``refused`` holds ``(len(history) when it was refused, prior)``.
    """
    ordered: list[Prior] = []
    pending = sorted(refused, key=lambda item: item[0])
    index = 0
    for position, attempt in enumerate(history):
        while index < len(pending) and pending[index][0] <= position:
            ordered.append(pending[index][1])
            index += 1
        candidate, verdict = attempt.candidate, attempt.verdict
        if candidate.origin != ENGINE and not verdict.ok:
            label = f"{candidate.origin} {candidate.operator}".strip()
            ordered.append(Prior(label, candidate.source, f"{verdict.check}: {verdict.reason}"))
    ordered += [prior for _, prior in pending[index:]]
    return ordered


def build_prompt(request: Request, priors: Sequence[Prior], options: PromptOptions) -> Prompt:
    """The system and user prompts for the next model call, trimmed to ``options.token_budget``."""
    system = _system(request, options)
    sections = _sections(request, priors, options)
    levels = dict.fromkeys(sections, 0)
    trimmed: list[str] = []

    def render() -> str:
        parts = [variants[min(levels[key], len(variants) - 1)] for key, variants in sections.items()]
        return "\n\n".join(part for part in parts if part)

    user = render()
    budget = options.token_budget - estimate_tokens(system)
    for key in _TRIM_ORDER:
        if estimate_tokens(user) <= budget:
            break
        if key in sections and levels[key] < len(sections[key]) - 1:
            levels[key] += 1
            trimmed.append(key)
            user = render()
    return Prompt(system, user, estimate_tokens(system) + estimate_tokens(user), tuple(dict.fromkeys(trimmed)))


# Each name advances that section to its next shorter variant; earlier entries are cheaper to lose.
_TRIM_ORDER = ("locals", "engine", "traceback", "older", "locals", "tests", "traceback", "engine", "older",
               "arguments", "tests", "latest", "arguments", "tests", "latest")


def _system(request: Request, options: PromptOptions) -> str:
    name = request.target.name
    signature = ("keep the name and the signature exactly: the same parameters, in the same order, of the same "
                 "kinds, with the same defaults" if not options.allow_signature_change
                 else "keep the name; change the signature only if the fix needs it")
    helpers = ("you may define helper functions or classes next to it" if options.allow_helpers
               else "define no other functions or classes at top level; nested helpers inside it are fine")
    kind = "an async def" if request.target.is_async else "a plain def"
    return textwrap.dedent(f"""\
        You repair one Python function so that it passes its checks.
        Reply with exactly one fenced ```python code block that holds the complete corrected definition of
        `{name}` ({kind}), and nothing else in that block. Rules:
        - {signature};
        - write no decorators (the original ones are kept) and no code at top level besides imports; {helpers};
        - fix the cause of the failure; do not hide it by catching every exception or returning a placeholder;
        - every earlier candidate listed failed for the reason given with it: do not send any of them again.""")


def _sections(request: Request, priors: Sequence[Prior], options: PromptOptions) -> dict[str, list[str]]:
    """Each section's variants, from complete to empty; the order of keys is the order in the prompt."""
    target, failure = request.target, request.failure
    sections: dict[str, list[str]] = {}
    sections["function"] = [_function(request)]
    what = [f"Kind: {failure.kind}", f"Error: {failure.exc_type}: {failure.message}".rstrip(": ")]
    if failure.lineno:
        line = failure.lineno - target.def_lineno + 1
        what.append(f"Failing line (line {line} of the definition): `{_mask_shapes(failure.line)}`")
    if failure.reason and failure.reason != failure.message:
        what.append(f"Reason: {failure.reason}")
    sections["failure"] = ["## The failure\n" + "\n".join(what)]
    sections["traceback"] = _shrinking("## Traceback (your code only)", failure.traceback.strip("\n").rstrip(), (12, 4))
    sections["arguments"] = _values("## Arguments of the failing call", failure.arguments, (400, 80))
    own_locals = {k: v for k, v in failure.locals.items() if k not in failure.arguments}
    sections["locals"] = _values("## Locals of the failing frame", own_locals, (400, 60))
    sections["tests"] = _tests(request)
    sections["checks"] = [_checks(request)]
    sections["engine"] = _engine(request.history)
    sections.update(_priors(priors))
    if options.prompt_extra.strip():
        sections["extra"] = ["## Extra instructions from the user\n" + options.prompt_extra.strip()]
    sections["ask"] = [f"Reply with the complete fixed `{target.name}` in one ```python block."]
    return sections


def _function(request: Request) -> str:
    target = request.target
    decorators = [ast.unparse(d) for d in target.node.decorator_list]
    others = [d for d in decorators if not re.search(r"\b(regrow|heal)\b", d)]
    facts = [f"## The function `{target.module}.{target.qualname}`"]
    if target.is_async:
        facts.append("It is a coroutine function (async def).")
    if "." in target.qualname:
        facts.append(f"It is defined in class `{target.qualname.rsplit('.', 1)[0]}`.")
    if others:
        facts.append("Its other decorators, which regrow keeps: " + ", ".join(f"@{d}" for d in others) + ".")
    source = _mask_shapes(target.bare_source.rstrip())
    return "\n".join(facts) + f"\n```python\n{source}\n```"


def _shrinking(title: str, text: str, keep: tuple[int, ...]) -> list[str]:
    if not text:
        return [""]
    lines = text.splitlines()
    variants = [f"{title}\n{text}"]
    variants += [f"{title}\n" + "\n".join(["...", *lines[-n:]]) for n in keep if n < len(lines)]
    return [*variants, ""]


def _values(title: str, values: Mapping[str, str], caps: tuple[int, ...]) -> list[str]:
    items = list(values.items())
    if not items:
        return [""]
    variants = [title + "\n" + "\n".join(f"- {name} = {_cap(text, cap)}" for name, text in items) for cap in caps]
    return [*variants, ""]


def _cap(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _checks(request: Request) -> str:
    names = [getattr(check, "name", type(check).__name__) for check in request.checks]
    return "## Checks a fix must pass (cheapest first)\n" + "\n".join(f"- {name}" for name in names)


def _tests(request: Request) -> list[str]:
    """The sources of the user's tests, those that failed most recently first."""
    failing = " ".join([request.failure.reason, *(a.verdict.check + " " + a.verdict.reason
                                                  for a in request.history[-3:])])
    sources: list[tuple[bool, str]] = []
    for check in request.checks:
        for label, text in _test_sources(check):
            sources.append((label in failing, f"### {label}\n```python\n{_mask_shapes(text.rstrip())}\n```"))
    if not sources:
        return [""]
    sources.sort(key=lambda item: not item[0])
    blocks = [text for _, text in sources[:4]]
    full = "## Tests the fix must pass\n" + "\n".join(blocks)
    first = "## A test the fix must pass\n" + blocks[0]
    return [full, first] if len(blocks) > 1 else [full, _cap(full, 1200), ""]


def _test_sources(check: object) -> Iterable[tuple[str, str]]:
    test = getattr(check, "test", None)
    if callable(test):
        try:
            source = textwrap.dedent(inspect.getsource(test))
        except (OSError, TypeError):
            source = ""
        if source:
            yield getattr(check, "name", "test"), source
    for node_id in getattr(check, "node_ids", ()):
        path, _, name = str(node_id).partition("::")
        text = _function_in_file(Path(path), name.split("::")[-1].split("[")[0]) if name else None
        if text:
            yield str(node_id), text


def _function_in_file(path: Path, name: str) -> str | None:
    try:
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
    except (OSError, SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return ast.get_source_segment(source, node)
    return None


def _engine(history: Sequence[Attempt]) -> list[str]:
    """What the built-in engine tried: counts per operator and the few candidates that came closest."""
    tried = [a for a in history if a.candidate.origin == ENGINE]
    if not tried:
        return [""]
    operators = collections.Counter(a.candidate.operator or "edit" for a in tried)
    checks = collections.Counter(a.verdict.check for a in tried)
    head = (f"## Already tried by the built-in engine\n{len(tried)} single-edit mutations of the function, none "
            f"passed. Operators: {_counts(operators)}. Rejected by: {_counts(checks)}. A one-token change is "
            "not enough; the fix needs a real edit.")
    closest = sorted(tried, key=lambda a: -len(a.verdict.passed))[:2]
    examples = [f"- {a.candidate.describe()} (passed {', '.join(a.verdict.passed) or 'nothing'}; "
                f"then {a.verdict.check}: {_cap(a.verdict.reason, 200)})" for a in closest if a.verdict.passed]
    full = head + ("\nThe closest:\n" + "\n".join(examples) if examples else "")
    return [full, head, f"## Already tried by the built-in engine\n{len(tried)} single-edit mutations; none passed."]


def _counts(counter: collections.Counter[str], limit: int = 8) -> str:
    shown = ", ".join(f"{name} x{n}" for name, n in counter.most_common(limit))
    return shown + (", …" if len(counter) > limit else "")


def _priors(priors: Sequence[Prior]) -> dict[str, list[str]]:
    """The older candidates and the latest one: separate sections, so that they trim separately."""
    if not priors:
        return {}

    def block(prior: Prior, with_source: bool, reason_cap: int) -> str:
        status = "rejected by the checks" if prior.ran else "refused before it ran"
        head = f"### {prior.label}: {status}\nReason: {_cap(prior.reason, reason_cap)}"
        if with_source and prior.source.strip():
            return f"{head}\n```python\n{prior.source.rstrip()}\n```"
        return head

    older, latest = priors[:-1], priors[-1]
    sections = {"priors": ["## Earlier candidates that failed (do not send any of them again)"]}
    if older:
        sections["older"] = ["\n".join(block(p, with_source, cap) for p in older)
                             for with_source, cap in ((True, 600), (False, 600), (False, 160))]
    sections["latest"] = [block(latest, True, 1200), block(latest, True, 400), block(latest, False, 400)]
    return sections


def _mask_shapes(text: str) -> str:
    """Credentials by shape (``sk-…``, ``AKIA…``, private keys) hidden in source sent to a model."""
    for pattern in _VALUE_PATTERNS:
        text = pattern.sub(_mask_match, text)
    return text


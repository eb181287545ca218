"""The prompt: the target, the evidence of its failure, and every earlier candidate with its reason.

The evidence is the failure as captured (redacted there) and what the checks saw when the
proposer ran them again on the original (see :mod:`._evidence`): assertion explanations, the
failing call, tracebacks, the loop a hanging check was stuck in, the suspicious lines. Every
candidate a model proposed before — those the checks rejected *and* those refused before they ran
(unparsable, wrong name, an echo of the original, a repeat) — is shown with its reason; the
built-in engine's thousands of attempts are summarised in a few lines. How the reply is asked for
(the whole function or a local edit, the focus on a few lines) is the call's :class:`Strategy`.
Over the token budget, evidence is trimmed cheapest-to-lose first: locals, the engine's examples,
tracebacks, the sources of older candidates, test sources, argument reprs — never the function,
the failure or the reasons earlier candidates failed.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import textwrap
from collections.abc import Mapping, Sequence

from ..._verdict import Attempt
from .._proposer import Request
from . import _compact as compact
from . import _sections as sections
from ._disclosed import disclosed, evidence_sections
from ._evidence import Evidence, mask_shapes
from ._fences import block as fenced
from ._fences import fence
from ._sections import ENGINE, cap, shown, unstopped
from ._strategy import Strategy

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
    kind: str = ""  # "echo" (the original sent back), "repeat" (an earlier candidate sent again), or ""


@dataclasses.dataclass(frozen=True)
class PromptOptions:
    """How the prompt is built. ``token_budget`` bounds the estimated system + user tokens."""

    token_budget: int = 6000
    prompt_extra: str = ""
    allow_signature_change: bool = False
    allow_helpers: bool = False
    evidence_budget: int = compact.EVIDENCE_BUDGET  # the compact prompt's tokens beyond the essentials


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


def build_prompt(request: Request, priors: Sequence[Prior], options: PromptOptions,
                 evidence: Evidence | None = None, strategy: Strategy | None = None) -> Prompt:
    """The system and user prompts for the next model call, trimmed to ``options.token_budget``."""
    request = disclosed(request)  # the evidence policy's share for a provider
    strategy = strategy or Strategy("whole")
    order: tuple[str, ...]
    if strategy.compact:
        system = compact.system(request, strategy)
        parts, order = _compact_sections(request, priors, options, evidence, strategy), compact.TRIM_ORDER
    else:
        system, order = _system(request, options, strategy), _TRIM_ORDER
        parts = _sections(request, priors, options, evidence, strategy)
    levels = dict.fromkeys(parts, 0)
    trimmed: list[str] = []

    def render() -> str:
        chosen = [variants[min(levels[key], len(variants) - 1)] for key, variants in parts.items()]
        return "\n\n".join(part for part in chosen if part)

    user = render()
    budget = options.token_budget - estimate_tokens(system)
    if strategy.compact:
        essential = sum(estimate_tokens(parts[key][0]) for key in _ESSENTIAL if key in parts)
        budget = min(budget, essential + options.evidence_budget)
    for key in order:
        if estimate_tokens(user) <= budget:
            break
        if key in parts and levels[key] < len(parts[key]) - 1:
            levels[key] += 1
            trimmed.append(key)
            user = render()
    return Prompt(system, user, estimate_tokens(system) + estimate_tokens(user), tuple(dict.fromkeys(trimmed)))


# Each name advances that section to its next shorter variant; earlier entries are cheaper to lose.
_TRIM_ORDER = ("locals", "engine", "traceback", "older", "seen", "locals", "tests", "traceback", "engine",
               "suspicious", "older", "arguments", "seen", "tests", "latest", "arguments", "tests", "engine",
               "seen", "suspicious", "latest", "tests")


_ESSENTIAL = ("function", "failure", "priors", "focus", "extra", "ask")


def _compact_sections(request: Request, priors: Sequence[Prior], options: PromptOptions, evidence: Evidence | None,
                      strategy: Strategy) -> dict[str, list[str]]:
    """The compact prompt's sections (see :mod:`._compact`), in the order they are shown."""
    line = sections.focus_line(request, evidence)
    parts = {"function": [compact.function(request, strategy)], "failure": [compact.failure(request, evidence)],
             "seen": compact.seen(request, evidence),
             "suspicious": [""] if strategy.rewrite else compact.suspicious(request, evidence),
             "tests": compact.tests(request, evidence)}
    if evidence is None or not evidence.failing:
        parts["arguments"] = _values("## Arguments of the failing call", request.failure.arguments, (160, 60))
    names = compact.proposer_names(prior.label for prior in priors)
    if priors:
        parts["priors"] = [_listed(priors, names)]
    if strategy.narrow and not strategy.rewrite:
        parts["focus"] = [sections.focus(request, line)]
    if options.prompt_extra.strip():
        parts["extra"] = ["## Extra instructions from the user\n" + options.prompt_extra.strip()]
    parts["ask"] = [compact.unnamed(compact.ask(request, strategy, line), names)]
    return parts


def _system(request: Request, options: PromptOptions, strategy: Strategy) -> str:
    name = request.target.name
    signature = ("keep the name and the signature exactly: the same parameters, in the same order, of the same "
                 "kinds, with the same defaults" if not options.allow_signature_change
                 else "keep the name; change the signature only if the fix needs it")
    helpers = ("you may define helper functions or classes next to it" if options.allow_helpers
               else "define no other functions or classes at top level; nested helpers inside it are fine")
    kind = "an async def" if request.target.is_async else "a plain def"
    mark = fence(request.target.bare_source)  # longer than a ``` in its docstring, as the function is shown
    if strategy.format == "edit":
        reply = textwrap.dedent(f"""\
            Reply with the smallest edit of `{name}` that fixes it, as one or more SEARCH/REPLACE blocks: a
            `<<<<<<< SEARCH` line, the lines to change copied exactly from the function, a `=======` line, the
            lines that replace them, a `>>>>>>> REPLACE` line. Keep each SEARCH part to the lines you change and a
            line around them. If the fix needs a larger change, reply instead with the complete corrected
            definition in one {mark}python block.
            """) + compact.EXAMPLE
    else:
        reply = (f"Reply with exactly one fenced {mark}python code block that holds the complete corrected "
                 f"definition of\n`{name}` ({kind}), and nothing else in that block.")
    return textwrap.dedent(f"""\
        You repair one Python function so that it passes its checks.
        {{reply}}
        Rules:
        - {signature};
        - write no decorators (the original ones are kept) and no code at top level besides imports; {helpers};
        - fix the cause of the failure; do not hide it by catching every exception or returning a placeholder;
        - every earlier candidate listed failed for the reason given with it: do not send any of them again,
          and do not send the function back unchanged.""").replace("{reply}", reply)


def _sections(request: Request, priors: Sequence[Prior], options: PromptOptions, evidence: Evidence | None,
              strategy: Strategy) -> dict[str, list[str]]:
    """Each section's variants, from complete to empty; the order of keys is the order in the prompt."""
    failure = request.failure
    parts: dict[str, list[str]] = {}
    parts["function"] = [_function(request)]
    parts["failure"] = [_failure(request, evidence)]
    parts["seen"] = sections.seen(request, evidence)
    parts["suspicious"] = sections.suspicious(request, evidence)
    parts["traceback"] = _shrinking("## Traceback (your code only)", failure.traceback.strip("\n").rstrip(), (12, 4))
    parts["arguments"] = _values("## Arguments of the failing call", failure.arguments, (400, 80))
    own_locals = {k: v for k, v in failure.locals.items() if k not in failure.arguments}
    parts["locals"] = _values("## Locals of the failing frame", own_locals, (400, 60))
    parts.update(evidence_sections(failure))
    parts["tests"] = sections.tests(request, evidence)
    parts["checks"] = [sections.checks(request)]
    parts["engine"] = sections.engine(request)
    parts.update(_priors(priors))
    line = sections.focus_line(request, evidence)
    if strategy.narrow:
        parts["focus"] = [sections.focus(request, line)]
    if options.prompt_extra.strip():
        parts["extra"] = ["## Extra instructions from the user\n" + options.prompt_extra.strip()]
    parts["ask"] = [_ask(request, strategy, line)]
    return parts


def _failure(request: Request, evidence: Evidence | None) -> str:
    target, failure = request.target, request.failure
    error = unstopped(f"{failure.exc_type}: {failure.message}".rstrip(": "))
    what = [f"Kind: {failure.kind}", f"Error: {error}"]
    if failure.lineno:
        line = failure.lineno - target.def_lineno + 1
        what.append(f"Failing line (line {line} of the definition): `{mask_shapes(failure.line)}`")
    if failure.reason and failure.reason != failure.message:
        what.append(f"Reason: {unstopped(failure.reason)}")
    if failure.kind == "requested":
        what.append("The function itself called request_healing(): its result would have been wrong. Keep that "
                    "call; fix what makes it ask.")
        what += [f"Detail: {name} = {cap(text, 400)}" for name, text in failure.details.items()]
    return "## The failure\n" + "\n".join(what)


def _ask(request: Request, strategy: Strategy, line: int | None) -> str:
    name = request.target.name
    asked = (f"Reply with SEARCH/REPLACE blocks that fix `{name}`." if strategy.format == "edit"
             else f"Reply with the complete fixed `{name}` in one {fence(request.target.bare_source)}python block.")
    if strategy.narrow and line is not None:
        asked += f" The fault is most likely in the focus lines above, around {shown(request.target, line)}."
    if strategy.problem:
        where = f"; most likely at {shown(request.target, line)}" if line is not None else ""
        asked = (f"Your previous reply {strategy.problem}. That cannot pass: change the code that causes the "
                 f"failure{where}.\n{asked}")
    return asked


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
    source = mask_shapes(target.bare_source.rstrip())
    return "\n".join(facts) + "\n" + fenced(source)


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
    variants = [title + "\n" + "\n".join(f"- {name} = {cap(text, limit)}" for name, text in items) for limit in caps]
    return [*variants, ""]


def _status(prior: Prior) -> str:
    return {"echo": "the original sent back", "repeat": "a repeat"}.get(
        prior.kind, "rejected by the checks" if prior.ran else "refused before it ran")


def _listed(priors: Sequence[Prior], names: Sequence[str]) -> str:
    """The compact prompt's earlier candidates: one line each, the reason without the code, in fewer words
    (see :func:`._compact.briefly`; ``names``: the proposers it leaves out); a candidate the checks rejected
    is told by the check that failed."""

    def line(prior: Prior) -> str:
        reason = cap(compact.briefly(" ".join(prior.reason.split()), names), 200)
        status = "" if prior.ran and not prior.kind else f"{_status(prior)}: "
        return f"- {compact.unnamed(prior.label, names)}: {status}{reason}"

    return "## Earlier candidates that failed (do not send any of them again)\n" + "\n".join(map(line, priors))


def _priors(priors: Sequence[Prior]) -> dict[str, list[str]]:
    """The older candidates and the latest one: separate sections, so that they trim separately."""
    if not priors:
        return {}

    def block(prior: Prior, with_source: bool, reason_cap: int) -> str:
        head = f"### {prior.label}: {_status(prior)}\nReason: {cap(prior.reason, reason_cap)}"
        if with_source and prior.source.strip() and not prior.kind:
            return f"{head}\n{fenced(prior.source.rstrip())}"
        return head

    older, latest = priors[:-1], priors[-1]
    parts = {"priors": ["## Earlier candidates that failed (do not send any of them again)"]}
    if older:
        parts["older"] = ["\n".join(block(p, with_source, limit) for p in older)
                          for with_source, limit in ((True, 600), (False, 600), (False, 160), (False, 80))]
    parts["latest"] = [block(latest, True, 1200), block(latest, True, 400), block(latest, False, 400),
                       block(latest, False, 160)]
    return parts

"""What a bench run found: the summary numbers, a text table, ``results.json`` and an HTML report."""

from __future__ import annotations

import html
import json
import statistics
from collections import Counter
from pathlib import Path
from typing import Any

STATUSES = ("correct", "wrong", "unjudged", "fixed", "abstained", "not-fixed", "nothing-to-fix", "reference-fails",
            "flaky", "bad-target", "bad-tests", "timeout", "error")
# A repair that produced a fix ends in one of these: judged against the reference, or "fixed" without one.
FIXED = ("correct", "wrong", "unjudged", "fixed")
_KINDS = ("fixed", "wrong", "unjudged", "not-fixed", "other")
_COLOURS = {"fixed": "#2e9d4f", "wrong": "#d9822b", "unjudged": "#e0c341", "not-fixed": "#c9c9c9",
            "other": "#7a7a9d"}


def judgement(r: dict[str, Any]) -> str | None:
    """``correct``, ``wrong`` or ``unjudged`` for a fix judged against a reference; ``None`` otherwise.

    Results written before fixes had statuses of their own (``fixed`` with ``correct`` true or
    false) read the same way.
    """
    status = r.get("status")
    if status in ("correct", "wrong", "unjudged"):
        return str(status)
    if status == "fixed" and r.get("correct") is not None:
        return "correct" if r["correct"] else "wrong"
    return None


def candidates_per_second(r: dict[str, Any]) -> float | None:
    """How many candidates the engine judged per second of its search on one task (``None`` without a search)."""
    if r.get("candidates_per_second") is not None:
        return float(r["candidates_per_second"])
    engine = r.get("engine") or {}
    evaluated, seconds = engine.get("evaluated"), engine.get("search_seconds")
    if not evaluated or not seconds:
        return None
    return round(float(evaluated) / float(seconds), 1)


def at_time_budget(r: dict[str, Any]) -> bool:
    """Whether the task ended at its time budget: the engine's search stopped there, or the task timed out."""
    return r.get("status") == "timeout" or str((r.get("engine") or {}).get("stopped", "")).startswith(
        "time budget spent")


def summarise(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The headline numbers: fix rate on fixable tasks, correctness of fixes, wrong claims, speed."""
    # Unmarked tasks count as fixable only where a repair was tried: bad input is not a miss.
    fixable = [r for r in results if r.get("fixable") is True
               or (r.get("fixable") is None and r["status"] in (*FIXED, "abstained", "not-fixed", "timeout", "error"))]
    abstained = [r for r in results if r["status"] == "abstained"]
    best = Counter(r.get("abstained_best", {}).get("status") for r in abstained)
    fixed = [r for r in fixable if r["status"] in FIXED]
    verdicts = Counter(judgement(r) for r in fixed)
    checked = sum(verdicts[v] for v in ("correct", "wrong", "unjudged"))
    unfixable_claims = [r for r in results if r.get("fixable") is False and r["status"] in FIXED]
    wrong_claims = [r for r in unfixable_claims if judgement(r) == "wrong"]
    engine = [r["engine"] for r in results if r.get("engine")]
    evaluated = sum(e["evaluated"] for e in engine)
    seconds = sum(e["search_seconds"] for e in engine)
    times = [r["time"] for r in results if "time" in r]
    speeds = [speed for speed in map(candidates_per_second, results) if speed is not None]
    return {
        "tasks": len(results),
        "statuses": dict(Counter(r["status"] for r in results)),
        "fixable": len(fixable),
        "fixed": len(fixed),
        "fixed_percent": _percent(len(fixed), len(fixable)),
        "correct": verdicts["correct"],
        "wrong": verdicts["wrong"],
        "unjudged": verdicts["unjudged"],
        "judged": verdicts["correct"] + verdicts["wrong"],
        "checked": checked,  # fixes with a reference: judged or not
        # Of the fixes with a reference, those proven correct: an unjudged fix is not.
        "correct_percent": _percent(verdicts["correct"], checked),
        # Repairs the engine declined (candidates disagreed), and how their best ranked candidate judged:
        # a correct one is what abstaining cost, a wrong one a wrong fix it kept out.
        "abstained": len(abstained),
        "abstained_correct": best["correct"],
        "abstained_wrong": best["wrong"],
        "unfixable_claims": len(unfixable_claims),
        "wrong_claims": len(wrong_claims),
        "median_seconds": round(statistics.median(times), 3) if times else None,
        "total_seconds": round(sum(times), 3),
        "candidates": evaluated,
        "candidates_per_second": round(evaluated / seconds, 1) if seconds else None,
        # per task: a few slow tasks do not hide how fast the engine is on most of them
        "median_candidates_per_second": round(statistics.median(speeds), 1) if speeds else None,
        "at_time_budget": sum(map(at_time_budget, results)),
        # Which request made each fix (Candidate.via): the engine alone, or a model's locate, rewrite or choose.
        "fixed_via": fixed_via(fixed),
    }


VIAS = ("engine", "locate", "rewrite", "choose")


def fixed_via(fixed: list[dict[str, Any]]) -> dict[str, int]:
    """Fixes per request that made them: every one of :data:`VIAS`, then any other (``"other"``: a user's
    proposer, or a result written before fixes said theirs)."""
    counts = Counter(r.get("via") or "other" for r in fixed)
    return {**{via: counts.pop(via, 0) for via in VIAS}, **dict(counts)}


def _percent(part: int, whole: int) -> float | None:
    return round(100.0 * part / whole, 1) if whole else None


def table(results: list[dict[str, Any]], summary: dict[str, Any]) -> str:
    """A plain-text table, one task a line, and the summary beneath."""
    rows = [("task", "family", "status", "calls", "operator", "cands", "cands/s", "time")]
    for r in results:
        speed = candidates_per_second(r)
        rows.append((r["name"], r.get("family") or "", r["status"], str(r.get("judged_calls", "")),
                     r.get("operator") or "", str(r.get("candidates", "")), "" if speed is None else f"{speed:g}",
                     f"{r.get('time', 0):.2f}s"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * width for width in widths))
    s = summary
    lines += [
        "",
        f"fixed {s['fixed']}/{s['fixable']} fixable tasks ({_shown(s['fixed_percent'])}); "
        f"against the reference: correct {s['correct']}, wrong {s['wrong']}, unjudged {s['unjudged']} "
        f"of {s['checked']} ({_shown(s['correct_percent'])} correct); "
        f"wrong claims on unfixable tasks: {s['wrong_claims']} (of {s['unfixable_claims']} claims)",
        f"median {_shown(s['median_seconds'], 's')} per task, {s['total_seconds']}s in all; "
        f"{s['candidates']} candidates at {_shown(s['candidates_per_second'], '/s')} "
        f"(median per task {_shown(s['median_candidates_per_second'], '/s')}; "
        f"{s['at_time_budget']} tasks at the time budget); "
        f"statuses: {', '.join(f'{k} {v}' for k, v in sorted(s['statuses'].items()))}",
    ]
    if s["fixed"]:
        lines.append("fixes by request: " + ", ".join(f"{via} {n}" for via, n in s["fixed_via"].items()))
    if s["abstained"]:
        lines.append(f"abstained {s['abstained']} (candidates disagreed; the best ranked would have been correct "
                     f"{s['abstained_correct']}, wrong {s['abstained_wrong']})")
    wrong = [r for r in results if judgement(r) == "wrong" and r.get("counterexample")]
    lines += [f"  wrong: {r['name']}: {r['counterexample']}" for r in wrong]
    return "\n".join(lines)


def write(out: Path, suite: str, options: dict[str, Any], results: list[dict[str, Any]],
          summary: dict[str, Any]) -> tuple[Path, Path]:
    """``results.json`` and ``report.html`` in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    data = {"suite": suite, "options": options, "summary": summary, "tasks": results}
    json_path, html_path = out / "results.json", out / "report.html"
    json_path.write_text(json.dumps(data, indent=1, default=str) + "\n", encoding="utf-8")
    html_path.write_text(render_html(suite, summary, results), encoding="utf-8")
    return json_path, html_path


def _outcome(r: dict[str, Any]) -> str:
    if r["status"] in FIXED:
        verdict = judgement(r)
        return verdict if verdict in ("wrong", "unjudged") else "fixed"
    return "not-fixed" if r["status"] == "not-fixed" else "other"


def chart(results: list[dict[str, Any]]) -> str:
    """An inline SVG: one stacked bar per family (fixed, fixed-but-wrong, unjudged, not fixed, other status)."""
    families = list(dict.fromkeys(r.get("family") or "-" for r in results))
    counts = {f: Counter(_outcome(r) for r in results if (r.get("family") or "-") == f) for f in families}
    most = max((sum(c.values()) for c in counts.values()), default=1) * 1.1  # room for the count labels
    bar, gap, height, left = 40, 44, 180, 40
    width = left + len(families) * (bar + gap) + 140
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height + 50}" '
             f'role="img" aria-label="outcome per family">']
    for i, family in enumerate(families):
        x, y = left + i * (bar + gap), float(height)
        for kind in _KINDS:
            h = height * counts[family][kind] / most
            if h:
                y -= h
                parts.append(f'<rect x="{x}" y="{y:.1f}" width="{bar}" height="{h:.1f}" fill="{_COLOURS[kind]}">'
                             f'<title>{html.escape(family)}: {counts[family][kind]} {kind}</title></rect>')
        parts.append(f'<text x="{x + bar / 2}" y="{height + 16}" font-size="11" text-anchor="middle">'
                     f'{html.escape(family)}</text>')
        total = sum(counts[family].values())  # the count above each bar, so the chart reads without hovering
        parts.append(f'<text x="{x + bar / 2}" y="{y - 4:.1f}" font-size="11" text-anchor="middle">{total}</text>')
    for j, kind in enumerate(_KINDS):
        x = left + len(families) * (bar + gap) + 10
        parts.append(f'<rect x="{x}" y="{10 + j * 20}" width="12" height="12" fill="{_COLOURS[kind]}"/>'
                     f'<text x="{x + 18}" y="{21 + j * 20}" font-size="12">{kind}</text>')
    parts.append(f'<line x1="{left - 4}" y1="{height}" x2="{width - 150}" y2="{height}" stroke="#444"/></svg>')
    return "".join(parts)


def render_html(suite: str, summary: dict[str, Any], results: list[dict[str, Any]]) -> str:
    """A self-contained page: summary, chart, and a row per task with its patch."""
    s = summary
    rows = []
    for r in results:
        patch = f"<details><summary>patch</summary><pre>{html.escape(r['patch'])}</pre></details>" \
            if r.get("patch") else ""
        detail = "<br>".join(html.escape(text) for text in dict.fromkeys((r.get("note"), r.get("reason"))) if text)
        if r.get("counterexample"):
            detail += f"<br><em>{html.escape(r['counterexample'])}</em>"
        rows.append(
            f"<tr class='{_outcome(r)}'><td>{html.escape(r['name'])}</td><td>{html.escape(r.get('family') or '')}</td>"
            f"<td>{html.escape(r['status'])}</td><td>{r.get('judged_calls', '')}</td>"
            f"<td>{html.escape(r.get('operator') or '')}</td>"
            f"<td>{r.get('candidates', '')}</td><td>{r.get('time', 0):.2f}s</td><td>{detail}{patch}</td></tr>")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>regrow bench: {html.escape(suite)}</title>
<style>
body {{ font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }}
table {{ border-collapse: collapse; }} td, th {{ border-bottom: 1px solid #ddd; padding: 4px 8px; text-align: left;
vertical-align: top; }} tr.fixed td:nth-child(3) {{ color: #2e9d4f; }} tr.wrong td:nth-child(3) {{ color: #d9822b; }}
tr.unjudged td:nth-child(3) {{ color: #a08a10; }}
pre {{ background: #f6f6f6; padding: 6px; }} .numbers span {{ margin-right: 2em; }}
</style></head><body>
<h1>regrow bench: {html.escape(suite)}</h1>
<p class="numbers"><span>fixed <b>{s['fixed']}/{s['fixable']}</b> ({_shown(s['fixed_percent'])})</span>
<span>against the reference: correct <b>{s['correct']}</b>, wrong <b>{s['wrong']}</b>,
unjudged <b>{s['unjudged']}</b> of {s['checked']} ({_shown(s['correct_percent'])} correct)</span>
<span>wrong claims on unfixable tasks <b>{s['wrong_claims']}</b></span>
<span>median <b>{_shown(s['median_seconds'], 's')}</b> per task</span>
<span><b>{_shown(s['candidates_per_second'], '')}</b> candidates/s</span>
<span>fixes by request: {html.escape(', '.join(f'{via} {n}' for via, n in s.get('fixed_via', {}).items()))}</span></p>
{chart(results)}
<table><tr><th>task</th><th>family</th><th>status</th><th>calls judged</th><th>operator</th><th>candidates</th>
<th>time</th><th>detail</th></tr>
{''.join(rows)}
</table></body></html>
"""


def _shown(value: Any, unit: str = "%") -> str:
    """A share as a percentage (or a figure in ``unit``), or "n/a" when there was nothing to measure (never
    "None%", "None/s")."""
    return "n/a" if value is None else f"{value}{unit}"

"""The peers benchmark's outputs: ``summary.json`` (every figure, every ratio, every missing peer) and an SVG bar chart.

A *run* is one probe's answer (``probe.py``) from one venv: ``{"unit", "baseline", "rows", "python"}``,
where each row is a figure or ``"missing: <reason>"``. A ratio is a row over the baseline of the same
run (the same process, the same minute), so runs on different Pythons are never divided by each other.
The chart is hand-rolled SVG: one ``<rect class="bar">`` per ratio, on a log scale with a line at 1.
"""

from __future__ import annotations

import json
import math
import os
import platform
import time
from html import escape
from pathlib import Path
from typing import Any

SCHEMA = 1


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """``runs``: each ``{"section", "venv", ...probe answer}`` or ``{"section", "venv", "missing": reason}``."""
    sections: dict[str, list[dict[str, Any]]] = {}
    ratios: list[dict[str, Any]] = []
    missing: list[dict[str, str]] = []
    for run in runs:
        section, venv = run["section"], run["venv"]
        sections.setdefault(section, []).append(run)
        if "missing" in run:
            missing.append({"section": section, "name": venv, "reason": run["missing"]})
            continue
        base = run["rows"].get(run["baseline"])
        for name, value in run["rows"].items():
            if isinstance(value, str):
                missing.append({"section": section, "name": f"{name} ({venv})", "reason": value})
            elif name != run["baseline"] and isinstance(base, (int, float)) and base > 0:
                ratios.append(
                    {
                        "section": section,
                        "name": f"{name} / {run['baseline']}",
                        "venv": venv,
                        "python": run.get("python", ""),
                        "value": value / base,
                    }
                )
    return {
        "schema": SCHEMA,
        "generated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "host": {"cpus": os.cpu_count(), "load": _load(), "machine": platform.machine()},
        "sections": sections,
        "ratios": ratios,
        "missing": missing,
    }


def _load() -> float | None:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else None


def chart(ratios: list[dict[str, Any]]) -> str:
    """An SVG bar per ratio, log10 scale from 1/100 to 1,000 (clipped), a line at ratio 1."""
    row, left, width = 22, 420, 360
    low, high = -2.0, 3.0
    height = row * (len(ratios) + 2)
    one = left + width * (0 - low) / (high - low)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 90}" height="{height}" '
        'font-family="sans-serif" font-size="12">',
        '<text x="4" y="14">ratio against the baseline of the same run (log scale)</text>',
    ]
    for i, ratio in enumerate(ratios):
        y = row * (i + 1)
        value = ratio["value"]
        level = min(max(math.log10(value), low), high) if value > 0 else low
        end = left + width * (level - low) / (high - low)
        x, w = min(one, end), max(abs(end - one), 1.0)
        label = f"{ratio['section']}: {ratio['name']} [{ratio['venv']}, py{ratio['python']}]"
        parts.append(f'<text x="4" y="{y + 14}">{escape(label)}</text>')
        parts.append(
            f'<rect class="bar" x="{x:.1f}" y="{y + 3}" width="{w:.1f}" height="{row - 6}" '
            f'fill="{"#c0392b" if value > 1 else "#2e86c1"}"/>'
        )
        parts.append(f'<text x="{left + width + 6}" y="{y + 14}">{value:.3g}x</text>')
    parts.append(f'<line x1="{one:.1f}" y1="{row}" x2="{one:.1f}" y2="{height - row}" stroke="black"/>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def write(summary: dict[str, Any], out: Path) -> tuple[Path, Path]:
    out.mkdir(parents=True, exist_ok=True)
    json_path, svg_path = out / "summary.json", out / "peers-ratios.svg"
    json_path.write_text(json.dumps(summary, indent=2) + "\n")
    svg_path.write_text(chart(summary["ratios"]))
    return json_path, svg_path


def table(summary: dict[str, Any]) -> str:
    """The figures as text, for the terminal."""
    lines = []
    for section, runs in summary["sections"].items():
        for run in runs:
            if "missing" in run:
                lines.append(f"{section:<12}{run['venv']:<12}missing: {run['missing']}")
                continue
            base = run["rows"].get(run["baseline"])
            for name, value in run["rows"].items():
                head = f"{section:<12}{run['venv'] + ' py' + run.get('python', ''):<20}{name:<28}"
                if isinstance(value, str):
                    lines.append(head + value)
                else:
                    ratio = f"{value / base:>9.2f}x" if isinstance(base, (int, float)) and base else ""
                    unit = "calls" if name.endswith("model calls") else run["unit"]
                    lines.append(head + f"{value:>14.6g} {unit:<9}{ratio}")
    return "\n".join(lines)

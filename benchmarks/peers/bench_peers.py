"""regrow beside its peers in one run: ``python benchmarks/peers/bench_peers.py --out bench-results [--quick]``.

``make bench-peers`` installs the peers (docs/benchmarks.md, "Peers") and runs this. Each probe
(``probe.py``) runs in the venv that holds its peers and measures its own baseline in the same
process; this script gathers the answers, prints them, and writes ``summary.json`` and
``peers-ratios.svg`` (``peers_summary.py``). A venv that is not there, a probe that fails, and a
measurement not built yet each appear as ``missing: <reason>``, never as a silent gap.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import peers_summary  # noqa: E402

# Measurements issue 26 asks for that this harness does not make yet: reported as missing, by name.
NOT_BUILT: dict[str, str] = {}


def plan(regrow: str, selfheal: str, codesuture: str) -> list[tuple[str, str, str, str]]:
    """(section, venv label, python, peers) for every probe of one run."""
    return [
        ("overhead", "regrow", regrow, "regrow,healing-agent"),
        ("overhead", "selfheal", selfheal, "self-heal"),
        ("overhead", "codesuture", codesuture, "regrow,codesuture"),
        ("sandbox", "regrow", regrow, "regrow"),
        ("sandbox", "selfheal", selfheal, "self-heal"),
        ("cache", "regrow", regrow, "regrow"),
        ("validation", "regrow", regrow, "regrow,mutmut"),
        ("repair", "regrow", regrow, "regrow,healing-agent"),
        ("repair", "selfheal", selfheal, "self-heal"),
    ]


def probe(section: str, venv: str, python: str, peers: str, quick: bool, timeout: float) -> dict[str, Any]:
    head: dict[str, Any] = {"section": section, "venv": venv}
    if not Path(python).exists():
        return {**head, "missing": f"no venv python at {python} (install failed? see its install.log)"}
    command = [python, str(HERE / "probe.py"), section, f"--peers={peers}"] + (["--quick"] if quick else [])
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {**head, "missing": f"probe did not finish in {timeout:g}s"}
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {**head, "missing": f"probe exited {done.returncode}: {tail}"[:300]}
    return {**head, **json.loads(lines[-1])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("bench-results"))
    parser.add_argument("--regrow-python", default=".venv-peers/bin/python")
    parser.add_argument("--selfheal-python", default=".venv-peers-selfheal/bin/python")
    parser.add_argument("--codesuture-python", default=".venv-peers-codesuture/bin/python")
    parser.add_argument("--quick", action="store_true", help="fewer calls: a smoke run, not figures to quote")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per probe")
    args = parser.parse_args(argv)
    runs = [
        probe(*step, quick=args.quick, timeout=args.timeout)
        for step in plan(args.regrow_python, args.selfheal_python, args.codesuture_python)
    ]
    runs += [{"section": section, "venv": "-", "missing": reason} for section, reason in NOT_BUILT.items()]
    summary = peers_summary.summarize(runs)
    json_path, svg_path = peers_summary.write(summary, args.out)
    print(peers_summary.table(summary))
    print(f"\n{len(summary['ratios'])} ratios, {len(summary['missing'])} missing; wrote {json_path} and {svg_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

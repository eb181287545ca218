"""Planning time per line of a long function, and the time to its first edit and first candidate.

    python benchmarks/planning.py [--sizes 100,600,1200,3000]

For each size a module holding one generated function of that many lines (assignments, branches,
loops and calls on its arguments) is written to a scratch folder, and the engine's planning steps run
on it in the host, each timed: the target read from the file, its scope (sites and names, and what the
first tier's operators read of the module, as the engine works it out before forking), the first
100 edits in search order (:class:`regrow._proposers._engine._ranked.Ranked`), and the first candidate made from
them (spliced and compiled). Reported: milliseconds per line of the planning steps (target: flat from
100 to 3,000 lines, i.e. the 3,000-line figure within 2x the 100-line one) and the time to the first
candidate (target: 2 s at 3,000 lines).

Then a whole heal, as a user runs it: ``python -m regrow heal long.py::crunch --test test_long.py
--timeout T -v --log`` in a subprocess on a function of ``--heal-lines`` lines whose last line has a
one-token bug (five tests compare it with the right version). Its output is read as it comes:
reported are the time from the command's start to the search's start and to the first candidate
judged (target: 2 s after the search starts), and the whole command's wall time against its
``--timeout`` (target: within 10 %). Modules are imported from bytecode, as from an installed package.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

from regrow._proposers._engine._module import FIRST_TIER, Module
from regrow._proposers._engine._operators import OPERATORS
from regrow._proposers._engine._plan import Plan, Stats
from regrow._proposers._engine._ranked import Ranked
from regrow._proposers._engine._scope import Scope
from regrow._target._target import Target, find_function

FIRST_CANDIDATE_TARGET = 2.0  # seconds, at 3,000 lines
FLAT_TARGET = 2.0  # the per-line figure at the largest size over that at the smallest
TIMEOUT_TARGET = 1.10  # the whole command's wall time over its --timeout
SRC = str(Path(__file__).resolve().parent.parent / "src")


def long_function(lines: int, name: str = "crunch") -> str:
    """A function of about ``lines`` lines: arithmetic, branches, loops and calls on its arguments."""
    rng = random.Random(lines)
    out = [f"def {name}(values, limit):", "    total = 0", "    count = 0"]
    n = 0
    while len(out) < lines - 1:
        kind, v = rng.randrange(5), f"v{n}"
        n += 1
        if kind == 0:
            out += [f"    {v} = len(values) * {rng.randrange(1, 9)} + limit"]
        elif kind == 1:
            out += [f"    if total > {rng.randrange(100)}:", f"        total -= {rng.randrange(1, 5)}", "    else:",
                    "        total += count + 1"]
        elif kind == 2:
            out += [f"    for item in values[:{rng.randrange(1, 4)}]:",
                    f"        count += item % {rng.randrange(2, 7)}"]
        elif kind == 3:
            out += [f"    {v} = max(total, count) - min(limit, {rng.randrange(10)})", f"    total = total + {v} // 3"]
        else:
            out += [f"    while count > {rng.randrange(50, 90)}:", "        count -= limit or 1"]
    out.append("    return total + count")
    return "\n".join(out) + "\n"


def measure(folder: str, lines: int) -> dict[str, float]:
    path = os.path.join(folder, f"long_{lines}.py")
    with open(path, "w") as out:
        out.write(long_function(lines))
    steps: dict[str, float] = {}
    started = clock = time.perf_counter()

    def step(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        steps[name], clock = now - clock, now

    target = Target.from_ref(f"{path}::crunch")
    source = target.bare_source
    function = find_function(source, target.name)
    step("target")
    scope = Scope.of(function, Module.of(target))
    scope.module.resolve(*FIRST_TIER)  # as the engine does before its judging children fork
    step("scope")
    last = len(source.splitlines())
    ranked = Ranked(scope, OPERATORS, lambda site: 1.0 if site.line >= last - 1 else 0.0)  # the return suspected
    ranked[99]
    step("first 100 edits")
    steps["plan"] = time.perf_counter() - started
    plan = Plan(target, source, function, ranked, None, Stats())
    made = next(made for made in map(plan.make, ranked.upto()) if made is not None)
    assert made.text
    step("first candidate made")
    steps["to first candidate"] = time.perf_counter() - started
    return steps


def heal(folder: str, lines: int, timeout: float) -> dict[str, float]:
    """One ``regrow heal --timeout`` of a long function, timed from its output as it comes."""
    right = long_function(lines)
    Path(folder, "right.py").write_text(right)
    Path(folder, "long.py").write_text(right.replace("    return total + count\n", "    return total - count\n"))
    Path(folder, "test_long.py").write_text(
        "import pytest\nfrom long import crunch\nfrom right import crunch as right\n\n\n"
        "@pytest.mark.parametrize('values,limit', [([1, 2, 3], 2), ([5, 0, 7, 9], 3), ([], 1), ([4], 0), "
        "([9, 9, 9, 9, 9], 5)])\ndef test_crunch(values, limit):\n"
        "    assert crunch(list(values), limit) == right(list(values), limit)\n")
    env = {**os.environ, "PYTHONPATH": SRC, "PYTHONPYCACHEPREFIX": os.path.join(folder, "pycache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode as an installed package has it
    command = [sys.executable, "-m", "regrow", "heal", "long.py::crunch", "--test", "test_long.py", "-v", "--log"]
    # Untimed: writes the bytecode of every module the heal imports (the prefix moves the stdlib's too).
    subprocess.run([*command, "--timeout", "1"], cwd=folder, env=env, capture_output=True, timeout=300)
    started = time.perf_counter()
    seen: dict[str, float] = {}
    with subprocess.Popen([*command, "--timeout", f"{timeout:g}"], cwd=folder, env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT) as running:
        assert running.stdout is not None
        for line in running.stdout:
            now = time.perf_counter() - started
            if line.startswith("regrow: searching with"):
                seen.setdefault("search", now)
            elif line.startswith("  #"):
                seen.setdefault("first", now)
    seen["wall"] = time.perf_counter() - started
    return seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,600,1200,3000")
    parser.add_argument("--heal-lines", type=int, default=3000, help="the whole heal's function (0: none)")
    parser.add_argument("--timeout", type=float, default=10.0, help="the whole heal's --timeout")
    options = parser.parse_args()
    sizes = [int(size) for size in options.sizes.split(",")]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"planning a long function; Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load:.1f}")
    print(f"{'lines':>6}{'target':>10}{'scope':>10}{'100 edits':>11}{'plan':>10}{'ms/line':>9}"
          f"{'made':>10}{'1st cand.':>11}")
    per_line = {}
    with tempfile.TemporaryDirectory() as folder:
        sys.path.insert(0, folder)
        for lines in sizes:
            steps = measure(folder, lines)
            per_line[lines] = steps["plan"] * 1000 / lines
            print(f"{lines:>6}{steps['target']:>9.2f}s{steps['scope']:>9.2f}s{steps['first 100 edits']:>10.3f}s"
                  f"{steps['plan']:>9.2f}s{per_line[lines]:>9.2f}{steps['first candidate made']:>9.2f}s"
                  f"{steps['to first candidate']:>10.2f}s")
    flat = per_line[sizes[-1]] / per_line[sizes[0]]
    print(f"plan time per line, {sizes[-1]} vs {sizes[0]} lines: {flat:.2f}x "
          f"({'ok' if flat <= FLAT_TARGET else 'MISS'}: target {FLAT_TARGET:g}x)")
    print(f"first candidate at {sizes[-1]} lines: {steps['to first candidate']:.2f}s "
          f"({'ok' if steps['to first candidate'] <= FIRST_CANDIDATE_TARGET else 'MISS'}: target "
          f"{FIRST_CANDIDATE_TARGET:g}s; the localizing run of the checks and the worker's start come on top)")
    if options.heal_lines:
        folder = tempfile.mkdtemp(prefix="regrow-bench-heal-")
        try:
            seen = heal(folder, options.heal_lines, options.timeout)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        first = seen.get("first", float("nan")) - seen.get("search", float("nan"))
        print(f"regrow heal --timeout {options.timeout:g} on a {options.heal_lines}-line function: the search "
              f"started at {seen.get('search', float('nan')):.2f}s, the first candidate was judged at "
              f"{seen.get('first', float('nan')):.2f}s, {first:.2f}s into the search "
              f"({'ok' if first <= FIRST_CANDIDATE_TARGET else 'MISS'}: target {FIRST_CANDIDATE_TARGET:g}s)")
        ratio = seen["wall"] / options.timeout
        print(f"  the whole command took {seen['wall']:.2f}s = {ratio:.3f}x its --timeout "
              f"({'ok' if ratio <= TIMEOUT_TARGET else 'MISS'}: target {TIMEOUT_TARGET:g}x)")


if __name__ == "__main__":
    main()

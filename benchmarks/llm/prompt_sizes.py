"""Prompt sizes of locate requests against rewrite requests, on the same tasks.

For each task of a suite (default regrow40) the first call's prompt is built three ways — the locate
request, the compact rewrite request (what a small model gets first) and the full whole-function
request — from the same failure ("<the task's test file> failed") and
the same checks (the task's test file), without running anything (no evidence runs: each prompt
would grow by the same "what the tests saw" lines). Sizes are regrow's token estimate and characters.

    python benchmarks/llm/prompt_sizes.py [--suite regrow40]
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import time
from pathlib import Path
from typing import Any

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

HERE = Path(__file__).resolve().parent
SUITES = HERE.parent / "suites"


def requests(suite: str) -> list[tuple[str, Any]]:
    from regrow._checks._oracles import PytestTests
    from regrow._evidence._failure import capture_exception
    from regrow.extend import Request, Target

    root = SUITES / suite
    manifest = tomllib.loads((root / "manifest.toml").read_text(encoding="utf-8"))
    sys.path.insert(0, str(root))
    made = []
    for task in manifest["task"]:
        path, _, name = task["target"].partition("::")
        module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
        target = Target.of(getattr(module, name))
        try:
            raise AssertionError(f"{task['tests'][0]} failed")
        except AssertionError as exc:
            failure = capture_exception(exc, target.func, (), {})
        checks = [PytestTests([str(root / test) for test in task["tests"]])]
        made.append((task["name"], Request(target, failure, [], checks, 1, time.monotonic() + 60)))
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="regrow40")
    suite = parser.parse_args().suite
    from regrow._proposers._llm._locate import locate_prompt
    from regrow._proposers._llm._prompt import PromptOptions, build_prompt
    from regrow._proposers._llm._strategy import Strategy

    sizes: dict[str, list[tuple[int, int]]] = {"locate": [], "compact rewrite": [], "full whole function": []}
    for _, request in requests(suite):
        built = {"locate": locate_prompt(request, None),
                 "compact rewrite": build_prompt(request, [], PromptOptions(), None,
                                                 Strategy("whole", compact=True, rewrite=True)),
                 "full whole function": build_prompt(request, [], PromptOptions(), None, Strategy("whole"))}
        for kind, prompt in built.items():
            sizes[kind].append((prompt.tokens, len(prompt.system) + len(prompt.user)))
    print(f"{suite}: {len(sizes['locate'])} tasks, first-call prompts (regrow's token estimate; characters)")
    print("| request | median tokens | mean tokens | median chars |\n| --- | ---: | ---: | ---: |")
    for kind, rows in sizes.items():
        tokens, chars = [t for t, _ in rows], [c for _, c in rows]
        print(f"| {kind} | {statistics.median(tokens):.0f} | {statistics.mean(tokens):.0f} | "
              f"{statistics.median(chars):.0f} |")


if __name__ == "__main__":
    main()

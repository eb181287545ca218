"""The real-code suite: pinned sdists of real libraries, with bugs injected from specs kept in git.

    python benchmarks/fetch_sdists.py            # fetch + materialise (the default: `build`)
    python benchmarks/fetch_sdists.py fetch      # only download and check the sdists
    python benchmarks/fetch_sdists.py verify     # each library test file: passes pristine, fails on each bug
    python benchmarks/fetch_sdists.py report bench-results/realcode/results.json

Only the specs live in git (``benchmarks/suites/realcode/*.toml``, one per library): the pinned
version and sha256 of its sdist, what of the sdist a task tree keeps, layout edits (a namespace
folder, a pytest.ini), and one ``[[bug]]`` table per injected bug (file, line, old text -> new
text, target, the library's test file, shape tags). No third-party source is committed.

``fetch`` downloads each sdist once with ``pip download --no-deps --no-binary :all:`` into
``.cache/sdists/`` and refuses one whose sha256 differs from the spec. ``build`` unpacks it and lays
out, under ``.cache/realcode/<library>/``:

- ``pristine/`` — the library as shipped (with the spec's layout edits): the reference;
- ``tasks/<bug>/`` — a copy of it with one bug injected: the task's root, where its tests run;
- ``isolated/realcode_ref_<library>/`` — the pristine tree again, importable under a name of its
  own (``realcode_ref_<library>.<package>...``) for a reference that no buggy module can shadow;

and writes two manifests for ``regrow bench``: ``.cache/realcode/manifest.toml`` (references in the
pristine copy of the same package: the natural way, and the suite's) and
``.cache/realcode/manifest-isolated.toml`` (references under their own import root). Both list
the extra keys ``library``, ``shapes`` and ``kind``, which ``regrow bench`` ignores and ``report``
reads. A library whose spec and sdist have not changed since its last build is left as it is, so
``build`` is cheap to repeat; nothing here runs at test time, and nothing but ``fetch`` touches
the network.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

REPO = Path(__file__).resolve().parent.parent
SPECS = REPO / "benchmarks" / "suites" / "realcode"
CACHE = REPO / ".cache"
BUILD_VERSION = "1"  # bump to rebuild every tree after a change to how trees are laid out
SHAPES = ("function", "generator", "method", "method-names-class", "classmethod", "staticmethod", "property",
          "dunder", "decorated", "lru-cache", "closure", "unittest", "unittest-subtest", "src-layout",
          "namespace-package", "fixtures", "parametrize", "writes-files")
KINDS = ("operator", "comparison", "off-by-one", "wrong-name", "dropped-statement", "wrong-constant",
         "missing-guard", "swapped-arguments", "negation", "boolean-operator", "wrong-attribute")
STEP_SECONDS = 10.0  # the most a library test file may take, pristine or buggy


class SpecError(Exception):
    """A spec that cannot be built as written."""


# ----------------------------------------------------------------------------------------------- specs

def load_specs(names: list[str] | None = None) -> list[dict[str, Any]]:
    """Every library spec (or the named ones), checked for the fields ``build`` needs."""
    specs = []
    for path in sorted(SPECS.glob("*.toml")):
        spec = tomllib.loads(path.read_text(encoding="utf-8"))
        spec["_path"] = path
        lib = spec.get("library", {})
        for key in ("name", "version", "license", "sdist", "sha256", "keep"):
            if key not in lib:
                raise SpecError(f"{path.name}: [library] needs {key}")
        if names and lib["name"] not in names:
            continue
        ids = [bug.get("id") for bug in spec.get("bug", [])]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            raise SpecError(f"{path.name}: repeated bug ids: {', '.join(map(str, repeated))}")
        for bug in spec.get("bug", []):
            for key in ("id", "file", "line", "old", "new", "target", "tests", "kind", "shapes", "bug"):
                if key not in bug:
                    raise SpecError(f"{path.name}: bug {bug.get('id', '?')} needs {key}")
            unknown = [s for s in [*bug["shapes"], bug["kind"]] if s not in (*SHAPES, *KINDS)]
            if unknown:
                raise SpecError(f"{path.name}: bug {bug['id']}: unknown tag(s) {', '.join(unknown)}")
        specs.append(spec)
    if names and len(specs) != len(set(names)):
        raise SpecError(f"no spec for: {', '.join(sorted(set(names) - {s['library']['name'] for s in specs}))}")
    return specs


def shapes_of(spec: dict[str, Any], bug: dict[str, Any]) -> list[str]:
    """The bug's shape tags and its library's, in the order of :data:`SHAPES`."""
    tags = set(bug["shapes"]) | set(spec["library"].get("shapes", []))
    return [s for s in SHAPES if s in tags]


# ----------------------------------------------------------------------------------------------- fetch

def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch(spec: dict[str, Any], cache: Path) -> Path:
    """The library's sdist in ``cache/sdists``, downloaded once and checked against the pinned sha256."""
    lib = spec["library"]
    folder = cache / "sdists"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / lib["sdist"]
    if not path.is_file():
        with tempfile.TemporaryDirectory(dir=folder) as scratch:
            command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
                       "--dest", scratch, f"{lib.get('project', lib['name'])}=={lib['version']}"]
            done = subprocess.run(command, capture_output=True, text=True, check=False)
            got = Path(scratch) / lib["sdist"]
            if done.returncode != 0 or not got.is_file():
                raise SpecError(f"pip could not download {lib['sdist']}: {done.stderr.strip()[-500:]}")
            os.replace(got, path)
    digest = sha256(path)
    if digest != lib["sha256"]:
        raise SpecError(f"{path} has sha256 {digest}, the spec pins {lib['sha256']}: refusing to use it")
    return path


# ----------------------------------------------------------------------------------------------- build

def unpack(sdist: Path, into: Path) -> Path:
    """The sdist's top folder, extracted (data only: no links out, no devices) into ``into``."""
    if into.exists():
        shutil.rmtree(into)
    into.mkdir(parents=True)
    with tarfile.open(sdist) as archive:
        if sys.version_info >= (3, 12) or hasattr(tarfile, "data_filter"):
            archive.extractall(into, filter="data")
        else:  # pragma: no cover - an old 3.10/3.11 without the filter
            for member in archive.getmembers():
                if member.name.startswith(("/", "..")) or ".." in Path(member.name).parts or not (
                        member.isfile() or member.isdir()):
                    raise SpecError(f"{sdist.name}: refusing the member {member.name}")
            archive.extractall(into)
    tops = [p for p in into.iterdir() if p.is_dir()]
    if len(tops) != 1:
        raise SpecError(f"{sdist.name} does not unpack to one folder")
    return tops[0]


def replace_in_line(path: Path, line: int, old: str, new: str, what: str) -> None:
    """Replace the one ``old`` on line ``line`` of ``path`` with ``new`` (a line left blank goes)."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    if not 1 <= line <= len(lines):
        raise SpecError(f"{what}: {path.name} has no line {line}")
    current = lines[line - 1]
    if current.count(old) != 1:
        raise SpecError(f"{what}: line {line} of {path.name} holds {old!r} {current.count(old)} times, not once: "
                        f"{current.rstrip()!r}")
    changed = current.replace(old, new)
    lines[line - 1] = "" if changed.strip() == "" and current.strip() != "" else changed
    path.write_text("".join(lines), encoding="utf-8")


def lay_out(spec: dict[str, Any], top: Path, tree: Path) -> None:
    """The pristine task tree: the kept parts of the sdist, the layout edits, the pytest.ini."""
    lib = spec["library"]
    tree.mkdir(parents=True)
    for keep in lib["keep"]:
        source = top / keep
        if source.is_dir():
            shutil.copytree(source, tree / keep, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        elif source.is_file():
            (tree / keep).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, tree / keep)
        else:
            raise SpecError(f"{lib['name']}: the sdist has no {keep}")
    for number, edit in enumerate(spec.get("layout", []), start=1):
        what = f"{lib['name']} layout edit #{number}"
        if "move" in edit:
            old, new = (tree / edit["move"][0]), (tree / edit["move"][1])
            if not old.exists():
                raise SpecError(f"{what}: no {edit['move'][0]} to move")
            new.parent.mkdir(parents=True, exist_ok=True)
            os.replace(old, new)
            if old.parent != tree and not any(old.parent.iterdir()):
                old.parent.rmdir()
        elif "remove" in edit:
            target = tree / edit["remove"]
            if target.is_dir():
                shutil.rmtree(target)
            else:
                target.unlink()
        elif "write" in edit:
            (tree / edit["write"]).parent.mkdir(parents=True, exist_ok=True)
            (tree / edit["write"]).write_text(edit["text"], encoding="utf-8")
        else:
            replace_in_line(tree / edit["file"], edit["line"], edit["old"], edit["new"], what)
    # A pytest.ini of its own makes the task tree pytest's rootdir: no configuration from above applies.
    (tree / "pytest.ini").write_text(lib.get("pytest_ini", "[pytest]\n"), encoding="utf-8")


def isolate(pristine: Path, folder: Path, name: str, files: set[str]) -> None:
    """The pristine tree under ``folder/name``, with an ``__init__.py`` in every folder above a reference."""
    root = folder / name
    shutil.copytree(pristine, root)
    (root / "__init__.py").write_text("", encoding="utf-8")
    for file in files:
        parent = (root / file).parent
        while parent != root:
            init = parent / "__init__.py"
            if not init.exists():
                init.write_text("", encoding="utf-8")
            parent = parent.parent


def stamp_of(spec: dict[str, Any]) -> str:
    body = {k: v for k, v in spec.items() if k != "_path"}
    return hashlib.sha256(json.dumps([BUILD_VERSION, body], sort_keys=True, default=str).encode()).hexdigest()


def build(spec: dict[str, Any], cache: Path, force: bool = False) -> bool:
    """Materialise one library's trees; False when they were already up to date."""
    lib = spec["library"]
    home = cache / "realcode" / lib["name"]
    stamp = home / ".stamp"
    if not force and stamp.is_file() and stamp.read_text(encoding="utf-8") == stamp_of(spec):
        return False
    sdist = fetch(spec, cache)
    if home.exists():
        shutil.rmtree(home)
    top = unpack(sdist, home / "sdist")
    pristine = home / "pristine"
    lay_out(spec, top, pristine)
    for bug in spec.get("bug", []):
        tree = home / "tasks" / bug["id"]
        shutil.copytree(pristine, tree)
        replace_in_line(tree / bug["file"], bug["line"], bug["old"], bug["new"], f"{lib['name']} bug {bug['id']}")
    targets = {bug["target"].partition("::")[0] for bug in spec.get("bug", [])}
    isolate(pristine, home / "isolated", f"realcode_ref_{lib['name']}", targets)
    shutil.rmtree(home / "sdist")
    stamp.write_text(stamp_of(spec), encoding="utf-8")
    return True


def manifest(specs: list[dict[str, Any]], isolated: bool) -> str:
    """A ``regrow bench`` manifest of every bug, with its task root relative to ``.cache/realcode``."""
    name = "realcode-isolated" if isolated else "realcode"
    out = ["# Generated by benchmarks/fetch_sdists.py from benchmarks/suites/realcode/*.toml: do not edit.",
           "[suite]", f"name = {json.dumps(name)}", 'root = "."', ""]
    for spec in specs:
        lib = spec["library"]
        for bug in spec.get("bug", []):
            where, _, qualname = bug["target"].partition("::")
            if isolated:
                reference = f"../../isolated/realcode_ref_{lib['name']}/{where}::{qualname}"
            else:
                reference = f"../../pristine/{where}::{qualname}"
            entry = {
                "name": f"{lib['name']}-{bug['id']}", "target": bug["target"], "tests": bug["tests"],
                "root": f"{lib['name']}/tasks/{bug['id']}", "reference": reference, "fixable": True,
                "family": lib["name"], "bug": bug["bug"], "library": lib["name"], "shapes": shapes_of(spec, bug),
                "kind": bug["kind"],
            }
            out.append("[[task]]")
            out += [f"{key} = {toml_value(value)}" for key, value in entry.items()]
            out.append("")
    return "\n".join(out)


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string


def build_all(specs: list[dict[str, Any]], cache: Path, force: bool) -> None:
    for spec in specs:
        lib = spec["library"]
        started = time.monotonic()
        built = build(spec, cache, force)
        state = f"built in {time.monotonic() - started:.1f}s" if built else "up to date"
        print(f"{lib['name']} {lib['version']}: {len(spec.get('bug', []))} bugs, {state}")
    every = load_specs()
    folder = cache / "realcode"
    folder.mkdir(parents=True, exist_ok=True)
    for isolated, file in ((False, "manifest.toml"), (True, "manifest-isolated.toml")):
        text = manifest([s for s in every if (folder / s["library"]["name"] / ".stamp").is_file()], isolated)
        path = folder / file
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    print(f"manifests: {folder / 'manifest.toml'} and {folder / 'manifest-isolated.toml'}")


# ---------------------------------------------------------------------------------------------- verify

def run_tests(root: Path, tests: list[str]) -> dict[str, Any]:
    """The library's tests run by pytest in ``root`` as ``regrow bench`` runs them (seed 0, no bytecode)."""
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"}
    started = time.monotonic()
    try:
        # The library's tests alone: without regrow's own pytest plugin, whatever state src/ is in.
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:regrow", "-rfE", *tests]
        done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=4 * STEP_SECONDS,
                              check=False)
    except subprocess.TimeoutExpired:
        return {"code": None, "seconds": round(time.monotonic() - started, 2), "failed": [], "tail": "timeout"}
    # pytest 9 reports a failing subtest as `SUBFAILED(params) node`, and its test only through it.
    found = re.finditer(r"^(SUB)?(?:FAILED|ERROR)(?:\(.*?\))? (\S+::\S+|\S+\.py)", done.stdout, re.M)
    failed = sorted({m.group(2) + (" (subtest)" if m.group(1) else "") for m in found})
    tail = done.stdout.strip().splitlines()[-1:] or done.stderr.strip().splitlines()[-1:]
    return {"code": done.returncode, "seconds": round(time.monotonic() - started, 2), "failed": failed,
            "tail": tail[0] if tail else ""}


def verify(specs: list[dict[str, Any]], cache: Path, jobs: int, out: Path | None) -> int:
    """Each bug's test files: pass on the pristine tree and fail on the bug's, the same way twice, fast."""
    rows: list[dict[str, Any]] = []
    jobs_list: list[tuple[str, str, Path, list[str]]] = []
    for spec in specs:
        lib = spec["library"]["name"]
        home = cache / "realcode" / lib
        for tests in sorted({tuple(bug["tests"]) for bug in spec.get("bug", [])}):
            jobs_list.append((lib, "(pristine)", home / "pristine", list(tests)))
        for bug in spec.get("bug", []):
            jobs_list.append((lib, bug["id"], home / "tasks" / bug["id"], bug["tests"]))

    def one(job: tuple[str, str, Path, list[str]]) -> dict[str, Any]:
        lib, name, root, tests = job
        first, second = run_tests(root, tests), run_tests(root, tests)
        pristine = name == "(pristine)"
        problems = []
        if first["failed"] != second["failed"] or first["code"] != second["code"]:
            problems.append("flaky")
        if max(first["seconds"], second["seconds"]) > STEP_SECONDS:
            problems.append("slow")
        if pristine and first["code"] != 0:
            problems.append(f"fails pristine: {first['tail']}")
        if not pristine and first["code"] == 0:
            problems.append("not detected")
        if not pristine and first["code"] not in (0, 1):
            problems.append(f"pytest exit {first['code']}: {first['tail']}")
        return {"library": lib, "bug": name, "tests": tests, "ok": not problems, "problems": problems,
                "seconds": max(first["seconds"], second["seconds"]), "failed": first["failed"]}

    with ThreadPoolExecutor(max_workers=max(jobs, 1)) as pool:
        for row in pool.map(one, jobs_list):
            rows.append(row)
            mark = "ok " if row["ok"] else "BAD"
            detail = "; ".join(row["problems"]) or f"{len(row['failed'])} failing"
            print(f"{mark} {row['library']}-{row['bug']}: {detail} ({row['seconds']:.1f}s)"
                  + (f"  e.g. {row['failed'][0]}" if row["failed"] else ""), flush=True)
    if out:
        out.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    bad = [r for r in rows if not r["ok"]]
    print(f"{len(rows) - len(bad)}/{len(rows)} checks ok")
    return 1 if bad else 0


# ---------------------------------------------------------------------------------------------- report

REFUSED = ("bad-target", "bad-tests", "error", "timeout", "reference-fails", "flaky")
COLUMNS = ("tasks", "refused/errored", "nothing-to-fix", "not-fixed", "fixed", "correct", "wrong", "unjudged")


def outcome(result: dict[str, Any]) -> str:
    status = result["status"]
    if status in REFUSED:
        return "refused/errored"
    if status == "fixed" and result.get("correct") is not None:
        return "correct" if result["correct"] else "wrong"
    return status


def reason_key(result: dict[str, Any]) -> str:
    """A task's reason with paths, names and numbers folded, so that alike reasons count together."""
    reason = str(result.get("reason", ""))
    reason = re.sub(r"\S+::\S+", "<target>", reason)
    reason = re.sub(r"(/[\w.\-]+)+", "<path>", reason)
    reason = re.sub(r"'[^']*'", "'…'", reason)
    reason = re.sub(r"\d+", "N", reason)
    return f"{result['status']}: {reason[:110]}"


def report(results_path: Path, manifest_path: Path) -> str:
    """A markdown table of outcomes per shape tag and per library, and the commonest reasons."""
    data = json.loads(results_path.read_text(encoding="utf-8"))
    tasks = {t["name"]: t for t in tomllib.loads(manifest_path.read_text(encoding="utf-8"))["task"]}
    results = [r for r in data["tasks"] if r["name"] in tasks]
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in results:
        task = tasks[r["name"]]
        groups["all"].append(r)
        groups[f"library: {task['library']}"].append(r)
        for shape in task["shapes"]:
            groups[shape].append(r)
    order = ["all", *[s for s in SHAPES if s in groups], *sorted(k for k in groups if k.startswith("library: "))]
    lines = ["| shape | " + " | ".join(COLUMNS) + " |", "| --- |" + " ---: |" * len(COLUMNS)]
    for key in order:
        counts = Counter(outcome(r) for r in groups[key])
        fixed = counts["fixed"] + counts["correct"] + counts["wrong"] + counts["unjudged"]
        cells = [len(groups[key]), counts["refused/errored"], counts["nothing-to-fix"], counts["not-fixed"], fixed,
                 counts["correct"], counts["wrong"], counts["unjudged"]]
        lines.append(f"| {key} | " + " | ".join(str(c) for c in cells) + " |")
    lines += ["", "Reasons (tasks not fixed), commonest first:", ""]
    reasons = Counter(reason_key(r) for r in results if outcome(r) not in ("correct", "wrong", "unjudged", "fixed"))
    for reason, count in reasons.most_common(25):
        shapes = Counter(s for r in results if reason_key(r) == reason for s in tasks[r["name"]]["shapes"])
        lines.append(f"- {count}x {reason}  [{', '.join(f'{s} {n}' for s, n in shapes.most_common(6))}]")
    summary = data.get("summary", {})
    if summary:
        lines += ["", f"wall {summary.get('wall_seconds')} s, median {summary.get('median_seconds')} s per task"]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------ main

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", nargs="?", default="build", choices=("build", "fetch", "verify", "report"))
    parser.add_argument("results", nargs="?", help="report: a results.json of `regrow bench`")
    parser.add_argument("--library", action="append", default=None, help="only this library (repeatable)")
    parser.add_argument("--cache", type=Path, default=CACHE, help=f"the cache folder ({CACHE})")
    parser.add_argument("--force", action="store_true", help="build: rebuild trees that are up to date")
    parser.add_argument("--jobs", type=int, default=2, help="verify: test runs at once (2)")
    parser.add_argument("--out", type=Path, default=None, help="verify: write the rows as JSON here")
    parser.add_argument("--manifest", type=Path, default=None, help="report: the manifest the run used")
    args = parser.parse_args(argv)
    try:
        specs = load_specs(args.library)
        if args.command == "fetch":
            for spec in specs:
                path = fetch(spec, args.cache)
                print(f"{path.name}: sha256 ok")
            return 0
        if args.command == "report":
            if not args.results:
                parser.error("report needs the results.json of a run")
            print(report(Path(args.results), args.manifest or args.cache / "realcode" / "manifest.toml"))
            return 0
        build_all(specs, args.cache, args.force)
        if args.command == "verify":
            return verify(specs, args.cache, args.jobs, args.out)
        return 0
    except SpecError as exc:
        print(f"fetch_sdists: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())

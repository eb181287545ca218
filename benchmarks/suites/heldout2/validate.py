"""Validate the heldout2 suite.

Run with:  /work/main/.venv/bin/python benchmarks/suites/heldout2/validate.py [task ...]

For every task in manifest.toml it checks that
  (0) every path named by the manifest exists and the target/reference functions are defined
      with the same signature, the program is 3-25 lines, the tests hold 1-3 asserts,
      INPUTS holds 20-60 argument tuples, and the program differs from the reference by one
      changed line;
  (1) the tests FAIL against the buggy program;
  (2) the tests PASS when the reference is copied over the program (in a temporary copy of
      the suite; the suite itself is never modified);
  (3) the reference raises on none of INPUTS and gives the same result twice on each;
  (4) the program and the reference differ on at least one of INPUTS (a raise counts as a
      difference).
"""
import copy
import difflib
import importlib.util
import inspect
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib

sys.dont_write_bytecode = True

ROOT = os.path.dirname(os.path.abspath(__file__))
PY = sys.executable
PYTEST = [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:regrow", "-x", "--no-header"]


def load(path, modname):
    spec = importlib.util.spec_from_file_location(modname, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def split_ref(ref):
    path, _, func = ref.partition("::")
    return os.path.join(ROOT, path), func


def run_tests(tmp_root, tests):
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run(PYTEST + ["--rootdir", tmp_root] + tests, cwd=tmp_root, env=env,
                          capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout[-2000:] + proc.stderr[-2000:]


def call(fn, args):
    try:
        return ("ok", fn(*copy.deepcopy(args)))
    except Exception as exc:  # noqa: BLE001 - any raise is a result here
        return ("raise", type(exc).__name__)


def check_task(task, tmp_base):
    problems = []
    name = task["name"]
    tgt_path, tgt_func = split_ref(task["target"])
    ref_path, ref_func = split_ref(task["reference"])
    inp_path, inp_var = split_ref(task["inputs"])
    test_paths = [os.path.join(ROOT, t) for t in task["tests"]]

    # (0) structure
    for p in [tgt_path, ref_path, inp_path] + test_paths:
        if not os.path.exists(p):
            problems.append(f"missing {os.path.relpath(p, ROOT)}")
    if problems:
        return problems
    prog = load(tgt_path, f"_h2_prog_{name}")
    ref = load(ref_path, f"_h2_ref_{name}")
    inputs = getattr(load(inp_path, f"_h2_inp_{name}"), inp_var, None)
    bug_fn, ref_fn = getattr(prog, tgt_func, None), getattr(ref, ref_func, None)
    if bug_fn is None or ref_fn is None:
        return [f"function missing ({tgt_func} / {ref_func})"]
    if inspect.signature(bug_fn) != inspect.signature(ref_fn):
        problems.append("signatures differ")
    prog_lines = [ln for ln in open(tgt_path).read().splitlines() if ln.strip()]
    if not 3 <= len(prog_lines) <= 25:
        problems.append(f"program has {len(prog_lines)} non-blank lines")
    n_asserts = sum(open(p).read().count("assert ") for p in test_paths)
    if not 1 <= n_asserts <= 3:
        problems.append(f"{n_asserts} asserts in tests")
    if not isinstance(inputs, list) or not 20 <= len(inputs) <= 60 or not all(isinstance(a, tuple) for a in inputs):
        problems.append("INPUTS must be a list of 20-60 tuples")
        return problems
    diff = [ln for ln in difflib.unified_diff(open(ref_path).read().splitlines(), open(tgt_path).read().splitlines(),
                                                lineterm="", n=0) if ln[:1] in "+-" and ln[:3] not in ("+++", "---")]
    if len(diff) != 2:
        problems.append(f"program/reference differ in {len(diff)} diff lines (expected one changed line)")

    # (1) + (2) tests: buggy must fail, reference must pass (both in temporary copies of the suite)
    rel_tests = task["tests"]
    for label, use_ref in (("buggy", False), ("reference", True)):
        tmp_root = os.path.join(tmp_base, f"{name}_{label}")
        shutil.copytree(ROOT, tmp_root, ignore=shutil.ignore_patterns("__pycache__", "validate.py"))
        if use_ref:
            shutil.copyfile(ref_path, os.path.join(tmp_root, os.path.relpath(tgt_path, ROOT)))
        rc, out = run_tests(tmp_root, rel_tests)
        if use_ref and rc != 0:
            problems.append(f"tests do not pass on the reference (rc={rc}):\n{out}")
        if not use_ref and rc != 1:
            problems.append(f"tests do not fail on the buggy program (rc={rc}):\n{out}")
        shutil.rmtree(tmp_root, ignore_errors=True)

    # (3) reference total + deterministic on INPUTS; (4) buggy differs somewhere
    n_diff = 0
    for args in inputs:
        r1, r2 = call(ref_fn, args), call(ref_fn, args)
        if r1[0] == "raise":
            problems.append(f"reference raises {r1[1]} on {args!r}")
            continue
        if r1 != r2:
            problems.append(f"reference not deterministic on {args!r}")
        b = call(bug_fn, args)
        if b != r1 or type(b[1]) is not type(r1[1]):
            n_diff += 1
    if n_diff == 0:
        problems.append("buggy program equals the reference on every input")
    return problems, n_diff, len(inputs)


def main(argv):
    with open(os.path.join(ROOT, "manifest.toml"), "rb") as f:
        manifest = tomllib.load(f)
    assert manifest["suite"]["name"] == "heldout2", manifest["suite"]
    tasks = manifest["task"]
    names = [t["name"] for t in tasks]
    if len(names) != len(set(names)):
        print("DUPLICATE task names")
    if argv:
        tasks = [t for t in tasks if t["name"] in argv]
    bad = 0
    with tempfile.TemporaryDirectory(prefix="heldout2_validate_") as tmp_base:
        for task in tasks:
            res = check_task(task, tmp_base)
            if isinstance(res, list):
                problems, info = res, ""
            else:
                problems, n_diff, n_inp = res
                info = f"(buggy differs on {n_diff}/{n_inp} inputs)"
            if problems:
                bad += 1
                print(f"FAIL {task['name']}")
                for p in problems:
                    print("    " + p.replace("\n", "\n    "))
            else:
                print(f"ok   {task['name']:<22} {info}")
    print(f"\n{len(tasks) - bad}/{len(tasks)} tasks valid")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

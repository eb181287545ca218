"""The diff a fix is shown and delivered with, and the copy it is proven in, when the file moved on since the
function was loaded: made where write-back would write, never the file's new lines shown as what a fix replaces."""

from __future__ import annotations

import subprocess
from pathlib import Path

from regrow._checks._probe import prove_in_copy
from regrow._target._diff import unified_diff
from regrow.extend import Target

SOURCE = '''
def helper(x):
    return x * 2

def ratio(a, b):
    return a / b
'''
FIX = "def ratio(a, b):\n    return a / b if b else 0.0\n"


def _loaded(make_module) -> tuple[Target, Path]:
    mod = make_module(SOURCE)
    return Target.of(mod.ratio), Path(mod.__file__ or "")


def test_lines_added_above_since_load_the_diff_replaces_the_definitions_own_lines(make_module, tmp_path):
    target, path = _loaded(make_module)
    text = path.read_text(encoding="utf-8")
    edited = text.replace("def helper", "import math\n\nLIMIT = math.inf\n\ndef helper")
    path.write_text(edited, encoding="utf-8")
    diff = unified_diff(target, FIX)
    removed = [line for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    assert removed == ["-    return a / b"]  # the definition's line, not whatever now stands where it stood
    work = tmp_path / "applied"
    work.mkdir()
    (work / path.name).write_text(edited, encoding="utf-8")
    header = diff.splitlines(keepends=True)
    body = "".join([f"--- a/{path.name}\n", f"+++ b/{path.name}\n", *header[2:]])
    subprocess.run(["git", "apply", "-p1", "-"], input=body, text=True, cwd=work, check=True)
    assert (work / path.name).read_text(encoding="utf-8") == edited.replace("return a / b\n",
                                                                            "return a / b if b else 0.0\n")


def test_a_definition_edited_since_load_is_diffed_alone(make_module):
    target, path = _loaded(make_module)
    path.write_text(path.read_text(encoding="utf-8").replace("return a / b", "return a // b  # edited"),
                    encoding="utf-8")
    diff = unified_diff(target, FIX)
    assert diff.startswith(f"--- a/{target.module}.ratio\n+++ b/{target.module}.ratio\n")
    assert "edited" not in diff and "-    return a / b\n" in diff and "+    return a / b if b else 0.0\n" in diff


def test_a_file_left_as_loaded_is_diffed_as_a_file(make_module):
    target, path = _loaded(make_module)
    diff = unified_diff(target, FIX)
    assert diff.splitlines()[0].endswith(path.name) and "-    return a / b\n" in diff


def test_the_copy_a_fix_is_proven_in_refuses_a_definition_edited_since_load(make_module, tmp_path):
    target, path = _loaded(make_module)
    path.write_text(path.read_text(encoding="utf-8").replace("return a / b", "return a // b"), encoding="utf-8")
    proof = prove_in_copy(path.parent, target, FIX, ["test_nothing.py"])
    assert not proof.passed and "cannot put the fix" in proof.detail and "ratio" in proof.detail

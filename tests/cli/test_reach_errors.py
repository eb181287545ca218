"""A target that cannot be imported is bad input: ``regrow heal`` exits 2 with one clear line."""

from __future__ import annotations

from pathlib import Path

import pytest
from reach_projects import regrow

SYNTAX = b"def f(x):\n    return x\n\n\ndef g(x)\n    return x\n"
RAISES = b"def f(x):\n    return x\n\n\nraise RuntimeError('no config file')\n"
EXITS = b"import sys\n\nsys.exit(3)\n\n\ndef f(x):\n    return x\n"
UNDECODABLE = b"def f(x):\n    return '\xff\xfe'\n"
IMPORTS_IT = "from pkg.mod import f\n\n\ndef test_f():\n    assert f(1) == 2\n"
IMPORTS_NOTHING = "def test_other():\n    assert True\n"


def project(root: Path, module: bytes, tests: str) -> Path:
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "mod.py").write_bytes(module)
    (root / "tests").mkdir()
    (root / "tests" / "test_mod.py").write_text(tests)
    return root


@pytest.mark.parametrize("tests", [IMPORTS_IT, IMPORTS_NOTHING], ids=["imported-by-the-tests", "imported-by-regrow"])
@pytest.mark.parametrize(
    ("module", "target", "line"),
    [
        (SYNTAX, "pkg/mod.py::f", "regrow: error: cannot import pkg/mod.py: SyntaxError: expected ':' (line 5)"),
        (SYNTAX, "pkg.mod::f", "regrow: error: cannot import pkg.mod: SyntaxError: expected ':' (line 5)"),
        (RAISES, "pkg/mod.py::f", "regrow: error: cannot import pkg/mod.py: RuntimeError: no config file (line 5)"),
        (RAISES, "pkg.mod::f", "regrow: error: cannot import pkg.mod: RuntimeError: no config file (line 5)"),
        (EXITS, "pkg/mod.py::f", "regrow: error: cannot import pkg/mod.py: SystemExit: 3 (line 3)"),
        (UNDECODABLE, "pkg/mod.py::f",
         "regrow: error: cannot import pkg/mod.py: SyntaxError: (unicode error) 'utf-8' codec can't decode byte 0xff "
         "in position 0: invalid start byte (line 2)"),
    ],
    ids=["syntax-error", "syntax-error-dotted", "raises-at-import", "raises-at-import-dotted", "exits-at-import",
         "undecodable"],
)
def test_a_target_that_cannot_be_imported_exits_2_with_one_line(tmp_path: Path, module: bytes, target: str,
                                                                line: str, tests: str) -> None:
    root = project(tmp_path, module, tests)
    done = regrow(root, "heal", target, "--test", "tests/test_mod.py")
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.splitlines() == [line], done.stderr
    assert "Traceback" not in done.stdout + done.stderr


def test_a_folder_named_like_the_file_is_no_such_file(tmp_path: Path) -> None:
    root = project(tmp_path, b"def f(x):\n    return x\n", IMPORTS_NOTHING)
    (root / "pkg" / "other.py").mkdir()
    done = regrow(root, "heal", "pkg/other.py::f", "--test", "tests/test_mod.py")
    assert done.returncode == 2
    assert done.stderr.splitlines() == ["regrow: error: no such file: pkg/other.py"]


def test_a_broken_test_file_is_still_blamed_on_the_tests(tmp_path: Path) -> None:
    root = project(tmp_path, b"def f(x):\n    return x\n", "import not_a_module_anywhere\n")
    done = regrow(root, "heal", "pkg/mod.py::f", "--test", "tests/test_mod.py")
    assert done.returncode == 2
    assert len(done.stderr.splitlines()) == 1
    assert "cannot collect tests/test_mod.py" in done.stderr and "not_a_module_anywhere" in done.stderr

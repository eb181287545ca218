"""The `regrow heal` command, run as users run it: a subprocess in a project folder."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

BUGGY = '''\
def clamp(value, low, high):
    """Keep value inside [low, high]."""
    if value < low:
        return low
    if value > high:
        return low  # the bug: should return high
    return value
'''
TESTS = '''\
from shapes import clamp


def test_inside():
    assert clamp(5, 0, 10) == 5


def test_below():
    assert clamp(-1, 0, 10) == 0


def test_above():
    assert clamp(11, 0, 10) == 10
'''


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "shapes.py").write_text(BUGGY)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_shapes.py").write_text(TESTS)
    (tmp_path / "conftest.py").write_text("import sys, os\nsys.path.insert(0, os.path.dirname(__file__))\n")
    return tmp_path


def regrow(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "regrow", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=240)


def test_heal_prints_verdicts_and_diff_without_touching_the_file(project):
    done = regrow(project, "heal", "shapes.py::clamp", "--test", "tests/test_shapes.py::test_above",
                  "--test", "tests/test_shapes.py::test_below", "-v")
    assert done.returncode == 0, done.stderr
    assert "FAIL" in done.stdout and "PASS" in done.stdout
    assert "-        return low  # the bug: should return high" in done.stdout
    assert "+        return high  # the bug: should return high" in done.stdout
    assert (project / "shapes.py").read_text() == BUGGY
    assert not (project / ".regrow" / "backups").exists()


def test_apply_writes_back_with_a_backup(project):
    done = regrow(project, "heal", "shapes.py::clamp", "--test", "tests/test_shapes.py", "--apply")
    assert done.returncode == 0, done.stderr
    fixed = (project / "shapes.py").read_text()
    assert "        return high  # the bug" in fixed and '"""Keep value inside [low, high]."""' in fixed
    assert (project / ".regrow" / "backups" / "shapes.py").read_text() == BUGGY
    after = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "tests"], cwd=project,
                           capture_output=True, text=True, timeout=120)
    assert after.returncode == 0, after.stdout


def test_nothing_to_repair(project):
    done = regrow(project, "heal", "shapes.py::clamp", "--test", "tests/test_shapes.py::test_inside")
    assert done.returncode == 0 and "nothing to repair" in done.stdout


def test_no_fix_found_leaves_the_file(project):
    (project / "tests" / "test_shapes.py").write_text(TESTS + "\n\ndef test_impossible():\n"
                                                      "    assert clamp(1, 2, 3) == 'never'\n")
    done = regrow(project, "heal", "shapes.py::clamp", "--test", "tests/test_shapes.py::test_impossible",
                  "--apply", "--max-candidates", "30")
    assert done.returncode == 1 and "no fix" in done.stdout
    assert (project / "shapes.py").read_text() == BUGGY


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("shapes.py::nope", "--test", "tests/test_shapes.py"), "has no 'nope'"),
        (("missing.py::clamp", "--test", "tests/test_shapes.py"), "no such file"),
        (("shapes.py::clamp", "--test", "tests/test_missing.py"), "test file not found"),
        (("shapes.py::clamp", "--test", "tests/test_shapes.py::test_nonexistent"), "cannot collect"),
    ],
)
def test_bad_input_is_a_clear_error(project, args, message):
    done = regrow(project, "heal", *args)
    assert done.returncode == 2
    assert message in done.stderr
    assert (project / "shapes.py").read_text() == BUGGY


def test_class_method_target(project):
    (project / "shapes.py").write_text(textwrap.dedent('''\
        class Box:
            def area(self, w, h):
                return w * h + 1
    '''))
    (project / "tests" / "test_shapes.py").write_text(
        "from shapes import Box\n\n\ndef test_area():\n"
        "    assert Box().area(3, 4) == 12\n    assert Box().area(5, 2) == 10\n")
    done = regrow(project, "heal", "shapes.py::Box.area", "--test", "tests/test_shapes.py::test_area")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "+        return w * h" in done.stdout


HANGING = '''\
def digit_sum(n):
    total = 0
    while n > 0:
        total += n % 10
        n //= 1  # the bug: should be //= 10, so the loop never ends
    return total
'''
HANGING_TESTS = '''\
from digits import digit_sum


def test_zero():
    assert digit_sum(0) == 0


def test_many():
    assert digit_sum(1234) == 10
'''


def test_an_original_that_never_ends_is_stopped_localized_and_fixed(tmp_path):
    # The failing test loops forever: the probe stops it at --candidate-timeout, localization keeps the
    # partial trace, and candidates are judged with a limit from the passing test, not the hanging one.
    (tmp_path / "digits.py").write_text(HANGING)
    (tmp_path / "test_digits.py").write_text(HANGING_TESTS)
    done = regrow(tmp_path, "heal", "digits.py::digit_sum", "--test", "test_digits.py", "--candidate-timeout", "3",
                  "-v")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "test_digits.py::test_many did not finish in 3s" in done.stdout
    assert "+        n //= 10" in done.stdout
    failed = [line for line in done.stdout.splitlines() if " FAIL " in line]
    # no candidate was given the ceiling of 5 s a hanging check used to set
    assert failed and not any("after 5s" in line for line in failed), failed[:3]


def test_jobs_sets_the_workers_and_refuses_nonsense(project):
    done = regrow(project, "heal", "shapes.py::clamp", "--test", "tests/test_shapes.py", "--jobs", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "+        return high" in done.stdout
    bad = regrow(project, "heal", "shapes.py::clamp", "--test", "tests/test_shapes.py", "--jobs", "0")
    assert bad.returncode == 2 and "--jobs takes a number of workers, at least 1" in bad.stderr


def test_a_spent_budget_is_named_in_the_final_line(project):
    done = regrow(project, "heal", "shapes.py::clamp", "--test", "tests/test_shapes.py", "--max-candidates", "2")
    assert done.returncode == 1
    assert "candidate budget of 2 spent" in done.stdout, done.stdout


DECORATED = '''\
import functools


def logged(fn):
    @functools.wraps(fn)
    def inner(*args, **kwargs):
        return fn(*args, **kwargs)
    return inner


@logged
@logged
def clamp(value, low, high):
    """Keep value inside [low, high]."""
    if value < low:
        return low
    if value > high:
        return low  # the bug, on line 18 of the file
    return value


def fits(size, limit):
    return size > limit  # the bug: should be >=, on line 23 of the file
'''


def test_the_lines_reported_are_the_file_s_below_decorators_and_for_an_ambiguity(project):
    """The edit's line counts from the ``def``; the file's line was reported from the first decorator (two lines off
    here), and an ambiguity's candidates gave the line within the function."""
    (project / "shapes.py").write_text(DECORATED)
    (project / "tests" / "test_fits.py").write_text(
        "from shapes import fits\n\n\ndef test_fits():\n    assert fits(3, 3)\n    assert not fits(1, 3)\n")
    done = regrow(project, "heal", "shapes.py::clamp", "--test", "tests/test_shapes.py::test_above", "-q")
    assert done.returncode == 0, done.stderr
    assert "shapes.py:18" in done.stdout + done.stderr, (done.stdout, done.stderr)
    done = regrow(project, "heal", "shapes.py::fits", "--test", "tests/test_fits.py")
    assert done.returncode == 1 and "ambiguous" in done.stdout + done.stderr, (done.stdout, done.stderr)
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip().startswith("candidate ")]
    assert lines and all("shapes.py:23" in line and "at line " not in line for line in lines), lines


CACHED = '''\
import functools


@functools.cache
def discount(qty):
    if qty > 100:  # the bug: should be >=
        return 2
    return 0
'''


def test_a_cached_function_is_traced_and_compared_as_a_plain_one(tmp_path: Path) -> None:
    """The original's results, cached before the tracing child forked, answered the tests' calls there: no calls
    were recorded, so no candidates were compared, and a guess (``qty > 99`` or ``qty > 10`` passed the tests too)
    was installed where the plain function's repair abstains."""
    (tmp_path / "shop.py").write_text(CACHED)
    (tmp_path / "test_shop.py").write_text("from shop import discount\n\n\ndef test_discount():\n"
                                          "    assert discount(10) == 0\n    assert discount(100) == 2\n"
                                          "    assert discount(200) == 2\n")
    done = regrow(tmp_path, "heal", "shop.py::discount", "--test", "test_shop.py::test_discount", "-q")
    assert done.returncode == 1 and "ambiguous" in done.stdout + done.stderr, (done.stdout, done.stderr)


def test_a_test_that_hangs_on_the_original_gets_no_more_than_the_command_s_timeout(tmp_path: Path) -> None:
    """Each test's run on the original had the whole candidate timeout (10 s) whatever --timeout said, and the
    session's run of the original for the folders it writes had another: ``--timeout 3`` ran 22 s."""
    import re

    (tmp_path / "countdown.py").write_text("def count_down(n):\n    out = []\n    while n != 0:\n"
                                           "        out.append(n)\n        n -= 2\n    return out\n")
    (tmp_path / "test_countdown.py").write_text("from countdown import count_down\n\n\ndef test_odd():\n"
                                                "    assert count_down(3) == [3, 1]\n")
    done = regrow(tmp_path, "heal", "countdown.py::count_down", "--test", "test_countdown.py", "--timeout", "3",
                  "-v")
    assert done.returncode == 1, (done.stdout, done.stderr)
    said = re.search(r"test_odd did not finish in ([0-9.]+)s", done.stdout + done.stderr)
    # at most half of what is left of --timeout: the other half is the search's
    assert said is not None and float(said.group(1)) <= 3 / 2, (done.stdout, done.stderr)


def test_an_lru_cache_under_another_decorator_is_cleared_for_each_candidate(tmp_path: Path) -> None:
    """Under a functools.wraps decorator the cache kept the original's results across candidates: every candidate
    failed with the cached ``assert -1 == 5`` (the same function with lru_cache alone was fixed)."""
    (tmp_path / "mod.py").write_text("import functools\n\n\ndef deco(f):\n    @functools.wraps(f)\n"
                                     "    def w(*a, **k):\n        return f(*a, **k)\n    return w\n\n\n"
                                     "@deco\n@functools.lru_cache(maxsize=None)\ndef add(a, b):\n    return a - b\n")
    (tmp_path / "test_mod.py").write_text("from mod import add\n\n\ndef test_a():\n    assert add(2, 3) == 5\n\n\n"
                                          "def test_b():\n    assert add(0, 0) == 0\n")
    done = regrow(tmp_path, "heal", "mod.py::add", "--test", "test_mod.py", "-q")
    assert done.returncode == 0 and "fixed by engine" in done.stdout, (done.stdout, done.stderr)

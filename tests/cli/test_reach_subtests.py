"""unittest ``subTest`` (and the ``subtests`` fixture): a test whose failures are all in subtests fails.

pytest reports each failing subtest on its own while the test's own report passes; regrow's runner
must count the test as failing, with the failing subtest's message as the reason.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from reach_projects import copy_project, pytest_run, regrow

from regrow._checks._pytest_runner import Suite

NODE = "tests/test_convert.py::TestToFahrenheit::test_landmarks"


def test_the_project_fails_only_in_subtests(tmp_path: Path) -> None:
    project = copy_project("unittest_subtests", tmp_path)
    done = pytest_run(project, "-rA")
    assert f"PASSED {NODE}" in done.stdout  # the test's own report
    assert "SUBFAILED[landmark] (celsius=0)" in done.stdout, done.stdout


def test_regrow_heal_sees_subtest_failures_and_fixes_them(tmp_path: Path) -> None:
    project = copy_project("unittest_subtests", tmp_path)
    done = regrow(project, "heal", "temperature/convert.py::to_fahrenheit", "--test", "tests", "--apply")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "nothing to repair" not in done.stdout
    assert (f"regrow: failing: {NODE} [landmark] (celsius=0) failed: AssertionError: -32.0 != 32"
            in done.stdout), done.stdout
    assert "+    return celsius * 9 / 5 + 32" in done.stdout
    assert pytest_run(project).returncode == 0


def test_the_runner_reports_the_failing_subtest(tmp_path: Path, monkeypatch) -> None:
    project = copy_project("unittest_subtests", tmp_path)
    monkeypatch.chdir(project)
    monkeypatch.syspath_prepend(str(project))
    suite = Suite(["tests/test_convert.py"], project)
    try:
        result = suite.run(NODE)
        assert not result.passed
        assert result.reason.startswith(f"{NODE} [landmark] (celsius=0) failed: AssertionError: -32.0 != 32")
        assert result.location is not None
        assert suite.run("tests/test_convert.py::TestToFahrenheit::test_type").passed
        # The reports of one run do not leak into the next test's result.
        assert suite.run("tests/test_convert.py::TestToFahrenheit::test_type").passed
    finally:
        suite.close()
        import sys

        sys.modules.pop("temperature.convert", None)
        sys.modules.pop("temperature", None)


def test_the_subtests_fixture_is_seen_too(tmp_path: Path) -> None:
    project = copy_project("unittest_subtests", tmp_path)
    (project / "tests" / "test_fixture.py").write_text(textwrap.dedent('''\
        from temperature.convert import to_fahrenheit


        def test_boiling_and_freezing(subtests):
            for celsius, fahrenheit in [(100, 212), (0, 32)]:
                with subtests.test(msg="point", celsius=celsius):
                    assert to_fahrenheit(celsius) == fahrenheit
    '''))
    done = regrow(project, "heal", "temperature/convert.py::to_fahrenheit", "--test", "tests/test_fixture.py")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "tests/test_fixture.py::test_boiling_and_freezing [point] (celsius=100) failed" in done.stdout
    assert "+    return celsius * 9 / 5 + 32" in done.stdout


def test_pytest_heal_repairs_a_target_of_subtests(tmp_path: Path) -> None:
    project = copy_project("unittest_subtests", tmp_path)
    test_file = project / "tests" / "test_convert.py"
    test_file.write_text(test_file.read_text().replace(
        "class TestToFahrenheit", 'import pytest\n\n\n@pytest.mark.heal(target="temperature.convert.to_fahrenheit")\n'
        "class TestToFahrenheit"))
    done = pytest_run(project, "--heal")
    assert "temperature.convert.to_fahrenheit: fixed" in done.stdout, done.stdout
    assert "+    return celsius * 9 / 5 + 32" in done.stdout

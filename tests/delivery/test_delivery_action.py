"""The GitHub Action (action.yml), its steps run here as a runner runs them: bash, the expressions
filled in, GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files; against the fixture repository (with a bare
remote) and the loopback GitHub server."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from github_server import GitHubServer
from test_delivery_cli import MARKED, make_project
from test_git import git

ACTION = Path(__file__).resolve().parents[2] / "action.yml"
_EXPRESSION = re.compile(r"\$\{\{\s*(.+?)\s*\}\}")


class Runner:
    """Runs a composite action's steps the way a runner does, for the expressions action.yml uses."""

    def __init__(self, workspace: Path, temp: Path, inputs: dict[str, str], env: dict[str, str]) -> None:
        self.action: dict[str, Any] = yaml.safe_load(ACTION.read_text())
        defaults = {name: str(spec.get("default", "")) for name, spec in self.action["inputs"].items()}
        assert set(inputs) <= set(defaults), "no such input"
        self.context = {"inputs": {**defaults, **inputs}, "github": {"action_path": str(ACTION.parent)},
                        "runner": {"temp": str(temp)}, "steps": {}}
        self.workspace, self.temp, self.env = workspace, temp, env
        self.summary = temp / "summary.md"
        self.summary.write_text("")

    def value(self, expression: str) -> str:
        left, _, right = expression.partition("==")
        if right:  # the one comparison action.yml makes: inputs.x == 'y'
            return "true" if self.value(left.strip()) == right.strip().strip("'") else "false"
        found: Any = self.context
        for part in expression.split("."):
            found = found.get(part, "") if isinstance(found, dict) else ""
        return str(found)

    def fill(self, text: str) -> str:
        return _EXPRESSION.sub(lambda m: self.value(m.group(1)), text)

    def run(self) -> list[tuple[str, int, str]]:
        """Each step's name, exit status and output (a step whose ``if`` is false is left out)."""
        done = []
        for step in self.action["runs"]["steps"]:
            condition = step.get("if")
            if condition is not None and self.value(condition) != "true":
                continue
            output = self.temp / "output.txt"
            output.write_text("")
            env = {**self.env, **{k: self.fill(str(v)) for k, v in step.get("env", {}).items()},
                   "GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(self.summary)}
            cwd = self.workspace / self.fill(step.get("working-directory", "."))
            assert step["shell"] == "bash"
            proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=cwd,
                                  env=env, capture_output=True, text=True, timeout=300)
            outputs = dict(line.split("=", 1) for line in output.read_text().splitlines() if "=" in line)
            if "id" in step:
                self.context["steps"][step["id"]] = {"outputs": outputs}
            done.append((step["name"], proc.returncode, proc.stdout + proc.stderr))
        return done


def environment(server: GitHubServer | None) -> dict[str, str]:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "PYTHONDONTWRITEBYTECODE": "1", "GITHUB_REPOSITORY": "acme/shop"}
    env.pop("GITHUB_TOKEN", None)
    if server is not None:
        env["GITHUB_API_URL"] = server.url
    return env


def project(tmp_path: Path) -> Path:
    work = make_project(tmp_path, MARKED)
    (work / "tests" / "test_shapes.py").rename(work / "test_shapes.py")
    git(work, "add", "-A")
    git(work, "-c", "user.name=Dev", "-c", "user.email=dev@example.test", "commit", "-qm", "tests at the top")
    git(work, "push", "-q", "origin", "main")  # a runner checks out a commit that is on the remote
    return work


def test_with_a_token_each_fix_becomes_a_draft_pull_request_and_each_failure_an_issue(tmp_path):
    work = project(tmp_path)
    (work / "limits.py").write_text("def cap(x):\n    return x\n")
    (work / "test_limits.py").write_text("import pytest\nfrom limits import cap\n\n\n"
                                         "@pytest.mark.heal(target='limits.cap')\ndef test_cap():\n"
                                         "    assert cap(1) == 'never'\n")
    git(work, "add", "-A")
    git(work, "-c", "user.name=Dev", "-c", "user.email=dev@example.test", "commit", "-qm", "limits")
    git(work, "push", "-q", "origin", "main")
    with GitHubServer() as server:
        inputs = {"token": server.token, "install": "false", "issues": "true", "issue-detail": "redacted"}
        runner = Runner(work, tmp_path, inputs, environment(server))
        steps = runner.run()
    names = [name for name, _, _ in steps]
    assert names == ["Run the tests with pytest --heal", "Deliver the fixes", "Keep the test run's result"]
    assert [code for _, code, _ in steps] == [0, 0, 1], steps  # the run stays red: its tests failed
    [pull] = server.pulls
    assert pull["draft"] and pull["base"]["ref"] == "main" and "regrow repaired `shapes.clamp`" in pull["body"]
    assert "return high" in git(tmp_path / "remote.git", "show", f"{pull['head']['ref']}:shapes.py")
    [issue] = [issue for issue in server.issues if "pull_request" not in issue]
    assert issue["title"] == "regrow could not repair cap (AssertionError)" and "Ledger (redacted)" in issue["body"]
    summary = runner.summary.read_text()
    assert f"opened: {pull['html_url']}" in summary and f"opened: {issue['html_url']}" in summary
    assert git(work, "status", "--porcelain") == ""  # the checkout is as it was


def test_without_a_token_the_patch_goes_to_the_job_summary(tmp_path):
    work = project(tmp_path)
    runner = Runner(work, tmp_path, {"install": "false"}, environment(None))
    steps = runner.run()
    assert [code for _, code, _ in steps] == [0, 0, 1], steps
    summary = runner.summary.read_text()
    assert "### Fixed `clamp`" in summary and "+        return high" in summary and "```diff" in summary
    assert git(tmp_path / "remote.git", "branch", "--list", "regrow/*") == ""


def test_pytest_args_are_split_as_a_shell_splits_them(tmp_path):
    work = project(tmp_path)
    inputs = {"install": "false", "pytest-args": """-k "above or inside" 'test_shapes.py'"""}
    steps = Runner(work, tmp_path, inputs, environment(None)).run()
    assert [code for _, code, _ in steps] == [0, 0, 1], steps  # -k got one word: the tests ran and failed
    assert "2 deselected" not in steps[0][2] and "### Fixed `clamp`" in (tmp_path / "summary.md").read_text()
    unclosed = Runner(work, tmp_path, {"install": "false", "pytest-args": '-k "above'}, environment(None)).run()
    assert unclosed[0][1] == 2 and "cannot be split as a shell would" in unclosed[0][2], unclosed

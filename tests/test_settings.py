"""One configuration: [tool.regrow] and REGROW_* into a typed, frozen object; keyword > environment > file > default."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

import regrow
from regrow import _settings
from regrow._evidence._disclosure import configure_evidence, evidence_policy
from regrow._heal._options import make_options
from regrow._result import Budget
from regrow._settings import FIELDS, ConfigError, Settings, load, reference

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder to run in, with no REGROW_* setting in the environment."""
    for name in FIELDS:
        monkeypatch.delenv(_settings.env_name(name), raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def pyproject(folder: Path, table: str) -> Path:
    path = folder / "pyproject.toml"
    path.write_text(f'[project]\nname = "shop"\n\n[tool.regrow]\n{table}\n')
    return path


def test_without_configuration_the_defaults_are_todays(project):
    assert load(project, {}) == Settings()
    options = make_options()
    assert options.budget == Budget() and options.cooldown == 300.0 and options.write_back == "off"
    assert (options.on_failure, options.record, options.environ, options.store, options.sandbox) == \
        ("raise", 0, True, None, None)


def test_the_object_is_typed_and_frozen():
    settings = Settings()
    assert not hasattr(settings, "__dict__")  # slots
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.timeout = 1.0  # type: ignore[misc]


def test_keyword_over_environment_over_file_over_default(project, monkeypatch):
    pyproject(project, "timeout = 7\ncandidate_timeout = 3\nmax-candidates = 50\ncooldown = 9")
    monkeypatch.setenv("REGROW_TIMEOUT", "8")
    monkeypatch.setenv("REGROW_CANDIDATE_TIMEOUT", "4")
    budget = make_options(candidate_timeout=5).budget
    assert budget.candidate_timeout == 5.0  # the keyword
    assert budget.timeout == 8.0  # the environment over the file
    assert budget.max_candidates == 50  # the file over the default
    assert budget.max_attempts == 3  # the default
    assert make_options().cooldown == 9.0


def test_the_file_is_found_from_the_current_folder_upwards(project):
    pyproject(project, 'write_back = "patch"\nenviron = ["APP_MODE"]')
    (project / "src" / "shop").mkdir(parents=True)
    os.chdir(project / "src" / "shop")
    options = make_options()
    assert options.write_back == "patch" and options.environ == ("APP_MODE",)


def test_the_decorator_takes_the_configuration(project, monkeypatch, make_module):
    monkeypatch.setenv("REGROW_MAX_CANDIDATES", "12")
    monkeypatch.setenv("REGROW_SANDBOX", "inprocess")
    mod = make_module("import regrow\n\n@regrow.heal(timeout=4)\ndef double(n):\n    return n * 2\n")
    options = regrow.state(mod.double).options
    assert (options.budget.max_candidates, options.budget.timeout) == (12, 4.0)
    assert type(options.sandbox).__name__ == "InProcessSandbox"


def test_a_changed_environment_is_read_again(project, monkeypatch):
    monkeypatch.setenv("REGROW_RECORD", "2")
    assert make_options().record == 2
    monkeypatch.setenv("REGROW_RECORD", "5")
    assert make_options().record == 5


def test_the_environment_spells_booleans_and_lists(project):
    found = load(project, {"REGROW_ALLOW_BLIND": "yes", "REGROW_ENVIRON": "A, B", "REGROW_EVIDENCE_FRAMES": "0",
                           "REGROW_JOBS": "3", "REGROW_MODEL": "", "REGROW_DISABLE": "1", "REGROW_WAIT": "0"})
    assert (found.allow_blind, found.environ, found.evidence_frames, found.jobs, found.model, found.wait) == \
        (True, ("A", "B"), False, 3, None, 0.0)
    assert load(project, {"REGROW_ENVIRON": "false"}).environ is False


BAD_VALUES = {
    "model": "1", "base_url": "false", "max_candidates": "0", "max_attempts": "-1", "timeout": "0",
    "candidate_timeout": '"soon"', "jobs": "1.5", "sandbox": '"pool"', "store": "[]", "write_back": '"yes"',
    "environ": '"HOME"', "on_failure": '"ignore"', "cooldown": "-1", "record": "true", "allow_blind": '"yes"',
    "wait": "inf", "evidence_env_allowlist": '"HOME"', "evidence_frames": "1", "evidence_value_limit": "10",
    "evidence_redact_names": '[""]', "evidence_redact_values": "[1]",
}


@pytest.mark.parametrize("key", [name for name in FIELDS if not FIELDS[name].metadata["secret"]])
def test_every_bad_value_in_the_file_is_an_error_naming_its_key(project, key):
    assert key in BAD_VALUES, "every setting needs a bad value here"
    pyproject(project, f"{key} = {BAD_VALUES[key]}")
    with pytest.raises(ConfigError, match=rf"pyproject.toml \[tool.regrow\] {key}: must be "):
        make_options()


BAD_ENV = {
    "max_candidates": "many", "max_attempts": "0", "timeout": "soon", "candidate_timeout": "-2", "jobs": "0",
    "sandbox": "pool", "write_back": "always", "on_failure": "ignore", "cooldown": "nan", "record": "-3",
    "allow_blind": "maybe", "wait": "x", "evidence_frames": "sometimes", "evidence_value_limit": "5",
}


@pytest.mark.parametrize("key", sorted(BAD_ENV))
def test_every_bad_value_in_the_environment_is_an_error_naming_the_variable(project, monkeypatch, key):
    monkeypatch.setenv(_settings.env_name(key), BAD_ENV[key])
    with pytest.raises(ConfigError, match=rf"^{_settings.env_name(key)}: must be .*, not '{BAD_ENV[key]}'$"):
        make_options()


def test_an_unknown_key_is_an_error_with_the_nearest_name(project):
    pyproject(project, "max_candidate = 5")
    with pytest.raises(ConfigError, match=r"unknown key 'max_candidate' in \[tool.regrow\] \(did you mean "
                                          r"'max_candidates'\?\)"):
        make_options()
    pyproject(project, "colour = 1")
    with pytest.raises(ConfigError, match=r"unknown key .colour.*the keys: model, base_url"):
        make_options()


def test_a_secret_in_the_file_is_refused_and_never_shown(project, monkeypatch):
    pyproject(project, 'api_key = "sk-live-123"')
    with pytest.raises(ConfigError, match="api_key is a secret, never read from a file: set REGROW_API_KEY") as info:
        make_options()
    assert "sk-live" not in str(info.value)


def test_broken_toml_and_a_table_are_errors(project):
    (project / "pyproject.toml").write_text("[tool.regrow]\ntimeout = \n")
    with pytest.raises(ConfigError, match="cannot read it as TOML"):
        make_options()
    (project / "pyproject.toml").write_text("[tool]\nregrow = 3\n")
    with pytest.raises(ConfigError, match=r"\[tool.regrow\] must be a table"):
        make_options()
    pyproject(project, "[tool.regrow.budget]\ntimeout = 3")
    with pytest.raises(ConfigError, match="budget"):
        make_options()


def test_the_evidence_settings_become_the_processs_policy(project, monkeypatch):
    before = evidence_policy()
    try:
        monkeypatch.setenv("REGROW_EVIDENCE_ENV_ALLOWLIST", "APP_MODE")
        monkeypatch.setenv("REGROW_EVIDENCE_FRAMES", "true")
        make_options()
        assert evidence_policy().env_allowlist == ("APP_MODE",) and evidence_policy().frames is True
    finally:
        configure_evidence(before)


def test_the_command_exits_2_with_one_line_naming_the_key(project):
    pyproject(project, "max_candidates = 0")
    (project / "shop.py").write_text("def f():\n    return 1\n")
    (project / "test_shop.py").write_text("from shop import f\n\ndef test_f():\n    assert f() == 2\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run([sys.executable, "-m", "regrow", "heal", "shop.py::f", "--test", "test_shop.py"],
                          cwd=project, capture_output=True, text=True, timeout=240, env=env)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"regrow: error: {project / 'pyproject.toml'} [tool.regrow] max_candidates: must be an integer of at least "
        "1, not 0"]


def test_the_reference_page_is_generated_from_the_object():
    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert page == reference(), "docs/configuration.md is out of date: PYTHONPATH=src python " \
                                "scripts/configuration-reference.py"
    for name in FIELDS:
        assert f"`{_settings.env_name(name)}`" in page


def product(a, b):
    return a * b - 1  # wrong, and nothing the engine tries makes it right


def check_sum(f):
    assert f(2, 3) == 5 and f(4, 1) == 5 and f(0, 0) == 0


def test_repair_takes_the_configuration_for_what_it_is_not_given(project, monkeypatch):
    monkeypatch.setenv("REGROW_MAX_CANDIDATES", "3")
    limited = regrow.repair(product, (2, 3), tests=[check_sum], sandbox="inprocess", install=False)
    assert limited.screened == 3 and "candidate budget of 3 spent" in limited.reason
    given = regrow.repair(product, (2, 3), tests=[check_sum], sandbox="inprocess", install=False, max_candidates=5)
    assert given.screened == 5 and "candidate budget of 5 spent" in given.reason


def test_the_live_service_policy_comes_from_the_configuration(project, monkeypatch):
    from regrow.web import WSGIMiddleware

    pyproject(project, "allow_blind = true\nwait = 0.5")
    (project / "shop_settings").mkdir()
    (project / "shop_settings" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(project))
    watcher = regrow.watch("shop_settings")
    try:
        assert watcher.worker.allow_blind is True
    finally:
        regrow.unwatch()
    assert WSGIMiddleware(lambda environ, start: [], "shop").wait == 0.5
    assert WSGIMiddleware(lambda environ, start: [], "shop", wait=2.0).wait == 2.0


def test_a_malformed_model_in_the_configuration_is_an_error_naming_it(project, monkeypatch):
    monkeypatch.setenv("REGROW_MODEL", "gpt-5")
    with pytest.raises(ConfigError, match=r"^model \(REGROW_MODEL or \[tool.regrow\] model\): model 'gpt-5' must "
                                          r"be 'provider:model'"):
        make_options()
    with pytest.raises(ValueError, match="must be 'provider:model'") as given:
        make_options(model="gpt-5")  # given as a keyword: the keyword's own error, as before
    assert not isinstance(given.value, ConfigError)

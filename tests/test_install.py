"""``heal(install_missing=True, allow_install=...)``: a missing module installed into the active venv.

pip really runs, with no network: the wheel of the fixture package ``tests/projects/tinyfmt`` is
packed by the test into a local folder that pip reads with ``--no-index --find-links`` (through
pip's own environment variables, as a user's pip.conf would set them), and every install happens
in a throwaway venv the test creates, so the project's venv never changes.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import sqlite3
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

import regrow
from regrow._heal._options import check_allowlist

SRC = Path(regrow.__file__).resolve().parent.parent
PACKAGE = Path(__file__).parent / "projects" / "tinyfmt" / "tinyfmt"


def build_wheel(folder: Path) -> Path:
    """tinyfmt-1.0.0-py3-none-any.whl from the fixture package, with its metadata and RECORD."""
    folder.mkdir(parents=True, exist_ok=True)
    info = "tinyfmt-1.0.0.dist-info"
    files = {f"tinyfmt/{path.name}": path.read_bytes() for path in sorted(PACKAGE.glob("*.py"))}
    files[f"{info}/METADATA"] = b"Metadata-Version: 2.1\nName: tinyfmt\nVersion: 1.0.0\n"
    files[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: regrow-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = [f"{name},sha256={_digest(data)},{len(data)}" for name, data in files.items()]
    files[f"{info}/RECORD"] = ("\n".join([*record, f"{info}/RECORD,,"]) + "\n").encode()
    wheel = folder / "tinyfmt-1.0.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return wheel


def _digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


@pytest.fixture
def venv(tmp_path: Path) -> Path:
    """A throwaway venv (with pip, from ensurepip: offline) where regrow imports from this checkout."""
    root = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", str(root)], check=True, capture_output=True, timeout=240)
    python = root / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    (Path(site) / "regrow-checkout.pth").write_text(f"{SRC}\n")
    return root


SCRIPT = '''\
import json, sys
import regrow

events = []
options = dict(install_missing=True, allow_install={"tinyfmt": "tinyfmt==1.0.0"}, store=sys.argv[1],
               on_event=lambda event: events.append([event.type, event.message]), proposers=[])


@regrow.heal(**options)
def shout(text):
    import tinyfmt
    return tinyfmt.shout(text)


@regrow.heal(**options)
def colours():
    import tinycolour  # not in the allowlist
    return tinycolour.RED


report = {"value": shout("hi")}
try:
    colours()
except ModuleNotFoundError as exc:
    report["refused"] = regrow.ledger_of(exc) or "no ledger", exc.name
report["again"] = shout("ok")
report["events"] = events
report["results"] = [[r.ok, r.reason] for r in regrow.state(shout).results + regrow.state(colours).results]
import tinyfmt
report["from"] = tinyfmt.__file__
print(json.dumps(report))
'''


def run(python: Path, script: str, tmp_path: Path, wheels: Path | None, *args: str,
        **env: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(script))
    environ = {key: value for key, value in os.environ.items() if not key.startswith(("PIP_", "VIRTUAL_ENV"))}
    environ.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=str(wheels or tmp_path / "nothing"), PYTHONPATH=str(SRC), **env)
    return subprocess.run([str(python), str(path), *args], capture_output=True, text=True, timeout=240, env=environ,
                          cwd=tmp_path)


def test_installs_the_allowlisted_module_into_the_venv_only_and_runs_the_call_again(venv, tmp_path):
    wheels = tmp_path / "wheels"
    build_wheel(wheels)
    store, userbase = tmp_path / "ledger.sqlite", tmp_path / "userbase"
    # PIP_USER=1 in the environment must not make it a --user install.
    done = run(venv / "bin" / "python", SCRIPT, tmp_path, wheels, str(store), PIP_USER="1",
               PYTHONUSERBASE=str(userbase))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["value"] == "HI!" and report["again"] == "OK!"
    assert Path(report["from"]).resolve().is_relative_to(venv.resolve())
    assert not userbase.exists()
    installed = [message for kind, message in report["events"] if kind == "module_installed"]
    assert len(installed) == 1 and "installed tinyfmt==1.0.0 into" in installed[0]
    refused = [message for kind, message in report["events"] if kind == "install_refused"]
    assert refused == ["the missing module 'tinycolour' is not in allow_install: not installed"]
    assert report["refused"][1] == "tinycolour"
    assert [ok for ok, _ in report["results"]][:2] == [True, False]
    with contextlib.closing(sqlite3.connect(store)) as db:  # closed: 3.13 warns of an unclosed connection at its GC
        reasons = [row[0] for row in db.execute("SELECT reason FROM sessions WHERE qualname = 'shout'")]
    assert len(reasons) == 1 and reasons[0].startswith("installed tinyfmt==1.0.0 into")
    # The project's venv is as it was (by its metadata: an import could find the fixture folder
    # tests/projects/tinyfmt as a namespace package once another test put tests/projects on sys.path).
    with pytest.raises(importlib.metadata.PackageNotFoundError):
        importlib.metadata.distribution("tinyfmt")


def test_a_failed_install_is_not_retried_and_the_original_error_propagates(venv, tmp_path):
    # The folder holds no wheel: pip fails, the call raises the user's own ModuleNotFoundError.
    done = run(venv / "bin" / "python", SCRIPT, tmp_path, tmp_path / "empty", str(tmp_path / "ledger.sqlite"))
    assert done.returncode == 1
    assert "ModuleNotFoundError: No module named 'tinyfmt'" in done.stderr
    assert "pip install tinyfmt==1.0.0 failed" in done.stderr


def test_refused_outside_a_virtual_environment(tmp_path):
    base = Path(sys.base_prefix) / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    if not base.exists() or sys.base_prefix == sys.prefix:
        pytest.fail(f"the base interpreter {base} of this venv is needed for this test")
    wheels = tmp_path / "wheels"
    build_wheel(wheels)
    done = run(base, SCRIPT, tmp_path, wheels, str(tmp_path / "ledger.sqlite"))
    assert done.returncode == 1
    assert "not in a virtual environment" in done.stderr
    assert "tinyfmt==1.0.0 is installed into a venv only" in done.stderr
    assert "ModuleNotFoundError: No module named 'tinyfmt'" in done.stderr


def test_the_time_limit_stops_pip(venv, tmp_path):
    wheels = tmp_path / "wheels"
    build_wheel(wheels)
    script = '''\
        from regrow._heal._missing import install_missing
        from regrow._heal._options import make_options
        options = make_options(
            verify=None, tests=(), proposers=[], model=None, sandbox="inprocess", max_candidates=1, max_attempts=1,
            timeout=1, candidate_timeout=1, on_failure="raise", on_event=None, cooldown=0, store=None,
            install_missing=True, allow_install={"tinyfmt": "tinyfmt==1.0.0"})
        result = install_missing(ModuleNotFoundError("no", name="tinyfmt"), "f", options, set(), timeout=0.05)
        print(result.ok, result.reason)
        import importlib.util
        print(importlib.util.find_spec("tinyfmt"))
    '''
    done = run(venv / "bin" / "python", script, tmp_path, wheels)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["False pip install tinyfmt==1.0.0 did not finish within 0.05s: stopped", "None"]


@pytest.mark.parametrize("allow", [{"yaml": "PyYAML>=6"}, {"yaml": "--index-url=http://evil/ PyYAML==6.0.2"},
                                   {"yaml": "PyYAML"}, {"not a name": "x==1"}, {"yaml": "https://x/y.whl"}])
def test_the_allowlist_holds_pinned_requirements_only(allow):
    with pytest.raises(ValueError, match="allow_install"):
        regrow.heal(install_missing=True, allow_install=allow)


def test_install_missing_needs_an_allowlist_and_is_off_by_default():
    with pytest.raises(ValueError, match="install_missing=True needs allow_install"):
        regrow.heal(install_missing=True)
    assert check_allowlist({"yaml": "PyYAML[libyaml]==6.0.2"}, True) == {"yaml": "PyYAML[libyaml]==6.0.2"}
    EVENTS.clear()
    with pytest.raises(ModuleNotFoundError):
        shout_unopted("hi")
    assert all("install" not in result.reason for result in regrow.state(shout_unopted).results)
    assert EVENTS and not [event for event in EVENTS if "install" in event.type]


EVENTS: list[regrow.Event] = []


@regrow.heal(sandbox="inprocess", proposers=[], allow_install={"regrow_absent_fixture": "tinyfmt==1.0.0"},
             on_event=EVENTS.append)
def shout_unopted(text: str) -> str:
    import regrow_absent_fixture  # type: ignore[import-not-found]  # a name no folder on any sys.path has

    return str(regrow_absent_fixture.shout(text))

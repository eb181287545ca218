"""Secrets are gone from a sandboxed child, not hidden: nothing of the host's environment block is left.

The host runs in a process of its own, started with the secrets in its environment, so they sit in
the environment block the kernel shows as ``/proc/<pid>/environ``. The detector is outside the child:
the host reads its child's ``/proc/<pid>/environ`` while the child waits. Inside, the child runs with
an audit hook that allows everything (as after a candidate got around it) and reports what it can
read: ``/proc/self/environ``, ``os.environ`` and its bytes dict, libc's ``getenv``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from regrow._redact import is_secret_name, is_secret_variable, redact_text
from regrow._sandbox import _guard, _seccomp

linux = pytest.mark.skipif(sys.platform != "linux" or _seccomp.machine() is None, reason="Linux guards")

PEM = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
SECRETS = {  # name -> value: each is a secret by its name, its value, or both
    "OPENAI_API_KEY": "sk-proj-regrowtest0123456789abcdef",
    "ANTHROPIC_API_KEY": "sk-ant-regrowtest0123456789",
    "GITHUB_TOKEN": "ghp_regrowtest0123456789abcdefghijklmn",
    "GH_ENTERPRISE_HOST_X": "regrow-gh-value-1",
    "AWS_SECRET_ACCESS_KEY": "regrow-aws-value-2",
    "AWS_PROFILE_X": "regrow-aws-value-3",
    "GOOGLE_APPLICATION_CREDENTIALS": "/regrow/google-value-4.json",
    "AZURE_CLIENT_ID": "regrow-azure-value-5",
    "STRIPE_KEY": "regrow-stripe-value-6",
    "SLACK_BOT_TOKEN": "regrow-slack-value-7",
    "APP_SECRET": "regrow-secret-value-8",
    "SMTP_PASS": "regrow-pass-value-9",
    "MYSQL_PWD": "regrow-mysql-value-10",
    "DB_PASSWORD_PLAIN": "regrow-password-value-11",
    "DATABASE_URL": "postgres://app@db/regrow-dburl-value-12",
    "CACHE": "redis://:regrow-redis-value-13@cache:6379/0",
    "UPSTREAM": "https://bot:regrow-url-value-14@example.org/x",
    "DEPLOY": PEM,
    "SESSION_ID_X": JWT,
    "NOTE_A": "sk-regrowvalueshape15abcdefghij",
    "NOTE_B": "ghp_regrowvalueshape16abcdefghijklmn",
    "NOTE_C": "xoxb-regrow-value-17-abcdefghij",
    "NOTE_D": "xoxp-regrow-value-18-abcdefghij",
    "NOTE_E": "AKIAREGROWVALUE19XYZ",
}
PLAIN = {"REGROW_PLAIN_SENTINEL": "plain-and-visible", "LANG": "C.UTF-8", "PWD": "/srv/app"}


@pytest.mark.parametrize(("name", "value"), sorted(SECRETS.items()))
def test_every_secret_shape_is_recognised(name: str, value: str) -> None:
    assert _guard.is_secret(name, value)


@pytest.mark.parametrize("name", ["HOME", "PATH", "LANG", "PWD", "OLDPWD", "SHELL", "TERM", "USER", "TZ",
                                  "PYTHONPATH", "VIRTUAL_ENV", "REGROW_PLAIN_SENTINEL"])
def test_ordinary_variables_stay(name: str) -> None:
    assert not _guard.is_secret(name, "/usr/local/bin:/usr/bin")


def test_the_redaction_of_evidence_uses_the_same_rules() -> None:
    for name in ("OPENAI_API_KEY", "DB_PASS", "MYSQL_PWD", "AWS_REGION", "GITHUB_ACTOR", "STRIPE_KEY", "DATABASE_URL"):
        assert is_secret_name(name), name
    for name in ("sort_key", "author", "max_tokens", "MAX_TOKENS", "bypass", "passenger"):
        assert not is_secret_name(name), name
    assert is_secret_name("db_pass")
    for value in [v for v in SECRETS.values() if v.startswith(("sk-", "ghp_", "xox", "AKIA", "eyJ", "-----"))]:
        assert value not in redact_text(f"the call failed with {value} in it"), value
    assert "regrow-redis-value-13" not in redact_text("connect to redis://:regrow-redis-value-13@cache:6379/0")
    assert is_secret_variable("CACHE", SECRETS["CACHE"]) and not is_secret_variable("CACHE", "redis://cache:6379/0")


_HOST = textwrap.dedent('''
    import ctypes, glob, json, os, posix, sys, threading, time
    sys.path.insert(0, sys.argv[1])
    from regrow._sandbox import ForkSandbox, Limits, _guard

    _guard.make_audit_hook = lambda *args: (lambda event, arguments: None)  # as if a candidate got around it
    _guard._prebuilt.cache_clear()
    box = ForkSandbox(Limits(timeout=10))
    root = box._forker._root

    def job():
        libc = ctypes.CDLL(None)
        libc.getenv.restype = ctypes.c_char_p
        with open(os.path.join(os.getcwd(), "pid"), "w") as out:
            out.write(str(os.getpid()))
        time.sleep(1.0)  # the host reads /proc/<pid>/environ meanwhile
        with open("/proc/self/environ", "rb") as source:
            block = source.read()
        names = json.loads(sys.argv[2])
        return {"block": block.decode("latin-1"), "environ": dict(os.environ),
                "posix": {k.decode("latin-1"): v.decode("latin-1") for k, v in posix.environ.items()},
                "getenv": {name: (libc.getenv(name.encode()) or b"").decode("latin-1") for name in names},
                "cwd": os.getcwd(), "tmpdir": os.environ.get("TMPDIR")}

    seen = {}
    def detector():
        deadline = time.monotonic() + 8
        while time.monotonic() < deadline:
            # the child's own pid file is in its private scratch (a tmpfs the host does not see, as root):
            # the child is found as the host's child that wrote one there
            for path in glob.glob("/proc/[0-9]*/stat"):
                try:
                    fields = open(path).read().rsplit(")", 1)[1].split()
                    pid = int(path.split("/")[2])
                    if int(fields[1]) != os.getpid() or not os.path.exists(f"/proc/{pid}/cwd/pid"):
                        continue
                    with open(f"/proc/{pid}/environ", "rb") as source:
                        seen["outside"] = source.read().decode("latin-1")
                    return
                except (OSError, ValueError):
                    pass
            time.sleep(0.01)
    watcher = threading.Thread(target=detector)
    watcher.start()
    outcome = box.call(job)
    watcher.join()
    print(json.dumps({"status": outcome.status, "detail": outcome.detail, "value": outcome.value,
                      "outside": seen.get("outside"), "host_block": open("/proc/self/environ", "rb").read()
                      .decode("latin-1")}))
''')


@linux
def test_nothing_of_the_hosts_environment_block_is_left_in_the_child(tmp_path: Path) -> None:
    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), **SECRETS, **PLAIN}
    done = subprocess.run([sys.executable, "-c", _HOST, src, json.dumps([*SECRETS, *PLAIN])], env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["status"] == "ok", report
    value = report["value"]
    assert all(secret in report["host_block"] for secret in SECRETS.values())  # the block the host started with
    assert report["outside"] is not None, "the detector never saw the child"
    assert report["outside"].strip("\0") == "", "the child's /proc/<pid>/environ still shows its parent's block"
    assert value["block"].strip("\0") == ""
    for name, secret in SECRETS.items():
        for where in ("environ", "posix", "getenv"):
            assert name not in value[where] or value[where][name] == "", (where, name)
            assert all(secret not in text for text in value[where].values()), (where, name)
    for name, plain in PLAIN.items():  # what is not a secret is still there, for Python and for C alike
        assert value["environ"][name] == plain and value["getenv"][name] == plain, name
    assert value["tmpdir"] == value["cwd"] and "/regrow-sandbox-" in value["cwd"], value  # the scratch folder
    assert value["environ"]["HOME"] == str(tmp_path)

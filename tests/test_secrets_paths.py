"""Which loaded modules are the user's is told by regrow._frames.users_file, the one rule for it (not the
standard library, not an installed package, not regrow), cached per file."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from regrow import _secrets


def test_a_secret_in_a_user_module_is_known(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "settings_for_secrets_test.py").write_text("API_TOKEN = 'tok-0123456789abcdef'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import settings_for_secrets_test  # noqa: F401

    try:
        assert "tok-0123456789abcdef" in _secrets.user_module_secrets()
    finally:
        sys.modules.pop("settings_for_secrets_test", None)

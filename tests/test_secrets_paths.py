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


def test_a_module_imported_after_another_was_removed_is_searched_too(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "secrets_gone_first.py").write_text("")
    (tmp_path / "secrets_come_after.py").write_text("DB_PASSWORD = 'pw-fedcba9876543210'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import secrets_gone_first  # noqa: F401

    try:
        assert "pw-fedcba9876543210" not in _secrets.user_module_secrets()
        del sys.modules["secrets_gone_first"]  # as many modules loaded after as before: another one
        import secrets_come_after  # noqa: F401

        assert "pw-fedcba9876543210" in _secrets.user_module_secrets()
    finally:
        sys.modules.pop("secrets_gone_first", None)
        sys.modules.pop("secrets_come_after", None)

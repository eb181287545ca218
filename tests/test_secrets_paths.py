"""Which loaded modules are the user's is told by where their files really are, links followed, as
``os.path.realpath`` tells it, though each folder is resolved once (issue 26: a few hundred realpaths
were a tenth of a second of every heal)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from regrow import _secrets


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")
def test_a_module_s_real_place_is_realpath_s(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "pkg").mkdir(parents=True)
    (real / "pkg" / "mod.py").write_text("")
    (tmp_path / "linked").symlink_to(real)  # a linked folder
    (tmp_path / "single.py").symlink_to(real / "pkg" / "mod.py")  # a linked file in a plain folder
    (tmp_path / "deep").symlink_to(real / "pkg")  # ``deep/..`` is ``real``, not ``tmp_path``
    (real / "up.py").write_text("")
    paths = [str(real / "pkg" / "mod.py"), str(tmp_path / "linked" / "pkg" / "mod.py"), str(tmp_path / "single.py"),
             str(tmp_path / "linked" / "pkg" / ".." / "pkg" / "mod.py"), str(tmp_path / "deep" / ".." / "up.py"),
             "relative/mod.py", "mod.py"]
    paths += [module.__file__ for module in list(sys.modules.values())
              if isinstance(getattr(module, "__file__", None), str)]
    _secrets._folders.clear()
    assert [_secrets._real(path) for path in paths] == [os.path.realpath(path) for path in paths]


def test_a_secret_in_a_user_module_is_known(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "settings_for_secrets_test.py").write_text("API_TOKEN = 'tok-0123456789abcdef'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import settings_for_secrets_test  # noqa: F401

    try:
        assert "tok-0123456789abcdef" in _secrets.user_module_secrets()
    finally:
        sys.modules.pop("settings_for_secrets_test", None)

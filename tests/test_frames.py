"""regrow._frames: the one answer to "is this frame regrow's own"."""

from __future__ import annotations

import os

import regrow
from regrow import _frames


def test_package_dir_is_the_package_wherever_the_module_sits() -> None:
    assert os.path.dirname(os.path.abspath(regrow.__file__)) == _frames.PACKAGE_DIR


def test_own_frames_are_the_package_and_the_wrappers_only(tmp_path) -> None:
    assert _frames.own(regrow.__file__)
    assert _frames.own(f"{_frames.WRAPPER_FILE}total>")
    assert not _frames.own(str(tmp_path / "shop" / "prices.py"))
    assert not _frames.own(__file__)



def test_users_file_is_neither_the_standard_library_nor_a_package_nor_regrow(tmp_path) -> None:
    import pytest

    user = tmp_path / "shop" / "prices.py"
    assert _frames.users_file(str(user))
    assert not _frames.users_file(os.__file__)  # the standard library
    assert not _frames.users_file(pytest.__file__)  # an installed package
    assert not _frames.users_file(regrow.__file__)
    assert not _frames.users_file("<string>") and not _frames.users_file("")
    assert not _frames.users_file(str(tmp_path / "venv" / "lib" / "site-packages" / "shop.py"))

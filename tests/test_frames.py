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


"""Write-back: the definition replaced in place, backed up, atomic, refused when the file moved on."""

from __future__ import annotations

from pathlib import Path

import pytest

from regrow import Target
from regrow._writeback import WriteBackError, write_back

SOURCE = '''\
import functools

# A comment above that must survive.
class Shop:
    @functools.lru_cache(maxsize=None)
    def total(self, n):
        # a comment inside
        return n * 2 + 1


def total(n):
    return n
'''


def test_writes_only_the_named_definition(make_module):
    mod = make_module(SOURCE)
    target = Target.of(mod.Shop.total)
    backup = write_back(target, "def total(self, n):\n    # a comment inside\n    return n * 2\n")
    text = Path(mod.__file__).read_text()
    assert text == SOURCE.replace("return n * 2 + 1", "return n * 2")  # the module-level total() untouched
    assert backup.read_text() == SOURCE


def test_refuses_when_the_file_changed_since_it_was_read(make_module):
    mod = make_module(SOURCE)
    target = Target.of(mod.total)
    path = Path(mod.__file__)
    changed = SOURCE.replace("    return n\n", "    return n + 100\n")
    path.write_text(changed)
    with pytest.raises(WriteBackError, match="changed since"):
        write_back(target, "def total(n):\n    return n - 1\n")
    assert path.read_text() == changed


def test_refuses_a_result_that_does_not_parse(make_module):
    mod = make_module(SOURCE)
    target = Target.of(mod.total)
    with pytest.raises(WriteBackError, match="would not parse"):
        write_back(target, "def total(n):\n  return (n\n")
    assert Path(mod.__file__).read_text() == SOURCE


def test_backups_are_never_overwritten(make_module):
    mod = make_module(SOURCE)
    first = write_back(Target.of(mod.total), "def total(n):\n    return n + 1\n")
    second = write_back(Target.of(mod.Shop.total), "def total(self, n):\n    return n\n")
    assert first != second and first.exists() and second.exists()

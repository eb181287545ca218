"""Write-back: only the definition replaced, every other byte kept; backed up, atomic, refused with the reason."""

from __future__ import annotations

import ast
import itertools
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from regrow._delivery._writeback import WriteBackError, plan, write_back
from regrow._target._locate import import_path
from regrow.extend import Target

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
_serial = itertools.count()


def load(folder: Path, data: bytes) -> object:
    """Write ``data`` as a fresh module and import it (bytes as given: endings, BOM, encoding)."""
    path = folder / f"wbmod_{next(_serial)}.py"
    path.write_bytes(data)
    module = import_path(path)
    sys.modules.pop(module.__name__, None)
    return module


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    yield tmp_path
    if str(tmp_path) in sys.path:
        sys.path.remove(str(tmp_path))


def test_writes_only_the_named_definition(folder):
    mod = load(folder, SOURCE.encode())
    written = write_back(Target.of(mod.Shop.total), "def total(self, n):\n    # a comment inside\n    return n * 2\n")
    assert written.path.read_text() == SOURCE.replace("return n * 2 + 1", "return n * 2")  # total() untouched
    assert written.backup.read_bytes() == SOURCE.encode() == written.before


def test_refuses_when_the_definition_changed_since_it_was_proven(folder):
    mod = load(folder, SOURCE.encode())
    target = Target.of(mod.total)
    path = Path(mod.__file__)
    changed = SOURCE.replace("    return n\n", "    return n + 100\n")
    path.write_text(changed)
    with pytest.raises(WriteBackError, match="changed since the fix of total was proven"):
        write_back(target, "def total(n):\n    return n - 1\n")
    assert path.read_text() == changed
    assert not (folder / ".regrow" / "backups").exists()


def test_other_definitions_may_change_meanwhile(folder):
    """Another write-back (or an edit) elsewhere in the file moves lines: the definition is found by qualname."""
    mod = load(folder, SOURCE.encode())
    target = Target.of(mod.total)
    path = Path(mod.__file__)
    longer = "        if n:\n            return 0\n        return 1\n"
    path.write_text(SOURCE.replace("        return n * 2 + 1\n", longer))
    write_back(target, "def total(n):\n    return n - 1\n")
    assert path.read_text().endswith("def total(n):\n    return n - 1\n")
    assert "            return 0\n" in path.read_text()


def test_refuses_a_result_that_does_not_parse(folder):
    mod = load(folder, SOURCE.encode())
    with pytest.raises(WriteBackError, match="would not parse"):
        write_back(Target.of(mod.total), "def total(n):\n  return (n\n")
    assert Path(mod.__file__).read_text() == SOURCE


def test_refuses_a_missing_target(folder):
    mod = load(folder, SOURCE.encode())
    target = Target.of(mod.total)
    Path(mod.__file__).write_text(SOURCE.replace("def total(n):", "def renamed(n):"))
    with pytest.raises(WriteBackError, match="no definition of total"):
        write_back(target, "def total(n):\n    return n - 1\n")


def test_refuses_an_ambiguous_target(folder):
    text = ("import sys\nif sys.maxsize:\n    def pick(n):\n        return n\n"
            "else:\n    def pick(n):\n        return n\n")
    mod = load(folder, text.encode())
    with pytest.raises(WriteBackError, match="defined 2 times with the same text"):
        write_back(Target.of(mod.pick), "def pick(n):\n    return -n\n")
    assert Path(mod.__file__).read_text() == text


def test_definitions_of_one_name_are_told_apart_by_their_text(folder):
    """Methods of two classes, a nested class, a module function: each found by its qualname."""
    text = ("class A:\n    def f(self):\n        return 1\n\n    class Inner:\n        def f(self):\n"
            "            return 2\n\n\nclass B:\n    def f(self):\n        return 3\n\n\ndef f():\n    return 4\n")
    mod = load(folder, text.encode())
    write_back(Target.of(mod.A.Inner.f), "def f(self):\n    return 20\n")
    write_back(Target.of(mod.B.f), "def f(self):\n    return 30\n")
    assert Path(mod.__file__).read_text() == text.replace("return 2\n", "return 20\n").replace("return 3\n",
                                                                                                 "return 30\n")


CASES = {
    "lf": b"def f(n):\n    # keep me\n    return n + 1\n\n\ndef g():\n    return 0\n",
    "crlf": b"def f(n):\r\n    # keep me\r\n    return n + 1\r\n\r\n\r\ndef g():\r\n    return 0\r\n",
    "mixed": b"import os\r\ndef f(n):\r\n    # keep me\n    return n + 1\r\n\ndef g():\n    return 0\r\n",
    "tabs": b"class K:\n\tdef f(self, n):\n\t\t# keep me\n\t\treturn n + 1\n",
    "bom": b"\xef\xbb\xbfdef f(n):\n    # keep me\n    return n + 1\n",
    "no-newline": b"x = 1\n\n\ndef f(n):\n    # keep me\n    return n + 1",
    "latin-1": b"# -*- coding: latin-1 -*-\nname = '\xe9t\xe9'\ndef f(n):\n    # keep me\n    return n + 1\n",
    "form-feed": b"\x0c\ndef f(n):\n    s = '\xe2\x80\xa8'\n    # keep me\n    return n + 1\n",
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_byte_outside_the_change_is_kept(folder, case):
    data = CASES[case]
    mod = load(folder, data)
    func = mod.K.f if case == "tabs" else mod.f
    target = Target.of(func)
    fixed = "def f(self, n):\n    # keep me\n    return n - 1\n" if case == "tabs" else \
        "def f(n):\n    s = '\u2028'\n    # keep me\n    return n - 1\n" if case == "form-feed" else \
        "def f(n):\n    # keep me\n    return n - 1\n"
    written = write_back(target, fixed)
    assert written.path.read_bytes() == data.replace(b"return n + 1", b"return n - 1")
    assert written.backup.read_bytes() == data


def test_new_lines_take_the_ending_of_the_definition(folder):
    data = b"def f(n):\r\n    return n + 1\r\n\r\ndef g():\n    return 0\n"
    mod = load(folder, data)
    write_back(Target.of(mod.f), "def f(n):\n    if n:\n        return n - 1\n    return 0\n")
    assert Path(mod.__file__).read_bytes() == (b"def f(n):\r\n    if n:\r\n        return n - 1\r\n    return 0\r\n"
                                               b"\r\ndef g():\n    return 0\n")


def test_decorators_and_comments_around_the_definition_are_kept(folder):
    text = ("import functools\n\n# above\n@functools.lru_cache(maxsize=8)  # why\n# between\ndef f(n):\n"
            "    return n + 1\n    # after, indented\n# after, flush\n\nVALUE = 1\n")
    mod = load(folder, text.encode())
    write_back(Target.of(mod.f), "def f(n):\n    return n - 1\n    # after, indented\n")
    assert Path(mod.__file__).read_text() == text.replace("return n + 1", "return n - 1")


def test_a_file_with_a_bom_is_not_taken_for_changed(folder):
    data = b"\xef\xbb\xbf" + SOURCE.encode()
    mod = load(folder, data)
    before, after = plan(Target.of(mod.total), "def total(n):\n    return n - 1\n")
    assert before == data and after == data.replace(b"    return n\n", b"    return n - 1\n")


def test_mode_and_owner_are_kept(folder):
    mod = load(folder, SOURCE.encode())
    path = Path(mod.__file__)
    path.chmod(0o750)
    uid, gid = (4242, 4343) if os.geteuid() == 0 else (os.getuid(), os.getgid())
    os.chown(path, uid, gid)
    write_back(Target.of(mod.total), "def total(n):\n    return n - 1\n")
    info = path.stat()
    assert (stat.S_IMODE(info.st_mode), info.st_uid, info.st_gid) == (0o750, uid, gid)


def test_a_read_only_file_is_refused_unless_forced(folder):
    mod = load(folder, SOURCE.encode())
    path = Path(mod.__file__)
    path.chmod(0o444)
    target = Target.of(mod.total)
    with pytest.raises(WriteBackError, match=r"read-only \(mode 444\).*force"):
        write_back(target, "def total(n):\n    return n - 1\n")
    assert path.read_text() == SOURCE
    write_back(target, "def total(n):\n    return n - 1\n", force=True)
    assert "return n - 1" in path.read_text() and stat.S_IMODE(path.stat().st_mode) == 0o444


def test_a_symlink_stays_a_link_to_the_written_file(folder):
    real = folder / "real"
    real.mkdir()
    mod = load(real, SOURCE.encode())
    link = folder / "linked.py"
    link.symlink_to(mod.__file__)
    target = Target.of(mod.total)
    target.filename = str(link)
    write_back(target, "def total(n):\n    return n - 1\n")
    assert link.is_symlink() and "return n - 1" in Path(mod.__file__).read_text()


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def test_a_file_with_uncommitted_changes_is_refused_unless_forced(folder):
    git(folder, "init", "-q")
    mod = load(folder, SOURCE.encode())
    target = Target.of(mod.total)
    with pytest.raises(WriteBackError, match=r"uncommitted changes \(\?\? in git status\)"):
        write_back(target, "def total(n):\n    return n - 1\n")
    git(folder, "add", ".")
    git(folder, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
    write_back(target, "def total(n):\n    return n - 1\n")  # committed: written
    path = Path(mod.__file__)
    path.write_text(path.read_text() + "\n# the user's own edit\n")
    again = Target.of(mod.Shop.total)
    with pytest.raises(WriteBackError, match=r"uncommitted changes \(M in git status\)"):
        write_back(again, "def total(self, n):\n    return n\n")
    write_back(again, "def total(self, n):\n    return n\n", force=True)
    assert "        return n\n" in Path(mod.__file__).read_text()


def test_backups_are_never_overwritten(folder):
    mod = load(folder, SOURCE.encode())
    first = write_back(Target.of(mod.total), "def total(n):\n    return n + 1\n")
    second = write_back(Target.of(mod.Shop.total), "def total(self, n):\n    return n\n")
    assert first.backup != second.backup and first.backup.read_bytes() == SOURCE.encode()
    assert second.backup.read_bytes() == first.after


def test_the_fix_in_the_files_indentation(folder):
    """A fix indented with spaces goes into a tab-indented class with tabs (and the other way round)."""
    data = b"class K:\n\tdef f(self, n):\n\t\tif n:\n\t\t\treturn 1\n\t\treturn n + 1\n"
    mod = load(folder, data)
    write_back(Target.of(mod.K.f), "def f(self, n):\n    if n:\n        return 2\n    return n + 1\n")
    assert Path(mod.__file__).read_bytes() == data.replace(b"return 1", b"return 2")


def test_the_definition_is_found_where_the_running_code_says_without_parsing_the_file(folder, monkeypatch):
    mod = load(folder, SOURCE.encode())
    target = Target.of(mod.Shop.total)
    monkeypatch.setitem(sys.modules, "libcst", None)  # any import of libcst now fails: the file is not parsed with it
    write_back(target, "def total(self, n):\n    return n * 2\n")
    text = Path(mod.__file__).read_text()
    assert "        return n * 2\n" in text and "return n * 2 + 1" not in text
    assert text.endswith("def total(n):\n    return n\n")  # the module's own total, of the same name, untouched


def test_a_definition_that_moved_since_import_is_still_found_by_its_name(folder):
    mod = load(folder, SOURCE.encode())
    target = Target.of(mod.total)
    Path(mod.__file__).write_text("# a line added above since the import\n" + SOURCE)
    write_back(target, "def total(n):\n    return n - 1\n")
    assert Path(mod.__file__).read_text().endswith("def total(n):\n    return n - 1\n")


def test_the_fixed_file_is_searched_for_definitions_under_every_statement() -> None:
    from regrow._target._rewrite import _qualnames  # the check that the fixed file still defines the target

    tree = ast.parse("try:\n    with x:\n        if y:\n            class C:\n                def m(self):\n"
                     "                    def inner(): pass\nexcept E:\n    async def handler(): pass\n"
                     "match z:\n    case 1:\n        def case(): pass\nf = [lambda: 0 for _ in ()]\n")
    assert set(_qualnames(tree, "")) == {"C.m", "C.m.<locals>.inner", "handler", "case"}

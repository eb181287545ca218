"""Every fenced ``python`` block of README.md and docs/ runs, and so do the offline ``regrow``/``pytest`` commands.

A page's python blocks run in order as one script (later blocks build on earlier ones, as a reader would type
them), in a subprocess, in a temporary folder holding a copy of examples/ (also on the import path, for
``from prices import parse_price``), offline: model keys are dummies and every model endpoint is a closed
loopback port, so a block that really called a model would fail here. A snippet line (``--8<-- "path"``, which
the site replaces by the file) runs the file. A block that cannot run offline is preceded by the documented
marker ``<!-- not-run: the reason -->`` on a line of its own (docs/index.md); the markers are counted, each must
give a reason, and there are few. A ``bash`` block runs when every line is a ``regrow`` or ``pytest`` command
with nothing to fill in (``...``, ``[``, ``|``, ``DIR``, ``OWNER``); each must exit 0, or N when its comment
starts with ``exit N``, and print what its comment quotes after ``prints``. The site builds with
``mkdocs build --strict``. Every ``--option`` a documented command line names exists, and every ``toml`` block
is accepted by what reads it (a bench manifest, ``[tool.regrow]``).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import regrow

ROOT = Path(__file__).resolve().parents[1]
SRC = Path(regrow.__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
NOT_RUN = re.compile(r"<!--\s*not-run:\s*(.*?)\s*-->")
FENCE = re.compile(r"^```(\w+)\s*$")
PLACEHOLDERS = ("...", "[", "|", "DIR", "OWNER", "ID", "FILE", "<")
EXIT = re.compile(r"exit (\d+)\b")  # a command's comment that starts "exit N" gives the status it must end with
PRINTS = re.compile(r"prints `([^`]+)`")  # ... and what it must print
MOST_NOT_RUN = 8  # keep the blocks that cannot run offline few


@dataclass(frozen=True)
class Block:
    page: str
    line: int  # of the block's first line of code
    language: str
    code: str
    not_run: str | None  # the marker's reason


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of a page, with the not-run reason of the comment right before each."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found, index = [], 0
    while index < len(lines):
        fence = FENCE.match(lines[index])
        if not fence:
            index += 1
            continue
        end = next(i for i in range(index + 1, len(lines)) if lines[i].startswith("```"))
        before = next((lines[i] for i in range(index - 1, -1, -1) if lines[i].strip()), "")
        marker = NOT_RUN.fullmatch(before.strip())
        found.append(Block(str(page.relative_to(ROOT)), index + 2, fence.group(1), "\n".join(lines[index + 1:end]),
                           marker.group(1) if marker else None))
        index = end + 1
    return found


ALL = [block for page in PAGES for block in blocks(page)]


SNIPPET = re.compile(r'^--8<-- "([^"]+)"$')


def source(block: Block) -> str:
    """A block's code, with a snippet line (``--8<-- "examples/x.py"``, the site includes the file) read in."""
    return "\n".join((ROOT / m.group(1)).read_text(encoding="utf-8") if (m := SNIPPET.match(line)) else line
                     for line in block.code.splitlines())


def runnable_python(page: str) -> list[Block]:
    return [b for b in ALL if b.page == page and b.language == "python" and b.not_run is None]


def runnable_command(block: Block) -> bool:
    commands = [line for line in block.code.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return bool(commands) and block.not_run is None and all(
        line.split()[0] in ("regrow", "pytest") and not any(p in line.split("#")[0] for p in PLACEHOLDERS)
        for line in commands)


def offline_env(folder: Path) -> dict[str, str]:
    """The environment of a block: this checkout's regrow, dummy keys, every model endpoint a closed port."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("REGROW_", "OPENAI", "ANTHROPIC", "GEMINI", "GOOGLE", "LITELLM", "OLLAMA"))}
    dead = "http://127.0.0.1:9"
    env.update(PYTHONPATH=os.pathsep.join([str(SRC), str(folder / "examples")]), OPENAI_API_KEY="sk-docs-offline",
               ANTHROPIC_API_KEY="docs-offline", GEMINI_API_KEY="docs-offline", OPENAI_BASE_URL=dead,
               ANTHROPIC_BASE_URL=dead, OLLAMA_HOST=dead, PYTHONDONTWRITEBYTECODE="1",
               PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]))
    return env


def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    shutil.copytree(ROOT / "examples", folder / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    return folder


PYTHON_PAGES = sorted({b.page for b in ALL if b.language == "python" and b.not_run is None})


@pytest.mark.parametrize("page", PYTHON_PAGES)
def test_the_python_blocks_of_a_page_run(page: str, tmp_path: Path) -> None:
    folder = workspace(tmp_path)
    script, origins = [], []  # the script's lines, and the page line each came from
    for block in runnable_python(page):
        for offset, line in enumerate(source(block).splitlines()):
            script.append(line)
            origins.append(block.line + offset)
        script.append("")
        origins.append(block.line)
    path = folder / "docs_page.py"
    path.write_text("\n".join(script) + "\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-W", "error", str(path)], cwd=folder, env=offline_env(folder),
                          capture_output=True, text=True, timeout=240, check=False)
    if done.returncode != 0:
        at = [int(n) for n in re.findall(rf'File "{re.escape(str(path))}", line (\d+)', done.stderr)]
        where = f"{page}:{origins[at[-1] - 1]}" if at else page
        pytest.fail(f"the example at {where} failed:\n{done.stderr[-3000:]}", pytrace=False)


COMMANDS = [b for b in ALL if b.language == "bash" and runnable_command(b)]


RAN: dict[tuple[str, ...], subprocess.CompletedProcess[str]] = {}  # by the commands up to it in its block


def run_command(command: str, folder: Path) -> subprocess.CompletedProcess[str]:
    words = shlex.split(command)
    argv = [sys.executable, "-m", "regrow" if words[0] == "regrow" else "pytest", *words[1:]]
    return subprocess.run(argv, cwd=folder, env=offline_env(folder), capture_output=True, text=True, timeout=240,
                          check=False)


@pytest.mark.parametrize("block", COMMANDS, ids=[f"{b.page}:{b.line}" for b in COMMANDS])
def test_the_offline_commands_run(block: Block, tmp_path: Path) -> None:
    """A block's commands in a fresh copy; a command run before after the same commands (another page) runs once."""
    folder = workspace(tmp_path)
    lines = [(c, comment) for c, _, comment in (map(str.strip, line.partition("#")) for line in block.code.splitlines())
             if c]
    done_here = 0  # the commands of this block run in this folder so far
    for index, (command, comment) in enumerate(lines):
        key = tuple(c for c, _ in lines[:index + 1])
        if key not in RAN:
            for earlier in range(done_here, index + 1):  # what it may depend on, here first
                RAN[key[:earlier + 1]] = run_command(lines[earlier][0], folder)
            done_here = index + 1
        done = RAN[key]
        expected = int(status.group(1)) if (status := EXIT.match(comment)) else 0
        assert done.returncode == expected, f"{block.page}:{block.line}: {command!r} exited {done.returncode}:\n" \
                                            f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        for text in PRINTS.findall(comment):
            assert text in done.stdout + done.stderr, f"{block.page}:{block.line}: {command!r} did not print {text!r}"


def test_the_blocks_that_do_not_run_are_few_and_say_why(capsys: pytest.CaptureFixture[str]) -> None:
    skipped = [b for b in ALL if b.language == "python" and b.not_run is not None]
    report = "\n".join(f"  {b.page}:{b.line}: {b.not_run}" for b in skipped)
    with capsys.disabled():  # reported in every run, not only when it fails
        print(f"\n{len(skipped)} python blocks of the docs not run (<!-- not-run: ... -->):\n{report}")
    assert all(b.not_run for b in skipped), report
    assert len(skipped) <= MOST_NOT_RUN, report
    ran = sum(len(runnable_python(page)) for page in PYTHON_PAGES)
    assert ran >= 20 and len(COMMANDS) >= 3, (ran, len(COMMANDS))


def test_a_marker_stands_right_before_a_block() -> None:
    """A ``not-run`` comment that is not right before a fenced block would silently mark nothing."""
    for page in PAGES:
        lines = page.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines):
            if NOT_RUN.fullmatch(line.strip()):
                following = next((text for text in lines[number + 1:] if text.strip()), "")
                assert FENCE.match(following), f"{page.relative_to(ROOT)}:{number + 1}: not before a block"


def test_the_site_builds_with_warnings_as_errors(tmp_path: Path) -> None:
    """What ``make docs`` runs: a page missing from the nav, a broken link or a missing snippet fails it."""
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"}, capture_output=True, text=True,
                          timeout=240, check=False)
    assert done.returncode == 0, f"mkdocs build --strict failed (the docs extra, in dev, brings mkdocs):\n" \
                                 f"{done.stderr[-3000:]}"
    assert "CURRENCY_SYMBOLS" in (tmp_path / "site" / "examples" / "prices" / "index.html").read_text()


def documented_options() -> dict[tuple[str, ...], dict[str, str]]:
    """The ``--options`` each command line of a ``bash`` block names: {("regrow", "heal"): {option: where}}."""
    found: dict[tuple[str, ...], dict[str, str]] = {}
    for block in (b for b in ALL if b.language == "bash"):
        for offset, line in enumerate(block.code.splitlines()):
            for part in line.split("#")[0].split(";"):
                words = part.split()
                if not words or words[0] not in ("regrow", "pytest"):
                    continue
                command = ("regrow", words[1]) if words[0] == "regrow" and not words[1].startswith("-") \
                    else (words[0],)
                for option in re.findall(r"(?<![\w-])--[a-z][a-z-]*", part):
                    found.setdefault(command, {})[option] = f"{block.page}:{block.line + offset}"
    return found


def test_every_option_a_command_line_of_the_docs_names_exists(tmp_path: Path) -> None:
    options = documented_options()
    assert ("regrow", "heal") in options and ("pytest",) in options, sorted(options)
    for command, named in sorted(options.items()):
        argv = [sys.executable, "-m", "regrow" if command[0] == "regrow" else "pytest", *command[1:], "--help"]
        done = subprocess.run(argv, cwd=tmp_path, env=offline_env(tmp_path), capture_output=True, text=True,
                              timeout=120, check=False)
        assert done.returncode == 0, f"{' '.join(command)} --help: {done.stderr[-1000:]}"
        known = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", done.stdout))
        unknown = {option: where for option, where in named.items() if option not in known}
        assert not unknown, f"{' '.join(command)} has no such option: {unknown}"


def test_every_toml_block_is_what_its_reader_accepts(tmp_path: Path) -> None:
    """A bench manifest loads as one, a ``[tool.regrow]`` table gives valid settings, the rest is valid TOML."""
    from regrow._cli._bench._manifest import load, tomllib
    from regrow._settings import Settings, read_file

    kinds = []
    for number, block in enumerate(b for b in ALL if b.language == "toml"):
        where = f"{block.page}:{block.line}"
        try:
            data = tomllib.loads(block.code)
        except tomllib.TOMLDecodeError as exc:
            pytest.fail(f"{where}: not TOML: {exc}", pytrace=False)
        file = tmp_path / f"{number}" / ("pyproject.toml" if "tool" in data else "manifest.toml")
        file.parent.mkdir()
        file.write_text(block.code, encoding="utf-8")
        if "suite" in data:
            assert load(file).tasks, where
            kinds.append("manifest")
        elif "tool" in data:
            Settings(**read_file(file))  # a ConfigError names a bad key or value
            kinds.append("settings")
    assert {"manifest", "settings"} <= set(kinds), kinds

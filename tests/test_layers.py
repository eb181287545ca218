"""The folder tree of ``src/regrow`` is the path of a repair, and imports only go down it.

Each layer may import its own modules and those of the layers before it in :data:`LAYERS`, never one
after it: an import that points up the list is a back-arrow (an import cycle in the making, or a part
placed at the wrong step). The layers are the subpackages, in the order a repair depends on them, with
the package's root modules split in three: the base every part uses, the nouns of a repair, and the
public face on top. Every import counts, lazy and ``TYPE_CHECKING`` ones included (see test_imports).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_imports import graph

import regrow

LAYERS = [
    # the base: errors, plain data, redaction, secrets, frames, settings, the version
    {"regrow._errors", "regrow._frames", "regrow._plain", "regrow._plain_encode", "regrow._redact", "regrow._secrets",
     "regrow._settings", "regrow._version"},
    "regrow._sandbox",  # where a candidate runs: one process mechanism (and the engine's warm worker)
    {"regrow._ambiguity", "regrow._candidate", "regrow._events", "regrow._verdict"},  # the nouns of a repair
    "regrow._target",  # 1 the function being healed
    "regrow._evidence",  # 2 a failure and its evidence
    {"regrow._result"},  # what a repair returns (names a failure, a target's install mode, attempts)
    {"regrow._store", "regrow._stores"},  # the store: cache, ledger, claims, jobs (records results)
    "regrow._checks",  # the oracles and what they observe on the original
    "regrow._proof",  # how a verdict is reached: rails, capabilities, the no-oracle policy
    "regrow._proposers",  # who proposes: protocol, chain, cache, engine, models
    "regrow._session",  # the loop
    "regrow._delivery",  # keeping a fix
    "regrow._heal",  # the in-process front-ends and the one assembly of a repair
    "regrow._service",  # watch, regrow run, middleware, workers
    "regrow._cli",  # the command, the agents, the bench
    # the public face on top
    {"regrow", "regrow.__main__", "regrow.claude", "regrow.extend", "regrow.langchain", "regrow.llm",
     "regrow.pytest_plugin", "regrow.web"},
]


def layer(module: str) -> int:
    for index, members in enumerate(LAYERS):
        if isinstance(members, str):
            if module == members or module.startswith(members + "."):
                return index
        elif module in members or any(module.startswith(m + ".") for m in members if m != "regrow"):
            return index
    raise AssertionError(f"{module} is in no layer of test_layers.LAYERS: place it")


def test_every_module_has_a_layer() -> None:
    for module in graph():
        layer(module)


def test_no_module_imports_one_further_up_the_path() -> None:
    up = [f"{module} -> {imported}" for module, imports in sorted(graph().items()) for imported in sorted(imports)
          if layer(imported) > layer(module)]
    assert up == [], "imports up the path of a repair:\n" + "\n".join(up)


@pytest.mark.parametrize("name", ["_target", "_evidence", "_sandbox", "_checks", "_proof", "_proposers", "_session",
                                  "_stores", "_delivery", "_heal", "_service", "_cli"])
def test_each_step_of_the_path_is_a_folder(name: str) -> None:
    folder = Path(regrow.__file__).parent / name
    assert (folder / "__init__.py").is_file()
    assert any(folder.glob("_*.py")), f"{name} holds no module"


def test_no_source_file_is_over_400_lines() -> None:
    """A module that grows past 400 lines is split by what it does (the house rule, issue 20)."""
    package = Path(regrow.__file__).parent
    long = {str(path.relative_to(package)): n for path in package.rglob("*.py")
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > 400}
    assert long == {}

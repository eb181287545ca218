"""Reading a benchmark manifest: a TOML file with one ``[[task]]`` table per buggy function.

```toml
[suite]
name = "mine"
root = "."                      # where pytest runs (its conftest), relative to the manifest
min_calls = 10                  # optional: calls a fix must be compared on to be judged (10)

[[task]]
name = "net_balance"
target = "programs/net_balance.py::net_balance"
tests = ["tests/test_net_balance.py"]        # pytest paths or node ids, relative to root
reference = "reference/net_balance.py::net_balance"   # optional: a known-correct version
fixable = true                  # optional: false marks a bug the engine should not fix
family = "core"                 # optional label for the report
root = "."                      # optional: this task's own root
min_calls = 10                  # optional: this task's own minimum (``--min-calls`` overrides both)
inputs = "inputs/net_balance.py::INPUTS"   # optional: more inputs for the judge, a list of argument tuples
```
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

from ..._errors import RegrowError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[import-not-found, no-redef, unused-ignore]


@dataclasses.dataclass(frozen=True)
class Task:
    """One buggy function of a suite, with everything needed to run it on its own."""

    name: str
    target: str
    tests: list[str]
    root: str  # absolute
    reference: str | None = None
    fixable: bool | None = None
    family: str = ""
    bug: str = ""
    min_calls: int | None = None  # calls a judgement against the reference needs (None: the default)
    inputs: str | None = None  # "path.py::NAME": a list of argument tuples the judge compares on too

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Task:
        return cls(**data)


@dataclasses.dataclass(frozen=True)
class Suite:
    name: str
    tasks: list[Task]


def load(path: str | Path) -> Suite:
    """The suite a manifest describes; a :class:`RegrowError` saying what is wrong with a bad one."""
    file = Path(path)
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise RegrowError(f"cannot read the manifest {path}: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise RegrowError(f"{path} is not valid TOML: {exc}") from exc
    suite = data.get("suite", {})
    base = (file.parent / str(suite.get("root", "."))).resolve()
    entries = data.get("task", [])
    if not isinstance(entries, list) or not entries:
        raise RegrowError(f"{path} lists no [[task]] tables")
    min_calls = _min_calls(suite.get("min_calls"), "[suite]")
    tasks = [_task(entry, base, file.parent, number, min_calls) for number, entry in enumerate(entries, start=1)]
    names = [task.name for task in tasks]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise RegrowError(f"{path}: task names must be unique; repeated: {', '.join(duplicates)}")
    return Suite(str(suite.get("name", file.parent.name)), tasks)


def _min_calls(value: Any, where: str) -> int | None:
    if value is None:
        return None
    if type(value) is not int or value < 1:
        raise RegrowError(f"{where}: min_calls must be a whole number of at least 1, not {value!r}")
    return value


def _task(entry: Any, base: Path, folder: Path, number: int, min_calls: int | None) -> Task:
    if not isinstance(entry, dict) or not isinstance(entry.get("target"), str) or "::" not in entry["target"]:
        raise RegrowError(f"task #{number} needs target = \"path/to/module.py::function\"")
    tests = entry.get("tests")
    if isinstance(tests, str):
        tests = [tests]
    if not isinstance(tests, list) or not tests or not all(isinstance(t, str) for t in tests):
        raise RegrowError(f"task #{number} ({entry['target']}) needs tests = [\"tests/test_x.py\", ...]")
    root = (folder / entry["root"]).resolve() if isinstance(entry.get("root"), str) else base
    fixable = entry.get("fixable")
    inputs = entry.get("inputs")
    if inputs is not None and (not isinstance(inputs, str) or "::" not in inputs):
        raise RegrowError(f"task #{number} ({entry['target']}): inputs must be \"path/to/module.py::NAME\", "
                          f"not {inputs!r}")
    return Task(
        name=str(entry.get("name") or entry["target"].rpartition("::")[2]),
        target=entry["target"],
        tests=list(tests),
        root=str(root),
        reference=entry.get("reference") if isinstance(entry.get("reference"), str) else None,
        fixable=fixable if isinstance(fixable, bool) else None,
        family=str(entry.get("family", "")),
        bug=str(entry.get("bug", "")),
        min_calls=_min_calls(entry.get("min_calls"), f"task #{number}") or min_calls,
        inputs=inputs,
    )

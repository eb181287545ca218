"""Every test the docs cite as proof is where they say: a mention of one of the project's test files
(a name that exists under tests/) must give its path as it is now (the tree moved once already and left
the docs pointing at files that were no longer there). Names of no test here are the docs' examples."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MENTION = re.compile(r"tests/[\w/]*?\w+\.py")


def test_every_test_file_the_docs_cite_is_at_the_path_they_give() -> None:
    ours = {path.name for path in (ROOT / "tests").rglob("*.py")}
    stale = []
    for doc in [*(ROOT / "docs").rglob("*.md"), ROOT / "README.md"]:
        for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), start=1):
            for mention in MENTION.findall(line):
                if Path(mention).name in ours and not (ROOT / mention).is_file():
                    stale.append(f"{doc.relative_to(ROOT)}:{number}: {mention}")
    assert not stale, "docs cite test files that are not there:\n" + "\n".join(stale)

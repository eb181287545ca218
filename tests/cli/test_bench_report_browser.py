"""The HTML report of ``regrow bench`` opened in a real headless browser (Debian's chromium): its chart is drawn.

A tiny ``regrow bench`` run (two tasks of tests/bench_suite: one the engine fixes, one no small edit fixes) writes
report.html with the real report code; chromium loads it from a file:// URL with the network and every background
service off and dumps the DOM it rendered, and a screenshot. Without chromium the test fails, naming the line of
.ci/run that installs it: it is never skipped.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from regrow._cli._main import main

SUITE = Path(__file__).parents[1] / "bench_suite"
CHROMIUM = "/usr/bin/chromium"
INSTALL = "command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium)"

MANIFEST = """\
[suite]
name = "browser"
root = "."

[[task]]
name = "with_tax"
target = "programs/with_tax.py::with_tax"
tests = ["checks/check_with_tax.py"]
reference = "reference/with_tax.py::with_tax"
fixable = true
family = "core"

[[task]]
name = "median"
target = "programs/median.py::median"
tests = ["checks/check_median.py"]
reference = "reference/median.py::median"
fixable = false
family = "unfixable"
"""


def chromium(*arguments: str, profile: Path) -> subprocess.CompletedProcess[str]:
    """Headless chromium with no sandbox (tests run as root), no GPU and nothing that reaches the network."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: install it with .ci/run's line: {INSTALL}", pytrace=False)
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--disable-dev-shm-usage", f"--user-data-dir={profile}", *arguments]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """report.html of a real two-task ``regrow bench`` run."""
    folder = tmp_path_factory.mktemp("suite")
    for part in ("programs", "checks", "reference"):
        shutil.copytree(SUITE / part, folder / part)
    (folder / "manifest.toml").write_text(MANIFEST)
    out = tmp_path_factory.mktemp("out")
    status = main(["bench", str(folder / "manifest.toml"), "--jobs", "1", "--timeout", "60", "--out", str(out)],
                  out=io.StringIO())
    assert status == 0, status
    outcomes = {task["name"]: task["status"] for task in json.loads((out / "results.json").read_text())["tasks"]}
    assert outcomes["with_tax"] == "correct" and outcomes["median"] != "fixed", outcomes
    return out / "report.html"


def test_the_chart_is_in_the_dom_chromium_rendered(report: Path, tmp_path: Path) -> None:
    done = chromium("--dump-dom", report.as_uri(), profile=tmp_path / "profile")
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    assert "<h1>regrow bench: browser</h1>" in dom, dom[:2000]
    svg = re.search(r"<svg[^>]*aria-label=\"outcome per family\".*?</svg>", dom, re.S)
    assert svg, "no chart in the rendered DOM"
    # One bar per family, each holding data: a rect with a height and a title naming its count.
    bars = re.findall(r'<rect x="[\d.]+" y="[\d.]+" width="40" height="([\d.]+)"[^>]*><title>([^<]+)</title>',
                      svg.group(0))
    assert {title for _, title in bars} >= {"core: 1 fixed", "unfixable: 1 not-fixed"}, bars
    assert all(float(height) > 0 for height, _ in bars), bars


def png_pixels(data: bytes) -> tuple[int, int, bytes]:
    """Width, height and the raw (filtered) scanlines of a PNG, read with the standard library only."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", data[:8]
    at, chunks, width, height = 8, [], 0, 0
    while at < len(data):
        (size,), kind = struct.unpack(">I", data[at:at + 4]), data[at + 4:at + 8]
        body = data[at + 8:at + 8 + size]
        if kind == b"IHDR":
            width, height = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            chunks.append(body)
        at += 12 + size
    return width, height, zlib.decompress(b"".join(chunks))


def test_the_screenshot_is_not_blank(report: Path, tmp_path: Path) -> None:
    shot = tmp_path / "report.png"
    done = chromium(f"--screenshot={shot}", "--window-size=900,600", report.as_uri(), profile=tmp_path / "profile")
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    width, height, raw = png_pixels(shot.read_bytes())
    assert (width, height) == (900, 600)
    # A blank page is one colour: its scanlines (after the filter byte) hold very few distinct byte values.
    assert len(set(raw)) > 16, f"the screenshot looks blank ({len(set(raw))} distinct bytes)"

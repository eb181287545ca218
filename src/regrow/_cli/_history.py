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
from typing import TYPE_CHECKING, Any, TextIO

from .._errors import RegrowError
from .._stores._base import _INSTALL_FIELDS, _JOB_FIELDS
from .._stores._tables import VERDICTS_OF_SESSION, verdicts

if TYPE_CHECKING:
    from .._store import Store

DEFAULT_STORE = Path(".regrow") / "ledger.sqlite"


def add_history_commands(commands: Any) -> None:
    history = commands.add_parser("history", help="the repairs recorded in a store's ledger, newest first")
    history.add_argument("--function", default=None, metavar="QUALNAME", help="only this function's sessions")
    history.add_argument("--limit", type=count, default=20, metavar="N", help="at most N sessions (20)")
    history.add_argument("--jobs", dest="what", action="store_const", const="jobs", default="sessions",
                         help="the jobs handed to workers instead, with the host that submitted each")
    history.add_argument("--installs", dest="what", action="store_const", const="installs",
                         help="the fixes running processes adopted from the fleet instead, with their hosts")
    show = commands.add_parser("show", help="one session of the ledger: its outcome, fix and verdicts")
    show.add_argument("id", type=int, help="the session's id (from regrow history)")
    for parser in (history, show):
        parser.add_argument("--store", default=None, metavar="PATH",
                            help=f"the SQLite ledger, or a fleet's postgresql://… store (default: {DEFAULT_STORE})")
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


def seconds(text: str) -> float:
    """An argparse type: a number of seconds above 0 (``--timeout -1`` is bad input, not "no fix")."""
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"a number of seconds above 0, not {text!r}")
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
    hosts = "host" in {row[1] for row in db.execute("PRAGMA table_info(sessions)")}  # a ledger older than fleets
    columns = (*_COLUMNS, "host") if hosts else _COLUMNS
    rows = db.execute(f"SELECT {', '.join(columns)} FROM sessions {where}", args).fetchall()
    return [{"host": "", **dict(zip(columns, row, strict=True)), "ok": bool(row[3])} for row in rows]


def _table(db: sqlite3.Connection, what: str) -> list[dict[str, Any]]:
    """A fleet table of a SQLite ledger, newest first ([] when the ledger is older than fleets)."""
    if not db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (what,)).fetchall():
        return []
    names = _JOB_FIELDS if what == "jobs" else _INSTALL_FIELDS  # never a job's capture (its arguments)
    rows = [dict(zip(names, row, strict=True))
            for row in db.execute(f"SELECT {', '.join(names)} FROM {what} ORDER BY id DESC").fetchall()]
    for row in rows:
        if row.get("result") is not None:
            row["result"] = json.loads(row["result"])
        if "ok" in row:  # a boolean, as PostgreSQL's (SQLite keeps 1)
            row["ok"] = bool(row["ok"])
    return rows


def _url(store: str | None) -> bool:
    """Whether ``--store`` names a store reached through its backend (a fleet's ``postgresql://…``)."""
    return bool(store) and "://" in str(store) and not str(store).startswith("sqlite://")


def _through_store(where: str) -> Store:
    from .._store import Store

    store = Store(where, lazy=True)  # read first: a database that holds no store is not made one
    found = store.found_version()  # (StoreError, a RegrowError: one line)
    if found is None:
        store.close()
        raise RegrowError(f"{store.location} holds no regrow store (no schema_version table): nothing to read")
    return store


def _fleet(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The sessions (or jobs, or installs) of a store at a URL, read through the store: any host of a fleet."""
    store = _through_store(args.store)
    try:
        if args.what == "sessions":
            return store.sessions(args.function)
        return list(reversed(store.jobs())) if args.what == "jobs" else store.installs()
    finally:
        store.close()


def run_history(args: argparse.Namespace, out: TextIO) -> int:
    if _url(args.store):
        found = [{**row, "ok": bool(row["ok"])} if "ok" in row else row for row in _fleet(args)]
    else:
        db = _open(args.store.removeprefix("sqlite://") if args.store else None)
        try:
            where = "WHERE qualname = ? " if args.function else ""
            found = _sessions(db, where + "ORDER BY id DESC", (args.function,) if args.function else ()) \
                if args.what == "sessions" else _table(db, args.what)
        finally:
            db.close()
    found = found[:max(args.limit, 0)]
    if args.json:
        print(json.dumps(found, indent=2), file=out)
        return 0
    if not found:
        print(f"regrow: the ledger holds no {args.what}", file=out)
        return 0
    if args.what == "sessions":
        print(f"{'id':>5}  {'when':<19}  {'outcome':<7}  {'cands':>5}  {'time':>7}  {'host':<16}  function", file=out)
        for row in found:
            print(f"{row['id']:>5}  {_when(row['created']):<19}  {'fixed' if row['ok'] else 'no fix':<7}  "
                  f"{row['candidates']:>5}  {row['duration']:>6.2f}s  {row['host'] or '-':<16}  {row['qualname']}",
                  file=out)
    elif args.what == "jobs":
        print(f"{'id':>5}  {'when':<19}  {'state':<8}  {'host':<16}  {'worker':<24}  target", file=out)
        for row in found:
            print(f"{row['id']:>5}  {_when(row['created']):<19}  {row['state']:<8}  {row['host']:<16}  "
                  f"{row['worker'] or '-':<24}  {row['target']}", file=out)
    else:
        print(f"{'id':>5}  {'when':<19}  {'outcome':<9}  {'host':<16}  {'pid':>7}  function", file=out)
        for row in found:
            print(f"{row['id']:>5}  {_when(row['created']):<19}  {'installed' if row['ok'] else 'refused':<9}  "
                  f"{row['host']:<16}  {row['pid']:>7}  {row['qualname']}", file=out)
    return 0


def run_show(args: argparse.Namespace, out: TextIO) -> int:
    if _url(args.store):
        store = _through_store(args.store)
        try:
            session = store.session(args.id)
        finally:
            store.close()
        if session is not None:
            session["ok"] = bool(session["ok"])
    else:
        db = _open(args.store.removeprefix("sqlite://") if args.store else None)
        try:
            found = _sessions(db, "WHERE id = ?", (args.id,))
            judged = db.execute(VERDICTS_OF_SESSION, (args.id,)).fetchall()
        finally:
            db.close()
        session = found[0] if found else None
        if session is not None:
            session["verdicts"] = verdicts(judged)
    if session is None:
        raise RegrowError(f"no session {args.id} in the ledger (regrow history lists them)")
    if args.json:
        print(json.dumps(session, indent=2), file=out)
        return 0
    print(f"session {session['id']}: {session['qualname']} — {'fixed' if session['ok'] else 'no fix'}", file=out)
    print(f"  when        {_when(session['created'])}"
          + (f" on {session['host']}" if session.get("host") else ""), file=out)
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

"""The ledger's tables in one SQLite file (the default store; see :mod:`.store`).

A write transaction is ``BEGIN IMMEDIATE``: SQLite's one write lock, taken before the body
reads anything, so a charge's check and its insert see no other writer in between, in this
process or another. The file is in WAL mode (readers run beside the writer) with
``synchronous=FULL``: a write that returned survives a crash or a power cut. A busy file is
retried with a growing random pause until ``timeout``.

A process answering a question holds its budget in ``holds`` (:mod:`.ledger`) under its
*holder* name; whether the holder still runs is whether it still holds the ``flock`` of the
file of that name in ``<ledger>-holders/`` (the kernel lets go of it when the process dies,
even by SIGKILL; a process that exits removes its file, a dead one's goes when found).

Schema (``PRAGMA user_version`` = 3); version 1 files (no ``rho``) and version 2 files (no
``holds``, no ``login_failures``) are upgraded when opened. The tables are described in
:mod:`.ledger`, :mod:`.users` and :mod:`dpsql.frontends.server.throttle`.
"""

from __future__ import annotations

import atexit
import fcntl
import os
import random
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from dpsql.errors import PrivacyError

T = TypeVar("T")
SCHEMA_VERSION = 3
BUDGETS = """CREATE TABLE IF NOT EXISTS budgets (
        scope TEXT NOT NULL CHECK (scope IN ('analyst', 'dataset')),
        name TEXT NOT NULL, epsilon TEXT, delta TEXT NOT NULL, rho TEXT,
        updated_at REAL NOT NULL, PRIMARY KEY (scope, name),
        CHECK ((epsilon IS NULL) <> (rho IS NULL)))"""
HOLDS = """CREATE TABLE IF NOT EXISTS holds (key TEXT PRIMARY KEY, holder TEXT NOT NULL,
        analyst TEXT NOT NULL, dataset TEXT NOT NULL, epsilon TEXT NOT NULL,
        delta TEXT NOT NULL, events TEXT NOT NULL, created_at REAL NOT NULL)"""
LOGIN_FAILURES = (
    """CREATE TABLE IF NOT EXISTS login_failures (kind TEXT NOT NULL
        CHECK (kind IN ('user', 'address')), name TEXT NOT NULL, at REAL NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS login_failures_by_key ON login_failures (kind, name, at)")
UPGRADES = {
    1: ("ALTER TABLE budgets RENAME TO budgets_v1",
        BUDGETS,
        "INSERT INTO budgets (scope, name, epsilon, delta, rho, updated_at) "
        "SELECT scope, name, epsilon, delta, NULL, updated_at FROM budgets_v1",
        "DROP TABLE budgets_v1"),
    2: (HOLDS, *LOGIN_FAILURES),
}
"""Statements that bring a file of each older version to the next one (in one transaction)."""
SCHEMA = (
    BUDGETS,
    """CREATE TABLE IF NOT EXISTS charges (
        id INTEGER PRIMARY KEY AUTOINCREMENT, analyst TEXT NOT NULL, dataset TEXT NOT NULL,
        query TEXT NOT NULL, query_hash TEXT NOT NULL, plan TEXT NOT NULL,
        mechanism TEXT NOT NULL, epsilon TEXT NOT NULL, delta TEXT NOT NULL, rho REAL,
        created_at REAL NOT NULL, status TEXT NOT NULL CHECK (status = 'spent'),
        events TEXT NOT NULL DEFAULT '[]')""",
    "CREATE INDEX IF NOT EXISTS charges_by_analyst ON charges (analyst, id)",
    "CREATE INDEX IF NOT EXISTS charges_by_dataset ON charges (dataset, id)",
    """CREATE TABLE IF NOT EXISTS cache (key TEXT PRIMARY KEY, analyst TEXT NOT NULL,
        result BLOB NOT NULL, created_at REAL NOT NULL)""",
    HOLDS,
    *LOGIN_FAILURES,
    """CREATE TRIGGER IF NOT EXISTS charges_no_update BEFORE UPDATE ON charges
        BEGIN SELECT RAISE(ABORT, 'the privacy ledger is append-only'); END""",
    """CREATE TRIGGER IF NOT EXISTS charges_no_delete BEFORE DELETE ON charges
        BEGIN SELECT RAISE(ABORT, 'the privacy ledger is append-only'); END""",
    """CREATE TABLE IF NOT EXISTS users (name TEXT PRIMARY KEY, verifier TEXT NOT NULL,
        created_at REAL NOT NULL, updated_at REAL NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS audit (id INTEGER PRIMARY KEY AUTOINCREMENT,
        at REAL NOT NULL, user TEXT NOT NULL, client TEXT NOT NULL, statement TEXT NOT NULL,
        outcome TEXT NOT NULL, sqlstate TEXT NOT NULL, epsilon REAL NOT NULL,
        delta REAL NOT NULL)""",
    """CREATE TRIGGER IF NOT EXISTS audit_no_update BEFORE UPDATE ON audit
        BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END""",
    """CREATE TRIGGER IF NOT EXISTS audit_no_delete BEFORE DELETE ON audit
        BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END""",
)
BEGIN = {"read": "BEGIN DEFERRED", "write": "BEGIN IMMEDIATE"}
_holders: dict[tuple[int, str], str] = {}
"""This process's holder name per holders folder (its file stays open and locked)."""
_holders_lock = threading.Lock()


class SqliteDb:
    """A body's view of the file: ``execute`` as sqlite3 has it; ``lock`` is the write
    transaction's own (one writer at a time holds every scope); ``alive`` asks the holder's
    file."""

    def __init__(self, db: sqlite3.Connection, holders: Path) -> None:
        self._db, self._holders = db, holders

    def execute(self, sql: str, params: tuple = ()) -> sqlite3.Cursor:
        return self._db.execute(sql, params)

    def lock(self, scope: str, name: str) -> None:
        """Nothing to do: ``BEGIN IMMEDIATE`` holds the file's write lock already."""

    def alive(self, holder: str) -> bool:
        """Whether the process named ``holder`` still holds its file's lock (a dead one's
        file is removed)."""
        try:
            fd = os.open(self._holders / holder, os.O_RDWR)
        except FileNotFoundError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        (self._holders / holder).unlink(missing_ok=True)
        return False


class SqliteStore:
    """The tables of one ledger file (one per process; safe to share between threads)."""

    def __init__(self, path: Path, *, timeout: float, create: bool,
                 missing: type[Exception]) -> None:
        self.path, self.location, self._timeout = path, str(path.resolve()), timeout
        self._lock = threading.Lock()
        self._holders = path.with_name(f"{path.name}-holders")
        if not create and not path.is_file():
            raise missing(self.location)
        target = path if create else f"{path.resolve().as_uri()}?mode=ro"
        self._db = sqlite3.connect(target, timeout=timeout, isolation_level=None,
                                   check_same_thread=False, uri=not create)
        try:
            if create:
                self.run(_durable, None)
                self.run(self._create_schema, "write")
        except BaseException:
            self._db.close()
            raise

    def run(self, body: Callable[[Any], T], mode: str | None = "read", *,
            durable: bool = True) -> T:
        """Run ``body`` in a transaction of ``mode``, retrying while another process holds
        the lock; a failure is a PrivacyError."""
        deadline, pause = time.monotonic() + self._timeout, 0.005
        with self._lock:
            while True:
                try:
                    return self._attempt(body, mode, durable)
                except sqlite3.OperationalError as exc:
                    if not _busy(exc) or time.monotonic() > deadline:
                        raise self._failed(exc) from exc
                except sqlite3.Error as exc:
                    raise self._failed(exc) from exc
                time.sleep(pause * random.random())
                pause = min(2 * pause, 0.25)

    @property
    def holder(self) -> str:
        """This process's holder name: its file in ``<ledger>-holders/`` is locked while it
        runs (made at the first use; a forked child makes its own)."""
        key = (os.getpid(), str(self._holders))
        with _holders_lock:
            if key not in _holders:
                name = secrets.token_hex(8)
                try:
                    self._holders.mkdir(exist_ok=True)
                    fd = os.open(self._holders / name, os.O_RDWR | os.O_CREAT, 0o600)
                except OSError as exc:
                    raise PrivacyError(f"cannot write the holders of ledger {self.location!r} "
                                       f"({exc}): the folder {str(self._holders)!r} must be "
                                       "writable beside the ledger file") from None
                fcntl.flock(fd, fcntl.LOCK_EX)
                atexit.register(_forget, self._holders / name, os.getpid())
                _holders[key] = name
            return _holders[key]

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _attempt(self, body: Callable[[Any], T], mode: str | None, durable: bool) -> T:
        if not durable:
            self._db.execute("PRAGMA synchronous=NORMAL")
        try:
            if mode is None:
                return body(SqliteDb(self._db, self._holders))
            self._db.execute(BEGIN[mode])
            try:
                result = body(SqliteDb(self._db, self._holders))
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise
            return result
        finally:
            if not durable:
                self._db.execute("PRAGMA synchronous=FULL")

    def _create_schema(self, db: SqliteDb) -> None:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise PrivacyError(f"ledger {self.location!r} has schema version {version}, newer "
                               f"than this dpsql reads ({SCHEMA_VERSION}): upgrade dpsql")
        for old in range(version, SCHEMA_VERSION) if version else ():  # 0: a new file
            for statement in UPGRADES[old]:
                db.execute(statement)
        for statement in SCHEMA:
            db.execute(statement)
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def _failed(self, exc: sqlite3.Error) -> PrivacyError:
        return PrivacyError(f"privacy ledger {self.location!r} failed: {exc}. No charge is "
                            "confirmed, so release nothing; retry, or check the file")


def _durable(db: SqliteDb) -> None:
    """WAL lets readers run beside the one writer; FULL syncs the WAL at every commit."""
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")


def _forget(holder: Path, pid: int) -> None:
    """At exit, this process's holder file goes (not a forked child's exit)."""
    if os.getpid() == pid:
        holder.unlink(missing_ok=True)


def _busy(exc: sqlite3.OperationalError) -> bool:
    return "locked" in str(exc) or "busy" in str(exc)

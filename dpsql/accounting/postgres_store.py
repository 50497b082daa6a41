"""The ledger's tables in a PostgreSQL database (``--ledger postgresql://USER@HOST:PORT/DB``).

Several processes and hosts may share one such ledger; the guarantees are the SQLite
file's (:mod:`.sqlite_store`), kept by PostgreSQL:

- **One transaction, all or nothing.** A charge is checked and inserted in one transaction,
  committed before ``charge`` returns; a client killed at any point leaves it committed or
  absent, never half (PostgreSQL rolls back a transaction whose connection is gone).
- **Never overdrawn: a lock per scope.** A write transaction runs at READ COMMITTED and
  takes ``pg_advisory_xact_lock`` for every scope it will check or change (the analyst, each
  dataset the charge names, a budget being set) in sorted order, before it reads. Writers of
  one scope therefore run one after another and each sees the previous one's commit (every
  statement at READ COMMITTED reads what is committed when it starts). Why not SERIALIZABLE
  with retries: under contention (many servers, one shared dataset budget) most attempts
  would abort and retry, and a charge id, drawn from a sequence, would not follow the serial
  order, while the ledger's running sums need ids that grow in commit order within a scope,
  which the lock gives. Why not ``SELECT ... FOR UPDATE`` on the budget row: a charge may
  name a dataset whose budget row does not exist yet, and a row that is not there cannot be
  locked; an advisory lock on the scope's name exists before its row does.
- **A holder is alive while its session is**: a process answering a question holds its
  budget in ``holds`` (:mod:`.ledger`) under its holder name, and keeps a session advisory
  lock on that name on a connection of its own for as long as it runs; PostgreSQL lets go
  of it when the session ends (the process killed, its host gone).
- **Reads are snapshots**: REPEATABLE READ, READ ONLY.
- **Durable**: a commit returns after PostgreSQL flushed its WAL (``synchronous_commit``
  as the server sets it; ``durable=False``, for the audit log, turns it off for that
  transaction).

Connections come from a psycopg_pool pool per process and URL, shared by every Ledger and
Users object of the process and checked before use. Schema: the SQLite file's tables and
columns (``BIGINT`` identities, ``BYTEA``, ``DOUBLE PRECISION``; triggers refuse UPDATE,
DELETE and TRUNCATE on ``charges`` and ``audit``), with its version in ``dpsql_schema``.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import os
import secrets
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from dpsql.errors import PrivacyError

T = TypeVar("T")
SCHEMA_VERSION = 3
SCHEMA_LOCK = ("schema", "dpsql")
APPEND_ONLY = """CREATE OR REPLACE FUNCTION dpsql_append_only() RETURNS trigger
    LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION '% is append-only', TG_ARGV[0]; END $$"""
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS dpsql_schema (version INTEGER NOT NULL)",
    """CREATE TABLE IF NOT EXISTS budgets (
        scope TEXT NOT NULL CHECK (scope IN ('analyst', 'dataset')),
        name TEXT NOT NULL, epsilon TEXT, delta TEXT NOT NULL, rho TEXT,
        updated_at DOUBLE PRECISION NOT NULL, PRIMARY KEY (scope, name),
        CHECK ((epsilon IS NULL) <> (rho IS NULL)))""",
    """CREATE TABLE IF NOT EXISTS charges (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, analyst TEXT NOT NULL,
        dataset TEXT NOT NULL, query TEXT NOT NULL, query_hash TEXT NOT NULL,
        plan TEXT NOT NULL, mechanism TEXT NOT NULL, epsilon TEXT NOT NULL,
        delta TEXT NOT NULL, rho DOUBLE PRECISION, created_at DOUBLE PRECISION NOT NULL,
        status TEXT NOT NULL CHECK (status = 'spent'), events TEXT NOT NULL DEFAULT '[]')""",
    "CREATE INDEX IF NOT EXISTS charges_by_analyst ON charges (analyst, id)",
    "CREATE INDEX IF NOT EXISTS charges_by_dataset ON charges (dataset, id)",
    """CREATE TABLE IF NOT EXISTS cache (key TEXT PRIMARY KEY, analyst TEXT NOT NULL,
        result BYTEA NOT NULL, created_at DOUBLE PRECISION NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS holds (key TEXT PRIMARY KEY, holder TEXT NOT NULL,
        analyst TEXT NOT NULL, dataset TEXT NOT NULL, epsilon TEXT NOT NULL,
        delta TEXT NOT NULL, events TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS login_failures (kind TEXT NOT NULL
        CHECK (kind IN ('user', 'address')), name TEXT NOT NULL,
        at DOUBLE PRECISION NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS login_failures_by_key ON login_failures (kind, name, at)",
    """CREATE TABLE IF NOT EXISTS users (name TEXT PRIMARY KEY, verifier TEXT NOT NULL,
        created_at DOUBLE PRECISION NOT NULL, updated_at DOUBLE PRECISION NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS audit (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        at DOUBLE PRECISION NOT NULL, "user" TEXT NOT NULL, client TEXT NOT NULL,
        statement TEXT NOT NULL, outcome TEXT NOT NULL, sqlstate TEXT NOT NULL,
        epsilon DOUBLE PRECISION NOT NULL, delta DOUBLE PRECISION NOT NULL)""",
    APPEND_ONLY,
    """CREATE OR REPLACE TRIGGER charges_append_only BEFORE UPDATE OR DELETE OR TRUNCATE
        ON charges FOR EACH STATEMENT EXECUTE FUNCTION dpsql_append_only('the privacy ledger')""",
    """CREATE OR REPLACE TRIGGER audit_append_only BEFORE UPDATE OR DELETE OR TRUNCATE
        ON audit FOR EACH STATEMENT EXECUTE FUNCTION dpsql_append_only('the audit log')""",
)
BEGIN = {"read": "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY",
         "write": None}
POOL_SIZE = 8
"""Connections one process keeps to one ledger database at most (psycopg_pool grows to it)."""
_pools: dict[tuple[int, str], Any] = {}
_holders: dict[tuple[int, str], tuple[str, Any]] = {}
"""This process's holder name per URL, and the connection keeping its lock."""
_pools_lock = threading.Lock()


def lock_key(scope: str, name: str) -> int:
    """The signed 64-bit advisory-lock key of a scope (two names sharing one just wait on
    each other).

    >>> lock_key("analyst", "alice") == lock_key("analyst", "alice") != lock_key("dataset", "alice")
    True
    """
    digest = hashlib.blake2b(f"{scope}\x00{name}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


@functools.lru_cache(maxsize=256)
def _paramstyle(sql: str) -> str:
    """``?`` placeholders as psycopg's ``%s`` (a literal ``%`` doubled)."""
    return sql.replace("%", "%%").replace("?", "%s")


class PostgresDb:
    """A body's view of the database: ``execute`` with ``?`` placeholders, ``lock`` and
    ``alive``."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    def execute(self, sql: str, params: tuple = ()) -> Any:
        if not params:
            return self._conn.execute(sql)
        return self._conn.execute(_paramstyle(sql), params)

    def lock(self, scope: str, name: str) -> None:
        """Hold the scope's advisory lock until the transaction ends (waits for its holder)."""
        self._conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key(scope, name),))

    def alive(self, holder: str) -> bool:
        """Whether the session of the process named ``holder`` still holds its lock."""
        return not self._conn.execute("SELECT pg_try_advisory_xact_lock(%s)",
                                      (lock_key("holder", holder),)).fetchone()[0]


class PostgresStore:
    """The tables of one ledger database, through this process's pool for its URL."""

    def __init__(self, url: str, *, timeout: float, create: bool, missing: type[Exception],
                 shown: str) -> None:
        self.location, self._timeout, self._closed = shown, timeout, False
        self._url = url
        self._pool = _pool(url, timeout, shown)
        if create:
            self.run(_create_schema, "write")
        elif not self.run(lambda db: db.execute(
                "SELECT to_regclass('budgets') IS NOT NULL").fetchone()[0]):
            raise missing(shown)

    def run(self, body: Callable[[Any], T], mode: str | None = "read", *,
            durable: bool = True) -> T:
        """Run ``body`` in a transaction of ``mode`` on a pooled connection; a failure
        (the server gone, a lock not had within ``timeout``) is a PrivacyError."""
        from psycopg import Error
        from psycopg_pool import PoolTimeout

        if self._closed:
            raise self._failed("the ledger is closed")
        try:
            with self._pool.connection(timeout=self._timeout) as conn:
                if mode is None:
                    return body(PostgresDb(conn))
                with conn.transaction():
                    self._begin(conn, mode, durable)
                    return body(PostgresDb(conn))
        except (Error, PoolTimeout) as exc:
            raise self._failed(str(exc).strip()) from exc

    @property
    def holder(self) -> str:
        """This process's holder name: a connection of its own keeps the name's session
        lock while the process runs (opened at the first use; a forked child opens its
        own)."""
        import psycopg

        key = (os.getpid(), self._url)
        with _pools_lock:
            if key not in _holders:
                name = secrets.token_hex(8)
                try:
                    conn = psycopg.connect(self._url, autocommit=True,
                                           connect_timeout=max(1, int(self._timeout)))
                    conn.execute("SELECT pg_advisory_lock(%s)", (lock_key("holder", name),))
                except psycopg.Error as exc:
                    raise self._failed(str(exc).strip()) from exc
                _holders[key] = (name, conn)
            return _holders[key][0]

    def close(self) -> None:
        """This store's use of the pool ends; the pool stays for the process's others."""
        self._closed = True

    def _begin(self, conn: Any, mode: str, durable: bool) -> None:
        if BEGIN[mode]:
            conn.execute(BEGIN[mode])
        if mode == "write":
            conn.execute("SELECT set_config('lock_timeout', %s, true)",
                         (f"{int(self._timeout * 1000)}ms",))
        if not durable:
            conn.execute("SET LOCAL synchronous_commit = off")

    def _failed(self, why: str) -> PrivacyError:
        return PrivacyError(f"privacy ledger {self.location!r} failed: {why}. No charge is "
                            "confirmed, so release nothing; retry, or check the database")


def _create_schema(db: PostgresDb) -> None:
    """Create the tables (under a lock: concurrent CREATE ... IF NOT EXISTS can collide)."""
    db.lock(*SCHEMA_LOCK)
    if db.execute("SELECT to_regclass('dpsql_schema') IS NOT NULL").fetchone()[0]:
        row = db.execute("SELECT max(version) FROM dpsql_schema").fetchone()
        if row[0] is not None and row[0] > SCHEMA_VERSION:
            raise PrivacyError(f"ledger database has schema version {row[0]}, newer than "
                               f"this dpsql reads ({SCHEMA_VERSION}): upgrade dpsql")
        if row[0] == SCHEMA_VERSION:
            return
    for statement in SCHEMA:
        db.execute(statement)
    db.execute("INSERT INTO dpsql_schema (version) VALUES (?)", (SCHEMA_VERSION,))


def _pool(url: str, timeout: float, shown: str) -> Any:
    """This process's pool for ``url`` (a forked child makes its own)."""
    try:
        from psycopg_pool import ConnectionPool
    except ImportError:
        raise PrivacyError(f"the ledger {shown} is a PostgreSQL database, which needs the "
                           "driver: pip install 'dpsql[postgres]'") from None
    key = (os.getpid(), url)
    with _pools_lock:
        if key not in _pools:
            pool = ConnectionPool(url, min_size=1, max_size=POOL_SIZE, timeout=timeout,
                                  kwargs={"autocommit": True}, open=True,
                                  check=ConnectionPool.check_connection,
                                  name=f"dpsql-ledger-{len(_pools)}")
            _first_connection(pool, timeout, shown)
            _pools[key] = pool
            if len(_pools) == 1:
                atexit.register(_close_pools)
        return _pools[key]


def _first_connection(pool: Any, timeout: float, shown: str) -> None:
    """Fail now, saying why, when the server cannot be reached (not at the first charge)."""
    from psycopg_pool import PoolTimeout

    try:
        pool.wait(timeout=min(timeout, 10.0))
    except PoolTimeout:
        pool.close()
        raise PrivacyError(f"cannot connect to the ledger database {shown} (see the log "
                           "above for the server's answer): check the URL, that the server "
                           "runs and that it lets this user in") from None


def _close_pools() -> None:
    with _pools_lock:
        for (pid, _), pool in list(_pools.items()):
            if pid == os.getpid():
                pool.close()
        _pools.clear()
        for (pid, _), (_, conn) in list(_holders.items()):
            if pid == os.getpid():
                conn.close()
        _holders.clear()

"""Where a ledger keeps its tables: a SQLite file (the default) or a PostgreSQL database.

The budget logic (:mod:`.ledger`: exact Fractions, the refusal rules, the zCDP filter) and
the accounts (:mod:`.users`) run the same SQL against either; a store only connects,
creates its dialect's schema and runs a body in a transaction of the kind asked for:

- ``"read"``: one consistent snapshot of everything committed;
- ``"write"``: a transaction that commits all of the body's writes or none; inside it,
  ``db.lock(scope, name)`` makes every other writer of that scope wait until it ends (SQLite
  has one writer at a time, which covers every scope; PostgreSQL locks the scope);
- ``None``: each statement commits on its own.

``durable=False`` lets a write return before it reaches the disk (the audit log: a power
cut may lose its last lines, never a charge). Statements use ``?`` placeholders and the SQL
both engines share (``ON CONFLICT``, ``RETURNING``, ``||``); a store translates the rest.
A store's errors are PrivacyErrors that say nothing it was asked to write is confirmed.

>>> is_url("postgresql://dpsql@db.example:5432/ledger"), is_url("ledger.db")
(True, False)
>>> shown("postgresql://dpsql:secret@db.example/ledger")
'postgresql://dpsql:***@db.example/ledger'
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

from dpsql.accounting.sqlite_store import SqliteStore

T = TypeVar("T")
Mode = Literal["read", "write"] | None
URL_SCHEMES = ("postgresql://", "postgres://")
"""A ledger location starting with one of these is a PostgreSQL connection URL."""


class Db(Protocol):
    """What a body run by a store sees: DB-API ``execute`` with ``?`` placeholders, and
    ``lock``."""

    def execute(self, sql: str, params: tuple = ...) -> Any: ...

    def lock(self, scope: str, name: str) -> None:
        """Hold ``scope``'s write lock until the transaction ends."""

    def alive(self, holder: str) -> bool:
        """Whether the process of that holder name (a store's ``holder``) still runs."""


class Store(Protocol):
    """A ledger's tables in one database (:class:`SqliteStore`, ``PostgresStore``)."""

    location: str
    """The file, or the URL without its password: for messages and cache scopes."""
    holder: str
    """This process's name in the ``holds`` table, alive while the process runs."""

    def run(self, body: Callable[[Db], T], mode: Mode = "read", *,
            durable: bool = True) -> T: ...

    def close(self) -> None: ...


class NoLedger(Exception):
    """Raised by ``open_store(..., create=False)`` where no ledger exists yet."""


def is_url(location: str | Path) -> bool:
    """Whether ``location`` names a PostgreSQL database rather than a SQLite file."""
    return isinstance(location, str) and location.startswith(URL_SCHEMES)


def shown(location: str | Path) -> str:
    """``location`` as messages show it: a URL's password masked."""
    return re.sub(r"^(postgres(?:ql)?://[^:/@]*:)[^@]*@", r"\1***@", str(location))


def open_store(location: str | Path, *, timeout: float = 30.0, create: bool = True) -> Store:
    """The store at ``location``: a ``postgresql://USER@HOST:PORT/DB`` URL, or a file.

    ``create=False`` only reads: NoLedger if there is no ledger there (no file, or no
    tables in the database). The PostgreSQL driver is imported only for a URL.
    """
    if is_url(location):
        from dpsql.accounting.postgres_store import PostgresStore

        return PostgresStore(str(location), timeout=timeout, create=create,
                             missing=NoLedger, shown=shown(location))
    return SqliteStore(Path(location), timeout=timeout, create=create, missing=NoLedger)

"""Server accounts and the audit log, kept in the privacy ledger (a SQLite file or a
PostgreSQL database: :mod:`.store`, which creates the tables).

The ledger (:mod:`dpsql.accounting.ledger`) holds each analyst's budget and spends; this
module keeps two tables beside them:

- ``users(name, verifier, created_at, updated_at)``: who may log in to ``dpsql serve``, with
  a salted, iterated SCRAM-SHA-256 verifier (never the password);
- ``audit(id, at, user, client, statement, outcome, sqlstate, epsilon, delta)``: every
  statement a server answered or refused, append-only (triggers refuse UPDATE and DELETE).

A user's budget is the ledger's analyst budget of the same name, so it is as durable as
every spend. Removing a user removes the login, not the history: what was spent stays
spent, and adding the name again reuses that history.

>>> import tempfile
>>> from pathlib import Path
>>> from dpsql.accounting.values import Budget
>>> tmp = tempfile.TemporaryDirectory()
>>> users = Users(Path(tmp.name) / "ledger.db")
>>> users.add("alice", "SCRAM-SHA-256$...", Budget(epsilon=3, delta=1e-6))
>>> [(u.name, u.budget.epsilon) for u in users.list()]
[('alice', 3.0)]
>>> users.record(AuditEntry(user="alice", client="127.0.0.1", statement="SELECT 1",
...                         outcome="ok", sqlstate="00000", epsilon=0.0, delta=0.0))
>>> [e.statement for e in users.audit()]
['SELECT 1']
>>> users.close(); tmp.cleanup()
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from dpsql.accounting.ledger import Ledger
from dpsql.accounting.store import Db, open_store
from dpsql.accounting.values import Budget, Cost
from dpsql.errors import PrivacyError


@dataclass(frozen=True)
class User:
    """An account: its name, budget, and what it has spent (ρ too, for a ρ-zCDP budget)."""

    name: str
    budget: Budget
    spent: Cost
    created_at: float
    rho_spent: float | None = None


@dataclass(frozen=True)
class AuditEntry:
    """One statement a server handled: who, from where, what, how it ended, what it cost."""

    user: str
    client: str
    statement: str
    outcome: str
    sqlstate: str
    epsilon: float
    delta: float
    at: float = 0.0

    def __str__(self) -> str:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.at))
        statement = " ".join(self.statement.split())
        return (f"{when}  {self.user}  {self.client}  {self.outcome} ({self.sqlstate})  "
                f"ε={self.epsilon:g} δ={self.delta:g}  {statement}")


class Users:
    """The accounts and audit log of one ledger, a file or a ``postgresql://`` URL (safe to
    share between threads)."""

    def __init__(self, path: str | Path, *, timeout: float = 30.0) -> None:
        self.path = path
        self._store = open_store(path, timeout=timeout)

    def add(self, name: str, verifier: str, budget: Budget) -> None:
        """Create a login with its budget; PrivacyError if the name is taken.

        A name whose budget the ledger already holds (a removed user, or an analyst of the
        library) gets ``budget`` as its new total; its earlier spends still count.
        """
        if self.verifier(name) is not None:
            raise PrivacyError(f"user {name!r} exists: use `dpsql users reset-password` to "
                               "change the password, or choose another name")
        Ledger(self.path, budget=budget, analyst=name, reset_budget=True).close()
        now = time.time()
        self._execute("INSERT INTO users VALUES (?, ?, ?, ?)", (name, verifier, now, now))

    def verifier(self, name: str) -> str | None:
        """The stored SCRAM verifier of ``name``, or None if there is no such user."""
        rows, _ = self._execute("SELECT verifier FROM users WHERE name = ?", (name,))
        return rows[0][0] if rows else None

    def set_verifier(self, name: str, verifier: str) -> None:
        """Replace a user's password verifier; PrivacyError if there is no such user."""
        _, changed = self._execute("UPDATE users SET verifier = ?, updated_at = ? WHERE name = ?",
                                   (verifier, time.time(), name))
        if changed == 0:
            raise PrivacyError(_no_such_user(name))

    def budget(self, name: str) -> Budget:
        """A user's total budget, as stored; PrivacyError if there is no such user."""
        if self.verifier(name) is None:
            raise PrivacyError(_no_such_user(name))
        with Ledger(self.path, budget=None, analyst=name) as ledger:
            return ledger.total

    def set_budget(self, name: str, budget: Budget) -> None:
        """Give a user a new total budget; PrivacyError if there is no such user.

        What was spent stays spent: the new total counts every earlier spend, so one below
        them leaves nothing. A running server applies it from the user's next query.
        """
        if self.verifier(name) is None:
            raise PrivacyError(_no_such_user(name))
        Ledger(self.path, budget=budget, analyst=name, reset_budget=True).close()

    def remove(self, name: str) -> None:
        """Remove a login (its budget and spends stay in the ledger)."""
        if self._execute("DELETE FROM users WHERE name = ?", (name,))[1] == 0:
            raise PrivacyError(_no_such_user(name))

    def list(self) -> list[User]:
        """Every user, by name, with budget and spend."""
        rows, _ = self._execute("SELECT name, created_at FROM users ORDER BY name")
        return [self._user(name, created) for name, created in rows]

    def _user(self, name: str, created_at: float) -> User:
        with Ledger(self.path, budget=None, analyst=name) as ledger:
            total = ledger.total
            return User(name, total, ledger.spent, created_at,
                        None if total.rho is None else ledger.rho_spent)

    def record(self, entry: AuditEntry) -> None:
        """Append one statement to the audit log.

        Written without waiting for the disk (``durable=False``): a power cut may lose the
        last lines (never a charge, which the ledger syncs), and a statement is not slowed
        by a disk sync.
        """
        self._execute("INSERT INTO audit (at, \"user\", client, statement, outcome, sqlstate, "
                      "epsilon, delta) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                      (entry.at or time.time(), entry.user, entry.client, entry.statement,
                       entry.outcome, entry.sqlstate, float(entry.epsilon),
                       float(entry.delta)), durable=False)

    def audit(self, user: str | None = None, *, last: int | None = None) -> list[AuditEntry]:
        """The audit log (of ``user``, or of everyone), oldest first; ``last`` keeps the tail."""
        where, args = ("", ()) if user is None else (' WHERE "user" = ?', (user,))
        rows, _ = self._execute(f'SELECT "user", client, statement, outcome, sqlstate, epsilon, '
                                f"delta, at FROM audit{where} ORDER BY id", args)
        entries = [AuditEntry(*row) for row in rows]
        return entries if last is None else entries[-last:] if last > 0 else []

    def close(self) -> None:
        self._store.close()

    def __enter__(self) -> Users:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _execute(self, sql: str, args: tuple = (),
                 durable: bool = True) -> tuple[list[tuple], int]:
        """The rows and the changed-row count of one statement, in a transaction of its own
        (a read takes no write lock); a write is on disk before this returns unless
        ``durable=False``."""
        def one(db: Db) -> tuple[list[tuple], int]:
            cursor = db.execute(sql, args)
            return (cursor.fetchall() if cursor.description else []), cursor.rowcount

        mode = "read" if sql.startswith("SELECT") else "write"
        return self._store.run(one, mode, durable=durable)


def _no_such_user(name: str) -> str:
    return f"no user {name!r}: `dpsql users list` shows who exists; `dpsql users add` adds one"

"""Password guessing, slowed and then stopped: failed logins per user name and per client
address, kept in the ledger, so that every server sharing it counts them together.

Each failed login is answered after a delay that doubles with every recent failure of that
user name or client address (``base``, 2 × ``base``, 4 × ``base``, ... at most 16 × ``base``).
After ``limit`` failures within ``window`` seconds for a user name (whether or not it
exists, so a lockout tells nothing about who has an account) or from an address, further
logins for it are refused without looking at the password until its oldest failure is
``window`` seconds old. The check and the record happen together, in one write transaction
of the ledger holding the user name's and the address's locks (:mod:`dpsql.accounting.store`),
around the comparison of the client's proof, so no number of parallel connections, to one
server or several, tries more than ``limit`` passwords per window. A successful login clears
its user name's failures (not its address's: an analyst with a valid account cannot wipe the
record of guesses at others). The failures are rows of ``login_failures(kind, name, at)``
(wall-clock times, shared by the servers' hosts), pruned once out of the window; a restart
keeps them.

>>> import tempfile
>>> from pathlib import Path
>>> from dpsql.accounting.store import open_store
>>> tmp = tempfile.TemporaryDirectory()
>>> now = [0.0]
>>> throttle = Throttle(open_store(Path(tmp.name) / "ledger.db"), limit=2, window=10.0,
...                     clock=lambda: now[0])
>>> def wrong():
...     raise ValueError("wrong password")
>>> for address in ("10.0.0.1", "10.0.0.2"):
...     try:
...         throttle.verify("alice", address, wrong)
...     except ValueError:
...         pass
>>> throttle.failures("alice", "10.0.0.3")
2
>>> throttle.verify("alice", "10.0.0.3", lambda: "right")
Traceback (most recent call last):
...
dpsql.frontends.server.throttle.LockedOut: 10
>>> now[0] = 10.0
>>> throttle.verify("alice", "10.0.0.3", lambda: "right")
'right'
>>> throttle.close(); tmp.cleanup()
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any, TypeVar

from dpsql.accounting.store import Db, Store

MAX_DOUBLINGS = 4
"""The delay stops growing at 2⁴ = 16 times the base delay."""
T = TypeVar("T")
Recent = list[tuple[tuple[str, str], int, float | None]]
"""Per key (kind, name): its failures within the window, and the oldest one's time."""


class LockedOut(Exception):
    """Too many recent failures for this user name or address; ``args[0]``: seconds to wait."""


def delay(base: float, failures: int) -> float:
    """Seconds before the answer to a login that failed for the ``failures``-th time.

    >>> [delay(1.0, n) for n in (1, 2, 3, 5, 9)]
    [1.0, 2.0, 4.0, 16.0, 16.0]
    """
    return base * 2 ** min(max(failures - 1, 0), MAX_DOUBLINGS)


class Throttle:
    """Recent failed logins per user name and per client address, in a ledger's store
    (see the module)."""

    def __init__(self, store: Store, *, limit: int, window: float,
                 clock: Callable[[], float] = time.time) -> None:
        self.limit, self.window, self._clock, self._store = limit, window, clock, store

    def admit(self, user: str, address: str) -> None:
        """LockedOut if logins for ``user`` or from ``address`` are locked now."""
        self._store.run(lambda db: self._refuse_if_locked(self._recent(db, user, address)))

    def verify(self, user: str, address: str, proof: Callable[[], T]) -> T:
        """``proof()`` (which raises on a wrong password) unless locked; its outcome recorded."""
        def attempt(db: Db) -> tuple[bool, Any]:
            keys = _keys(user, address)
            for kind, name in sorted(keys):
                db.lock(f"login {kind}", name)
            self._refuse_if_locked(self._recent(db, user, address))
            try:
                result = proof()
            except Exception as error:  # recorded, then raised once the record commits
                self._record(db, keys)
                return False, error
            db.execute("DELETE FROM login_failures WHERE kind = 'user' AND name = ?", (user,))
            return True, result

        passed, outcome = self._store.run(attempt, "write", durable=False)
        if not passed:
            raise outcome
        return outcome

    def failed(self, user: str, address: str) -> None:
        """Record a login that failed before its proof (a malformed or wrong exchange)."""
        self._store.run(lambda db: self._record(db, _keys(user, address)), "write",
                        durable=False)

    def failures(self, user: str, address: str) -> int:
        """Recent failures: the larger count of the user name's and the address's."""
        return max(count for _, count, _ in self._store.run(
            lambda db: self._recent(db, user, address)))

    def close(self) -> None:
        self._store.close()

    def _recent(self, db: Db, user: str, address: str) -> Recent:
        since = self._clock() - self.window
        return [(key, *db.execute("SELECT count(*), min(at) FROM login_failures WHERE "
                                  "kind = ? AND name = ? AND at > ?", (*key, since)).fetchone())
                for key in _keys(user, address)]

    def _refuse_if_locked(self, recent: Recent) -> None:
        locked = [oldest for _, count, oldest in recent if count >= self.limit]
        if locked:
            raise LockedOut(max(1, math.ceil(min(locked) + self.window - self._clock())))

    def _record(self, db: Db, keys: tuple[tuple[str, str], ...]) -> None:
        """One more failure for each key; those out of the window go (they count no more)."""
        now = self._clock()
        for kind, name in keys:
            db.execute("DELETE FROM login_failures WHERE kind = ? AND name = ? AND at <= ?",
                       (kind, name, now - self.window))
            db.execute("INSERT INTO login_failures (kind, name, at) VALUES (?, ?, ?)",
                       (kind, name, now))


def _keys(user: str, address: str) -> tuple[tuple[str, str], ...]:
    return ("user", user), ("address", address)

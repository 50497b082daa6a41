"""Password guessing, slowed and then stopped: failed logins per user name and per client
address.

Each failed login is answered after a delay that doubles with every recent failure of that
user name or client address (``base``, 2 × ``base``, 4 × ``base``, ... at most 16 × ``base``).
After ``limit`` failures within ``window`` seconds for a user name (whether or not it
exists, so a lockout tells nothing about who has an account) or from an address, further
logins for it are refused without looking at the password until its oldest failure is
``window`` seconds old. The check and the record happen together, under one lock, around
the comparison of the client's proof, so no number of parallel connections tries more than
``limit`` passwords per window. A successful login clears its user name's failures (not
its address's: an analyst with a valid account cannot wipe the record of guesses at
others). The record is in memory: restarting the server clears it.

>>> now = [0.0]
>>> throttle = Throttle(limit=2, window=10.0, clock=lambda: now[0])
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
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TypeVar

MAX_DOUBLINGS = 4
"""The delay stops growing at 2⁴ = 16 times the base delay."""
T = TypeVar("T")


class LockedOut(Exception):
    """Too many recent failures for this user name or address; ``args[0]``: seconds to wait."""


def delay(base: float, failures: int) -> float:
    """Seconds before the answer to a login that failed for the ``failures``-th time.

    >>> [delay(1.0, n) for n in (1, 2, 3, 5, 9)]
    [1.0, 2.0, 4.0, 16.0, 16.0]
    """
    return base * 2 ** min(max(failures - 1, 0), MAX_DOUBLINGS)


class Throttle:
    """Recent failed logins per user name and per client address (see the module)."""

    def __init__(self, *, limit: int, window: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.limit, self.window, self._clock = limit, window, clock
        self._failures: dict[tuple[str, str], deque[float]] = {}
        self._lock = threading.Lock()

    def admit(self, user: str, address: str) -> None:
        """LockedOut if logins for ``user`` or from ``address`` are locked now."""
        with self._lock:
            self._refuse_if_locked(self._recent(user, address))

    def verify(self, user: str, address: str, proof: Callable[[], T]) -> T:
        """``proof()`` (which raises on a wrong password) unless locked; its outcome recorded."""
        with self._lock:
            recent = self._recent(user, address)
            self._refuse_if_locked(recent)
            try:
                result = proof()
            except Exception:
                self._record(recent)
                raise
            self._failures.pop(("user", user), None)
            return result

    def failed(self, user: str, address: str) -> None:
        """Record a login that failed before its proof (a malformed or wrong exchange)."""
        with self._lock:
            self._record(self._recent(user, address))

    def failures(self, user: str, address: str) -> int:
        """Recent failures: the larger count of the user name's and the address's."""
        with self._lock:
            return max(len(times) for _, times in self._recent(user, address))

    def _recent(self, user: str, address: str) -> list[tuple[tuple[str, str], deque[float]]]:
        """Both keys with their failure times, those older than the window dropped."""
        now, found = self._clock(), []
        for key in (("user", user), ("address", address)):
            times = self._failures.get(key, deque())
            while times and times[0] <= now - self.window:
                times.popleft()
            if not times:
                self._failures.pop(key, None)  # keep only what still matters
            found.append((key, times))
        return found

    def _refuse_if_locked(self, recent: list[tuple[tuple[str, str], deque[float]]]) -> None:
        locked = [times[0] for _, times in recent if len(times) >= self.limit]
        if locked:
            raise LockedOut(max(1, math.ceil(min(locked) + self.window - self._clock())))

    def _record(self, recent: list[tuple[tuple[str, str], deque[float]]]) -> None:
        now = self._clock()
        for key, times in recent:
            times.append(now)
            self._failures[key] = times

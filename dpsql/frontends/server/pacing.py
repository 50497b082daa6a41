"""Private answers leave on a grid of time: what the clock shows of a query is rounded.

How long a private query takes depends a little on the data, even with every row's work
bounded (``dpsql.expr.size``): a millisecond for whether any row passes the WHERE, a
fraction of one for the costliest row the rule admits (docs/privacy.md, Timing). With a
``time_quantum`` of Q seconds, the server sends each private query's answer or error at
the first multiple of Q after the statement started, and acts on a cancel request at the
multiple of Q after it arrives. The analyst then reads a query's time, and whether it
finished before their cancel, only to the nearest Q: a difference of Δ seconds shows in
about Δ/Q of the answers instead of in every one.

>>> pacer = Pacer(0.05)
>>> with pacer.paced():
...     pass
>>> 0.05 <= pacer.last <= 0.2
True
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

TIME_QUANTUM = 0.05
"""The server's default grid, seconds (docs/server.md, Limits: what it costs)."""


def on_grid(seconds: float, quantum: float) -> float:
    """``seconds`` rounded up to a multiple of ``quantum`` (a statement timeout acts on the
    grid, as a cancel does).

    >>> on_grid(300, 0.05), on_grid(0.12, 0.05), on_grid(7.5, 0)
    (300.0, 0.15, 7.5)
    """
    if quantum <= 0:
        return float(seconds)
    return round(math.ceil(round(seconds / quantum, 9)) * quantum, 9)


class Pacer:
    """The time grid of one session's private statements (``quantum`` 0: no grid)."""

    def __init__(self, quantum: float) -> None:
        self.quantum = quantum
        self._lock = threading.Lock()
        self._started: float | None = None
        self._statement = 0
        self.last = 0.0
        """Seconds the last paced statement took, grid included."""

    @contextmanager
    def paced(self) -> Iterator[None]:
        """A private statement: its answer, or its error, leaves at the next grid point."""
        with self._lock:
            self._statement += 1
            self._started = time.monotonic()
        try:
            yield
        finally:
            with self._lock:
                started, self._started = self._started, None
            if self.quantum > 0:
                time.sleep(max(0.0, self._next(started) - time.monotonic()))
            self.last = time.monotonic() - started

    def defer(self, action: Callable[[], None]) -> None:
        """Run ``action`` (a cancel) at the grid point after now, if the statement running
        now is still running then; at once when there is no grid or no paced statement."""
        with self._lock:
            started, statement = self._started, self._statement
        if self.quantum <= 0 or started is None:
            action()
            return

        def act() -> None:
            with self._lock:
                current = self._started is not None and self._statement == statement
            if current:
                action()

        timer = threading.Timer(max(0.0, self._next(started) - time.monotonic()), act)
        timer.daemon = True
        timer.start()

    def _next(self, started: float) -> float:
        """The first grid point after now (a statement's answer waits for it)."""
        steps = max(1, math.ceil((time.monotonic() - started) / self.quantum))
        return started + steps * self.quantum

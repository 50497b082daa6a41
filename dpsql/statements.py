"""Cancelling a statement: free before the engine reads data, charged in full after.

A query cancelled while the engine runs tells the analyst how long it ran, and how long a
query runs may depend on the data: cancelled halfway between its time without and with
one person, it answers "is that person there?" So the line between free and paid is the
moment the engine may start reading: a statement's cost is paid, atomically and durably,
*before* its bounded query is handed to the engine (``Statements.reading``): charged, or
held in the ledger until its charge and answer commit together (``Ledger.hold``), and
nothing that happens after — a cancel, a statement timeout, a client that disconnects, an
engine error, Ctrl-C — gives it back. A cancel that lands before that moment spends nothing.

Cancels come from other threads (``Statements.cancel``: the server's CancelRequest, the
shell's Ctrl-C, a statement timeout). One that lands while the engine runs interrupts it
(``interrupt``, the backend's) again and again until the statement ends, since an engine
only hears an interrupt while it runs.

>>> calls = []
>>> statements = Statements(interrupt=lambda: None)
>>> with statements.statement():
...     with statements.reading(lambda: calls.append("charged")):
...         calls.append("ran")
>>> calls
['charged', 'ran']
>>> with statements.statement():
...     statements.cancel()
...     with statements.reading(lambda: calls.append("charged again")):
...         pass
Traceback (most recent call last):
...
dpsql.errors.QueryCancelled: the query was cancelled before it read any data; nothing was spent
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from dpsql.accounting.values import Cost
from dpsql.errors import ExecutionError, QueryCancelled

T = TypeVar("T")
INTERRUPT_EVERY = 0.01
"""Seconds between interrupts of a running engine that has not stopped yet."""
WAIT_EVERY = 0.05
"""Seconds between looks at whether a statement waiting for its question was cancelled."""
NOTHING_SPENT = "the query was cancelled before it read any data; nothing was spent"


def charged_message(cost: Cost, why: str) -> str:
    """What a client hears when its statement stopped after the engine started."""
    return (f"the query was {why} after it started reading the data, and its full cost "
            f"(epsilon={cost.epsilon:g}, delta={cost.delta:g}) was charged: when a query stops "
            "tells how long it ran, which may depend on the data")


_QUESTIONS: dict[tuple[object, str], tuple[threading.Lock, int]] = {}
"""Per (answer store, question): its lock and how many statements hold or wait for it."""
_QUESTIONS_LOCK = threading.Lock()


class Statements:
    """The statements of one connection, one at a time: whether one is cancelled, and
    whether its engine is reading data."""

    def __init__(self, interrupt: Callable[[], None], *,
                 timeout: float | None = None) -> None:
        self._interrupt = interrupt
        self.timeout = timeout
        """Seconds a statement may run before it is cancelled (None: no limit)."""
        self._lock = threading.Lock()
        self._depth = 0
        self._why: str | None = None
        self._reading = 0
        """The number of the engine call running now (0: none), so that a cancel's
        interrupts stop with the call they were for and never reach the next one."""
        self._readings = 0
        self._statements = 0
        """The number of the outermost statement running now (a late timeout's cancel must
        not reach the next one)."""
        self._timer: threading.Timer | None = None

    @contextmanager
    def statement(self) -> Iterator[None]:
        """One statement (nested ones — a query's own bounds estimates — are part of it)."""
        with self._lock:
            self._depth += 1
            if self._depth == 1:
                self._why = None
                self._statements += 1
                self._timer = self._start_timer(self._statements)
        try:
            yield
        finally:
            with self._lock:
                self._depth -= 1
                if self._depth == 0 and self._timer is not None:
                    self._timer.cancel()
                    self._timer = None

    def _start_timer(self, statement: int) -> threading.Timer | None:
        if self.timeout is None:
            return None
        timer = threading.Timer(self.timeout, self.cancel, kwargs={
            "why": f"stopped by the statement timeout ({self.timeout:g} s)",
            "statement": statement})
        timer.daemon = True
        timer.start()
        return timer

    @contextmanager
    def reading(self, charge: Callable[[], Cost]) -> Iterator[None]:
        """Charge (``charge`` returns what it charged), then let the engine read; a cancel
        before the charge raises QueryCancelled and spends nothing, one after is charged."""
        with self._lock:
            if self._why is not None:
                raise QueryCancelled(NOTHING_SPENT)
            cost = charge()  # under the lock: a cancel sees the charge or none of it
            self._readings += 1
            self._reading = self._readings
        try:
            yield
        except QueryCancelled:
            raise QueryCancelled(charged_message(cost, self._why or "cancelled"),
                                 charged=cost) from None
        except BaseException as error:  # Ctrl-C, an engine error: charged all the same
            if isinstance(error, ExecutionError):
                error.charged = cost
            elif isinstance(error, KeyboardInterrupt):
                error.add_note(charged_message(cost, "interrupted"))
            raise
        finally:
            with self._lock:
                self._reading = 0

    @contextmanager
    def asking(self, scope: object, key: str) -> Iterator[None]:
        """One statement at a time, in this process, per question (``key``) of one answer
        store (``scope``): connections asking the same question at once are charged once,
        the others wait and get its stored answer (if it was cancelled or failed, the next
        one asks it again). Waiting reads no data: a cancel then is free."""
        with _QUESTIONS_LOCK:
            lock, users = _QUESTIONS.get((scope, key), (threading.Lock(), 0))
            _QUESTIONS[(scope, key)] = (lock, users + 1)
        try:
            while not lock.acquire(timeout=WAIT_EVERY):
                with self._lock:
                    if self._why is not None:
                        raise QueryCancelled(NOTHING_SPENT)
            try:
                yield
            finally:
                lock.release()
        finally:
            with _QUESTIONS_LOCK:
                lock, users = _QUESTIONS[(scope, key)]
                if users == 1:
                    del _QUESTIONS[(scope, key)]
                else:
                    _QUESTIONS[(scope, key)] = (lock, users - 1)

    def pause(self) -> None:
        """Wait a moment before asking again (another process answers the question);
        QueryCancelled, free, if the statement was cancelled."""
        time.sleep(WAIT_EVERY)
        with self._lock:
            if self._why is not None:
                raise QueryCancelled(NOTHING_SPENT)

    def run(self, task: Callable[[], T]) -> T:
        """``task()``, the engine's work: on the main thread it runs in a worker, so that
        Ctrl-C is heard at once (an engine call holds the main thread until it returns) and
        cancels the statement; the KeyboardInterrupt goes on once the engine has stopped."""
        if threading.current_thread() is not threading.main_thread():
            return task()
        outcome: dict[str, Any] = {}
        finished = threading.Event()

        def work() -> None:
            try:
                outcome["value"] = task()
            except BaseException as error:  # handed to the main thread below
                outcome["error"] = error
            finally:
                finished.set()

        threading.Thread(target=work, name="dpsql-engine", daemon=True).start()
        try:
            while not finished.wait(WAIT_EVERY):
                pass
        except KeyboardInterrupt:
            self.cancel("interrupted")
            finished.wait()
            raise
        if "error" in outcome:
            raise outcome["error"]
        return outcome["value"]

    def cancel(self, why: str = "cancelled", *, statement: int | None = None) -> None:
        """Cancel the statement running now, if any (from any thread); with ``statement``,
        only if that one (its number) is still the one running."""
        with self._lock:
            if self._depth == 0 or statement not in (None, self._statements):
                return
            self._why = self._why or why
            reading = self._reading
            if not reading:
                return
        threading.Thread(target=self._interrupt_while_reading, args=(reading,), daemon=True,
                         name="dpsql-cancel").start()

    def _interrupt_while_reading(self, reading: int) -> None:
        """Interrupt the engine call ``reading`` until it ends (an engine hears an interrupt
        only while it runs); under the lock, so that no later call is reached."""
        while True:
            with self._lock:
                if self._reading != reading:
                    return
                self._interrupt()
            time.sleep(INTERRUPT_EVERY)

"""Cancels over the wire: nothing that starts reading data is free, and the ledger is exact.

The red team's free bit: a query cancelled halfway between its time without and with one
person was cancelled every time with the person and never without, and none of it was
charged. Now a query is charged before its engine starts (``dpsql.statements``): a cancel
that lands later is charged in full and the client is told; one that lands before is free
and says so. Under a storm of cancels at random moments from several connections, the
ledger holds exactly one charge per query whose engine started — the answered ones and
those whose cancel said it was charged — and nothing else. With the server's time grid
(``--time-quantum``) a cancel acts on the grid, and answers leave on it.
"""

from __future__ import annotations

import random
import sqlite3
import threading
import time

import psycopg
import pytest

from tests.server.conftest import start, visits_catalog

CONNECTIONS = 8
CANCELS_EACH = 25
QUERY = ("SELECT specialty, COUNT(*) AS n, AVG(cost) AS c FROM visits WHERE cost > -{} "
         "GROUP BY specialty")


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    return visits_catalog(tmp_path_factory.mktemp("cancels"), 400_000, seed=5)


def _storm(served, user: str, worker: int, outcomes: list[tuple[str, float]]) -> None:
    """Ask distinct questions (no answer is cached) and cancel each at a random moment."""
    chance = random.Random(worker)
    with served.connect(user) as con:
        con.execute("SET dpsql.epsilon = 0.5")
        for i in range(CANCELS_EACH):
            timer = threading.Timer(chance.uniform(0.0, 0.25), con.cancel_safe)
            timer.start()
            try:
                con.execute(QUERY.format(worker * 1000 + i), prepare=False)
                outcomes.append(("answered", 0.5))
            except psycopg.errors.QueryCanceled as error:
                told = str(error)
                assert ("nothing was spent" in told) != ("was charged" in told), told
                outcomes.append(("free", 0.0) if "nothing was spent" in told else
                                ("charged", 0.5))
            finally:
                timer.cancel()
                timer.join()
            time.sleep(0.01)  # a cancel still in flight lands on no query of the next round


def _charges(ledger, user: str) -> tuple[int, float]:
    raw = sqlite3.connect(ledger, timeout=30)
    try:
        rows = raw.execute("SELECT epsilon FROM charges WHERE analyst = ?", (user,)).fetchall()
    finally:
        raw.close()
    return len(rows), sum(float(e) for (e,) in rows)


@pytest.mark.parametrize("quantum", [0.0, 0.05])
def test_a_storm_of_cancels_charges_exactly_the_queries_that_started(tmp_path, catalog,
                                                                     quantum):
    served = start(tmp_path, catalog=catalog, time_quantum=quantum)
    try:
        user = served.new_user(epsilon=1000.0, delta=1e-3)
        outcomes: list[tuple[str, float]] = []
        workers = [threading.Thread(target=_storm, args=(served, user, w, outcomes))
                   for w in range(CONNECTIONS)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(300)
        assert len(outcomes) == CONNECTIONS * CANCELS_EACH
        started = [kind for kind, _ in outcomes if kind != "free"]
        charges, epsilon = _charges(served.ledger, user)
        assert charges == len(started) and epsilon == pytest.approx(0.5 * len(started))
        kinds = {kind for kind, _ in outcomes}
        assert "charged" in kinds, outcomes  # cancels did land while engines ran
        if quantum == 0:
            assert "free" in kinds, outcomes  # and some before they started
    finally:
        served.server.close()


def test_answers_leave_on_the_time_grid(tmp_path, catalog):
    """With a grid of 0.2 s, a private answer takes a multiple of it (plus the wire)."""
    served = start(tmp_path, catalog=catalog, time_quantum=0.2)
    try:
        user = served.new_user(epsilon=1000.0, delta=1e-3)
        with served.connect(user) as con:
            for i in range(5):
                started = time.monotonic()
                con.execute(QUERY.format(i), prepare=False).fetchall()
                took = time.monotonic() - started
                assert abs(took / 0.2 - round(took / 0.2)) < 0.15 and took >= 0.19, took
    finally:
        served.server.close()

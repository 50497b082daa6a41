"""Several ``dpsql serve`` processes, one budget: two servers on one PostgreSQL ledger, 32
connections of one analyst spread over them racing for a budget that pays for a third of
what they ask, the same questions asked on both servers, and one server killed with
SIGKILL in the middle, its clients going on at the other.

What must hold, read from the ledger afterwards: the charges never exceed the budget
(exactly, in Fractions); every answered question is charged exactly once and every refused
one not at all, a question asked on both servers or asked again after the kill included;
everyone asking one question got one answer; no hold is left (the killed server's were
taken over when their questions were asked again).
"""

from __future__ import annotations

import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction

import psycopg
import pytest

from dpsql.frontends.server.sqlstates import BUDGET_EXCEEDED
from tests.postgres import connect_raw, create_database
from tests.server.conftest import PASSWORD
from tests.server.processes import ServeProcess, add_users, write_visits

CLIENTS = 32
ASKS = 6
"""Questions each client asks: its own, and every third one shared by all clients."""
BUDGET, COST = Fraction(3), Fraction(1, 20)
QUERY = ("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 0.05, delta = 0) "
         "COUNT(*) AS n FROM visits WHERE cost > {}")


def question(client: int, ask: int) -> int:
    """The question a client asks: shared by every client every third ask."""
    return 1000 + ask if ask % 3 == 0 else client * ASKS + ask


def client(servers: list, first: int, number: int, killed: threading.Event,
           outcomes: dict) -> None:
    """Ask this client's questions at ``servers[first]``; when that connection breaks, ask
    the same question again at the other server."""
    at = first
    con = None
    for ask in range(ASKS):
        asked = question(number, ask)
        while True:
            try:
                if con is None:
                    server = servers[at]
                    con = psycopg.connect(host=server.host, port=server.port, user="shared",
                                          password=PASSWORD, dbname="dpsql", autocommit=True,
                                          connect_timeout=30)
                rows = con.execute(QUERY.format(asked)).fetchall()
                outcomes[number].append((asked, "ok", rows))
                break
            except psycopg.Error as error:
                if error.sqlstate == BUDGET_EXCEEDED:
                    outcomes[number].append((asked, "refused", None))
                    break
                assert killed.is_set() and at == 0 and (con is None or con.broken), error
                con, at = None, 1 - at  # reconnect to the other server and ask again
                outcomes[number].append((asked, "moved", None))
    if con is not None:
        con.close()


@pytest.mark.slow
def test_two_servers_on_one_postgresql_ledger_share_one_budget(postgres_cluster, tmp_path):
    url = create_database(postgres_cluster, "shared_budget")
    add_users(url, {"shared": float(BUDGET)})
    catalog = write_visits(tmp_path, 20_000)
    killed, outcomes = threading.Event(), defaultdict(list)
    with ServeProcess(catalog, url, log=tmp_path / "a") as one, \
            ServeProcess(catalog, url, log=tmp_path / "b") as two, \
            ThreadPoolExecutor(CLIENTS) as pool:
        servers = [one, two]
        futures = [pool.submit(client, servers, number % 2, number, killed, outcomes)
                   for number in range(CLIENTS)]
        while sum(len(done) for done in outcomes.values()) < CLIENTS:  # a sixth done
            time.sleep(0.01)
        killed.set()
        one.kill()  # mid-load: its clients' questions are still running or waiting
        for future in futures:
            future.result(timeout=600)
        assert "Traceback" not in two.errors.read_text()
    moved = sum(what == "moved" for done in outcomes.values() for _, what, _ in done)
    assert moved > 0  # the kill landed while the first server's clients were asking
    answered = Counter(asked for done in outcomes.values() for asked, what, _ in done
                       if what == "ok")
    asked_anywhere = {asked for done in outcomes.values() for asked, _, _ in done}
    raw = connect_raw(url)
    try:
        charges = raw.execute("SELECT query, epsilon FROM charges").fetchall()
        holds = raw.execute("SELECT count(*) FROM holds").fetchone()[0]
    finally:
        raw.close()
    charged = Counter(int(query.rsplit(" ", 1)[1]) for query, _ in charges)
    assert sum(Fraction(epsilon) for _, epsilon in charges) <= BUDGET
    assert set(charged) == set(answered) and max(charged.values()) == 1, charged
    assert holds == 0
    answers = defaultdict(set)
    for done in outcomes.values():
        for asked, what, rows in done:
            if what == "ok":
                answers[asked].add(tuple(rows))
    assert all(len(seen) == 1 for seen in answers.values())  # one answer per question
    assert len(answered) == BUDGET / COST  # the whole budget was spent, and no more
    assert len(asked_anywhere) > len(answered)  # and some questions were refused
    shared = [q for q in answered if q >= 1000]
    assert shared and all(answered[q] > 1 for q in shared)  # asked by many, charged once
    assert sum(len(done) for done in outcomes.values()) == CLIENTS * ASKS + moved

"""Faults with real processes: a client that leaves mid-query, and ``dpsql serve`` killed
with SIGKILL mid-query and started again. Spends are recorded once, answers are released
only after their charge, and a stored answer is replayed, never drawn again."""

from __future__ import annotations

import sqlite3
import threading
import time

import psycopg
import pytest

from dpsql.accounting.users import Users
from dpsql.accounting.values import Budget
from dpsql.frontends.server import protocol as pg
from dpsql.frontends.server.auth import make_verifier
from tests.server.conftest import PASSWORD, Served, start, visits_catalog
from tests.server.processes import ServeProcess, integrity, ledger_counts, ledger_holds
from tests.server.wire import connect, error_fields, login, read_message

SLOW = "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 1e-6) specialty, " \
       "COUNT(*) AS n, AVG(cost) AS c FROM visits WHERE cost > {} GROUP BY specialty " \
       "ORDER BY specialty"
"""About a second over two million rows: long enough to leave or be killed in the middle.
Its ε is its own (the default is a share of what is left), so asked again it is the same
question, answered from the ledger for free."""
LONG = "SELECT specialty, MEDIAN(cost), PERCENTILE_CONT(0.9) WITHIN GROUP (ORDER BY cost), " \
       "COUNT(DISTINCT cost) FROM visits GROUP BY specialty"
"""Longer (a few seconds): still running when the server is stopped."""


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    return visits_catalog(tmp_path_factory.mktemp("faults"), 2_000_000, seed=3).parent


def add_user(ledger, name: str, epsilon: float = 20.0) -> str:
    with Users(ledger) as users:
        users.add(name, make_verifier(PASSWORD), Budget(epsilon=epsilon, delta=1e-5))
    return name


def ask(server: ServeProcess | Served, user: str, sql: str) -> list[tuple]:
    with psycopg.connect(host=server.host, port=server.port, user=user, password=PASSWORD,
                         dbname="dpsql", autocommit=True, connect_timeout=30) as con:
        return con.execute(sql).fetchall()


def spent(server: ServeProcess, user: str) -> float:
    return ask(server, user, "SHOW dpsql.budget")[0][1]


def wait_for_audit(ledger, user: str, entries: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        with Users(ledger) as users:
            if len(users.audit(user)) >= entries:
                return
        assert time.monotonic() < deadline, "the server never finished the statement"
        time.sleep(0.05)


def test_a_client_leaving_mid_query_is_charged_once_and_can_collect_later(big, tmp_path):
    ledger = tmp_path / "ledger.db"
    user = add_user(ledger, "leaver")
    query = SLOW.format(0)
    with ServeProcess(big / "catalog.toml", ledger, log=tmp_path / "serve") as server:
        with connect(server.host, server.port) as sock:
            assert login(sock, user, PASSWORD) == ("ok", "")
            sock.sendall(pg.frame(b"Q", pg.cstring(query)))
            time.sleep(0.05)
            assert ledger_counts(ledger, user) == (0, 0)  # the query is still running
        wait_for_audit(ledger, user, 1)  # the server finished it after the client left
        assert ledger_counts(ledger, user) == (1, 1)  # charged once, its answer stored
        first = ask(server, user, query)  # asked again: the stored answer, free
        assert ledger_counts(ledger, user) == (1, 1) and spent(server, user) == 1.0
        assert ask(server, user, query) == first
        server.stop()
    errors = server.errors.read_text()
    assert "Traceback" not in errors and "terminate called" not in errors, errors
    assert integrity(ledger) == "ok"


def test_an_orderly_stop_answers_the_running_query_and_tells_every_client(big, tmp_path):
    """SIGTERM mid-query: the statement finishes and its answer reaches its client, then
    that client and an idle one hear FATAL 57P01; the process exits 0 with nothing on
    stderr but its log lines, the ledger closed only after the last connection."""
    ledger = tmp_path / "ledger.db"
    user = add_user(ledger, "stopped")
    with ServeProcess(big / "catalog.toml", ledger, log=tmp_path / "serve") as server:
        idle = psycopg.connect(host=server.host, port=server.port, user=user,
                               password=PASSWORD, dbname="dpsql", autocommit=True)
        with connect(server.host, server.port) as sock:
            assert login(sock, user, PASSWORD) == ("ok", "")
            sock.sendall(pg.frame(b"Q", pg.cstring(SLOW.format(0))))
            time.sleep(0.2)
            server.process.terminate()
            replies = [read_message(sock)]
            while replies[-1][0] != b"E":
                replies.append(read_message(sock))
            kinds = [kind for kind, _ in replies]
            assert kinds[0] == b"T" and b"D" in kinds and kinds[-3:-1] == [b"C", b"Z"]
            assert error_fields(replies[-1][1])["C"] == "57P01"
        with pytest.raises(psycopg.OperationalError, match="the server is stopping"):
            idle.execute("SELECT 1")
        assert server.process.wait(60) == 0
    assert ledger_counts(ledger, user) == (1, 1)  # charged once, its answer stored
    errors = server.errors.read_text()
    assert "Traceback" not in errors and "terminate called" not in errors, errors
    assert integrity(ledger) == "ok"


def test_a_stop_interrupts_what_runs_past_its_grace_and_charges_it(big, tmp_path):
    """``stop_grace`` 0: the statement running at the stop is interrupted and the stop
    returns without waiting for it. Its engine had started, so it stays charged in full
    (when it stopped tells how long it ran) and the client is told so."""
    served = start(tmp_path, catalog=big / "catalog.toml", stop_grace=0.0)
    user = add_user(served.ledger, "interrupted")
    thread, outcome = run_in_thread(served, user, LONG)
    wait_until_paid(served.ledger, user, 0)
    began = time.monotonic()
    served.server.close()
    assert time.monotonic() - began < 5
    thread.join(60)
    assert outcome["error"].sqlstate == "57014", outcome
    assert "its full cost" in str(outcome["error"]) and "was charged" in str(outcome["error"])
    assert ledger_counts(served.ledger, user) == (1, 0)
    with Users(served.ledger) as users:
        assert [(e.sqlstate, e.epsilon > 0) for e in users.audit(user)] == [("57014", True)]


def wait_until_paid(ledger, user: str, paid: int) -> None:
    """Return as soon as ``user`` has paid for more than ``paid`` questions, by a charge or
    by a hold (its engine may start), polled every ms."""
    raw = sqlite3.connect(ledger, timeout=30)
    try:
        deadline = time.monotonic() + 60
        while raw.execute("SELECT (SELECT COUNT(*) FROM charges WHERE analyst = ?) + "
                          "(SELECT COUNT(*) FROM holds WHERE analyst = ?)",
                          (user, user)).fetchone()[0] <= paid:
            assert time.monotonic() < deadline, "the query was never paid for"
            time.sleep(0.001)
    finally:
        raw.close()


def run_in_thread(server: ServeProcess | Served, user: str,
                  sql: str) -> tuple[threading.Thread, dict]:
    outcome: dict = {}

    def client() -> None:
        try:
            outcome["rows"] = ask(server, user, sql)
        except psycopg.Error as error:
            outcome["error"] = error

    thread = threading.Thread(target=client)
    thread.start()
    return thread, outcome


@pytest.mark.slow
def test_sigkill_mid_query_loses_no_spend_and_replays_stored_answers(big, tmp_path):
    """Killed at moments spread over the query (before, during, after its hold), then
    after an answer was sent; each time started again on the same ledger, where the
    question is asked again. A query's cost is held before its engine starts, and its
    charge and answer commit together after: a kill leaves neither, or a hold (its engine
    may have run: it stays paid, and asking again takes it over, charging nothing more),
    or both (replayed, free). Each question is charged exactly once."""
    ledger = tmp_path / "ledger.db"
    user = add_user(ledger, "survivor")
    seen = set()
    server = ServeProcess(big / "catalog.toml", ledger, log=tmp_path / "serve")
    try:
        for step, when in enumerate((0.1, 0.5, 1.0, "held", "held", "answered")):
            query = SLOW.format(step)
            before = ledger_counts(ledger, user)
            thread, outcome = run_in_thread(server, user, query)
            if when == "answered":
                thread.join(60)  # the answer reached the client, then the server dies
            elif when == "held":
                wait_until_paid(ledger, user, before[0])  # the hold has just committed
            else:
                time.sleep(when)
            server.kill()
            thread.join(60)
            charges, cached = (a - b for a, b in zip(ledger_counts(ledger, user), before,
                                                     strict=True))
            held = ledger_holds(ledger, user)
            assert (charges, cached, held) in ((0, 0, 0), (0, 0, 1), (1, 1, 0)), \
                (charges, cached, held)
            if "rows" in outcome:
                assert (charges, cached) == (1, 1)
            if when == "held":
                assert (charges, held) in ((0, 1), (1, 0))  # what was paid stays paid
            seen.add((charges, held, "rows" in outcome))
            assert integrity(ledger) == "ok"
            server = ServeProcess(big / "catalog.toml", ledger, log=tmp_path / f"serve{step}")
            rows = ask(server, user, query)
            assert ledger_counts(ledger, user) == (before[0] + 1, before[1] + 1)
            assert ledger_holds(ledger, user) == 0 and spent(server, user) == step + 1
            if "rows" in outcome:  # stored before the kill: replayed, not drawn again
                assert rows == outcome["rows"]
    finally:
        server.stop()
    assert (0, 0, False) in seen and (0, 1, False) in seen and (1, 0, True) in seen, seen

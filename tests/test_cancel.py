"""Nothing that starts reading data is free (``dpsql.statements``).

A query cancelled while its engine runs tells how long it ran, and how long it runs may
depend on the data, so every way a query can stop after its engine started — a cancel from
another thread, a statement timeout, Ctrl-C, an engine error — is charged in full, and the
caller is told. A cancel that lands before the engine starts is free.
"""

from __future__ import annotations

import os
import signal
import threading
import time

import duckdb
import pytest

import dpsql
from dpsql.accounting.values import Cost
from dpsql.statements import NOTHING_SPENT

SLOW = "SELECT COUNT(*) FROM people"
"""Minutes of work: the view counts ten billion people."""


def _connection(**options) -> dpsql.Connection:
    engine = duckdb.connect()
    engine.execute("CREATE VIEW people AS SELECT range AS pid FROM range(10000000000)")
    engine.execute("CREATE TABLE few AS SELECT range AS pid FROM range(100)")
    options.setdefault("budget", dpsql.Budget(epsilon=10.0))
    con = dpsql.connect(engine, **options)
    con.register("people", "people", privacy_unit="pid")
    con.register("few", "few", privacy_unit="pid")
    return con


def _cancel_after(con: dpsql.Connection, seconds: float) -> threading.Timer:
    timer = threading.Timer(seconds, con.cancel)
    timer.start()
    return timer


def test_a_cancel_while_the_engine_runs_is_charged_in_full_and_said():
    con = _connection()
    _cancel_after(con, 0.5)
    started = time.monotonic()
    with pytest.raises(dpsql.QueryCancelled, match="after it started reading the data, and "
                                                   "its full cost") as caught:
        con.sql(SLOW, epsilon=0.5)
    assert time.monotonic() - started < 30
    assert caught.value.charged == Cost(0.5, 0.0)
    assert con.budget.spent.epsilon == 0.5 and len(con.budget.charges) == 1
    assert con.sql("SELECT COUNT(*) FROM few", epsilon=0.5).fetchall()  # the cancel is over


def test_a_cancel_before_the_engine_starts_is_free(monkeypatch):
    """The cancel lands while the query is compiled: nothing was read, nothing is spent."""
    con = _connection()
    compile_ = con._compile

    def cancelled_while_compiling(*args, **kwargs):
        compiled = compile_(*args, **kwargs)
        con.cancel()
        return compiled

    monkeypatch.setattr(con, "_compile", cancelled_while_compiling)
    with pytest.raises(dpsql.QueryCancelled, match=NOTHING_SPENT) as caught:
        con.sql(SLOW, epsilon=0.5)
    assert caught.value.charged is None and con.budget.spent.epsilon == 0
    monkeypatch.setattr(con, "_compile", compile_)
    assert con.sql("SELECT COUNT(*) FROM few", epsilon=0.5).fetchall()


def test_a_cancel_when_nothing_runs_cancels_nothing():
    con = _connection()
    con.cancel()
    assert con.sql("SELECT COUNT(*) FROM few", epsilon=0.5).fetchall()
    assert con.budget.spent.epsilon == 0.5


def test_the_statement_timeout_stops_a_query_and_charges_it():
    con = _connection(statement_timeout=0.5)
    with pytest.raises(dpsql.QueryCancelled, match=r"stopped by the statement timeout \(0.5 s\)"):
        con.sql(SLOW, epsilon=0.25)
    assert con.budget.spent.epsilon == 0.25
    assert con.sql("SELECT COUNT(*) FROM few", epsilon=0.25).fetchall()


@pytest.mark.parametrize("seconds", [0, -1, float("nan"), float("inf"), "1"])
def test_a_statement_timeout_must_be_a_positive_number(seconds):
    with pytest.raises(dpsql.Error, match="statement_timeout"):
        dpsql.connect(statement_timeout=seconds)


def test_ctrl_c_while_the_engine_runs_is_charged_and_noted():
    """SIGINT in the main thread (Ctrl-C in a script or a notebook cell): DuckDB stops the
    query, the KeyboardInterrupt goes on, with a note of the charge."""
    con = _connection()
    threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT)).start()
    with pytest.raises(KeyboardInterrupt) as caught:
        con.sql(SLOW, epsilon=0.5)
    assert any("its full cost (epsilon=0.5, delta=0) was charged" in note
               for note in caught.value.__notes__)
    assert con.budget.spent.epsilon == 0.5


def test_an_engine_failure_after_the_start_is_charged_and_says_so(monkeypatch):
    con = _connection()

    def broken(compiled, *, salt):
        raise duckdb.IOException("disk on fire")

    monkeypatch.setattr(con.backend, "execute", broken)
    with pytest.raises(dpsql.ExecutionError, match="its full cost was charged") as caught:
        con.sql("SELECT COUNT(*) FROM few", epsilon=0.5)
    assert caught.value.charged == Cost(0.5, 0.0) and con.budget.spent.epsilon == 0.5


def test_one_question_asked_at_once_waits_and_a_waiter_cancelled_is_free(tmp_path):
    """Two connections of one ledger ask the same question: the second waits for the first's
    answer (one charge); cancelled while waiting, it has read nothing and pays nothing."""
    ledger = tmp_path / "ledger.db"
    first = _connection(ledger=ledger, analyst="ann")
    second = _connection(ledger=ledger, analyst="ann", budget=None)
    outcome: dict[str, object] = {}

    def ask_first() -> None:
        try:
            first.sql(SLOW, epsilon=0.5)
        except dpsql.QueryCancelled as error:
            outcome["first"] = error

    thread = threading.Thread(target=ask_first)
    thread.start()
    time.sleep(0.5)
    _cancel_after(second, 0.3)
    with pytest.raises(dpsql.QueryCancelled, match=NOTHING_SPENT):
        second.sql(SLOW, epsilon=0.5)
    first.cancel()
    thread.join(30)
    assert isinstance(outcome["first"], dpsql.QueryCancelled)
    assert first.budget.spent.epsilon == 0.5 and len(first.budget.charges) == 1

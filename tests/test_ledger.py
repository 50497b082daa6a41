"""The durable ledger in one process: exact sums, durability, budgets, cache, audit log.

Every test runs against both stores: a SQLite file and a PostgreSQL database (``ledger_url``).
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
import threading
from pathlib import Path

import pytest

import dpsql
from dpsql.accounting import Budget
from dpsql.accounting.ledger import Ledger
from tests.postgres import connect_raw


@pytest.fixture
def path(ledger_url: str) -> str:
    return ledger_url


def footprint(path: str, watcher) -> tuple:
    """Everything a write could change. SQLite: rows, the commit counter seen by ``watcher``
    (it moves when any other connection commits), the autoincrement counter, file sizes.
    PostgreSQL: rows, the id sequence (a rolled-back insert moves it too), every table."""
    if isinstance(watcher, sqlite3.Connection):
        return (watcher.execute("SELECT * FROM charges ORDER BY id").fetchall(),
                watcher.execute("PRAGMA data_version").fetchone(),
                watcher.execute("SELECT * FROM sqlite_sequence").fetchall(),
                Path(path).stat().st_size, Path(f"{path}-wal").stat().st_size)
    return (watcher.execute("SELECT * FROM charges ORDER BY id").fetchall(),
            watcher.execute("SELECT last_value, is_called FROM charges_id_seq").fetchone(),
            watcher.execute("SELECT * FROM budgets ORDER BY scope, name").fetchall(),
            watcher.execute("SELECT * FROM cache ORDER BY key").fetchall())


def test_exact_sums_never_overdraw(path):
    with Ledger(path, budget=Budget(epsilon=0.3)) as ledger:
        for _ in range(3):
            ledger.charge(0.1, 0.0, query="q")  # 0.1 + 0.1 + 0.1 != 0.3 in floats
        with pytest.raises(dpsql.BudgetExceededError, match="nothing was spent"):
            ledger.charge(1e-12, 0.0, query="q")
        assert ledger.spent == dpsql.accounting.Cost(0.3, 0.0)
        assert ledger.remaining == dpsql.accounting.Cost(0.0, 0.0)
        assert len(ledger.charges) == 3


def test_delta_is_accounted_separately(path):
    with Ledger(path, budget=Budget(epsilon=10, delta=1e-6)) as ledger:
        ledger.charge(1, 6e-7, query="a")
        ledger.check(1, 4e-7)
        with pytest.raises(dpsql.BudgetExceededError, match="delta"):
            ledger.check(1, 6e-7)
        with pytest.raises(dpsql.BudgetExceededError, match="delta"):
            ledger.charge(1, 6e-7, query="b")
        ledger.charge(1, 4e-7, query="c")
        assert [c.query for c in ledger.charges] == ["a", "c"]
        assert ledger.remaining.delta == 0.0


def test_dataset_budget_binds_all_analysts_together(path):
    visits = {"visits": Budget(epsilon=0.5)}
    alice = Ledger(path, budget=Budget(epsilon=1.0), analyst="alice", dataset_budgets=visits)
    bob = Ledger(path, budget=Budget(epsilon=1.0), analyst="bob")
    alice.charge(0.3, 0.0, query="a", dataset="visits")
    with pytest.raises(dpsql.BudgetExceededError, match="dataset 'visits'"):
        bob.check(0.3, 0.0, dataset="visits")
    with pytest.raises(dpsql.BudgetExceededError, match="dataset 'visits'"):
        bob.charge(0.3, 0.0, query="b", dataset="visits")
    bob.charge(0.2, 0.0, query="b", dataset="visits")
    bob.charge(0.3, 0.0, query="c", dataset="claims")  # no budget set for claims
    with pytest.raises(dpsql.BudgetExceededError, match="analyst 'alice'"):
        alice.charge(0.8, 0.0, query="d", dataset="claims")
    assert (alice.spent.epsilon, bob.spent.epsilon) == (0.3, 0.5)
    alice.close()
    bob.close()


def test_charges_survive_reopening(path):
    with Ledger(path, budget=Budget(epsilon=1.0, delta=1e-6), analyst="alice") as ledger:
        first = ledger.charge(0.25, 1e-7, query="SELECT COUNT(*) FROM t", dataset="t",
                              plan={"columns": ["n"]}, mechanism="laplace", rho=0.01)
    with Ledger(path, budget=Budget(epsilon=1.0, delta=1e-6), analyst="alice") as ledger:
        assert ledger.charges == (first,)
        assert ledger.spent == dpsql.accounting.Cost(0.25, 1e-7)
        ledger.charge(0.75, 0.0, query="rest")
    with Ledger(path, budget=None, analyst="alice") as ledger:
        with pytest.raises(dpsql.BudgetExceededError):
            ledger.check(1e-9, 0.0)
        entry = ledger.history()[0]
    assert entry["plan"] == '{"columns": ["n"]}' and entry["rho"] == 0.01
    assert entry["query_hash"] == hashlib.sha256(b"SELECT COUNT(*) FROM t").hexdigest()
    assert (entry["mechanism"], entry["dataset"], entry["status"]) == ("laplace", "t", "spent")


def test_a_different_budget_is_refused_unless_reset(path):
    Ledger(path, budget=Budget(epsilon=1.0), analyst="alice").close()
    with pytest.raises(dpsql.PrivacyError, match="reset_budget=True"):
        Ledger(path, budget=Budget(epsilon=5.0), analyst="alice")
    with Ledger(path, budget=None, analyst="alice") as ledger:
        assert ledger.total == Budget(epsilon=1.0)
        ledger.charge(0.75, 0.0, query="q")
    with Ledger(path, budget=Budget(epsilon=0.5), analyst="alice", reset_budget=True) as ledger:
        assert ledger.total == Budget(epsilon=0.5)
        assert ledger.spent.epsilon == 0.75 and ledger.remaining.epsilon == 0.0
    with pytest.raises(dpsql.PrivacyError, match="no budget for analyst 'carol'"):
        Ledger(path, budget=None, analyst="carol")
    with pytest.raises(dpsql.PrivacyError, match="dataset name ''"):
        Ledger(path, budget=None, analyst="alice", dataset_budgets={"": Budget(epsilon=1.0)})


def test_a_refused_charge_writes_nothing(path):
    with Ledger(path, budget=Budget(epsilon=1.0, delta=1e-6)) as ledger:
        watcher = connect_raw(path)
        ledger.charge(0.5, 0.0, query="q")
        before = footprint(path, watcher)
        for epsilon, delta in [(0.6, 0.0), (0.0, 1e-5), (float("nan"), 0.0), (-1.0, 0.0),
                               (True, 0.0), (float("inf"), 0.0), ("0.1", 0.0)]:
            with pytest.raises(dpsql.PrivacyError):
                ledger.charge(epsilon, delta, query="refused")
        assert footprint(path, watcher) == before
        ledger.charge(0.4, 0.0, query="fits")
        assert footprint(path, watcher)[1] != before[1]  # the watcher does see commits
        watcher.close()


def test_the_audit_log_is_append_only(path):
    with Ledger(path, budget=Budget(epsilon=1.0)) as ledger:
        ledger.charge(0.5, 0.0, query="q")
    raw = connect_raw(path)
    statements = ["UPDATE charges SET epsilon = '0'", "DELETE FROM charges"]
    if isinstance(raw, sqlite3.Connection):
        version, errors = "PRAGMA user_version", sqlite3.IntegrityError
        assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    else:
        import psycopg

        statements.append("TRUNCATE charges")
        version, errors = "SELECT version FROM dpsql_schema", psycopg.Error
    for statement in statements:
        with pytest.raises(errors, match="append-only"):
            raw.execute(statement)
    assert raw.execute(version).fetchone() == (3,)  # version 3: the holds table
    raw.execute("PRAGMA user_version = 99" if isinstance(raw, sqlite3.Connection)
                else "UPDATE dpsql_schema SET version = 99")
    raw.close()
    with pytest.raises(dpsql.PrivacyError, match="schema version 99"):
        Ledger(path, budget=None)


def test_history_covers_every_analyst_in_order(path):
    alice = Ledger(path, budget=Budget(epsilon=1.0), analyst="alice")
    bob = Ledger(path, budget=Budget(epsilon=2.0), analyst="bob")
    alice.charge(0.1, 0.0, query="a1")
    bob.charge(0.2, 0.0, query="b1")
    alice.charge(0.3, 0.0, query="a2")
    assert [h["query"] for h in alice.history()] == ["a1", "b1", "a2"]
    assert [h["query"] for h in alice.history("bob")] == ["b1"]
    assert [c.query for c in alice.charges] == ["a1", "a2"]
    assert bob.spent.epsilon == 0.2 and bob.total == Budget(epsilon=2.0)
    alice.close()
    bob.close()


def test_cache_returns_the_first_stored_answer(path):
    with Ledger(path, budget=Budget(epsilon=1.0), analyst="alice") as alice:
        assert alice.cache_get("alice|q|0.5") is None
        assert alice.cache_put("alice|q|0.5", b"first") == b"first"
        assert alice.cache_put("alice|q|0.5", b"second") == b"first"
    with Ledger(path, budget=Budget(epsilon=1.0), analyst="bob") as bob:
        assert bob.cache_get("alice|q|0.5") is None
    with Ledger(path, budget=None, analyst="alice") as alice:
        assert alice.cache_get("alice|q|0.5") == b"first"
        assert alice.charges == ()


def test_threads_sharing_a_ledger_cannot_overdraw(path):
    shared = Ledger(path, budget=Budget(epsilon=1.0))
    accepted = []

    def spend(ledger: Ledger) -> None:
        for _ in range(25):
            with contextlib.suppress(dpsql.BudgetExceededError):
                accepted.append(ledger.charge(0.01, 0.0, query="q").id)

    own = [Ledger(path, budget=None) for _ in range(3)]
    threads = [threading.Thread(target=spend, args=(ledger,)) for ledger in [shared] * 3 + own]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(accepted) == 100 == len(set(accepted)) == len(shared.charges)
    assert shared.remaining.epsilon == 0.0
    for ledger in [shared, *own]:
        ledger.close()


def test_a_closed_ledger_refuses_to_charge(path):
    ledger = Ledger(path, budget=Budget(epsilon=1.0))
    ledger.close()
    with pytest.raises(dpsql.PrivacyError, match="release nothing"):
        ledger.charge(0.1, 0.0, query="q")


def test_the_first_answer_kept_under_a_key_is_everyones(path):
    """``cache_put``: the first answer stored under a key is kept and returned to a later
    one under the same key (one question has one released value)."""
    with Ledger(path, budget=Budget(epsilon=1.0), analyst="alice") as alice:
        assert alice.cache_put("k", b"first") == b"first"
        assert alice.cache_put("k", b"second") == b"first"
        assert alice.cache_get("k") == b"first" and alice.cache_get("other") is None

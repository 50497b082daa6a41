"""The order a query is answered in (docs/architecture.md, "One query, in order"): compile,
look the question up, check the budget and charge in one step, execute, release, store.

The charge comes before the engine, not after the release: when a query stops tells how
long it ran, which may depend on the data, so once the engine may read data nothing gives
the cost back (``dpsql.statements``; the cancels themselves: ``tests/test_cancel.py``).
"""

from __future__ import annotations

import importlib

import pyarrow as pa
import pytest

import dpsql
from dpsql.accounting.values import Cost

COUNT = "SELECT COUNT(*) FROM few"
SECRET = "a message quoting a private value"
connection = importlib.import_module("dpsql.connection")  # the module, not the function


def _traced(monkeypatch) -> tuple[dpsql.Connection, list[str]]:
    """A connection with a budget of ε = 1 whose steps, when called, are listed in order."""
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1.0))
    con.register("few", pa.table({"pid": list(range(100))}), privacy_unit="pid")
    steps: list[str] = []

    def trace(owner: object, name: str, step: str) -> None:
        original = getattr(owner, name)

        def traced(*args, **kwargs):
            steps.append(step)
            return original(*args, **kwargs)

        monkeypatch.setattr(owner, name, traced)

    for owner, name, step in ((con, "_compile", "compile"), (con.answers, "get", "look up"),
                              (con.budget, "charge", "charge"),
                              (con.backend, "execute", "execute"),
                              (connection, "release", "release"), (con.answers, "put", "store")):
        trace(owner, name, step)
    return con, steps


def test_a_query_is_charged_before_its_engine_runs_and_stored_after_its_release(monkeypatch):
    con, steps = _traced(monkeypatch)
    con.sql(COUNT, epsilon=0.5)
    assert steps == ["compile", "look up", "charge", "execute", "release", "store"]
    steps.clear()
    con.sql(COUNT, epsilon=0.5)
    assert steps == ["compile", "look up"]  # the same question: its stored answer, free
    assert con.budget.spent == Cost(0.5, 0.0)


def test_a_query_the_budget_cannot_pay_reaches_no_engine(monkeypatch):
    con, steps = _traced(monkeypatch)
    with pytest.raises(dpsql.BudgetExceededError, match="nothing was spent"):
        con.sql(COUNT, epsilon=2.0)
    assert steps == ["compile", "look up", "charge"]
    assert con.budget.spent == Cost(0.0, 0.0)


def test_a_release_that_fails_stays_charged_and_the_question_is_asked_again(monkeypatch):
    """A failure after the charge is answered generically, keeps the charge and stores no
    answer: asked again, the question runs, and is charged, again."""
    con, steps = _traced(monkeypatch)
    release = connection.release

    def fails(*args, **kwargs):
        raise ValueError(SECRET)

    monkeypatch.setattr(connection, "release", fails)
    with pytest.raises(dpsql.ExecutionError, match="its full cost was charged") as caught:
        con.sql(COUNT, epsilon=0.5)
    assert caught.value.charged == Cost(0.5, 0.0) and SECRET not in str(caught.value)
    assert steps == ["compile", "look up", "charge", "execute"]
    monkeypatch.setattr(connection, "release", release)
    steps.clear()
    assert con.sql(COUNT, epsilon=0.5).fetchall()
    assert steps == ["compile", "look up", "charge", "execute", "release", "store"]
    assert con.budget.spent == Cost(1.0, 0.0)

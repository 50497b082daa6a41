"""dpsql.connect(ledger=...): a durable ledger shared by processes, with a shared cache (a
SQLite file or a PostgreSQL URL: ``ledger_url``)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import dpsql
from dpsql.datasets import pums_path

QUERY = "SELECT sex, COUNT(*) AS n FROM pums GROUP BY sex"


def connection(path, **options) -> dpsql.Connection:
    con = dpsql.connect(ledger=str(path), **options)
    con.register("pums", str(pums_path("PUMS_dup")), privacy_unit="pid",
                 public_keys={"sex": [0, 1]})
    return con


def test_spends_survive_reopening_and_are_shared(ledger_url):
    path = ledger_url
    first = connection(path, budget=dpsql.Budget(epsilon=1.0), analyst="alice")
    first.sql(QUERY, epsilon=0.5)
    first.close()
    again = connection(path, budget=None, analyst="alice")
    assert again.budget.spent.epsilon == 0.5
    with pytest.raises(dpsql.BudgetExceededError):
        again.sql("SELECT COUNT(*) FROM pums", epsilon=0.75)
    assert again.budget.charges[0].query == QUERY


def test_cached_answer_is_shared_through_the_ledger(ledger_url):
    path = ledger_url
    a = connection(path, budget=dpsql.Budget(epsilon=1.0), analyst="bob")
    answer = a.sql(QUERY, epsilon=0.5).fetchall()
    b = connection(path, budget=None, analyst="bob")
    assert b.sql(QUERY, epsilon=0.5).fetchall() == answer
    assert b.budget.spent.epsilon == 0.5


def test_another_process_sees_the_charge(ledger_url):
    path = ledger_url
    connection(path, budget=dpsql.Budget(epsilon=1.0), analyst="carol").sql(QUERY, epsilon=0.25)
    code = textwrap.dedent(f"""
        import dpsql
        con = dpsql.connect(ledger={str(path)!r}, budget=None, analyst="carol")
        print(con.budget.spent.epsilon, con.budget.remaining.epsilon)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True)
    assert out.stdout.split() == ["0.25", "0.75"]


def test_report_lists_every_method(ledger_url):
    con = connection(ledger_url, budget=dpsql.Budget(epsilon=5.0, delta=1e-6))
    for eps in (0.1, 0.2, 0.3):
        con.sql("SELECT COUNT(*) FROM pums", epsilon=eps)
    report = con.report()
    assert report.queries == 3 and report.basic[0] == pytest.approx(0.6)
    assert report.limit_method == "basic" and report.pld is not None
    assert report.pld <= report.basic[0] + 1e-3
    assert "PLD" in str(report)


def test_profile_tradeoff_and_plot(ledger_url, tmp_path):
    con = connection(ledger_url, budget=dpsql.Budget(epsilon=5.0, delta=1e-6))
    con.sql("SELECT COUNT(*) FROM pums", epsilon=0.5)
    con.sql("SELECT COUNT(*) FROM pums", epsilon=0.7)
    report = con.report()
    deltas = report.privacy_profile([0.0, 0.6, 1.2, 2.0])
    assert deltas[0] > deltas[1] > deltas[2] >= deltas[3] == pytest.approx(0.0, abs=1e-12)
    alphas, betas = report.tradeoff()
    assert alphas[0] == 0 and betas[-1] == 0 and (np.diff(betas) <= 1e-12).all()
    report.plot(str(tmp_path / "budget.png"))
    assert (tmp_path / "budget.png").stat().st_size > 1000


def test_dataset_budget_caps_every_analyst_together(ledger_url):
    path = ledger_url
    caps = {"pums": dpsql.Budget(epsilon=1.0)}
    ann = connection(path, budget=dpsql.Budget(epsilon=5.0), analyst="ann", dataset_budgets=caps)
    ann.sql("SELECT COUNT(*) FROM pums", epsilon=0.75)
    bob = connection(path, budget=dpsql.Budget(epsilon=5.0), analyst="bob", dataset_budgets=caps)
    with pytest.raises(dpsql.BudgetExceededError, match="dataset"):
        bob.sql("SELECT COUNT(*) FROM pums", epsilon=0.5)
    bob.sql("SELECT COUNT(*) FROM pums", epsilon=0.25)
    assert bob.budget.spent.epsilon == 0.25


def test_one_question_asked_at_once_on_many_connections_is_charged_once(ledger_url):
    """Connections of one analyst racing with the same question: one charge, one answer
    (the charge and the stored answer are one ledger transaction, and whoever stores
    second gets the first answer back, uncharged)."""
    path = ledger_url
    connection(path, budget=dpsql.Budget(epsilon=10.0), analyst="dora").close()
    cons = [connection(path, budget=None, analyst="dora") for _ in range(6)]
    start, answers = threading.Barrier(len(cons)), []

    def ask(con: dpsql.Connection) -> None:
        start.wait()
        answers.append(con.sql(QUERY, epsilon=0.5).fetchall())

    threads = [threading.Thread(target=ask, args=(con,)) for con in cons]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(answers) == len(cons) and all(a == answers[0] for a in answers)
    assert len(cons[0].budget.charges) == 1 and cons[0].budget.spent.epsilon == 0.5
    for con in cons:
        con.close()

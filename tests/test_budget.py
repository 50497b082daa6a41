"""Budget accounting: exact, atomic, and refusing before any data is touched."""

from __future__ import annotations

import threading

import pytest

import dpsql
from dpsql.accounting import Accountant, Budget


def test_exact_arithmetic_never_overdraws():
    acct = Accountant(Budget(epsilon=0.3))
    for _ in range(3):
        acct.charge(0.1, 0.0, query="q")   # 0.1 + 0.1 + 0.1 != 0.3 in floats
    with pytest.raises(dpsql.BudgetExceededError):
        acct.charge(1e-12, 0.0, query="q")
    assert acct.remaining.epsilon == pytest.approx(0.0, abs=1e-15)


def test_delta_is_accounted_separately():
    acct = Accountant(Budget(epsilon=10, delta=1e-6))
    acct.charge(1, 6e-7, query="a")
    with pytest.raises(dpsql.BudgetExceededError, match="delta"):
        acct.charge(1, 6e-7, query="b")
    assert len(acct.charges) == 1


def test_concurrent_charges_cannot_overdraw():
    acct = Accountant(Budget(epsilon=1.0))
    accepted = []

    def spend():
        for _ in range(50):
            try:
                acct.charge(0.01, 0.0, query="q")
                accepted.append(1)
            except dpsql.BudgetExceededError:
                pass

    threads = [threading.Thread(target=spend) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(accepted) == 100 == len(acct.charges)


@pytest.mark.parametrize(("epsilon", "delta"), [(0, 0), (-1, 0), (float("nan"), 0),
                                                (float("inf"), 0), (1, 1), (1, -0.1),
                                                (True, 0), ("1", 0)])
def test_invalid_budgets_are_refused(epsilon, delta):
    with pytest.raises(dpsql.PrivacyError):
        Budget(epsilon=epsilon, delta=delta)


def test_gaussian_workloads_fit_more_queries_through_the_zcdp_filter():
    import pyarrow as pa

    con = dpsql.connect(budget=dpsql.Budget(epsilon=3.0, delta=1e-5), cache=False)
    keys = [f"k{i}" for i in range(20)]
    con.register("t", pa.table({"pid": list(range(200)), "k": keys * 10}), privacy_unit="pid",
                 max_groups_per_unit=20, public_keys={"k": keys})
    query = "SELECT k, COUNT(*) FROM t GROUP BY k"
    assert con.explain(query, epsilon=1.0, delta=1e-7).to_dict()["mechanism"]["kind"] == \
        "gaussian"
    for _ in range(4):     # basic composition would stop after 3
        con.sql(query, epsilon=1.0, delta=1e-7)
    spent = con.budget.spent
    assert 3.0 >= spent.epsilon > 1.0 and spent.delta == 1e-5
    report = con.report()
    assert report.limit_method == "zcdp" and report.basic[0] == pytest.approx(4.0)
    assert report.gdp_mu is not None and report.gdp_tightness is not None
    with pytest.raises(dpsql.BudgetExceededError):
        for _ in range(20):
            con.sql(query, epsilon=1.0, delta=1e-7)


def test_zcdp_budget_limits_the_sum_of_rho():
    import pyarrow as pa

    con = dpsql.connect(budget=Budget(rho=0.5), cache=False)
    con.register("t", pa.table({"pid": [1, 2, 3]}), privacy_unit="pid")
    for _ in range(4):                          # pure ε = 0.5 costs ρ = 0.125
        con.sql("SELECT COUNT(*) FROM t", epsilon=0.5, delta=0.0)
    assert con.budget.rho_spent == pytest.approx(0.5)
    with pytest.raises(dpsql.BudgetExceededError, match="ρ"):
        con.sql("SELECT COUNT(*) FROM t", epsilon=0.1, delta=0.0)


def test_budget_needs_exactly_one_of_epsilon_and_rho():
    with pytest.raises(dpsql.PrivacyError, match="not both"):
        Budget(epsilon=1.0, rho=0.5)
    with pytest.raises(dpsql.PrivacyError, match="not both"):
        Budget()


def test_a_ledger_keeps_zcdp_budgets_like_the_accountant(tmp_path):
    import pyarrow as pa

    path = str(tmp_path / "l.db")
    for _ in range(2):  # the second connection reopens the file and continues its spend
        con = dpsql.connect(ledger=path, budget=Budget(rho=0.5), cache=False)
        con.register("t", pa.table({"pid": [1, 2, 3]}), privacy_unit="pid")
        for _ in range(2):                      # pure ε = 0.5 costs ρ = 0.125
            con.sql("SELECT COUNT(*) FROM t", epsilon=0.5, delta=0.0)
    assert con.budget.rho_spent == 0.5 and con.budget.total == Budget(rho=0.5)
    with pytest.raises(dpsql.BudgetExceededError, match=r"rho 0\.005 > remaining 0 "):
        con.sql("SELECT COUNT(*) FROM t", epsilon=0.1, delta=0.0)
    con.close()


def test_a_rho_budget_counts_a_selection_in_memory_as_the_ledger_does(tmp_path):
    """A truncated-geometric selection is an (ε, δ) step: under a ρ budget it is counted as
    ε²/2 beside its δ, by the in-memory accountant as by the ledger (it was left out)."""
    import pyarrow as pa

    table = pa.table({"pid": list(range(300)), "k": [f"g{i % 3}" for i in range(300)]})
    spent = []
    for ledger in (None, tmp_path / "ledger.db"):
        con = dpsql.connect(budget=dpsql.Budget(rho=5.0, delta=1e-4), ledger=ledger)
        con.register("t", table, privacy_unit="pid")
        compiled = con.compile("SELECT k, COUNT(*) FROM t GROUP BY k", epsilon=1.0,
                               delta=1e-6)
        assert any(e.kind == "approx" for e in compiled.events)
        expected = sum(e.epsilon ** 2 / 2 for e in compiled.events)
        con.sql("SELECT k, COUNT(*) FROM t GROUP BY k", epsilon=1.0, delta=1e-6)
        spent.append(con.budget.rho_spent)
        con.close()
    assert spent[0] == pytest.approx(spent[1]) == pytest.approx(expected)


@pytest.mark.parametrize("budget", [{"epsilon": 1.0, "delta": 1e-6}, 1.0, (1.0, 1e-6)])
def test_a_budget_that_is_not_a_budget_is_refused_with_the_fix(budget):
    with pytest.raises(dpsql.ProgrammingError, match=r"dpsql\.Budget\(epsilon=1\.0"):
        dpsql.connect(budget=budget)

"""ρ-zCDP budgets in the durable ledger: exact sums, reopening, upgrades, racing processes
(each against a SQLite file and a PostgreSQL database, but the upgrade of a version-1 file)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import pytest

import dpsql
from dpsql.accounting.composition import approx, gaussian, laplace
from dpsql.accounting.ledger import Ledger, zcdp_cost
from dpsql.accounting.sqlite_store import SCHEMA_VERSION
from dpsql.accounting.values import Budget

PURE = (laplace(0.5),)  # ρ = 0.125


@pytest.fixture
def path(ledger_url: str) -> str:
    return ledger_url


def test_rho_spend_survives_reopening_and_is_exact(path):
    with Ledger(path, budget=Budget(rho=0.5), analyst="alice") as ledger:
        for _ in range(2):
            ledger.charge(0.5, 0.0, query="q", events=PURE)
    with Ledger(path, budget=None, analyst="alice") as reopened:
        assert reopened.total == Budget(rho=0.5)
        assert reopened.rho_spent == 0.25
        for _ in range(2):
            reopened.charge(0.5, 0.0, query="q", events=PURE)
        assert reopened.rho_spent == 0.5          # 4 × 0.5²/2, exactly
        remaining = reopened.remaining
        assert remaining.delta == 0.0 and remaining.epsilon != remaining.epsilon  # NaN
        with pytest.raises(dpsql.BudgetExceededError, match=r"nothing was spent: rho 0\.005"):
            reopened.charge(0.1, 0.0, query="one too many", events=(laplace(0.1),))
        assert len(reopened.charges) == 4


def test_three_tenths_fit_exactly(path):
    """ε = 0.1 is the decimal 1/10: three of them cost ρ = 3/200, exactly the budget."""
    with Ledger(path, budget=Budget(rho=0.015), analyst="a") as ledger:
        for _ in range(3):
            ledger.charge(0.1, 0.0, query="q", events=(laplace(0.1),))
        with pytest.raises(dpsql.BudgetExceededError):
            ledger.check(1e-9, 0.0, (laplace(1e-9),))


def test_gaussian_selection_and_bare_charges_as_approximate_zcdp(path):
    events = (gaussian(2.0, discrete=True), approx(0.0, 1e-7))
    rho, delta = zcdp_cost(events, Fraction(1), Fraction(2, 10**7))
    assert rho > Fraction(1, 8) and rho - Fraction(1, 8) < Fraction(1, 10**15)  # m rounded down
    assert delta == Fraction(1, 10**7)  # the Gaussian's own δ is covered by its ρ
    assert zcdp_cost((approx(0.5, 1e-7),), Fraction(1, 2), Fraction(1, 10**7)) == \
        (Fraction(1, 8), Fraction(1, 10**7))
    with Ledger(path, budget=Budget(rho=1.0, delta=2.5e-7), analyst="g") as ledger:
        ledger.charge(1.0, 2e-7, query="gauss", events=events)
        ledger.charge(1.0, 2e-7, query="gauss", events=events)
        assert ledger.spent.delta == 2e-7
        with pytest.raises(dpsql.BudgetExceededError, match=r"delta 1e-07 > remaining 5e-08"):
            ledger.charge(0.1, 1e-7, query="selection", events=(laplace(0.1), approx(0, 1e-7)))
        ledger.charge(1.0, 0.0, query="no events recorded")  # an (ε, 0) step: ρ = 1/2
        with pytest.raises(dpsql.BudgetExceededError, match="rho"):
            ledger.charge(0.8, 0.0, query="over")  # 0.25 + 0.5 + 0.32 > 1


def test_a_different_rho_budget_is_refused_unless_reset(path):
    Ledger(path, budget=Budget(rho=0.5), analyst="a").close()
    for other in (Budget(rho=0.6), Budget(epsilon=0.5)):
        with pytest.raises(dpsql.PrivacyError, match=r"already holds the budget ρ=0\.5"):
            Ledger(path, budget=other, analyst="a")
    Ledger(path, budget=Budget(rho=0.5), analyst="a").close()  # the same budget is fine
    with Ledger(path, budget=Budget(epsilon=2.0), analyst="a", reset_budget=True) as ledger:
        assert ledger.total == Budget(epsilon=2.0)


def test_a_dataset_rho_budget_caps_every_analyst_together(path):
    caps = {"visits": Budget(rho=0.25)}
    ann = Ledger(path, budget=Budget(epsilon=10), analyst="ann", dataset_budgets=caps)
    bob = Ledger(path, budget=Budget(rho=10), analyst="bob", dataset_budgets=caps)
    ann.charge(0.5, 0.0, query="q", dataset="visits", events=PURE)
    bob.charge(0.5, 0.0, query="q", dataset="visits", events=PURE)
    with pytest.raises(dpsql.BudgetExceededError, match="dataset 'visits'"):
        ann.charge(0.5, 0.0, query="q", dataset="visits", events=PURE)
    bob.charge(0.5, 0.0, query="q", dataset="other", events=PURE)
    ann.close()
    bob.close()


def test_a_version_1_file_is_upgraded_in_place(tmp_path: Path):
    path = tmp_path / "ledger.db"
    raw = sqlite3.connect(path)
    raw.executescript("""
        CREATE TABLE budgets (scope TEXT NOT NULL CHECK (scope IN ('analyst', 'dataset')),
            name TEXT NOT NULL, epsilon TEXT NOT NULL, delta TEXT NOT NULL,
            updated_at REAL NOT NULL, PRIMARY KEY (scope, name));
        INSERT INTO budgets VALUES ('analyst', 'old', '3.0', '1e-06', 0);
        PRAGMA user_version = 1;""")
    raw.close()
    with Ledger(path, budget=None, analyst="old") as ledger:
        assert ledger.total == Budget(epsilon=3.0, delta=1e-6)
        ledger.charge(1.0, 0.0, query="q")
    with Ledger(path, budget=Budget(rho=0.5), analyst="new") as ledger:
        assert ledger.total.rho == 0.5
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    with pytest.raises(sqlite3.IntegrityError):  # one of epsilon and rho, never both
        raw.execute("INSERT INTO budgets VALUES ('analyst', 'x', '1.0', '0', '1.0', 0)")
    raw.close()


WORKER = """
import json, sys, time
from pathlib import Path
from dpsql.accounting.composition import laplace
from dpsql.accounting.ledger import Ledger
from dpsql.accounting.values import Budget
from dpsql.errors import BudgetExceededError
path, gun = sys.argv[1], Path(sys.argv[2])
with Ledger(path, budget=Budget(rho=0.25), analyst="shared") as ledger:
    while not gun.exists():
        time.sleep(0.005)
    accepted = refused = 0
    for i in range(50):
        try:
            ledger.charge(0.1, 0.0, query=f"q{i}", events=(laplace(0.1),))  # ρ = 1/200
        except BudgetExceededError:
            refused += 1
        else:
            accepted += 1
print(json.dumps([accepted, refused]))
"""


def test_racing_processes_never_overdraw_a_rho_budget(path, tmp_path):
    gun = tmp_path / "go"
    workers = [subprocess.Popen([sys.executable, "-c", WORKER, str(path), str(gun)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for _ in range(4)]
    time.sleep(0.5)
    gun.touch()
    counts = []
    for worker in workers:
        out, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err
        counts.append(json.loads(out))
    assert sum(a for a, _ in counts) == 50 and sum(r for _, r in counts) == 150
    with Ledger(path, budget=None, analyst="shared") as ledger:
        assert ledger.rho_spent == 0.25 and len(ledger.charges) == 50

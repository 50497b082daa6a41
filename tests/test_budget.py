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

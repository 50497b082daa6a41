"""Audit of ``k_threshold`` on a global aggregate (one group, the empty key), with a control.

D holds M people, D' the same less one: M − 1, below the floor. Event E: the query's one
row is released. On D' it never is (the floor); on D the chance must stay ≤ δ (the group is
selected as a group of one person would be, docs/mechanisms.md §6), so the ε lower bound
stays ≤ the claim. The negative control drops the shift (a group of M people selected as
one of M), which releases the row of D far too often, and must be flagged.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import dpsql
from dpsql.accounting import Accountant
from dpsql.plan import Selection
from tests.privacy.audit import audit

pytestmark = pytest.mark.slow

EPSILON, DELTA, M = 1.0, 0.02, 20
UNLIMITED = dpsql.Budget(epsilon=1e9, delta=0.9)
SQL = (f"SELECT WITH ANONYMIZATION OPTIONS (epsilon = {EPSILON}, delta = {DELTA}, "
       f"k_threshold = {M}) ANON_SUM(x), ANON_COUNT(*) FROM t")


def connection(people: int) -> dpsql.Connection:
    con = dpsql.connect(budget=UNLIMITED, cache=False)
    con.register("t", pa.table({"pid": range(people), "x": [1.0] * people}),
                 privacy_unit="pid", bounds={"x": (0, 2)})
    return con


def run_audit(trials: int):
    def event(con):
        def run(seed: int) -> bool:
            con.budget = Accountant(UNLIMITED)
            return bool(con.sql(SQL, seed=seed).fetchall())
        return run

    return audit(event(connection(M)), event(connection(M - 1)), trials=trials, delta=DELTA)


def test_the_row_of_the_floor_is_released_at_most_delta_often():
    result = run_audit(1000)
    print(result)
    assert result.hits_neighbour == 0 and result.epsilon_lower <= EPSILON


def test_negative_control_unshifted_floor_is_flagged(monkeypatch):
    monkeypatch.setattr(Selection, "shifted", lambda self, counts: np.asarray(counts))
    result = run_audit(300)
    print(result)
    assert result.epsilon_lower > EPSILON

"""Audit of keys-only releases (truncated-geometric partition selection), with a control.

The target unit is the only one in group 'solo' (and contributes many rows). Event E:
'solo' is released. On D' it never is; on D the chance must stay ≤ δ (so the ε lower
bound stays ≤ the claim). The negative control computes p(n) with δ × 20, a bug that
releases one-person groups far too often, and must be flagged.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

import dpsql
import dpsql.plan as plan_module
from dpsql.accounting import Accountant
from dpsql.mechanisms.selection import truncated_geometric_probability
from tests.privacy.audit import audit

pytestmark = pytest.mark.slow

EPSILON, DELTA = 1.0, 0.02
UNLIMITED = dpsql.Budget(epsilon=1e9, delta=0.9)


def connection(with_target: bool) -> dpsql.Connection:
    units = list(range(100))
    keys = ["shared"] * 100
    if with_target:
        units += [5000] * 20
        keys += ["solo"] * 20
    con = dpsql.connect(budget=UNLIMITED, cache=False)
    con.register("t", pa.table({"pid": units, "k": keys}), privacy_unit="pid")
    return con


def run_audit(trials: int):
    def event(con):
        def run(seed: int) -> bool:
            con.budget = Accountant(UNLIMITED)
            rows = con.sql("SELECT k FROM t GROUP BY k", epsilon=EPSILON, delta=DELTA,
                           seed=seed).fetchall()
            return ("solo",) in rows
        return run

    return audit(event(connection(True)), event(connection(False)), trials=trials, delta=DELTA)


def test_one_person_key_is_released_at_most_delta_often():
    result = run_audit(1000)
    print(result)
    assert result.hits_neighbour == 0 and result.epsilon_lower <= EPSILON


def test_negative_control_inflated_delta_is_flagged(monkeypatch):
    monkeypatch.setattr(plan_module, "truncated_geometric_probability",
                        lambda n, eps, delta, k: truncated_geometric_probability(n, eps,
                                                                                 20 * delta, k))
    result = run_audit(300)
    print(result)
    assert result.epsilon_lower > EPSILON

"""Audit of the threshold on a released count of rows, with a control.

The target person is alone in group 'solo' with ten rows (the per-group limit c = 10); a
hundred others share group 'shared'. ``SELECT k, COUNT(*) … GROUP BY k`` releases a group
iff its noisy row count reaches τ, where P(c + noise ≥ τ) ≤ δ (the allowance that picks this
selection is lifted, so the mechanism is audited at its edge). Event E: 'solo' is released.
On D′ it never is; on D its chance must stay ≤ δ. The negative control sets τ as if one
person added one row to a group (P(1 + noise ≥ τ) ≤ δ), which releases 'solo' about
e^{9/10} times as often, and must be flagged. The threshold's maths is checked exactly in
tests/test_count_threshold.py.
"""

from __future__ import annotations

import math

import pyarrow as pa
import pytest

import dpsql
from dpsql.accounting import Accountant
from dpsql.analysis import sensitivity
from tests.privacy.audit import audit

pytestmark = pytest.mark.slow

EPSILON, DELTA, ROWS, TRIALS = 1.0, 0.02, 10, 2000
UNLIMITED = dpsql.Budget(epsilon=1e9, delta=0.9)
SQL = "SELECT k, COUNT(*) AS n FROM t GROUP BY k"


def connection(with_target: bool) -> dpsql.Connection:
    units, keys = list(range(100)), ["shared"] * 100
    if with_target:
        units += [5000] * ROWS
        keys += ["solo"] * ROWS
    con = dpsql.connect(budget=UNLIMITED, cache=False)
    con.register("t", pa.table({"pid": units, "k": keys}), privacy_unit="pid",
                 max_groups_per_unit=1, max_rows_per_group=ROWS)
    return con


def run_audit():
    def event(con):
        def run(seed: int) -> bool:
            con.budget = Accountant(UNLIMITED)
            rows = con.sql(SQL, epsilon=EPSILON, delta=DELTA, seed=seed).fetchall()
            return any(row[0] == "solo" for row in rows)
        return run

    target = connection(True)
    selection = target.explain(SQL, epsilon=EPSILON, delta=DELTA).to_dict()[
        "partition_selection"]
    assert selection["method"] == "laplace_threshold" and selection["statistic"] == "COUNT(*)"
    return audit(event(target), event(connection(False)), trials=TRIALS, delta=DELTA)


def test_a_group_of_one_persons_rows_is_released_at_most_delta_often(monkeypatch):
    monkeypatch.setattr(sensitivity, "COUNT_THRESHOLD_ALLOWANCE", math.inf)
    result = run_audit()
    print(result)
    assert result.hits_neighbour == 0 and result.epsilon_lower <= EPSILON


def test_negative_control_threshold_for_one_row_is_flagged(monkeypatch):
    monkeypatch.setattr(sensitivity, "COUNT_THRESHOLD_ALLOWANCE", math.inf)
    threshold = sensitivity.selection_threshold
    monkeypatch.setattr(sensitivity, "selection_threshold",
                        lambda noise, groups, delta, most=1.0: threshold(noise, groups, delta))
    result = run_audit()
    print(result)
    assert result.epsilon_lower > EPSILON

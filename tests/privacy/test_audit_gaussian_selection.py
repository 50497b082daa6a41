"""Audit of Gaussian thresholding (its own noise on the count of people), with a control.

The target person is alone in ten groups 'solo0'…'solo9' of a keys-only query (a person may
touch ten groups, so the plan picks Gaussian thresholding with all of ε and δ). Event E:
some 'solo' group is released. On D′ it never is; on D its chance must stay ≤ δ. The
negative control sets τ as if a person touched one group (δ_sel not split over the ten),
which releases one of the ten groups about ten times as often, and must be flagged. The
noise's own part is checked exactly in tests/test_gaussian_selection.py (decisions on
groups near τ move too little for an audit).
"""

from __future__ import annotations

import pyarrow as pa
import pytest

import dpsql
import dpsql.mechanisms.selection_choice as choice_module
from dpsql.accounting import Accountant
from tests.privacy.audit import audit

pytestmark = pytest.mark.slow

EPSILON, DELTA, GROUPS = 1.0, 0.02, 10
UNLIMITED = dpsql.Budget(epsilon=1e9, delta=0.9)
SQL = "SELECT k FROM t GROUP BY k"


def connection(with_target: bool) -> dpsql.Connection:
    units = list(range(100))
    keys = ["shared"] * 100
    if with_target:
        units += [5000] * GROUPS
        keys += [f"solo{i}" for i in range(GROUPS)]
    con = dpsql.connect(budget=UNLIMITED, cache=False)
    con.register("t", pa.table({"pid": units, "k": keys}), privacy_unit="pid",
                 max_groups_per_unit=GROUPS, max_rows_per_group=1, max_rows_per_unit=GROUPS)
    return con


def run_audit(trials: int):
    def event(con):
        def run(seed: int) -> bool:
            con.budget = Accountant(UNLIMITED)
            rows = con.sql(SQL, epsilon=EPSILON, delta=DELTA, seed=seed).fetchall()
            return any(str(row[0]).startswith("solo") for row in rows)
        return run

    target = connection(True)
    assert target.explain(SQL, epsilon=EPSILON, delta=DELTA).to_dict()[
        "partition_selection"]["method"] == "gaussian_selection"
    return audit(event(target), event(connection(False)), trials=trials, delta=DELTA)


def test_one_person_groups_are_released_at_most_delta_often():
    result = run_audit(1000)
    print(result)
    assert result.hits_neighbour == 0 and result.epsilon_lower <= EPSILON


def test_negative_control_threshold_for_one_group_is_flagged(monkeypatch):
    threshold = choice_module.selection_threshold
    monkeypatch.setattr(choice_module, "selection_threshold",
                        lambda noise, groups, delta: threshold(noise, 1, delta))
    choice_module.gaussian_selection.cache_clear()
    try:
        result = run_audit(1000)
    finally:
        choice_module.gaussian_selection.cache_clear()
    print(result)
    assert result.epsilon_lower > EPSILON

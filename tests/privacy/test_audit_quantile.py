"""Audit of MEDIAN (exponential mechanism) on neighbouring databases, with a negative control.

D: 30 one-row units at 25 plus a target unit with 30 rows at 75; D' drops the target.
max_rows_per_group = 3, so the rewrite must down-weight the target to 3 rows' weight. Event
E: the released median is outside [25, 75.1] (below the bucket of 25 or above that of 75).

With the weight enforced, the exact probabilities are P_D(E) ≈ 0.373 and P_D'(E) ≈ 0.493
(log-ratio 0.28 ≤ ε = 1). A rewrite that trusted the row limit instead (the target weighs
30 rows) moves the median into [25, 75] almost surely: P_D(E) ≈ 0.007, a log-ratio near 4.3,
which the negative control must flag.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

import dpsql
import dpsql.rewrite.quantiles as quantiles_module
from dpsql.accounting import Accountant
from dpsql.expr.nodes import number
from tests.privacy.audit import audit

pytestmark = pytest.mark.slow

EPSILON = 1.0
TRIALS = 600
UNLIMITED = dpsql.Budget(epsilon=1e9, delta=0.9)


def table(with_target: bool) -> pa.Table:
    units, ages = list(range(30)), [25.0] * 30
    if with_target:
        units += [1000] * 30
        ages += [75.0] * 30
    return pa.table({"pid": units, "age": ages})


def outside_event(with_target: bool):
    con = dpsql.connect(budget=UNLIMITED)
    con.register("t", table(with_target), privacy_unit="pid", bounds={"age": (0, 100)},
                 max_rows_per_group=3)

    def run(seed: int) -> bool:
        con.budget = Accountant(UNLIMITED)  # hundreds of runs: spending is not under test
        ((median,),) = con.sql("SELECT MEDIAN(age) FROM t", epsilon=EPSILON, seed=seed).fetchall()
        return median < 25 or median > 75.1

    return run


def median_audit(trials: int):
    return audit(outside_event(True), outside_event(False), trials=trials, delta=0.0)


def test_median_keeps_its_epsilon():
    result = median_audit(TRIALS)
    print(result)
    assert result.epsilon_lower <= EPSILON, result
    assert result.hits_d > 0 and result.hits_neighbour > 0  # the event is not degenerate


def test_negative_control_unweighted_heavy_unit_is_flagged(monkeypatch):
    """A rewrite that gives every value full weight, whatever the unit's count, must be caught."""
    monkeypatch.setattr(quantiles_module, "per_value_weight",
                        lambda c, values: number(quantiles_module.WEIGHT_SCALE))
    result = median_audit(TRIALS // 2)
    print(result)
    assert result.epsilon_lower > EPSILON, result

"""Audit of ``suggest_bounds`` (``dpsql.suggest``): a suggested contribution limit is a
release, so it must not tell a person's presence.

D': 40 people with one row each; D adds a target with 64 rows. The suggestion at ε = 1,
δ = 10⁻² (coverage 0.97, so that the target's bin alone would move the limit) releases a
histogram of people by rows: the 40-person bin [1] almost always, the target's bin (64)
only with the small chance partition selection gives one person. Event E: the suggested
``max_rows_per_unit`` is above 1.

Negative control: the limit read from the exact data (the largest contribution, the bug
this feature must not have): E then happens on D always and on D' never, ε_lb ≈ 2.4 with
60 trials. About 50 s of CPU.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

import dpsql
from tests.privacy.audit import audit

pytestmark = pytest.mark.slow

EPSILON, DELTA = 1.0, 1e-2
NEIGHBOUR = pa.table({"pid": list(range(40)), "k": ["a"] * 40})
WITH_TARGET = pa.table({"pid": list(range(40)) + [99] * 64, "k": ["a"] * 104})


def suggested(table: pa.Table, seed: int) -> int | None:
    con = dpsql.connect(budget=dpsql.Budget(epsilon=10, delta=0.5), seed=seed, cache=False)
    con.register("t", table, privacy_unit="pid")
    limit = con.suggest_bounds("t", epsilon=EPSILON, delta=DELTA, coverage=0.97
                               ).max_rows_per_unit
    con.close()
    return limit


def test_a_suggested_limit_keeps_the_promise():
    assert suggested(NEIGHBOUR, 0) == 1  # the 40-person bin is released: the path runs
    result = audit(lambda s: (suggested(WITH_TARGET, s) or 0) > 1,
                   lambda s: (suggested(NEIGHBOUR, s) or 0) > 1, trials=100, delta=DELTA)
    assert result.epsilon_lower <= EPSILON, result


def test_a_limit_read_from_the_data_is_caught():
    """Negative control: the largest exact contribution as the limit."""
    def exact(table: pa.Table) -> int:
        counts: dict[int, int] = {}
        for pid in table.column("pid").to_pylist():
            counts[pid] = counts.get(pid, 0) + 1
        return max(counts.values())

    result = audit(lambda s: exact(WITH_TARGET) > 1, lambda s: exact(NEIGHBOUR) > 1,
                   trials=60, delta=DELTA)
    assert result.epsilon_lower > EPSILON, result

"""Counts, and sums of values of one sign, are released on their side of 0 (post-processing).

Free of privacy cost and of coverage: the bounded value is on that side of 0, so an interval
moved to it still covers the bounded value whenever the unmoved one did.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import dpsql
from dpsql.estimators import Count, Estimator
from dpsql.plan import Aggregate


@pytest.fixture(scope="module")
def con() -> dpsql.Connection:
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1e6, delta=0.5), seed=0)
    con.register("t", pa.table({"pid": [1, 2, 3], "g": ["a", "b", "a"],
                                "x": [1.0, 2.0, 3.0]}), privacy_unit="pid",
                 bounds={"x": (0, 10)}, public_keys={"g": ["a", "b", "c", "d"]})
    return con


def test_tiny_epsilon_counts_and_nonnegative_sums_never_go_below_zero(con):
    sql = ("SELECT g, COUNT(*) AS n, SUM(x) AS s, SUM(-x) AS m, SUM(x - 5) AS d "
           "FROM t GROUP BY g")
    rows = [row for seed in range(30) for row in con.sql(sql, epsilon=0.01, seed=seed)
            .fetchall()]
    assert min(r[1] for r in rows) == 0 and min(r[2] for r in rows) == 0
    assert max(r[3] for r in rows) == 0
    assert min(r[4] for r in rows) < 0 < max(r[4] for r in rows)  # either sign: untouched


def test_moved_intervals_cover_whenever_the_unmoved_ones_did():
    rng = np.random.default_rng(1)
    true = rng.integers(0, 3, 100_000).astype(float)
    noisy = true + rng.laplace(0, 5, true.size)
    half = 5 * np.log(1 / 0.05)
    count = Aggregate("n", "count_star", "COUNT(*)", ("s0",))
    lo, hi = Count().signed(count, noisy - half), Count().signed(count, noisy + half)
    covered = (noisy - half <= true) & (true <= noisy + half)
    assert np.all(((lo <= true) & (true <= hi))[covered])
    negative = Aggregate("m", "sum", "SUM(-x)", ("s1",), -10, 0)
    assert np.all(Estimator().signed(negative, -noisy) <= 0)

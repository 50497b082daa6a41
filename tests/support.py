"""Helpers shared by the tests (a test module never imports another test module).

- hostile data and the neighbour check of the rewrite: ``hostile_table``
  (``with_null_keys``), ``make_plan``, ``run_bounded``, ``assert_within_plan`` and
  ``assert_neighbours_within_plan`` (and the queries and limits they are run over);
- ``neighbours``: a histogram and the same minus one unit, for the exponential mechanism;
- ``rr_delta``: the exact δ(ε) of k-fold randomised response, the worst ε-DP history.
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
from scipy.stats import binom

from dpsql.analysis import analyze
from dpsql.backends import DuckDBBackend
from dpsql.catalog import Catalog, TableInfo
from dpsql.compile import CompiledQuery


def hostile_table(seed: int = 0) -> pa.Table:
    """Units with wildly different contributions, out-of-bound values, NULL, NaN and inf."""
    rng = np.random.default_rng(seed)
    rows = []
    for unit in range(1, 31):
        n = int(rng.choice([1, 2, 5, 40]))
        for _ in range(n):
            key = f"k{int(rng.integers(0, 12 if unit % 3 else 3))}"
            value = float(rng.choice([-1e9, -5.0, 0.0, 3.0, 7.5, 1e12, np.inf, -np.inf, np.nan]))
            rows.append((unit, key, None if rng.random() < 0.1 else value,
                         int(rng.integers(0, 3))))
    rows.append((None, "k0", 5.0, 1))  # a row without a unit is dropped
    unit, key, value, flag = zip(*rows, strict=True)
    return pa.table({"pid": pa.array(unit, pa.int64()), "k": key,
                     "x": pa.array(value, pa.float64()), "flag": flag})


def with_null_keys(table: pa.Table, every: int = 7) -> pa.Table:
    """``table`` with the key ``k`` of every ``every``-th row set to NULL."""
    keys = table["k"].to_pylist()
    return table.set_column(table.schema.get_field_index("k"), "k", pa.array(
        [None if i % every == 0 else k for i, k in enumerate(keys)]))


BACKEND = DuckDBBackend()


def run_bounded(table: pa.Table, plan, salt: str) -> dict[tuple, dict[str, float]]:
    """The plan's bounded aggregates on ``table`` (loaded as ``t``), per group."""
    BACKEND.load("t", table)
    out = BACKEND.execute(CompiledQuery.of(plan), salt=salt).to_pylist()
    # Exact integer sums: cells the unit is not in must not move at all.
    keys = [k.name for k in plan.keys]
    return {tuple(r[k] for k in keys): {s.name: float(r[s.name]) for s in plan.sensitivities}
            for r in out}


COLUMNS = {"pid": "BIGINT", "k": "VARCHAR", "x": "DOUBLE", "flag": "BIGINT"}


def make_plan(sql: str, columns: dict[str, str] = COLUMNS, **limits):
    catalog = Catalog()
    catalog.add(TableInfo.private("t", columns=columns, privacy_unit="pid",
                                  bounds={"x": (-2, 10)}, **limits))
    return analyze(sql, catalog, epsilon=1.0, delta=1e-6)


QUERIES = [
    "SELECT k, COUNT(*) FROM t GROUP BY k",
    "SELECT k, COUNT(*), SUM(x), AVG(x), COUNT(x), COUNT(DISTINCT pid) FROM t GROUP BY k",
    "SELECT k, flag, SUM(x) FROM t WHERE x > 0 OR x IS NULL GROUP BY k, flag",
    "SELECT COUNT(*), SUM(LEAST(GREATEST(x, 0), 4)), AVG(x) FROM t",
    "SELECT k, SUM(x * 2 - 1) FROM t GROUP BY k",
]


LIMITS = [
    {},
    {"max_groups_per_unit": 3, "max_rows_per_group": 4},
    {"max_groups_per_unit": 4, "max_rows_per_group": 5, "max_rows_per_unit": 7},
]


def assert_within_plan(plan, full: dict, rest: dict, unit) -> None:
    """D and D − unit differ per cell by ≤ its bound, in L1/L2 and in cells as planned."""
    bounds = {s.name: s.bound for s in plan.sensitivities}
    per_stat_l1 = {s: 0.0 for s in bounds}
    per_stat_l2 = {s: 0.0 for s in bounds}
    touched = 0
    for key in set(full) | set(rest):
        a, b = full.get(key), rest.get(key)
        for stat, bound in bounds.items():
            diff = abs((a[stat] if a else 0.0) - (b[stat] if b else 0.0))
            assert diff <= bound * (1 + 1e-9), (unit, key, stat, diff, bound)
            per_stat_l1[stat] += diff / bound
            per_stat_l2[stat] += (diff / bound) ** 2
            touched += diff > 0
    for statistic in plan.sensitivities:
        assert per_stat_l1[statistic.name] <= statistic.l1 + 1e-9
        assert math.sqrt(per_stat_l2[statistic.name]) <= statistic.l2 + 1e-9
    assert touched <= plan.statistics_per_unit


def assert_neighbours_within_plan(plan, table: pa.Table) -> None:
    """``assert_within_plan`` for D = ``table`` against D − u, for every unit u of it (the
    bounded query run with one salt)."""
    full = run_bounded(table, plan, salt="fixed")
    for unit in sorted({u for u in table.column("pid").to_pylist() if u is not None}):
        mask = pa.compute.fill_null(pa.compute.not_equal(table.column("pid"), unit), True)
        assert_within_plan(plan, full, run_bounded(table.filter(mask), plan, salt="fixed"), unit)


def neighbours(rng: np.random.Generator, buckets: int, weight: int):
    """A histogram and the same histogram minus one unit's weights (total ≤ ``weight``)."""
    h = rng.integers(0, 6, size=buckets) * rng.integers(1, 4)
    unit = np.zeros(buckets, dtype=np.int64)
    for _ in range(int(rng.integers(1, weight + 1))):
        unit[rng.integers(0, buckets)] += 1
    return h + unit, h


def rr_delta(epsilon: float, k: int, at: float) -> float:
    """Exact δ(at) of k-fold randomised response at ε (the worst k-fold ε-DP history)."""
    j = np.arange(k + 1)
    weights = binom.pmf(j, k, 1 / (1 + math.exp(epsilon)))
    losses = (k - 2 * j) * epsilon
    return float(np.sum(weights * np.clip(-np.expm1(at - losses), 0.0, None)))

"""The rewrite enforces the plan's sensitivity on adversarial data.

For every unit u of a hostile dataset we run the bounded query on D and on
D − u (same salt) and check what the privacy proof needs: every cell moves by
at most its L∞ bound, the normalised L1/L2 over all cells stay within the
plan's, and no more cells change than the plan says one unit can touch.
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest

from dpsql.analysis import analyze
from dpsql.backends import DuckDBBackend
from dpsql.catalog import Catalog, TableInfo
from dpsql.rewrite import rewrite


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


BACKEND = DuckDBBackend()


def run_bounded(table: pa.Table, plan, salt: str) -> dict[tuple, dict[str, float]]:
    BACKEND.load("t", table)
    out = BACKEND.execute(rewrite(plan, salt=salt)).to_pylist()
    # Exact integer sums: cells the unit is not in must not move at all.
    keys = [k.name for k in plan.keys]
    return {tuple(r[k] for k in keys): {s.name: float(r[s.name]) for s in plan.statistics}
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


@pytest.mark.parametrize("limits", LIMITS, ids=lambda d: ",".join(f"{v}" for v in d.values()))
@pytest.mark.parametrize("sql", QUERIES)
def test_removing_any_unit_moves_cells_within_the_plan(sql, limits):
    plan = make_plan(sql, **limits)
    table = hostile_table()
    full = run_bounded(table, plan, salt="fixed")
    units = {u for u in table.column("pid").to_pylist() if u is not None}
    for unit in sorted(units):
        mask = pa.compute.not_equal(table.column("pid"), unit)
        rest = run_bounded(table.filter(pa.compute.fill_null(mask, True)), plan, salt="fixed")
        assert_within_plan(plan, full, rest, unit)


def assert_within_plan(plan, full: dict, rest: dict, unit) -> None:
    """D and D − unit differ per cell by ≤ its bound, in L1/L2 and in cells as planned."""
    bounds = {s.name: s.bound for s in plan.statistics}
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
    for statistic in plan.statistics:
        assert per_stat_l1[statistic.name] <= statistic.l1 + 1e-9
        assert math.sqrt(per_stat_l2[statistic.name]) <= statistic.l2 + 1e-9
    assert touched <= plan.statistics_per_unit


def test_hostile_values_never_escape_the_bounds():
    plan = make_plan("SELECT k, SUM(x), AVG(x) FROM t GROUP BY k", max_rows_per_group=2,
                     max_groups_per_unit=12)
    out = run_bounded(hostile_table(), plan, salt="s")
    for cells in out.values():
        for statistic in plan.statistics:
            assert math.isfinite(cells[statistic.name])


def test_group_choice_does_not_depend_on_values():
    """Same units and keys, different values: the same (unit, group) pairs survive."""
    plan = make_plan("SELECT k, COUNT(DISTINCT pid), SUM(x) FROM t GROUP BY k",
                     max_groups_per_unit=2, max_rows_per_group=3)
    table = hostile_table()
    other = table.set_column(2, "x", pa.array(np.zeros(table.num_rows)))
    units = next(s.name for s in plan.stats if s.kind == "units")
    a = {k: v[units] for k, v in run_bounded(table, plan, salt="s").items()}
    b = {k: v[units] for k, v in run_bounded(other, plan, salt="s").items()}
    assert a == b


def test_fresh_salt_changes_which_groups_are_kept():
    plan = make_plan("SELECT k, COUNT(*) FROM t GROUP BY k", max_groups_per_unit=1)
    outputs = {repr(sorted(run_bounded(hostile_table(), plan, salt=s).items()))
               for s in ("a", "b", "c", "d")}
    assert len(outputs) > 1

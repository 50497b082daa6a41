"""Joins, subqueries, CTEs and GROUP BY expressions keep the plan's sensitivity.

The hostile data of tests/test_rewrite_bounds.py, plus a second private table sharing the
privacy unit (many rows per unit) and a public lookup whose keys repeat (a one-to-many
join that multiplies rows). For every unit u, the bounded query on D and on D − u (u's
rows removed from *both* private tables; the public table unchanged) must differ by no
more than the plan allows.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import dpsql
from dpsql.analysis import analyze
from dpsql.backends import DuckDBBackend
from dpsql.catalog import Catalog, TableInfo
from dpsql.compile import CompiledQuery
from tests.support import assert_within_plan, hostile_table


def second_table(seed: int = 1) -> pa.Table:
    """Per unit 1–30 rows of a weight, some hostile; units 1..35 (some only here)."""
    rng = np.random.default_rng(seed)
    rows = [(unit, float(rng.choice([-1e9, 0.0, 60.0, 80.0, 1e12, np.nan])))
            for unit in range(1, 36) for _ in range(int(rng.choice([1, 3, 30])))]
    unit, weight = zip(*rows, strict=True)
    return pa.table({"pid": pa.array(unit, pa.int64()), "w": pa.array(weight, pa.float64())})


LOOKUP = pa.table({"k": [f"k{i}" for i in range(12)] + ["k0", "k0", "k1"],
                   "dept": ["a", "b", "c"] * 5, "fee": [float(i) for i in range(15)]})

BACKEND = DuckDBBackend()


def catalog(**limits) -> Catalog:
    cat = Catalog()
    cat.add(TableInfo.private("t", columns={"pid": "BIGINT", "k": "VARCHAR", "x": "DOUBLE",
                                            "flag": "BIGINT"}, privacy_unit="pid",
                              bounds={"x": (-2, 10)}, **limits))
    cat.add(TableInfo.private("p", columns={"pid": "BIGINT", "w": "DOUBLE"}, privacy_unit="pid",
                              bounds={"w": (40, 120)}))
    cat.add(TableInfo(name="lookup", columns={"k": "VARCHAR(8)", "dept": "VARCHAR(8)",
                                              "fee": "DOUBLE"}, public=True))
    return cat


def public_values(table: str, column: str) -> tuple:
    return tuple(sorted(set(LOOKUP.column(column).to_pylist())))


def run(plan, t: pa.Table, p: pa.Table) -> dict:
    BACKEND.load("t", t)
    BACKEND.load("p", p)
    BACKEND.load("lookup", LOOKUP)
    out = BACKEND.execute(CompiledQuery.of(plan), salt="fixed").to_pylist()
    keys = [k.name for k in plan.keys]
    return {tuple(r[k] for k in keys): {s.name: float(r[s.name]) for s in plan.sensitivities}
            for r in out}


QUERIES = [
    # one-to-many join with a public lookup (k0 and k1 appear several times)
    "SELECT l.dept, COUNT(*), SUM(t.x) FROM t JOIN lookup l ON t.k = l.k GROUP BY l.dept",
    "SELECT COUNT(*), AVG(LEAST(GREATEST(t.x - l.fee, 0), 5)) FROM t LEFT JOIN lookup l "
    "ON t.k = l.k",
    # two private tables on the unit: rows multiply per unit
    "SELECT t.k, COUNT(*), SUM(p.w) FROM t JOIN p ON t.pid = p.pid GROUP BY t.k",
    "SELECT AVG(p.w), COUNT(DISTINCT t.pid) FROM t JOIN p ON t.pid = p.pid AND t.flag > 0",
    # per-unit aggregation inside, clamped outside
    "SELECT SUM(LEAST(GREATEST(n, 0), 5)), AVG(LEAST(GREATEST(total, 0), 30)) FROM "
    "(SELECT pid, COUNT(*) AS n, SUM(x) AS total FROM t GROUP BY pid) AS s",
    "SELECT k, AVG(LEAST(GREATEST(n, 0), 4)) FROM (SELECT pid, k, COUNT(*) AS n FROM t "
    "GROUP BY pid, k) AS s GROUP BY k",
    # a CTE chain, the unit dropped from the projection and traced anyway
    "WITH s AS (SELECT k, x * 2 AS y FROM t WHERE flag > 0), u AS (SELECT * FROM s) "
    "SELECT k, SUM(y), COUNT(*) FROM u GROUP BY k",
    # GROUP BY an expression
    "SELECT UPPER(k), COUNT(*) FROM t GROUP BY UPPER(k)",
    # UNION ALL of two private tables: a unit's rows come from both
    "SELECT COUNT(*), SUM(v) FROM (SELECT pid, x AS v FROM t UNION ALL SELECT pid, w FROM p) "
    "AS u",
]
LIMITS = [  # the strictest in the default run, all of them in CI's slow run
    pytest.param({}, marks=pytest.mark.slow),
    pytest.param({"max_groups_per_unit": 3, "max_rows_per_group": 4}, marks=pytest.mark.slow),
    {"max_groups_per_unit": 2, "max_rows_per_group": 5, "max_rows_per_unit": 7},
]


@pytest.mark.parametrize("limits", LIMITS, ids=lambda d: ",".join(f"{v}" for v in d.values()))
@pytest.mark.parametrize("sql", QUERIES)
def test_removing_any_unit_moves_cells_within_the_plan(sql, limits):
    plan = analyze(sql, catalog(**limits), epsilon=1.0, delta=1e-6, public_values=public_values)
    t, p = hostile_table(), second_table()
    full = run(plan, t, p)
    units = set(t.column("pid").to_pylist()) | set(p.column("pid").to_pylist())
    for unit in sorted(u for u in units if u is not None):
        keep_t = pc.fill_null(pc.not_equal(t.column("pid"), unit), True)
        keep_p = pc.fill_null(pc.not_equal(p.column("pid"), unit), True)
        assert_within_plan(plan, full, run(plan, t.filter(keep_t), p.filter(keep_p)), unit)


def test_a_join_that_is_not_on_the_unit_is_refused():
    with pytest.raises(dpsql.UnsupportedQueryError, match="only on their privacy units"):
        analyze("SELECT COUNT(*) FROM t JOIN p ON t.x = p.w", catalog(), epsilon=1, delta=0)


def test_the_unit_is_traced_through_a_subquery_that_drops_it():
    plan = analyze("SELECT SUM(x) FROM (SELECT x FROM t) AS s", catalog(), epsilon=1, delta=0)
    assert plan.privacy_unit == "__dp_unit_of" and plan.private_tables == ("t",)
    assert "__dp_unit_of" in CompiledQuery.of(plan).bounded_sql()


def test_a_private_join_charges_both_datasets(tmp_path):
    ledger = tmp_path / "ledger.db"
    con = dpsql.connect(ledger=str(ledger), budget=dpsql.Budget(10, 1e-3),
                        dataset_budgets={"p": dpsql.Budget(1.5, 1e-3)})
    con.register("t", hostile_table(), privacy_unit="pid", bounds={"x": (-2, 10)})
    con.register("p", second_table(), privacy_unit="pid", bounds={"w": (40, 120)})
    con.sql("SELECT COUNT(*) FROM t JOIN p ON t.pid = p.pid", epsilon=1.0)
    with pytest.raises(dpsql.BudgetExceededError, match="dataset 'p'"):
        con.sql("SELECT AVG(w) FROM p", epsilon=1.0)
    con.sql("SELECT COUNT(*) FROM t", epsilon=1.0)  # t has no budget of its own

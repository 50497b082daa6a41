"""The rewrite enforces the plan's bounds for CASE/FILTER/derived values, VAR and COUNT(DISTINCT).

Same method as tests/test_rewrite_bounds.py: for every unit u of a hostile table, run the
bounded query on D and D − u with the same salt and check that every cell moves by at most its
statistic's bound, that the normalised L1/L2 stay within the plan's, and that no more cells
change than the plan says. The table adds a text column ``s`` with many distinct values, some
shared between units, so that distinct counts are stressed: units with 40 rows in a group
have many more than c distinct values there.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from dpsql.analysis import analyze
from dpsql.catalog import Catalog, TableInfo
from tests.support import assert_within_plan, hostile_table, run_bounded


def hostile_with_text(seed: int = 0) -> pa.Table:
    """hostile_table plus ``s``: 25 possible strings (and NULLs), drawn per row."""
    table = hostile_table(seed)
    rng = np.random.default_rng(seed + 1)
    values = [None if rng.random() < 0.1 else f"v{int(rng.integers(0, 25))}"
              for _ in range(table.num_rows)]
    return table.append_column("s", pa.array(values, pa.string()))


def audited_units(table: pa.Table) -> list[int]:
    """Every unit with more rows than any limit (where bounds bite) and a few light ones.

    Each bounded query costs ~0.15 s here, so the light units are sampled to keep this fast.
    """
    rows = pc.value_counts(table.column("pid").drop_null()).to_pylist()
    heavy = sorted(r["values"] for r in rows if r["counts"] > 5)
    light = sorted(r["values"] for r in rows if r["counts"] <= 5)
    return heavy + light[::4]


def make_plan(sql: str, **limits):
    catalog = Catalog()
    columns = {"pid": "BIGINT", "k": "VARCHAR", "x": "DOUBLE", "flag": "BIGINT", "s": "VARCHAR"}
    catalog.add(TableInfo.private("t", columns=columns, privacy_unit="pid",
                                  bounds={"x": (-2, 10), "flag": (0, 2)}, **limits))
    return analyze(sql, catalog, epsilon=1.0, delta=1e-6)


SPREAD = {"max_groups_per_unit": 3, "max_rows_per_group": 4}
CAPPED = {"max_groups_per_unit": 4, "max_rows_per_group": 5, "max_rows_per_unit": 7}
CASES = [  # (query, limits): each query once, distinct counts also with the total cap binding
    ("SELECT k, COUNT(DISTINCT s) FROM t GROUP BY k", SPREAD),
    ("SELECT k, COUNT(DISTINCT s) FROM t GROUP BY k", CAPPED),
    ("SELECT COUNT(DISTINCT s), COUNT(DISTINCT flag), COUNT(DISTINCT x) FROM t", {}),
    ("SELECT k, COUNT(DISTINCT s) FILTER (WHERE flag = 1), COUNT(*) FROM t GROUP BY k", CAPPED),
    ("SELECT k, VAR_POP(x), STDDEV_SAMP(x), AVG(x) FROM t GROUP BY k", SPREAD),
    ("SELECT k, COUNT(DISTINCT pid) FILTER (WHERE flag = 1) FROM t GROUP BY k", CAPPED),
    ("SELECT k, SUM(CASE WHEN x > 5 THEN 1 ELSE 0 END), SUM(x / 2 + flag) FROM t GROUP BY k",
     CAPPED),
    ("SELECT COUNT(*) FILTER (WHERE x > 5), SUM(x) FILTER (WHERE flag > 0), "
     "AVG(x * 1.1) FILTER (WHERE s LIKE 'v1%') FROM t", SPREAD),
    ("SELECT k, SUM(COALESCE(NULLIF(x, 0), 1)), SUM(TRY_CAST(s AS DOUBLE) % 3), "
     "COUNT(DISTINCT LOWER(s) || '-' || CAST(flag AS VARCHAR)) FROM t GROUP BY k", CAPPED),
]


@pytest.mark.parametrize(("sql", "limits"), CASES)
def test_removing_any_unit_moves_cells_within_the_plan(sql, limits):
    plan = make_plan(sql, **limits)
    table = hostile_with_text()
    full = run_bounded(table, plan, salt="fixed")
    for unit in audited_units(table):
        rest = run_bounded(table.filter(pc.fill_null(pc.not_equal(table.column("pid"), unit),
                                                     True)), plan, salt="fixed")
        assert_within_plan(plan, full, rest, unit)


def distinct_cell(plan, table: pa.Table) -> float:
    spec = next(s for s in plan.stats if s.kind == "distinct")
    return run_bounded(table, plan, salt="s")[()][spec.name]


def test_rows_beyond_the_limit_add_no_distinct_values():
    """One unit with 40 different values in one group adds exactly c = 3 of them."""
    plan = make_plan("SELECT COUNT(DISTINCT s) FROM t", max_rows_per_group=3)
    others = pa.table({"pid": [1, 2], "k": ["a", "a"], "x": [0.0, 0.0], "flag": [0, 0],
                       "s": ["shared", "other"]})
    heavy = pa.table({"pid": [9] * 40, "k": ["a"] * 40, "x": [0.0] * 40, "flag": [0] * 40,
                      "s": [f"w{i}" for i in range(40)]})
    assert distinct_cell(plan, others) == 2
    assert distinct_cell(plan, pa.concat_tables([others, heavy])) == 5
    statistic = plan.sensitivity(next(s.name for s in plan.stats if s.kind == "distinct"))
    assert statistic.bound == 3


def test_distinct_values_shared_with_other_units_count_once():
    plan = make_plan("SELECT COUNT(DISTINCT s) FROM t", max_rows_per_group=2)
    table = pa.table({"pid": [1, 1, 2, 2, 3], "k": ["a"] * 5, "x": [0.0] * 5, "flag": [0] * 5,
                      "s": ["p", "q", "p", "q", None]})
    assert distinct_cell(plan, table) == 2


def test_row_level_distinct_is_a_plain_distinct_count():
    catalog = Catalog()
    catalog.add(TableInfo.private("t", columns={"k": "VARCHAR", "s": "VARCHAR"},
                                  row_privacy=True))
    plan = analyze("SELECT COUNT(DISTINCT s) FROM t", catalog, epsilon=1.0, delta=0.0)
    table = pa.table({"k": ["a"] * 4, "s": ["p", "q", "p", None]})
    assert run_bounded(table, plan, salt="s")[()][plan.stats[0].name] == 2
    assert plan.sensitivities[0].bound == 1

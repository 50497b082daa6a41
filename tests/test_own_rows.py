"""Statistics with rows of their own (``StatSpec.rows``): a column whose automatic rows limit
was chosen apart from the rest of the query (``TableInfo.rows_for``, docs/mechanisms.md §11)
keeps fewer rows per unit and group in its aggregates, and their noise is calibrated to
those rows. Checked on hostile data against the plan on D and D − u, exactly on a known
table, and end to end from the estimate (audited in tests/privacy/test_audit_own_rows.py)."""

from __future__ import annotations

import dataclasses
import warnings

import pyarrow as pa
import pytest

import dpsql
from dpsql import suggest
from dpsql.analysis import analyze
from dpsql.catalog import Catalog, TableInfo
from tests.support import (
    COLUMNS,
    LIMITS,
    QUERIES,
    assert_neighbours_within_plan,
    hostile_table,
    run_bounded,
)

OWN = {"x": 2}
OWN_QUERIES = [
    *QUERIES,
    "SELECT k, VAR_SAMP(x), COUNT(*) FROM t GROUP BY k",
    "SELECT k, COUNT(x), MEDIAN(x) FROM t GROUP BY k",
]


def plan_of(sql: str, rows_for: dict[str, int] = OWN, **limits):
    catalog = Catalog()
    info = TableInfo.private("t", columns=COLUMNS, privacy_unit="pid", bounds={"x": (-2, 10)},
                             **limits)
    catalog.add(dataclasses.replace(info, rows_for=rows_for))
    return analyze(sql, catalog, epsilon=1.0, delta=1e-6)


@pytest.mark.parametrize("limits", LIMITS, ids=lambda d: ",".join(f"{v}" for v in d.values()))
@pytest.mark.parametrize("sql", OWN_QUERIES)
def test_removing_any_unit_moves_cells_within_the_plan(sql, limits):
    assert_neighbours_within_plan(plan_of(sql, **limits), hostile_table())


def test_only_the_columns_aggregates_keep_their_own_rows():
    """One person with 5 rows of x = 10 and 4 rows kept per group: COUNT(*) counts 4, and
    SUM(x), AVG(x) and COUNT(x) see 2 rows at the person's mean; their bounds, and so
    their noise, are 2 rows' (a SUM(x) beside COUNT(x) is centred on COUNT(x)'s count)."""
    sql = "SELECT COUNT(*) AS n, SUM(x) AS s, AVG(x) AS a, COUNT(x) AS c FROM t"
    plan = plan_of(sql, max_rows_per_group=4)
    table = pa.table({"pid": [1] * 5, "k": ["a"] * 5, "x": [10.0] * 5, "flag": [0] * 5})
    ((), cells), = run_bounded(table, plan, salt="s").items()
    specs = {s.name: s for s in plan.stats}
    kinds = {specs[name].kind: (specs[name], value) for name, value in cells.items()}
    assert kinds["rows"][0].rows is None and kinds["rows"][1] == 4
    count, counted = kinds["count"]
    assert (count.rows, counted) == (2, 2)
    centred, value = kinds["centered_sum"]
    assert centred.rows == 2 and value * centred.value_quantum == 2 * (2 * 10 - (-2 + 10))
    bounds = {s.name: s.bound for s in plan.sensitivities}
    assert bounds[count.name] == 2 and bounds[kinds["rows"][0].name] == 4
    assert bounds[centred.name] == 2 * centred.row_bound
    assert "over 2 rows per unit and group" in str(count)


def test_a_total_cap_spreads_over_more_cells_of_fewer_rows():
    """r = 7 in at most 4 groups of 5 rows: a statistic of 2 rows per group can fill 3.5 of
    its cells, one of 5 rows 1.4 (normalised L1 = min(g, r / rows))."""
    plan = plan_of("SELECT k, COUNT(*), SUM(x) FROM t GROUP BY k", max_groups_per_unit=4,
                   max_rows_per_group=5, max_rows_per_unit=7)
    l1 = {s.kind: next(t.l1 for t in plan.sensitivities if t.name == s.name)
          for s in plan.stats if s.kind != "units"}
    assert l1 == {"rows": 1.4, "sum": 3.5}


def test_the_estimate_gives_an_average_its_own_rows_beside_a_count():
    """``max_rows_per_unit="auto"`` with COUNT(*) and AVG(x): the limit the count needs is
    kept for the count, and the average keeps the fewer rows that serve it
    (``suggest.limit_for_error``); its statistics carry them, and a later query on the
    connection reads them from the catalog."""
    pids = [p for p in range(3000) for _ in range(1 if p < 2000 else 8 if p < 2900 else 64)]
    table = pa.table({"pid": pids, "k": ["a" if p % 2 else "b" for p in pids],
                      "x": [float(100 + p % 50) for p in pids]})
    con = dpsql.connect(budget=dpsql.Budget(epsilon=10.0, delta=1e-5), seed=4)
    con.register("v", table, privacy_unit="pid", public_keys={"k": ["a", "b"]},
                 bounds={"x": "auto"}, max_rows_per_unit="auto")
    sql = "SELECT k, COUNT(*) AS n, AVG(x) AS a FROM v GROUP BY k"
    with pytest.warns(dpsql.PrivacyWarning, match=r"v.x in \[.*\] over \d+ rows per person"):
        con.sql(sql, epsilon=2.0, delta=1e-6).fetchall()
    info = con.catalog.get("v")
    assert set(info.rows_for) == {"x"} and info.rows_for["x"] < info.max_rows_per_unit
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plan = con.compile(sql).plan
    own = {s.kind: s.rows for s in plan.stats}
    assert own == {"rows": None, "count": info.rows_for["x"],
                   "centered_sum": info.rows_for["x"]}


def test_cells_count_each_person_once_by_rows_and_value():
    """``suggest.cells_sql``: each person in one cell, of their rows bin among the released
    edges (more rows count in the largest) and of their mean value's bin among the released
    labels (the first at or above its own bin, and beyond them all TOP): person 5's rows of
    10 and 100 count once, at their mean 40, in the bin of 128."""
    people = {1: [(1, 0.5)], 2: [(1, 10.0)], 3: [(3, 100.0)], 4: [(9, 1e6)],
              5: [(2, 10.0), (1, 100.0)]}
    rows = [(pid, value) for pid, runs in people.items() for n, value in runs
            for _ in range(n)]
    table = pa.table({"pid": [p for p, _ in rows], "x": [v for _, v in rows]})
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1000.0), seed=1)
    con.register("t", table, privacy_unit="pid")
    sql = suggest.cells_sql(con.catalog.get("t"), "x", [1, 4], [16.0, 128.0])
    cells = {(edge, label): round(n) for edge, label, n in
             con.sql(sql, epsilon=500.0).fetchall()}
    assert sum(cells.values()) == len(people)
    assert cells[(1, 16.0)] == 2 and cells[(4, 1e100)] == 1
    assert cells[(4, 128.0)] == 2 and cells[(4, 16.0)] == cells[(1, 128.0)] == 0


def test_the_cells_decide_how_many_rows_an_average_keeps():
    """The same people and values: where people with many rows have the values of people
    with few, dropping rows moves the average by nothing and it keeps few rows (less noise);
    where they have larger values, it keeps more (``suggest.row_bias``)."""
    people = [(1, 500.0), (2, 300.0), (4, 150.0), (16, 50.0)]
    values = {"x": [(256.0, 700.0), (512.0, 250.0), (1024.0, 50.0)]}
    flat = [(edge, 256.0, n) for edge, n in people]
    heavy = [(edge, 256.0 if edge < 16 else 1024.0, n) for edge, n in people]
    served = [("x", "avg")]

    def limit(cells):
        return suggest.limit_for_error(people, values, noise_per_row=2.0, served=served,
                                       cells={"x": cells})[0]

    assert limit(flat) < limit(heavy)
    assert suggest.row_bias(flat, 1, (0.0, 1024.0), "avg") == 0.0
    assert suggest.row_bias(heavy, 4, (0.0, 1024.0), "avg") < 0

"""JOIN ... USING, NATURAL JOIN, public tables first in FROM, and WHERE k IN (SELECT c FROM
public_table ...) (dpsql/analysis/relations.py, dpsql/analysis/lookups.py).

Each is checked two ways on hostile data: it gives the same bounded aggregates as the form it
stands for (ON, the private table first, a literal IN list), and removing any unit moves each
cell by at most the plan's bound.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

import dpsql
from dpsql.analysis import analyze
from dpsql.catalog import Catalog, TableInfo
from tests.support import (
    BACKEND,
    COLUMNS,
    assert_neighbours_within_plan,
    hostile_table,
    run_bounded,
)

LOOKUP = pa.table({"k": ["k0", "k1", "k1", "k2", "k5", None],  # k1 twice: no double counting
                   "grp": ["a", "a", "a", "b", "b", "c"], "w": [1.0, 2.0, 2.0, 3.0, 4.0, 5.0]})


def catalog() -> Catalog:
    cat = Catalog()
    cat.add(TableInfo.private("t", columns=COLUMNS, privacy_unit="pid", bounds={"x": (-2, 10)},
                              max_groups_per_unit=3, max_rows_per_group=4))
    cat.add(TableInfo(name="pub", columns={"k": "VARCHAR(8)", "grp": "VARCHAR(8)", "w": "DOUBLE"},
                      public=True))
    return cat


def plan_of(sql: str, delta: float = 1e-6):
    BACKEND.load("pub", LOOKUP)
    return analyze(sql, catalog(), epsilon=1.0, delta=delta, public_values=BACKEND.public_values)


def cells(sql: str, table: pa.Table) -> dict:
    return run_bounded(table, plan_of(sql), salt="fixed")


def values(cells_: dict) -> dict:
    """Cells by key, each with its statistics' values in order (names may differ)."""
    return {k: sorted(v.values()) for k, v in cells_.items()}


SAME = [
    ("SELECT COUNT(*), SUM(x) FROM t WHERE k IN (SELECT k FROM pub WHERE grp = 'a')",
     "SELECT COUNT(*), SUM(x) FROM t WHERE k IN ('k0', 'k1')"),
    ("SELECT flag, COUNT(*) FROM t WHERE k IN (SELECT k FROM pub) AND x > 0 GROUP BY flag",
     "SELECT flag, COUNT(*) FROM t WHERE x > 0 AND k IN ('k0', 'k1', 'k2', 'k5') GROUP BY flag"),
    ("SELECT COUNT(*) FROM (SELECT pid, x FROM t WHERE UPPER(k) IN (SELECT UPPER(k) FROM pub "
     "WHERE w > 2)) AS s", "SELECT COUNT(*) FROM t WHERE k IN ('k2', 'k5')"),
    ("SELECT grp, COUNT(*), SUM(x) FROM t JOIN pub USING (k) GROUP BY grp",
     "SELECT grp, COUNT(*), SUM(x) FROM t JOIN pub ON t.k = pub.k GROUP BY grp"),
    ("SELECT grp, COUNT(*) FROM t NATURAL LEFT JOIN pub GROUP BY grp",
     "SELECT grp, COUNT(*) FROM t LEFT JOIN pub ON t.k = pub.k GROUP BY grp"),
    ("SELECT p.grp, AVG(x) FROM pub p JOIN t ON p.k = t.k GROUP BY p.grp",
     "SELECT p.grp, AVG(x) FROM t JOIN pub p ON p.k = t.k GROUP BY p.grp"),
]


@pytest.mark.parametrize("written, meant", SAME)
def test_same_bounded_aggregates_as_the_form_it_stands_for(written, meant):
    table = hostile_table(seed=3)
    assert values(cells(written, table)) == values(cells(meant, table))


@pytest.mark.parametrize("sql", [written for written, _ in SAME])
def test_removing_any_unit_moves_cells_within_the_plan(sql):
    assert_neighbours_within_plan(plan_of(sql), hostile_table(seed=4))


def test_lookup_reads_the_public_table_and_its_names_are_reserved():
    plan = plan_of("SELECT COUNT(*) FROM t WHERE k IN (SELECT k FROM pub)", delta=0.0)
    assert plan.tables == ("t", "pub") and plan.private_tables == ("t",)
    with pytest.raises(dpsql.UnsupportedQueryError, match="reserved"):
        plan_of("SELECT COUNT(*) FROM t WHERE k IN (SELECT k AS __dp_value FROM pub)")


@pytest.mark.parametrize("sql, message", [
    ("SELECT COUNT(*) FROM t WHERE k IN (SELECT k FROM t)", "t is not a public table"),
    ("SELECT COUNT(*) FROM t WHERE k IN (SELECT k FROM pub) OR x > 1", "not under OR or NOT"),
    ("SELECT COUNT(*) FROM t WHERE flag IN (SELECT k FROM pub)", "of the same type"),
    ("SELECT COUNT(*) FROM t WHERE k IN (SELECT k FROM pub WHERE w > t.x)",
     "cannot refer to the outer query"),
    ("SELECT COUNT(*) FROM t WHERE k IN (SELECT k FROM pub WHERE w / 0 > 1 GROUP BY k)",
     "Only a filter"),
    ("SELECT COUNT(*) FROM t NATURAL JOIN (SELECT pid AS q FROM t) AS s", "column in common"),
    ("SELECT COUNT(*) FROM pub JOIN t USING (k) LEFT JOIN pub p2 USING (grp)",
     "only INNER joins"),
    ("SELECT COUNT(*) FROM t JOIN pub USING (w, grp)", "Write the condition with ON"),
])
def test_refused_before_reading_data(sql, message):
    with pytest.raises(dpsql.UnsupportedQueryError, match=message):
        plan_of(sql)


def test_messages_name_joined_columns_as_written():
    cat = catalog()
    with pytest.raises(dpsql.UnsupportedQueryError) as err:
        analyze("SELECT a.pid FROM t AS a JOIN t AS b ON a.pid = b.pid", cat, epsilon=1.0,
                delta=1e-6)
    assert "`pid`" in str(err.value) and "__dp" not in str(err.value)
    with pytest.raises(dpsql.UnsupportedQueryError, match="Write privacy_unit_column = pid "):
        analyze("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (privacy_unit_column = a.x) COUNT(*) "
                "FROM t AS a JOIN t AS b ON a.pid = b.pid", cat, epsilon=1.0, delta=1e-6)

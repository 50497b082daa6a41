"""Bounds that follow from the query (``dpsql.analysis.bounds.refine``, per-unit subquery
aggregates in ``dpsql.analysis.relations``): exact inference, and the guarantee on
adversarial neighbouring databases.

An inferred bound is a promise the rewrite keeps by clamping: on every database and every
neighbour (one unit removed), each bounded cell moves by at most its sensitivity
(``tests.fuzz.harness.check_query``). A rewrite that trusted an inferred bound without
clamping — a per-person ``COUNT(*)`` above the row limit, a CASE arm outside its
condition — would fail here.
"""

from __future__ import annotations

import pyarrow as pa
import pytest
import sqlglot
from hypothesis import given, settings

import dpsql
from dpsql.analysis.bounds import infer_interval, refine
from dpsql.backends import DuckDBBackend
from dpsql.evaluate import truth
from tests.fuzz.harness import SHORT, Engine, check_query
from tests.fuzz.tables import databases, limits


@pytest.mark.parametrize(("condition", "expected"), [
    ("x BETWEEN 1 AND 4", {"x": (1.0, 4.0)}),
    ("x > 1 AND x <= 4", {"x": (1.0, 4.0)}),
    ("1 < x AND 4 >= x", {"x": (1.0, 4.0)}),
    ("x = -3", {"x": (-3.0, -3.0)}),
    ("x IN (3, -1, 2)", {"x": (-1.0, 3.0)}),
    ("(x > 0) AND (y < 2 AND y > -2.5)", {"x": (0.0, float("inf")), "y": (-2.5, 2.0)}),
    ("x > 0 AND x > 5 AND x < 9", {"x": (5.0, 9.0)}),
    ("x < 1 OR x < 2", {}),
    ("NOT x > 1", {}),
    ("x > y", {}),
    ("x > '1'", {}),
    ("x IN (1, y)", {}),
])
def test_conditions_prove_exactly_their_ranges(condition, expected):
    assert refine({}, sqlglot.parse_one(condition)) == expected


def test_refine_intersects_and_ignores_impossible_conditions():
    bounds = {"x": (0.0, 10.0)}
    assert refine(bounds, sqlglot.parse_one("x > 5 AND x < 20")) == {"x": (5.0, 10.0)}
    assert refine(bounds, sqlglot.parse_one("x > 50")) == bounds
    assert refine(bounds, None) == bounds


@pytest.mark.parametrize(("expression", "lo", "hi"), [
    ("CASE WHEN x BETWEEN 0 AND 5 THEN x ELSE 0 END", -0.0, 5.0),
    ("CASE WHEN x > 2 THEN x WHEN x < -1 THEN x END", -10.0, 10.0),
    ("CASE WHEN x > 2 AND x < 3 THEN x WHEN x > -1 AND x < 0 THEN x END", -1.0, 3.0),
    ("CASE x WHEN 1 THEN x ELSE 0 END", -10.0, 10.0),
    ("IF(x < 4 AND x > 1, x * 2, NULL)", 2.0, 8.0),
])
def test_case_arms_are_bounded_by_their_conditions(expression, lo, hi):
    interval = infer_interval(sqlglot.parse_one(expression), {"x": (-10.0, 10.0)})
    assert (interval.lo, interval.hi) == (lo, hi)


def _connection(**limits) -> dpsql.Connection:
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1e9, delta=0.5))
    con.register("t", pa.table({"pid": [1] * 6 + [2] * 2 + [3],
                                "x": [5.0, 7.0, 200.0, -3.0, 1.0, 2.0, 8.0, 9.0, 4.0]}),
                 privacy_unit="pid", **limits)
    return con


def _noise_free(con: dpsql.Connection, sql: str) -> float:
    return truth(con, con.compile(sql), seed=0).fetchall()[0][0]


def _bound(con: dpsql.Connection, sql: str) -> tuple[float, float]:
    (stat,) = [s for s in con.compile(sql).plan.stats if s.kind in ("sum", "centered_sum")]
    return stat.lo, stat.hi


def test_a_per_unit_count_is_clamped_to_the_row_limit():
    con = _connection(max_rows_per_unit=4)
    sql = "SELECT AVG(n) FROM (SELECT pid, COUNT(*) AS n FROM t GROUP BY pid) s"
    assert _bound(con, sql) == (0, 4)
    # Noise-free: person 1 has 6 rows and counts as 4; persons 2 and 3 as 2 and 1.
    assert _noise_free(con, sql) == pytest.approx(7 / 3)


def test_a_per_unit_sum_is_bounded_by_the_row_limit_and_the_subquery_where():
    con = _connection(max_groups_per_unit=2, max_rows_per_group=3)
    sql = ("SELECT SUM(s) FROM (SELECT pid, SUM(x) AS s FROM t WHERE x BETWEEN 0 AND 10 "
           "GROUP BY pid) q")
    assert _bound(con, sql) == (0, 60)


def test_only_a_total_row_limit_is_also_the_rows_per_group():
    con = _connection(max_rows_per_unit=3)
    limits = con.compile("SELECT COUNT(*) FROM t").plan.contribution
    assert (limits.max_rows_per_group, limits.max_rows_per_unit) == (3, 3)
    assert _noise_free(con, "SELECT COUNT(*) FROM t") == 6


def test_without_limits_a_per_unit_count_still_needs_a_clamp():
    with pytest.raises(dpsql.UnsupportedQueryError, match="needs bounds"):
        _connection().compile("SELECT AVG(n) FROM (SELECT pid, COUNT(*) AS n FROM t "
                              "GROUP BY pid) s")


INFERRED = [
    "SELECT SUM(x) FROM t WHERE x BETWEEN 0 AND 5",
    "SELECT k, AVG(x) FROM t WHERE x > -1 AND x < 3 GROUP BY k",
    "SELECT SUM(CASE WHEN x BETWEEN 1 AND 4 THEN x ELSE 0 END) FROM t",
    "SELECT AVG(IF(i > 10 AND i < 20, i, NULL)) FROM t",
    "SELECT AVG(n) FROM (SELECT pid, COUNT(*) AS n FROM t GROUP BY pid) s",
    "SELECT g, SUM(n) FROM (SELECT pid, g, COUNT(*) AS n FROM t GROUP BY pid, g) s GROUP BY g",
    "SELECT SUM(s) FROM (SELECT pid, SUM(x) AS s FROM t WHERE x BETWEEN -1 AND 2 "
    "GROUP BY pid) q",
    "SELECT AVG(s) FROM (SELECT pid, SUM(h) AS s FROM t GROUP BY pid) q WHERE s > 0",
]


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine(DuckDBBackend())


@pytest.mark.parametrize("sql", INFERRED)
def test_inferred_bounds_hold_on_every_neighbour(engine, sql):
    outcomes = []

    @settings(SHORT, max_examples=40)
    @given(db=databases(), declared=limits())
    def check(db, declared):
        outcomes.append(check_query(engine, db, declared, sql))

    check()
    assert outcomes.count("accepted") >= 10, outcomes

"""bench_matrix's ``PAIRS`` compute what dpsql's bounded query computes where no choice binds.

``bench_matrix --pairs`` reports each query's statistic from the row limit's partials alone
as what enforcing the row limit costs (docs/benchmarks.md). That reading holds only if the
plain SQL builds the same partials: on data where nobody has more groups than the limit,
dpsql's choice keeps every pair, so its bounded query (run without noise) and ``PAIRS`` must
give the same counts and the same histogram weights, bucket by bucket. ``CHOSEN``, the same
pairs ranked in a window per unit, must keep them all there too.
"""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest
import sqlglot
from sqlglot import exp

import dpsql
from dpsql.rewrite.digest import salt_parameters
from tests.benchmarks import limits_data
from tests.benchmarks.bench_matrix import BOUNDS, CHOSEN, PAIRS, chosen_sql, in_duckdb, pairs_sql

GROUPS, ROWS = 8, 3


@pytest.fixture(scope="module")
def raw() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.register("gen", limits_data.table(20_000, groups=GROUPS, over=0.0, seed=3))
    con.execute("CREATE TABLE t AS SELECT * FROM gen")
    ((most,),) = con.sql("SELECT MAX(n) FROM (SELECT COUNT(DISTINCT grp) AS n FROM t "
                         "GROUP BY pid)").fetchall()
    assert most <= GROUPS  # the choice keeps every pair
    return con


def bounded(raw: duckdb.DuckDBPyConnection, sql: str) -> list[tuple]:
    """dpsql's bounded query for ``sql`` at (GROUPS, ROWS), run as plain SQL (no noise)."""
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1e9, delta=0.5), cache=False)
    schema = pa.schema([("pid", pa.int64()), ("grp", pa.string()), ("v", pa.float64())])
    con.register("t", schema.empty_table(), privacy_unit="pid", bounds=BOUNDS,
                 max_groups_per_unit=GROUPS, max_rows_per_group=ROWS)
    rewritten = con.explain(sql, epsilon=1.0, delta=1e-6).data["rewritten_sql"]
    read = {p.name for p in sqlglot.parse_one(rewritten, read="duckdb").find_all(exp.Placeholder)}
    return raw.execute(rewritten, salt_parameters("pairs", read)).fetchall()


def pairs(raw: duckdb.DuckDBPyConnection, query: str) -> list[tuple]:
    return raw.sql(PAIRS[query].format(c=ROWS, t="t")).fetchall()


def test_pairs_count_what_the_bounded_query_counts(raw):
    # Each row: the group, its clamped count of rows, its count of people (for the
    # threshold that releases private groups).
    released = bounded(raw, "SELECT grp, COUNT(*) FROM t GROUP BY grp")
    counted = sorted((grp, rows) for grp, rows, _people in released)
    assert counted == sorted(pairs(raw, "count")) == sorted(pairs(raw, "pub_count"))


def test_pairs_weigh_each_bucket_as_the_bounded_histogram_does(raw):
    released = bounded(raw, "SELECT grp, MEDIAN(v) FROM t GROUP BY grp")
    histograms = {(row[0], e["b"]): e["w"] for row in released for e in row[-1]}
    assert histograms == {(grp, b): w for grp, b, w in pairs(raw, "median_by")}


def test_pairs_weigh_the_global_histogram_as_the_bounded_query_does(raw):
    ((*_, histogram),) = bounded(raw, "SELECT MEDIAN(v) FROM t")
    assert {e["b"]: e["w"] for e in histogram} == dict(pairs(raw, "median"))


@pytest.mark.parametrize("query", sorted(CHOSEN))
def test_the_chosen_pairs_keep_every_pair_where_nobody_is_over_the_limit(raw, query):
    # bench_matrix --pairs also times CHOSEN, the window strategy in plain SQL: at
    # g = GROUPS nobody is over the limit, so it must keep every pair that PAIRS sums.
    chosen = raw.sql(chosen_sql(query, (GROUPS, ROWS), "t")).fetchall()
    assert sorted(chosen) == sorted(pairs(raw, query))


def test_the_chosen_pairs_keep_one_group_per_unit_at_one_group(raw):
    ((people,),) = raw.sql("SELECT COUNT(DISTINCT pid) FROM t").fetchall()
    kept = raw.sql(chosen_sql("distinct", (1, ROWS), "t")).fetchall()
    assert sum(n for _, n in kept) == people
    assert len(kept) > 1  # each unit's own choice, not one group for everybody


@pytest.mark.spark
@pytest.mark.parametrize("query", sorted(PAIRS))
def test_the_spark_form_of_pairs_gives_duckdbs_answers(raw, spark, query):
    # bench_matrix --spark --pairs runs each PAIRS written in Spark SQL by sqlglot: the
    # same lower bound only if it computes the same partials.
    spark.createDataFrame(raw.sql("SELECT pid, grp, v FROM t").to_arrow_table()) \
        .createOrReplaceTempView("pairs_t")
    on_spark = [tuple(row) for row in spark.sql(pairs_sql(query, ROWS, "pairs_t", "spark"))
                .collect()]
    assert sorted(on_spark) == sorted(pairs(raw, query))


def test_a_spark_views_name_reaches_spark_sql_backquoted():
    # bench_matrix --spark --pairs names the connection's view in the DuckDB templates.
    sql = pairs_sql("count", ROWS, in_duckdb("`dpsql_0a1b2c3d_t`"), "spark")
    assert "FROM `dpsql_0a1b2c3d_t`" in sql
    assert chosen_sql("count", (3, ROWS), in_duckdb("`dpsql_0a1b2c3d_t`"), "spark") \
        .count("`dpsql_0a1b2c3d_t`") == 1

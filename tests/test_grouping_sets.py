"""ROLLUP, CUBE and GROUPING SETS: the sets, each set's query, the composed cost, one charge.

Each grouping set is released as the query grouped by that set alone, at ε/k (docs/
mechanisms.md §14): the exact tests below compare every set with that stand-alone query,
so a set that released more than its share, or bounded its rows differently, would show.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import pyarrow as pa
import pytest
import sqlglot

import dpsql
from dpsql.accounting.values import Cost
from dpsql.analysis.grouping_sets import grouping_sets, set_query
from dpsql.datasets import pums_path
from dpsql.engines import ENGINES
from dpsql.errors import InternalError, PrivacyError, UnsupportedQueryError
from dpsql.exact import float_at_most
from dpsql.grouping import GroupedQuery, compile_statement
from grammar_tests.catalog import connect, register_tables


@pytest.fixture(scope="module")
def con() -> dpsql.Connection:
    return connect()


def sets_of(sql: str, dialect: str = "duckdb") -> list[str]:
    return [str(s) for s in grouping_sets(sqlglot.parse_one(sql, read=dialect))]


@pytest.mark.parametrize(("group_by", "expected"), [
    ("ROLLUP (a, b, c)", ["(a, b, c)", "(a, b)", "(a)", "()"]),
    ("CUBE (a, b)", ["(a, b)", "(a)", "(b)", "()"]),
    ("GROUPING SETS ((a, b), b, ())", ["(a, b)", "(b)", "()"]),
    ("a, ROLLUP (b, c)", ["(a, b, c)", "(a, b)", "(a)"]),
    ("ROLLUP (a), CUBE (b)", ["(a, b)", "(a)", "(b)", "()"]),
    ("GROUPING SETS ((a), (b)), c", ["(a, c)", "(b, c)"]),
    ("a, b WITH ROLLUP", ["(a, b)", "(a)", "()"]),
])
def test_sets_come_in_postgresql_order(group_by: str, expected: list[str]) -> None:
    assert sets_of(f"SELECT COUNT(*) FROM t GROUP BY {group_by}") == expected


def test_with_cube_and_with_totals_of_other_dialects() -> None:
    assert sets_of("SELECT COUNT(*) FROM t GROUP BY a, b WITH CUBE", "tsql") == \
        ["(a, b)", "(a)", "(b)", "()"]
    assert sets_of("SELECT COUNT(*) FROM t GROUP BY a WITH TOTALS", "clickhouse") == ["(a)", "()"]


def test_each_set_reads_null_for_rolled_up_keys_outside_aggregates() -> None:
    select = sqlglot.parse_one(
        "SELECT a, UPPER(b), GROUPING(a, b) AS g, COUNT(DISTINCT b) AS nb FROM t "
        "GROUP BY ROLLUP (a, b) HAVING b IS NULL OR COUNT(*) > GROUPING(b)")
    sql = [set_query(select, s).sql() for s in grouping_sets(select)]
    assert sql == [
        'SELECT a, UPPER(b) AS "UPPER(b)", 0 AS g, COUNT(DISTINCT b) AS nb FROM t '
        "GROUP BY a, b HAVING b IS NULL OR COUNT(*) > 0",
        'SELECT a, UPPER(NULL) AS "UPPER(b)", 1 AS g, COUNT(DISTINCT b) AS nb FROM t '
        "GROUP BY a HAVING NULL IS NULL OR COUNT(*) > 1",
        'SELECT NULL AS a, UPPER(NULL) AS "UPPER(b)", 3 AS g, COUNT(DISTINCT b) AS nb FROM t '
        "HAVING NULL IS NULL OR COUNT(*) > 1",
    ]


def test_every_set_releases_the_columns_as_written(con: dpsql.Connection) -> None:
    """An unnamed item keeps its written name in every set, though a set's analysis may
    rewrite it (found by the slow fuzzer: ``COUNT('')`` became ``COUNT("n")`` in the set
    grouped by ``'' AS n``, an InternalError after the charge)."""
    sql = "SELECT '' AS n, COUNT('') FROM (SELECT pid FROM pums) AS a GROUP BY ROLLUP (n)"
    assert con.sql(sql, epsilon=1.0, delta=1e-6, seed=1).columns == ["n", "COUNT('')"]


def test_a_rolled_up_key_in_filter_stays_a_row_value() -> None:
    select = sqlglot.parse_one("SELECT COUNT(*) FILTER (WHERE b = 'x') AS n FROM t "
                               "GROUP BY ROLLUP (a, b)")
    assert set_query(select, grouping_sets(select)[2]).sql() == \
        "SELECT COUNT(*) FILTER(WHERE b = 'x') AS n FROM t"


@pytest.mark.parametrize(("sql", "message"), [
    ("SELECT SUM(COUNT(*)) OVER () FROM t GROUP BY ROLLUP (a)", "window function with grouping"),
    ("SELECT COUNT(*) FROM t GROUP BY ROLLUP (a) ORDER BY 1", "ORDER BY with grouping sets"),
    ("SELECT COUNT(*) FROM t GROUP BY ROLLUP (a) LIMIT 1", "LIMIT with grouping sets"),
    ("SELECT DISTINCT a FROM t GROUP BY ROLLUP (a)", "SELECT DISTINCT with grouping sets"),
    ("SELECT COUNT(*) FROM t GROUP BY GROUPING SETS ((a), (a))", "comes twice"),
    ("SELECT COUNT(*) FROM t GROUP BY CUBE (a, b, c, d, e)", "at most 16 grouping sets"),
    ("SELECT COUNT(*) FROM t GROUP BY ROLLUP (a, a)", "each column once"),
    ("SELECT COUNT(*) FROM t GROUP BY GROUPING SETS (CUBE (a))", "Nested ROLLUP/CUBE"),
    ("SELECT COUNT(*) FROM t GROUP BY ROLLUP ((a, b), c)", "Nested ROLLUP/CUBE"),
])
def test_refused_before_any_plan(sql: str, message: str) -> None:
    with pytest.raises(UnsupportedQueryError, match=message):
        sets_of(sql)


def test_grouping_of_a_column_that_is_no_key_is_refused() -> None:
    select = sqlglot.parse_one("SELECT GROUPING(b) FROM t GROUP BY ROLLUP (a)")
    with pytest.raises(UnsupportedQueryError, match="GROUPING"):
        set_query(select, grouping_sets(select)[0])


CUBE = "SELECT region, specialty, COUNT(*) AS n FROM visits GROUP BY CUBE (region, specialty)"


def test_epsilon_is_split_equally_and_delta_only_over_the_sets_that_spend_it(con) -> None:
    """region is public, specialty private: (region, specialty) and (specialty) select their
    groups and get δ/2 each; (region) and () release public cells, with Laplace noise, at no δ."""
    q = con.compile(CUBE, epsilon=0.3, delta=1e-6)
    share = float_at_most(Fraction(3, 10) / 4)
    assert [str(s) for s in q.sets] == ["(region, specialty)", "(region)", "(specialty)", "()"]
    assert [p.cost.epsilon for p in q.parts] == [share] * 4
    assert [p.cost.delta for p in q.parts] == [5e-7, 0.0, 5e-7, 0.0]
    assert sum(Fraction(p.cost.epsilon) for p in q.parts) <= Fraction(3, 10)
    assert q.cost == Cost(epsilon=0.3, delta=1e-6)
    assert [p.plan.selection is not None for p in q.parts] == [True, False, True, False]


def test_public_sets_spend_no_delta(con) -> None:
    q = con.compile("SELECT region, COUNT(*) FROM visits GROUP BY ROLLUP (region)",
                    epsilon=1, delta=1e-6)
    assert q.cost == Cost(epsilon=1.0, delta=0.0)


def test_private_keys_still_need_delta(con) -> None:
    with pytest.raises(PrivacyError, match="needs delta > 0"):
        con.compile("SELECT married, COUNT(*) FROM pums GROUP BY ROLLUP (married)", epsilon=1,
                    delta=0)


@pytest.mark.parametrize("epsilon", [1.0, 0.3])
def test_each_set_is_the_query_grouped_by_it_alone_at_its_share(con, epsilon: float) -> None:
    """Noise, sensitivity and selection of every set equal the stand-alone query's at ε/k:
    one person touches g groups (3 here) in a set with keys and 1 cell in (), so the cells
    one person can change over all sets are 3 + 3 + 1 (selection's unit count included)."""
    rollup = con.compile("SELECT region, specialty, COUNT(*) AS n FROM visits "
                         "GROUP BY ROLLUP (region, specialty)", epsilon=epsilon, delta=1e-6)
    alone = ["SELECT region, specialty, COUNT(*) AS n FROM visits GROUP BY region, specialty",
             "SELECT region, NULL AS specialty, COUNT(*) AS n FROM visits GROUP BY region",
             "SELECT NULL AS region, NULL AS specialty, COUNT(*) AS n FROM visits"]
    share = rollup.parts[0].cost.epsilon
    assert share == float_at_most(Fraction(str(epsilon)) / 3)
    for part, sql in zip(rollup.parts, alone, strict=True):
        single = con.compile(sql, epsilon=share, delta=part.cost.delta)
        assert str(part.plan).splitlines()[1:] == str(single.plan).splitlines()[1:]
        assert part.plan.noise == single.plan.noise
        assert part.plan.selection == single.plan.selection
        assert part.bounded_sql() == single.bounded_sql()
    assert [p.plan.statistics_per_unit for p in rollup.parts] == [3, 3, 1]
    assert rollup.statistics_per_unit == 7


def test_the_cost_is_checked_exactly(con) -> None:
    q = con.compile(CUBE, epsilon=1, delta=1e-6)
    with pytest.raises(InternalError, match="differs from its parts"):
        dataclasses.replace(q, cost=Cost(epsilon=0.9, delta=1e-6))  # parts spend 1/4 each
    with pytest.raises(InternalError, match="differs from its parts"):
        dataclasses.replace(q, cost=Cost(epsilon=1.0, delta=9e-7))  # parts spend 2 × 5e-7
    with pytest.raises(InternalError):
        dataclasses.replace(q, parts=q.parts[:3])


def test_one_charge_with_every_sets_mechanisms() -> None:
    con = register_tables(dpsql.connect(budget=dpsql.Budget(epsilon=10, delta=1e-5)))
    result = con.sql(CUBE, epsilon=1, delta=1e-6)
    (charge,) = con.budget.charges
    compiled = con.compile(CUBE, epsilon=1, delta=1e-6)
    assert (charge.epsilon, charge.delta) == (1.0, 1e-6) and result.cost == Cost(1.0, 1e-6)
    assert charge.events == compiled.events == tuple(e for p in compiled.parts for e in p.events)
    assert charge.plan.startswith("grouping sets (region, specialty), (region), (specialty), ()")
    con.sql(CUBE, epsilon=1, delta=1e-6)  # asked again: answered afresh, and charged again
    assert len(con.budget.charges) == 2


def test_rows_and_intervals_come_set_after_set(con) -> None:
    sql = ("SELECT sex, married, COUNT(*) AS n, GROUPING(sex, married) AS g FROM pums "
           "GROUP BY ROLLUP (sex, married)")
    result = con.sql(sql, epsilon=1, delta=1e-6, seed=1)
    rows = result.fetchall()
    assert [r[3] for r in rows][-3:] == [1, 1, 3] and rows[-1][:2] == (None, None)
    assert {r[3] for r in rows[:-3]} == {0}
    ci = result.ci(0.95)
    assert ci.num_rows == len(rows) and ci.column_names == ["sex", "married", "n", "g",
                                                            "n_lower", "n_upper"]
    assert all(lo <= hi for lo, hi in zip(ci.column("n_lower").to_pylist(),
                                          ci.column("n_upper").to_pylist(), strict=True))
    assert "(3 rows" not in repr(result) and "grouping sets" in str(result.explain())
    assert result.explain().to_dict()["statistics_per_unit"] == 3


def test_explain_lists_every_set(con) -> None:
    info = con.explain(CUBE, epsilon=1, delta=1e-6).to_dict()
    assert [p["set"] for p in info["grouping_sets"]] == ["(region, specialty)", "(region)",
                                                         "(specialty)", "()"]
    assert [p["epsilon"] for p in info["grouping_sets"]] == [0.25] * 4
    assert info["epsilon"] == 1.0 and info["statistics_per_unit"] == 3 + 3 + 3 + 1
    assert info["rewritten_sql"].count("-- grouping set") == 4


def test_the_options_clause_gives_the_statements_epsilon(con) -> None:
    sql = ("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 1e-6, "
           "privacy_unit_column = pid) sex, COUNT(*) AS n FROM pums GROUP BY ROLLUP (sex)")
    q = con.compile(sql, dialect="bigquery")
    assert q.cost.epsilon == 1.0 and [p.cost.epsilon for p in q.parts] == [1.0]  # (sex) only
    off = sql.replace("privacy_unit_column", "consistent_totals = FALSE, privacy_unit_column")
    assert [p.cost.epsilon for p in con.compile(off, dialect="bigquery").parts] == [0.5, 0.5]


SUMMED = ("SELECT sex, married, COUNT(*) AS n, SUM(income) AS s, AVG(age) AS a "
          "FROM public_pums GROUP BY {group_by}")


@pytest.fixture(scope="module")
def public_pums(con) -> dpsql.Connection:
    """pums with both keys public: every set's cells are known, so sets may be summed."""
    con.register("public_pums", str(pums_path("PUMS_dup")), privacy_unit="pid",
                 public_keys={"sex": [0, 1], "married": [0, 1]},
                 bounds={"income": (0, 500_000), "age": (0, 100)})
    return con


@pytest.mark.parametrize("group_by", ["ROLLUP (sex, married)", "CUBE (sex, married)",
                                      "sex, ROLLUP (married)"])
def test_small_public_domains_measure_the_finest_set_alone_at_the_whole_epsilon(
        public_pums, group_by: str) -> None:
    """The finest set is the query grouped by it alone at the statement's ε and δ: the same
    plan, noise and bounded query, its events the statement's only ones; no other set runs."""
    q = public_pums.compile(SUMMED.format(group_by=group_by), epsilon=0.7, delta=1e-6)
    assert q.finest == 0 and q.labels == ("(sex, married)",) and len(q.parts) == 1
    single = public_pums.compile(SUMMED.format(group_by="sex, married"), epsilon=0.7,
                                 delta=1e-6)
    assert str(q.parts[0].plan).splitlines()[1:] == str(single.plan).splitlines()[1:]
    assert q.parts[0].plan.noise == single.plan.noise
    assert q.parts[0].bounded_sql() == single.bounded_sql()
    assert q.events == single.events and q.cost.epsilon == 0.7
    assert q.bounded_sql().count("-- grouping set") == 1
    assert q.statistics_per_unit == single.plan.statistics_per_unit


def test_the_summed_sets_add_up_exactly_and_their_intervals_widen_with_the_cells(
        public_pums) -> None:
    result = public_pums.sql(SUMMED.format(group_by="CUBE (sex, married)"), epsilon=1,
                             seed=4)
    rows = {(r[0], r[1]): r[2:] for r in result.fetchall()}
    for column in (0, 1):
        for sex in (0, 1):
            assert rows[sex, 0][column] + rows[sex, 1][column] == pytest.approx(
                rows[sex, None][column], rel=1e-12)
        assert sum(rows[s, None][column] for s in (0, 1)) == pytest.approx(
            rows[None, None][column], rel=1e-12)
        assert sum(rows[None, m][column] for m in (0, 1)) == pytest.approx(
            rows[None, None][column], rel=1e-12)
    ci = {(r["sex"], r["married"]): r["n_upper"] - r["n_lower"]
          for r in result.ci(0.9).to_pylist()}
    # a summed cell's std is √m times a fine cell's; its interval is its own set's noise
    # shape at that std (a discrete Laplace's quantiles are not exactly proportional to it)
    assert ci[0, None] == pytest.approx(ci[0, 0] * 2 ** 0.5, rel=0.02)
    assert ci[None, None] == pytest.approx(ci[0, 0] * 2, rel=0.02)
    assert result.cost == Cost(1.0, 0.0)
    assert "summed from (sex, married) to add up: (sex, married), (sex), (married), ()" in \
        str(result.explain())


@pytest.mark.parametrize(("sql", "why"), [
    ("SELECT region, specialty, COUNT(*) FROM visits GROUP BY ROLLUP (region, specialty)",
     "specialty is a private key: its groups are selected"),
    ("SELECT region, COUNT(*) FROM visits GROUP BY ROLLUP (region)",
     "3 groups per person: the total would sum 3 of a person's cells"),
    ("SELECT sex, married, COUNT(*) FROM public_pums GROUP BY GROUPING SETS ((sex), (married))",
     "no set holds every key"),
    ("SELECT sex, COUNT(DISTINCT married) FROM public_pums GROUP BY ROLLUP (sex)",
     "a count of distinct values is no sum of cells"),
    ("SELECT sex, MEDIAN(age) FROM public_pums GROUP BY ROLLUP (sex)", "nor a quantile"),
    ("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (consistent_totals = FALSE) sex, COUNT(*) "
     "FROM public_pums GROUP BY ROLLUP (sex)", "each set as measured"),
])
def test_every_set_is_measured_where_summing_cannot_serve_or_serves_worse(
        public_pums, sql: str, why: str) -> None:
    q = public_pums.compile(sql, epsilon=1, delta=1e-6)
    assert q.finest is None and len(q.parts) == len(q.sets), why


def test_a_wide_domain_is_fitted_not_summed() -> None:
    """A total summed from d fine cells has d times their variance. Relative to each set
    alone at ε/2, least squares gives ROLLUP (a)'s two sets 2d/(d + 1) together, summing
    1/4 + d/4: summing wins up to d = 5 (1.50 against 1.67), the fit from d = 7 (1.75 against
    2.00). ROLLUP (a, b) over 20 × 10 cells is fitted too."""
    con = dpsql.connect(budget=dpsql.Budget(epsilon=10))
    domains = {"a": [f"a{i}" for i in range(20)], "b": [f"b{i}" for i in range(10)],
               "c": [f"c{i}" for i in range(5)], "e": [f"e{i}" for i in range(7)]}
    con.register("t", pa.table({"pid": [1], **{k: [v[0]] for k, v in domains.items()}}),
                 privacy_unit="pid", public_keys=domains)

    def finest(group_by: str) -> int | None:
        return con.compile(f"SELECT COUNT(*) FROM t GROUP BY {group_by}", epsilon=1).finest

    assert finest("ROLLUP (a, b)") is None and finest("ROLLUP (a)") is None
    assert finest("ROLLUP (c)") == 0 and finest("ROLLUP (e)") is None


def test_spark_gets_each_sets_query_from_the_same_builders(con) -> None:
    """Without pyspark: the Spark plan of every set is DuckDB's, written by the same builder
    (tests/test_spark.py runs the corpus on both engines when pyspark is installed)."""
    options = {"epsilon": 1, "delta": 1e-6, "public_values": con._public_values}
    duck = compile_statement(CUBE, con.catalog, **options)
    spark = compile_statement(CUBE, con.catalog, **options, engine=ENGINES["spark"])
    assert isinstance(spark, GroupedQuery)
    for d, s in zip(duck.parts, spark.parts, strict=True):
        assert str(d.plan) == str(s.plan) and d.bounding.strategy == s.bounding.strategy
        assert s.bounded.engine.name == "spark" and sqlglot.parse_one(s.bounded_sql(),
                                                                      read="spark")


def test_evaluate_refuses_grouping_sets() -> None:
    con = connect()
    with pytest.raises(UnsupportedQueryError, match="evaluate each grouping set or part"):
        con.evaluate(CUBE, runs=2, epsilon=1, delta=1e-6)

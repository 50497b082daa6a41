"""A query whose expressions around its aggregates cannot run over the released values is
refused before anything is charged (found by the fuzzer: ROUND of APPROX_QUANTILES' array;
a count and an array in one column of a UNION ALL, which DuckDB binds and then fails to
cast on the first row)."""

import pytest

import dpsql
from dpsql.datasets import pums_path


@pytest.fixture
def con():
    con = dpsql.connect(budget=dpsql.Budget(epsilon=3.0, delta=1e-6))
    con.register("pums", pums_path(), privacy_unit="pid", bounds={"age": (0, 100)})
    return con


def test_rounding_an_array_of_quantiles_is_refused_before_the_charge(con):
    with pytest.raises(dpsql.UnsupportedQueryError, match=r"APPROX_QUANTILES releases an array"):
        con.sql("SELECT ROUND(APPROX_QUANTILES(age, 2), 1) FROM pums", epsilon=0.5)
    assert con.sql("SELECT APPROX_QUANTILES(age, 2)[2] AS m FROM pums", epsilon=1.0).fetchall()


@pytest.mark.parametrize("sql", [
    "SELECT COUNT(*) AS v FROM pums UNION ALL SELECT APPROX_QUANTILES(age, 1) AS v FROM pums",
    "SELECT v FROM (SELECT APPROX_QUANTILES(age, 1) AS v FROM pums UNION ALL "
    "SELECT SUM(age) AS v FROM pums) AS w",
    "SELECT COALESCE(COUNT(*), APPROX_QUANTILES(age, 1)) AS v FROM pums",
])
def test_a_count_and_an_array_in_one_column_are_refused_before_the_charge(con, sql):
    with pytest.raises(dpsql.UnsupportedQueryError, match=r"(DOUBLE\[\]|list<)"):
        con.sql(sql, epsilon=0.5)
    assert con.budget.spent.epsilon == 0


def test_a_failure_of_a_made_up_value_refuses_nothing(con):
    """The made-up group is 1 everywhere, where CAST(COUNT(*) - 2 AS UINTEGER) is out of
    range; a failure of a value there is not the query's types, so it is accepted."""
    sql = "SELECT CAST(COUNT(*) - 2 AS UINTEGER) AS a, APPROX_QUANTILES(age, 1)[1] AS m " \
          "FROM pums UNION ALL SELECT 1 AS a, APPROX_QUANTILES(age, 1)[2] AS m FROM pums"
    assert len(con.sql(sql, epsilon=1.0).fetchall()) == 2
    single = "SELECT CAST(COUNT(*) - 2 AS UINTEGER) AS a, APPROX_QUANTILES(age, 1) AS m " \
             "FROM pums"
    assert len(con.sql(single, epsilon=1.0).fetchall()) == 1


def test_arithmetic_on_an_array_of_quantiles_in_a_rollup_is_refused_before_the_charge(con):
    """Each grouping set's post-processing is checked as a single query's is (found by the
    fuzzer: ``APPROX_QUANTILES(x, 1) * 2 + 1`` under ROLLUP was charged, then failed)."""
    with pytest.raises(dpsql.UnsupportedQueryError, match=r"APPROX_QUANTILES releases an array"):
        con.sql("SELECT sex, APPROX_QUANTILES(age, 1) * 2 + 1 AS q FROM pums "
                "GROUP BY ROLLUP (sex)", epsilon=0.5)
    assert con.budget.spent.epsilon == 0
    rows = con.sql("SELECT sex, APPROX_QUANTILES(age, 1)[2] * 2 + 1 AS q FROM pums "
                   "GROUP BY ROLLUP (sex)", epsilon=1.0).fetchall()
    assert rows and rows[-1][0] is None

"""Every accepted row-level expression is total: no row of a hostile table makes a query fail.

An error that happens on some rows and not others answers a question about private data for
free, so each function dpsql accepts in WHERE, FILTER and aggregate arguments must return a
value or NULL on every row. The table holds the values engines choke on: integer extremes
(overflow), zero divisors, NaN and ±inf, empty and numeric-looking text, extreme dates, NULLs.
"""

from __future__ import annotations

import datetime

import numpy as np
import pyarrow as pa
import pytest

import dpsql

BIG = 2**63 - 1


@pytest.fixture(scope="module")
def con() -> dpsql.Connection:
    n = [BIG, -BIG - 1, 0, -1, 1, None, 2**31, 7]
    d = [np.nan, np.inf, -np.inf, 0.0, 1e308, None, -5e-324, 2.5]
    s = ["", "abc", None, "123", "1e400", "ünïcödé", "x" * 1000, " 12 "]
    day = [datetime.date(1, 1, 1), datetime.date(9999, 12, 31), None, datetime.date(2023, 3, 1),
           datetime.date(1970, 1, 1), datetime.date(2000, 2, 29), datetime.date(2024, 12, 31),
           datetime.date(1969, 12, 31)]
    table = pa.table({"pid": list(range(8)), "n": pa.array(n, pa.int64()),
                      "d": pa.array(d, pa.float64()), "s": s, "day": pa.array(day, pa.date32())})
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1e9, delta=0.5), seed=0)
    con.register("t", table, privacy_unit="pid", bounds={"n": (-10, 10), "d": (-10, 10)})
    return con


PREDICATES = [
    "n / (n - n) > 1", "n // 0 = 1", "n % 0 = 1", "d / 0 > 1", "d % (d - d) = 0",
    "n * n > 0", "ABS(n) > 0", "-n > 0", "n + n > 0", "CASE WHEN n > 0 THEN d / n END > 1",
    "NULLIF(n, 0) > 0", "COALESCE(d, n) > 0", "TRY_CAST(s AS INTEGER) > 0",
    "TRY_CAST(s AS DOUBLE) > 0", "TRY_CAST(s AS DATE) > '2000-01-01'",
    "CAST(n AS VARCHAR) = '1'", "CAST(d AS VARCHAR) = 'nan'", "CAST(n AS DOUBLE) > 0",
    "CAST(day AS TIMESTAMP) > '2000-01-01'", "CAST(day AS VARCHAR) LIKE '9%'",
    "date_trunc('month', day) > '2000-01-01'", "date_trunc('millennium', day) IS NULL",
    "EXTRACT(year FROM day) > 2000", "year(day) + month(day) + day(day) > 0",
    "dayofweek(day) + dayofyear(day) + week(day) + quarter(day) > 0",
    "hour(day) + minute(day) + second(day) = 0", "strftime(day, '%Y-%m-%d %j %U') <> ''",
    "LENGTH(s) > 3", "LOWER(s) = UPPER(s)", "SUBSTR(s, 2147483647, 2147483647) = ''",
    "SUBSTR(s, -3) = 'abc'", "LEFT(s, -2) = ''", "RIGHT(s, 2147483647) = s",
    "TRIM(s) = '12'", "REPLACE(s, 'x', '') = ''", "STRPOS(s, 'b') > 0",
    "starts_with(s, 'a') OR ends_with(s, 'c')", "CONCAT(s, n, d, day) <> ''",
    "s || s = ''", "REVERSE(s) = 'cba'", "ROUND(d, 20) > 0", "ROUND(n, -20) = 0",
    "FLOOR(d) + CEIL(d) > 0", "SIGN(d) > 0", "ROUND(n) > 0", "n BETWEEN -1 AND 1",
]


@pytest.mark.parametrize("predicate", PREDICATES)
def test_predicates_never_fail(con, predicate):
    con.sql(f"SELECT COUNT(*) FROM t WHERE {predicate}", epsilon=1.0).fetchall()


VALUES = [
    "n / (n - n)", "n // 0", "n % n", "d / d", "n * n * n", "d * 1e308", "ABS(n) - n",
    "CASE WHEN s = '' THEN n ELSE d END", "TRY_CAST(s AS DOUBLE)", "TRY_CAST(d AS INTEGER)",
    "month(day) * n", "LENGTH(s) * d", "ROUND(d / 3, 2)", "FLOOR(n / 3)",
]


@pytest.mark.parametrize("value", VALUES)
def test_aggregate_arguments_never_fail(con, value):
    clamped = f"LEAST(GREATEST({value}, -1e9), 1e9)"
    sql = (f"SELECT SUM({clamped}), AVG({clamped}), VAR_SAMP({clamped}), "
           f"COUNT(DISTINCT {value}), COUNT(*) FILTER (WHERE {value} > 0) FROM t")
    con.sql(sql, epsilon=1.0).fetchall()


def test_post_processing_divides_by_noisy_zero_without_failing(con):
    row = con.sql("SELECT COUNT(*) // 0 AS a, SUM(n) % 0 AS b, COUNT(*) / 0 AS c FROM t",
                  epsilon=1.0).fetchall()
    assert row == [(None, None, None)]

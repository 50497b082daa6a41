"""Every accepted row-level expression is total: no row of a hostile table makes a query fail.

An error that happens on some rows and not others answers a question about private data for
free, so each function dpsql accepts in WHERE, FILTER and aggregate arguments must return a
value or NULL on every row. The table holds the values engines choke on: integer extremes
(overflow), zero divisors, NaN and ±inf, empty and numeric-looking text, extreme dates, NULLs.
"""

from __future__ import annotations

import datetime

import duckdb
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
    "date_trunc('month', day) > '2000-01-01'", "date_trunc('year', day) IS NULL",
    "EXTRACT(year FROM day) > 2000", "year(day) + month(day) + day(day) > 0",
    "dayofweek(day) + dayofyear(day) + week(day) + quarter(day) > 0",
    "hour(day) + minute(day) + second(day) = 0", "strftime(day, '%Y-%m-%d %j') <> ''",
    "LENGTH(s) > 3", "LOWER(s) = UPPER(s)", "SUBSTR(s, 2147483647, 2147483647) = ''",
    "SUBSTR(s, -3) = 'abc'", "LEFT(s, 0) = ''", "RIGHT(s, 2147483647) = s",
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
    "CASE WHEN s = '' THEN n ELSE d END", "TRY_CAST(s AS DOUBLE)", "TRY_CAST(ROUND(d) AS INTEGER)",
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


# The engine's own extremes: types a pyarrow table cannot hold (HUGEINT, DECIMAL(38, s)),
# dates and timestamps at DuckDB's limits and its ±infinity, and TIME '24:00:00'. Each query
# must run on the hostile rows *and* on an empty table: a failure on either and not the
# other is the oracle.
EXTREME_ROWS = """
    (0, 170141183460469231731687303715884105727::HUGEINT,
     9999999999999999999999999999.9999999999::DECIMAL(38, 10), 18446744073709551615::UBIGINT,
     DATE '5877642-06-25', TIMESTAMP '294247-01-10 04:00:54', TIME '23:59:59', 'alice'),
    (0, (-170141183460469231731687303715884105727)::HUGEINT,
     (-9999999999999999999999999999.9999999999)::DECIMAL(38, 10), 0::UBIGINT,
     DATE '5877641-06-25 (BC)', TIMESTAMP '290308-12-22 (BC) 00:00:00', TIME '00:00:00', 'bob'),
    (1, 170141183460469231731687303715884105727::HUGEINT,
     9999999999999999999999999999.9999999999::DECIMAL(38, 10), 7, DATE '2020-02-01',
     TIMESTAMP '2020-02-01 10:00:00', TIME '10:00:00', 'carol'),
    (1, 170141183460469231731687303715884105727::HUGEINT,
     9999999999999999999999999999.9999999999::DECIMAL(38, 10), 18446744073709551615::UBIGINT,
     NULL, NULL, NULL, NULL),
    (1, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
    (2, NULL, NULL, NULL, DATE 'infinity', TIMESTAMP '290309-12-22 (BC) 00:00:00', NULL, 'erin'),
    (2, NULL, NULL, NULL, DATE '-infinity', NULL, TIME '24:00:00', 'frank'),
    (3, NULL, NULL, NULL, NULL, TIMESTAMP 'infinity', NULL, 'gina'),
    (3, NULL, NULL, NULL, DATE '10000-01-01', TIMESTAMP '-infinity', NULL, 'hal')
"""
COLUMNS = "pid, h, m, u, d, ts, tm, name"


def extreme_connection(empty: bool) -> dpsql.Connection:
    engine = duckdb.connect()
    engine.execute(f"CREATE TABLE x AS SELECT * FROM (VALUES {EXTREME_ROWS}) v({COLUMNS})"
                   + (" WHERE false" if empty else ""))
    con = dpsql.connect(engine, budget=dpsql.Budget(epsilon=1e9, delta=0.5), seed=0)
    con.register("x", "x", privacy_unit="pid", max_rows_per_group=3)
    return con


@pytest.fixture(scope="module", params=["hostile", "empty"])
def extreme(request) -> dpsql.Connection:
    return extreme_connection(request.param == "empty")


EXTREME_QUERIES = [
    # text literals against dates, timestamps and times are typed before any row is read
    "SELECT COUNT(*) FROM x WHERE d = '2020-02-01'",
    "SELECT COUNT(*) FROM x WHERE CASE WHEN name = 'alice' THEN d = '2020-02-01' "
    "ELSE FALSE END",
    "SELECT COUNT(*) FROM x WHERE d IN ('2020-02-01', '2021-01-01')",
    "SELECT COUNT(*) FROM x WHERE d BETWEEN '2020-01-01' AND '2020-12-31'",
    "SELECT COUNT(*) FROM x WHERE tm > '09:30' AND ts < '2021-01-01 10:00'",
    "SELECT COUNT(*) FROM x WHERE CASE d WHEN '2020-02-01' THEN TRUE ELSE FALSE END",
    # dates meet timestamps: DATE's range is wider than TIMESTAMP's
    "SELECT COUNT(*) FROM x WHERE d < ts",
    "SELECT COUNT(*) FROM x WHERE CAST(d AS TIMESTAMP) > ts",
    "SELECT COUNT(*) FROM x WHERE date_trunc('month', d) > TIMESTAMP '2000-01-01 00:00:00'",
    "SELECT COUNT(*) FROM x WHERE COALESCE(d, ts) IS NOT NULL",
    "SELECT COUNT(*) FROM x WHERE GREATEST(d, ts) > '2000-01-01'",
    # dates and timestamps are taken apart within years 1-9999 (date_trunc of DuckDB's least
    # TIMESTAMP falls below it)
    "SELECT COUNT(*) FROM x WHERE date_trunc('month', ts) IS NOT NULL",
    "SELECT COUNT(*) FROM x WHERE date_trunc('week', COALESCE(ts, d)) < ts",
    "SELECT COUNT(*) FROM x WHERE year(ts) + hour(d) + EXTRACT(minute FROM ts) > 0",
    "SELECT COUNT(*) FROM x WHERE strftime(ts, '%Y') = '1' OR strftime(d, '%H') = '0'",
    "SELECT COUNT(*) FROM x WHERE CAST(ts AS DATE) < d OR CONCAT(d, ts, tm) = ''",
    "SELECT COUNT(*) FROM x WHERE CAST(tm AS VARCHAR) = '24:00:00'",
    # wide numbers compare and add up in DOUBLE
    "SELECT COUNT(*) FROM x WHERE m = 100000000000000000000000000000000",
    "SELECT COUNT(*) FROM x WHERE m > 12345678901234567890123456789.5",
    "SELECT COUNT(*) FROM x WHERE m IN (1, 2.5, 99999999999999999999999999999999999)",
    "SELECT COUNT(*) FROM x WHERE h = 1e300 OR u = -1 OR h + 1 > 0 OR -h > 0",
    "SELECT COUNT(*) FROM x WHERE CASE WHEN name = 'bob' THEN m ELSE h END > 0",
    "SELECT COUNT(*) FROM x WHERE FLOOR(m) + CEIL(h) + SIGN(u) + ABS(m) > 0",
    "SELECT SUM(LEAST(GREATEST(m, 0), 10)), AVG(LEAST(GREATEST(h, 0), 10)) FROM x",
    "SELECT AVG(LEAST(GREATEST(s, 0), 1e40)) FROM (SELECT pid, SUM(h) AS s, SUM(m) AS t, "
    "AVG(u) AS a FROM x GROUP BY pid) p WHERE t > 0 AND a > 0",
    "SELECT AVG(LEAST(GREATEST(s, 0), 10)) FROM (SELECT pid, MAX(h) AS s, MIN(d) AS e "
    "FROM x GROUP BY pid) p WHERE e < '2000-01-01' AND s > -1e38",
]


@pytest.mark.parametrize("sql", EXTREME_QUERIES)
def test_queries_run_on_the_engines_extremes_and_on_no_rows(extreme, sql):
    extreme.sql(sql, epsilon=1.0).fetchall()


@pytest.mark.parametrize(("predicate", "rows"), [
    ("year(ts) IS NULL AND ts IS NOT NULL", 5),
    ("(d < ts) IS NULL AND d IS NOT NULL AND ts IS NOT NULL", 4),
    ("CAST(d AS VARCHAR) IS NULL AND d IS NOT NULL", 5),
    ("CAST(tm AS VARCHAR) IS NULL AND tm IS NOT NULL", 1),
    ("date_trunc('month', d) = TIMESTAMP '2020-02-01 00:00:00'", 1),
])
def test_dates_outside_years_1_to_9999_are_null_where_converted(predicate, rows):
    """Rule 8 of ``dpsql.expr.totality``: a date or timestamp outside years 1-9999 (DuckDB's
    ±infinity too) is NULL to date functions, casts and comparisons with the other type, as
    Spark cannot take them apart or convert them; a TIME of 24:00:00 is NULL as text."""
    con = extreme_connection(empty=False)
    ((count,),) = con.sql(f"SELECT COUNT(*) FROM x WHERE {predicate}", epsilon=1e6).fetchall()
    assert count == rows


@pytest.mark.parametrize(("predicate", "message"), [
    ("d = '2020-02-30'", "not a valid date"),
    ("d IN ('garbage')", "not a valid date"),
    ("d BETWEEN 'x' AND 'y'", "not a valid date"),
    ("tm = '25:00'", "not a valid time"),
    ("ts > '2020-01-01 10:00+05:00'", "not a valid timestamp"),
    ("d = DATE '2020-02-30'", "not a valid date"),
    ("m > 1e400", "not a finite number"),
    ("CAST(70000 AS SMALLINT) > 0", "not a valid numeric"),
    ("CAST('300' AS TINYINT) > 0", "not a valid numeric"),
    ("CAST(-10 AS DECIMAL(2, 1)) = 0", "not a valid numeric"),
    ("CAST(999.995 AS DECIMAL(5, 2)) > 0", "may drop a fraction"),
    ("CAST(999.99 AS DECIMAL(4, 2)) > 0", "not a valid numeric"),
])
def test_bad_literals_are_refused_before_any_data_is_read(predicate, message):
    con = extreme_connection(empty=False)
    with pytest.raises(dpsql.UnsupportedQueryError, match=message):
        con.sql(f"SELECT COUNT(*) FROM x WHERE {predicate}", epsilon=1.0)
    assert con.budget.spent.epsilon == 0


def test_text_literals_compare_as_the_dates_they_name():
    con = extreme_connection(empty=False)
    for sql, expected in [("SELECT COUNT(*) FROM x WHERE d = '2020-02-01'", 1),
                          ("SELECT COUNT(*) FROM x WHERE d < ts", 1),
                          ("SELECT COUNT(*) FROM x WHERE tm >= '10:00:00'", 3)]:
        ((count,),) = con.sql(sql, epsilon=1e6).fetchall()
        assert count == expected, sql


CAST_TYPES = ["TINYINT", "SMALLINT", "INTEGER", "BIGINT", "DECIMAL(4, 2)", "DECIMAL",
              "NUMERIC(3)", "DECIMAL(38, 10)", "FLOAT", "DOUBLE"]
CAST_VALUES = ["127", "127.5", "128", "-128.5", "-129", "-0.5", "-0.4", "32767.5", "70000",
               "2147483647.5", "9223372036854775807.5", "255.5", "99.994", "99.995",
               "999.9995", "999999999999999.9995", "1e30", "1.7e38", "3.5e38", "1e40",
               "18446744073709551615", "99999999999999999999999999999999999999"]


@pytest.mark.parametrize("target", CAST_TYPES)
def test_a_literal_cast_is_accepted_exactly_when_duckdb_converts_it(target):
    """The analysis's range check of a cast literal agrees with DuckDB's own conversion
    (refusing more is safe, and happens at FLOAT's rounding edge and for a literal whose
    digits the type would drop, which engines round differently; accepting a literal the
    engine rejects would be an engine error)."""
    engine = duckdb.connect()
    con = extreme_connection(empty=False)
    for value in CAST_VALUES:
        try:
            engine.execute(f"SELECT CAST({value} AS {target})").fetchall()
            converts = True
        except duckdb.Error:
            converts = False
        sql = f"SELECT COUNT(*) FROM x WHERE CAST({value} AS {target}) IS NOT NULL"
        try:
            con.sql(sql, epsilon=1.0).fetchall()
            accepted = True
        except dpsql.UnsupportedQueryError:
            accepted = False
        assert converts or not accepted, f"CAST({value} AS {target}) fails in the engine"
        assert accepted == (converts and keeps_digits(value, target)) or (
            target == "FLOAT" and value.startswith("34028")), \
            f"CAST({value} AS {target}): accepted={accepted}, converts={converts}"


def keeps_digits(value: str, target: str) -> bool:
    """Whether a literal converts to ``target`` without dropping digits (dpsql refuses a
    cast that would: DuckDB rounds the fraction, Spark truncates it)."""
    if target in ("FLOAT", "DOUBLE"):
        return True
    scale = {"DECIMAL(4, 2)": 2, "DECIMAL": 3, "DECIMAL(38, 10)": 10}.get(target, 0)
    return "e" not in value and len(value.partition(".")[2].rstrip("0")) <= scale


@pytest.mark.parametrize("fragment", [
    "TRY_CAST(m AS HUGEINT) > 0", "TRY_CAST(m AS UBIGINT) > 0", "CAST('200' AS UTINYINT) > 0",
    "TRY_CAST(m AS USMALLINT) > 0", "TRY_CAST(m AS UINTEGER) > 0", "TRY_CAST(m AS UHUGEINT) > 0",
])
def test_casts_to_types_some_engine_lacks_are_refused(fragment):
    """Spark has no unsigned or 128-bit integers: a plan that names one would fail there."""
    con = extreme_connection(empty=False)
    with pytest.raises(dpsql.UnsupportedQueryError, match=r"not every engine|cannot check"):
        con.sql(f"SELECT COUNT(*) FROM x WHERE {fragment}", epsilon=1.0)


@pytest.mark.parametrize("literal", [
    "170141183460469231731687303715884105727", "0.123456789012345678901234567890123456789",
    "0.00000000000000000000000000000000000000000001", "-1000000000000000000000000000000000000000",
])
def test_number_literals_beyond_38_digits_are_refused(literal):
    """DuckDB reads them as HUGEINT or DOUBLE, Spark raises on them: refused, with the
    scientific notation that every engine reads as the same DOUBLE."""
    con = extreme_connection(empty=False)
    with pytest.raises(dpsql.UnsupportedQueryError, match=r"more than 38 digits.*e[+-]"):
        con.sql(f"SELECT COUNT(*) FROM x WHERE m > {literal}", epsilon=1.0)
    ((count,),) = con.sql(f"SELECT COUNT(*) FROM x WHERE m > {float(literal):e}",
                          epsilon=1e6).fetchall()
    assert count >= 0



@pytest.mark.parametrize("fragment", ["TRY_CAST(name AS TIME) IS NULL", "TRY_CAST(ts AS TIME) = tm",
                                      "TRY_CAST('25:00' AS TIME) = tm"])
def test_casts_to_time_of_anything_but_a_valid_literal_are_refused(fragment):
    """Spark has TIME literals but no cast to TIME: refused on every engine, before any
    data is read."""
    con = extreme_connection(empty=False)
    with pytest.raises(dpsql.UnsupportedQueryError, match="TIME"):
        con.sql(f"SELECT COUNT(*) FROM x WHERE {fragment}", epsilon=1.0)
    assert con.budget.spent.epsilon == 0


@pytest.mark.parametrize(("target", "read"), [("DATE", 1), ("TIMESTAMP", 3)])
def test_text_is_a_date_only_in_iso_form(target, read):
    """Rule 6 of ``dpsql.expr.totality``: DuckDB read 'infinity', 'epoch', '2020/01/01' and
    '2020-01-01 24:00:00' as dates, which Spark reads as NULL (or not at all alike); only
    ISO 8601's digits are read now, on every engine."""
    texts = ["2020-01-01", "2020-01-01 10:00", "2020-01-01T10:00:00.5", "infinity", "epoch",
             "2020/01/01", "2020-01-01 24:00:00", " 2020-01-01", "2021-02-29", "-infinity"]
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1e9, delta=0.5), seed=0)
    con.register("texts", pa.table({"pid": list(range(len(texts))), "s": texts}),
                 privacy_unit="pid")
    ((count,),) = con.sql(f"SELECT COUNT(*) FROM texts WHERE TRY_CAST(s AS {target}) IS NOT NULL",
                          epsilon=1e6).fetchall()
    assert count == read

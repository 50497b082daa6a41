"""The bounded query is portable: no construct whose meaning differs between DuckDB and Spark.

These tests need no Spark: they pin the keyed hash's exact text (so any engine that computes
MD5 and prints integers, strings and dates alike gives the same choice) and check that no
accepted query's bounded SQL uses a construct sqlglot cannot carry to Spark faithfully.
tests/test_spark.py runs the same queries on both engines.
"""

from __future__ import annotations

import hashlib
import math

import pyarrow as pa
import pytest
import sqlglot
from sqlglot import exp

import dpsql
from dpsql.backends import DuckDBBackend
from dpsql.compile import fresh_salt, seeded_salt
from dpsql.engines import DUCKDB
from dpsql.rewrite.digest import SALT, SALT_CONSTANTS, key_code, keyed_hash, salt_constants
from grammar_tests.cases import ACCEPTED, compile_case
from grammar_tests.catalog import connect


def md5(text: str) -> str:
    return hashlib.md5(text.encode()).hexdigest()


def test_the_digest_is_the_md5_of_salt_unit_and_keys_joined_by_bars():
    backend = DuckDBBackend()
    backend.load("t", pa.table({"u": pa.array([7, 8], pa.int64()), "k": ["a", None],
                                "d": pa.array([0, 1], pa.date32())}))
    sql = keyed_hash([("u", "BIGINT"), ("k", "VARCHAR"), ("d", "DATE")]).sql("duckdb")
    got = backend.run_sql(f"SELECT {sql} AS h FROM t ORDER BY u", {SALT: "salt"})
    got = got.column("h").to_pylist()
    assert got == [md5("salt|7|a|1970-01-01"), md5("salt|8|1970-01-02")]  # NULL adds nothing


def test_the_salt_constants_bound_as_parameters_are_the_keyed_codes_of_their_tags():
    """``unit_order``'s six constants are computed once in Python and bound beside the salt
    (``digest.salt_constants``); they are exactly the ``key_code`` that the SQL computed
    for each pair before: the same numbers for fresh, seeded and non-ASCII salts."""
    backend = DuckDBBackend()
    backend.load("t", pa.table({"one": [1]}))
    codes = ", ".join(f"{key_code((), tag=name[-2:]).sql(DUCKDB.dialect)} AS {name}"
                      for name in SALT_CONSTANTS)
    for salt in (fresh_salt(), fresh_salt(), seeded_salt(7), "sé|l ✓", ""):
        assert backend.run_sql(f"SELECT {codes} FROM t", {SALT: salt}).to_pylist() == \
            [salt_constants(salt)]


@pytest.mark.parametrize(("value", "text"), [
    (0.1, "100000"), (-0.1, "-100000"), (1e20, "1000000000000000000"),
    (-math.inf, "-1000000000000000000"), (math.nan, "nan"), (-0.0, "0"), (2.5e-7, "0"),
    (-2.5e-7, "-1"),
])
def test_floating_point_keys_hash_as_scaled_integers(value, text):
    """Engines print doubles differently (1e+20 vs 1.0E20): hash FLOOR(x·10⁶) instead."""
    backend = DuckDBBackend()
    backend.load("t", pa.table({"x": pa.array([value], pa.float64())}))
    sql = keyed_hash([("x", "DOUBLE")]).sql("duckdb")
    assert backend.run_sql(f"SELECT {sql} AS h FROM t", {SALT: "s"}).column("h").to_pylist() \
        == [md5(f"s|{text}")]


def test_no_engine_hash_function_is_used():
    """DuckDB's HASH and Spark's HASH (murmur3) have the same name and different values."""
    tree = keyed_hash([("u", "BIGINT"), ("k", "VARCHAR")])
    for dialect, salt in (("duckdb", "$__dp_salt"), ("spark", ":__dp_salt")):
        assert tree.sql(dialect).startswith(f"MD5(CONCAT_WS('|', {salt}, CAST(u AS ")
    assert not list(tree.find_all(exp.Anonymous))


@pytest.fixture(scope="module")
def con() -> dpsql.Connection:
    return connect()


ENGINE_QUANTILES = (exp.Quantile, exp.Median, exp.PercentileCont, exp.PercentileDisc,
                    exp.ApproxQuantile)


@pytest.mark.parametrize("case", ACCEPTED, ids=[c.title for c in ACCEPTED])
def test_bounded_sql_avoids_constructs_that_change_meaning_in_spark(con, case):
    """No QUALIFY (sqlglot moves a LIMIT inside it for Spark), no LIMIT/ORDER BY (the driver
    post-processes), no engine quantiles (their definitions differ; dpsql builds histograms),
    no engine-specific functions, and FROM reads only registered tables, never a file path."""
    compiled = compile_case(con, case)
    for part in getattr(compiled, "parts", (compiled,)):  # grouping sets: each set's query
        assert_portable(con, part)


def assert_portable(con, compiled) -> None:
    plan, tree = compiled.plan, compiled.bounded.ast
    for node in (exp.Qualify, exp.Limit, *ENGINE_QUANTILES, exp.Anonymous, exp.Trunc):
        if node is not exp.Trunc or not plan.contribution.caps_total:
            assert not list(tree.find_all(node)), node.__name__
    orders = [o for o in tree.find_all(exp.Order) if not isinstance(o.parent, exp.Window)]
    assert not orders
    ctes = {cte.alias for cte in tree.find_all(exp.CTE)}
    tables = {t.name for t in tree.find_all(exp.Table)}
    assert tables <= ctes | {info.name for info in con.catalog}
    assert all(not t.this.quoted and "." not in t.name for t in tree.find_all(exp.Table))
    assert sqlglot.parse_one(tree.sql("spark"), read="spark") is not None


def test_scaled_partials_truncate_toward_zero_in_both_dialects():
    """sqlglot writes TRUNC(x) as CAST(x AS BIGINT) for Spark, which also truncates."""
    trunc = exp.Trunc(this=exp.column("x"))
    assert trunc.sql("duckdb") == "TRUNC(x)"
    assert trunc.sql("spark") == "CAST(x AS BIGINT)"


@pytest.mark.parametrize(("options", "message"), [
    ({"backend": "oracle"}, "unknown backend 'oracle'"),
    ({"spark": "local[1]"}, "spark= is an option of backend='spark'"),
    ({"backend": "spark", "database": "clinic.duckdb"}, "reads no DuckDB database"),
])
def test_backend_options_are_checked(options, message):
    with pytest.raises(dpsql.InterfaceError, match=message.replace("[", r"\[")):
        dpsql.connect(**options)

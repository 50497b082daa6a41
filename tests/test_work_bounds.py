"""Bounded work per row (``dpsql.expr.size``): every text value's size and every row's work
is bounded before any data is read, and the rewrite makes the widths true on any data.

The red team's amplifier — ``replace`` nested in a CASE arm that only one person's row
reaches, 10⁸ times longer on that row — must be refused, and whatever is accepted must stay
within its bound on the most hostile text (values far over their width, characters whose
case mapping grows them).
"""

from __future__ import annotations

import pathlib

import duckdb
import pyarrow as pa
import pytest
import sqlglot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpsql
from dpsql.catalog import Catalog, TableInfo, WorkLimits
from dpsql.compile import compile_query, fresh_salt
from dpsql.errors import UnsupportedQueryError
from dpsql.expr.size import CASE_FACTOR, PRINTED, measure
from dpsql.expr.totality import error_free
from dpsql.expr.types import type_class
from dpsql.plan import TableRead
from dpsql.rewrite.widths import read_within_widths
from tests.fuzz.expressions import Col, Scope, expressions

HOSTILE = ["", "a", "ß", "ΐ", "İ", "ŉ", "ﬃ", "🙂" * 300, "a" * 5000, "%_\\'", None,
           "é" * 2000, "aaaa bbbb cccc", "x" * 199, "x" * 200, "x" * 201]
"""Texts over their width (5000 > 1024, 201 > 200), and characters whose case mapping is
longer than they are (ß, ΐ, ŉ, ﬃ upper-case to 2–3 characters in Java's full mapping)."""


def _table() -> pa.Table:
    n = len(HOSTILE)
    return pa.table({"pid": list(range(n)), "s": HOSTILE, "label": list(reversed(HOSTILE)),
                     "x": [float(i) for i in range(n)]})


def _connection(**options) -> dpsql.Connection:
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1e9, delta=0.5), seed=0, **options)
    con.register("t", _table(), privacy_unit="pid", bounds={"x": (0, 100)},
                 max_text_length={"s": 200})
    return con


def _exact(con: dpsql.Connection, sql: str) -> list[tuple]:
    """The bounded query's exact aggregates (no noise): what the engine computed."""
    compiled = con.compile(sql)
    table = con.backend.execute(compiled, salt=fresh_salt())
    return [tuple(row.values()) for row in table.to_pylist()]


def test_text_columns_get_widths_and_the_unit_none():
    info = TableInfo.private("t", columns={"pid": "VARCHAR", "s": "VARCHAR", "u": "UUID",
                                           "n": "INT"}, privacy_unit="pid",
                             max_text_length={"s": 80}, default_text_length=100)
    assert dict(info.columns) == {"pid": "VARCHAR", "s": "VARCHAR(80)", "u": "UUID",
                                  "n": "INT"}


@pytest.mark.parametrize("declared, message", [
    ({"pid": 5}, "the privacy unit is never cut"),
    ({"x": 5}, "give widths of text columns"),
    ({"s": 0}, "must be a positive integer"),
    ({"s": True}, "must be a positive integer"),
])
def test_bad_widths_are_refused_at_registration(declared, message):
    con = dpsql.connect()
    with pytest.raises(dpsql.CatalogError, match=message):
        con.register("t", _table(), privacy_unit="pid", max_text_length=declared)


def test_a_public_key_longer_than_its_width_is_refused():
    con = dpsql.connect()
    with pytest.raises(dpsql.CatalogError, match="longer than the column's width, 3"):
        con.register("t", _table(), privacy_unit="pid", max_text_length={"s": 3},
                     public_keys={"s": ["abc", "abcd"]})


def test_the_rewrite_cuts_every_text_value_to_its_width_on_any_data():
    """Neither a declared width (s: 200) nor the default (label: 1024) is trusted: values
    longer than either are read cut to it, so the bounds the plan assumed hold."""
    con = _connection()
    clamp = "LEAST(GREATEST(length({}), 0), 100000)"
    longest_s, longest_label = _exact(con, f"SELECT SUM({clamp.format('s')}), "
                                           f"SUM({clamp.format('label')}) FROM t")[0][:2]
    assert (longest_s, longest_label) == (
        sum(min(len(v), 200) for v in HOSTILE if v is not None),
        sum(min(len(v), 1024) for v in HOSTILE if v is not None))


def test_a_subquery_column_carries_the_width_of_its_expression():
    con = _connection()
    plan = con.compile("SELECT COUNT(*) FROM (SELECT pid, s || label AS both, lower(s) AS low "
                       "FROM t) AS q WHERE both <> low").plan
    assert plan.column_types["both"] == "VARCHAR(1224)"
    assert plan.column_types["low"] == f"VARCHAR({CASE_FACTOR * 200})"


def test_the_red_team_amplifier_is_refused_before_any_data_is_read():
    con = _connection()
    grown = "lower(s)"
    for _ in range(8):
        grown = f"replace({grown}, 'a', 'aaaaaaaaaa')"
    query = (f"SELECT COUNT(*) FROM t WHERE CASE WHEN pid = 7 THEN length({grown}) > -1 "
             "ELSE FALSE END")
    with pytest.raises(UnsupportedQueryError, match="may build a text of up to 600,000 "
                                                    "characters on one row"):
        con.sql(query, epsilon=1e-4)
    assert con.budget.spent.epsilon == 0


def test_owner_limits_apply_and_come_from_a_catalog_file(tmp_path: pathlib.Path):
    strict = _connection(limits=WorkLimits(max_text_value=500))
    with pytest.raises(UnsupportedQueryError, match="allows 500"):
        strict.compile("SELECT COUNT(*) FROM t WHERE s || s || s = ''")
    _connection().compile("SELECT COUNT(*) FROM t WHERE s || s || s = ''")
    pathlib.Path(tmp_path, "t.csv").write_text("pid,s\n1,a\n")
    catalog = pathlib.Path(tmp_path, "c.toml")
    catalog.write_text('[limits]\nmax_row_work = 1000\ndefault_text_length = 10\n'
                       '[tables.t]\nsource = "t.csv"\nprivacy_unit = "pid"\n')
    con = dpsql.connect(catalog=catalog)
    assert con.catalog.get("t").columns["s"] == "VARCHAR(10)"
    with pytest.raises(UnsupportedQueryError, match="allows 1,000 \\(max_row_work\\)"):
        con.compile("SELECT COUNT(*) FROM t WHERE " + " OR ".join(["s LIKE '%a%'"] * 30))
    catalog.write_text("[limits]\nmax_row_wrk = 1\n")
    with pytest.raises(dpsql.CatalogError, match="did you mean `max_row_work`"):
        dpsql.connect(catalog=catalog)


def test_a_text_privacy_unit_is_used_only_whole():
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1e9, delta=0.5))
    con.register("v", pa.table({"pid": ["p1", "p2"], "s": ["a", "b"]}), privacy_unit="pid")
    con.compile("SELECT COUNT(*) FROM v WHERE pid = 'p1' OR pid IN ('p2', 'p3')")
    con.compile("SELECT COUNT(DISTINCT pid) FROM v")
    for reading in ("lower(pid) = 'p1'", "pid LIKE 'p%'", "length(pid) > 2"):
        with pytest.raises(UnsupportedQueryError, match="privacy unit is never cut"):
            con.compile(f"SELECT COUNT(*) FROM v WHERE {reading}")


def test_explain_shows_the_work_per_row_and_the_widths():
    explained = _connection().explain("SELECT COUNT(*) FROM t WHERE lower(s) LIKE '%a%'")
    work = explained.to_dict()["row_work"]
    assert work["text_widths"] == {"t": {"s": 200}}  # label is not read
    assert work["steps"] == (1 + 200 + 600) + (1 + 600 * 4)  # lower, then LIKE of its text
    assert "work per row ≤ 3,202 steps; text read as at most its width in characters: " \
        "t.s ≤ 200" in str(explained)


def test_the_rule_sizes_each_function_from_its_arguments():
    types = {"s": "VARCHAR(100)", "n": "DOUBLE", "d": "DATE"}
    sizes = {
        "replace(s, 'ab', 'xyz')": 150, "replace(s, '', 'xyz')": 100,
        "replace(s, s, 'xyz')": 300, "s || s": 200, "CONCAT(s, n, d)": 100 + 2 * PRINTED,
        "LEFT(s, 7)": 7, "SUBSTR(s, 3, 500)": 100, "RIGHT(s, 2147483647)": 100,
        "upper(s)": 300, "TRIM(s)": 100, "REVERSE(s)": 100, "strftime(d, '%Y-%m')": 5 + 32,
        "CAST(n AS VARCHAR)": PRINTED, "CASE WHEN n > 0 THEN s ELSE 'x' END": 100,
        "COALESCE(s, s || s)": 200,
    }
    for sql, size in sizes.items():
        assert measure(sqlglot.parse_one(sql, read="duckdb"), types).size == size, sql


SCOPE = Scope((Col("pid", "numeric", unit=True), Col("s", "string"), Col("label", "string"),
               Col("x", "numeric", bounded=True)))
WIDTHS = {"s": 200, "label": 1024}
TYPES = {"pid": "BIGINT", "s": "VARCHAR(200)", "label": "VARCHAR(1024)", "x": "DOUBLE"}


@pytest.fixture(scope="module")
def engine() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.register("t", _table())
    return con


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_no_text_value_outgrows_its_bound_on_hostile_data(engine, data):
    """Property: for every accepted string expression the fuzzer draws (nested replace,
    concatenation, case mapping, casts...), no row's value is longer than the rule says."""
    sql = data.draw(expressions(SCOPE, "string", depth=3))
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
        if type_class(tree, TYPES) != "string":
            return
        bound = measure(tree, TYPES, WorkLimits(max_text_value=10**12)).size
    except (UnsupportedQueryError, sqlglot.errors.ParseError):
        return
    cut = read_within_widths(sqlglot.parse_one(
        f"SELECT MAX(LENGTH({error_free(tree, TYPES).sql('duckdb')})) FROM t", read="duckdb"),
        (TableRead("t", ("pid", "s", "label", "x"), tuple(WIDTHS.items())),))
    try:
        longest = engine.sql(cut.sql("duckdb")).fetchall()[0][0]
    except duckdb.OutOfMemoryException:
        pytest.fail(f"{sql}: needs more memory than the engine has, bound {bound}")
    assert longest is None or longest <= bound, sql


def test_a_key_no_expression_reads_is_read_whole_and_one_that_is_read_is_cut():
    """A group key only the bounded query reads (its keyed hash and grouping, a fixed number
    of times, like any scan of the row) is left whole; read by an expression, it is cut."""
    con = _connection()
    assert con.compile("SELECT s, COUNT(*) FROM t GROUP BY s").plan.reads == ()
    (read,) = con.compile("SELECT s, COUNT(*) FROM t WHERE s LIKE 'a%' GROUP BY s").plan.reads
    assert read.widths == (("s", 200),)


def test_the_bound_of_a_compiled_query_covers_its_own_rewrite():
    """The group keys' text is read by the keyed hash and the grouping too."""
    cat = Catalog()
    cat.add(TableInfo.private("t", columns=TYPES | {"s": "VARCHAR"}, privacy_unit="pid",
                              max_text_length={"s": 200}, max_groups_per_unit=2))
    plan = compile_query("SELECT s, COUNT(*) FROM t GROUP BY s", cat, epsilon=1,
                         delta=1e-6).plan
    assert plan.row_work >= 2 * 200


def test_the_totality_rules_regular_expressions_cannot_backtrack():
    """TRY_CAST(text AS a number or date) checks the text with a regular expression first
    (totality rule 6), and Spark's engine backtracks: each must read a hostile text in
    linear time (Python's ``re`` backtracks as Java's does; ``\\z`` is its ``\\Z``)."""
    import re
    import time

    from dpsql.expr.totality import PLAIN_DATES, PLAIN_NUMBERS

    hostile = ["1" * 4096 + "x", " " * 4096 + "x", "1." + "1" * 4096 + "e", "." * 4096,
               "2020-01-01" + "0" * 4096, "1" * 4096 + " " * 4096 + "x"]
    for pattern in (*PLAIN_NUMBERS.values(), *PLAIN_DATES.values()):
        compiled = re.compile(pattern.replace("\\z", "\\Z"))
        for text in hostile:
            started = time.perf_counter()
            compiled.match(text)
            assert time.perf_counter() - started < 0.02, (pattern, text[:12])

"""PEP 249 conformance and the DuckDB-like API of dpsql."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import dpsql
from dpsql.dbapi import bind


@pytest.fixture()
def con():
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1e7, delta=1e-6), seed=0)
    con.register("t", pa.table({"pid": list(range(40)), "k": ["a", "b"] * 20,
                                "x": [float(i % 7) for i in range(40)]}),
                 privacy_unit="pid", bounds={"x": (0, 10)}, public_keys={"k": ["a", "b"]})
    yield con
    con.close()


def test_module_globals_and_exception_hierarchy():
    assert (dpsql.apilevel, dpsql.threadsafety, dpsql.paramstyle) == ("2.0", 1, "qmark")
    assert issubclass(dpsql.Warning, Exception)
    for name in ("InterfaceError", "DatabaseError"):
        assert issubclass(getattr(dpsql, name), dpsql.Error)
    for name in ("DataError", "OperationalError", "IntegrityError", "InternalError",
                 "ProgrammingError", "NotSupportedError"):
        assert issubclass(getattr(dpsql, name), dpsql.DatabaseError)
    assert issubclass(dpsql.ParseError, dpsql.ProgrammingError)
    assert issubclass(dpsql.UnsupportedQueryError, dpsql.NotSupportedError)
    assert issubclass(dpsql.ExecutionError, dpsql.OperationalError)


def test_cursor_lifecycle(con):
    cur = con.cursor()
    assert cur.description is None and cur.rowcount == -1
    with pytest.raises(dpsql.InterfaceError):
        cur.fetchone()
    cur.execute("SELECT k, COUNT(*) AS n, SUM(x) AS s FROM t GROUP BY k ORDER BY k",
                epsilon=0.5)
    assert [d[0] for d in cur.description] == ["k", "n", "s"]
    assert all(len(d) == 7 for d in cur.description) and cur.rowcount == 2
    first = cur.fetchone()
    assert first[0] == "a" and cur.fetchmany(5) == [cur.result.fetchall()[1]]
    assert cur.fetchone() is None and cur.fetchall() == []
    cur.arraysize = 2
    cur.execute("SELECT k, COUNT(*) FROM t GROUP BY k", epsilon=0.5)
    assert len(cur.fetchmany()) == 2 and list(cur) == []
    cur.setinputsizes(None)
    cur.setoutputsize(10)
    cur.close()
    with pytest.raises(dpsql.InterfaceError, match="closed"):
        cur.execute("SELECT COUNT(*) FROM t")


def test_parameters_are_bound_as_literals_and_cannot_inject(con):
    rows = con.execute("SELECT COUNT(*) FROM t WHERE k = ? AND x >= ?", ["a", 2],
                       epsilon=1e6).fetchall()
    assert rows == [(14,)]
    hostile = "a' OR 1=1 --"
    assert con.execute("SELECT COUNT(*) FROM t WHERE k = ?", [hostile],
                       epsilon=1e6).fetchall() == [(0,)]
    with pytest.raises(dpsql.ProgrammingError, match="1 \\? placeholder but got 0"):
        con.execute("SELECT COUNT(*) FROM t WHERE k = ?", [])
    with pytest.raises(dpsql.ProgrammingError, match="not supported"):
        con.execute("SELECT COUNT(*) FROM t WHERE k = ?", [object()])


@pytest.fixture()
def pums():
    """A seeded connection: the same question with the same ε gets the same noisy answer."""
    con = dpsql.connect(budget=dpsql.Budget(epsilon=100), seed=0)
    con.register("pums", pa.table({
        "pid": list(range(30)), "name": ["Bob", "Ann", "Eve"] * 10,
        "age": [20 + i for i in range(30)],
        "day": [dt.date(2020, 1, 1) + dt.timedelta(days=i) for i in range(30)]}),
        privacy_unit="pid", bounds={"age": (0, 100)})
    yield con
    con.close()


LITERAL = ("SELECT COUNT(*) AS n, SUM(age) AS s FROM pums "
           "WHERE (name = 'Bob' AND age >= 25) OR age < 22")


def styled(a: str, b: str, c: str) -> str:
    return LITERAL.replace("'Bob'", a).replace("25", b).replace("22", c)


@pytest.mark.parametrize(("dialect", "sql", "parameters"), [
    ("duckdb", styled("?", "?", "?"), ["Bob", 25, 22]),
    ("postgres", styled("?", "?", "?"), ("Bob", 25, 22)),
    ("postgres", styled("%s", "%s", "%s"), ["Bob", 25, 22]),
    ("duckdb", styled(":name", ":lo", ":young"), {"name": "Bob", "lo": 25, "young": 22}),
    ("spark", styled(":name", ":lo", ":young"), {"name": "Bob", "lo": 25, "young": 22}),
    ("duckdb", styled("%(name)s", "%(lo)s", "%(young)s"), {"name": "Bob", "lo": 25, "young": 22}),
    ("postgres", styled("%(name)s", "%(lo)s", "%(young)s"), {"name": "Bob", "lo": 25, "young": 22}),
    ("bigquery", styled("%(name)s", "%(lo)s", "%(young)s"), {"name": "Bob", "lo": 25, "young": 22}),
    ("duckdb", styled("$3", "$1", "$2"), [25, 22, "Bob"]),
    ("postgres", styled("$3", "$1", "$2"), [25, 22, "Bob"]),
    ("spark", styled("$3", "$1", "$2"), [25, 22, "Bob"]),
    ("duckdb", styled("$name", "$lo", "$young"), {"name": "Bob", "lo": 25, "young": 22}),
    ("bigquery", styled("@name", "@lo", "@young"), {"name": "Bob", "lo": 25, "young": 22}),
])
def test_every_paramstyle_asks_the_literal_question(pums, dialect, sql, parameters):
    expected = pums.sql(LITERAL, epsilon=1).fetchall()
    cur = pums.cursor().execute(sql, parameters, epsilon=1, dialect=dialect)
    assert cur.fetchall() == expected
    assert pums.execute(sql, parameters, epsilon=1, dialect=dialect).fetchall() == expected


def test_named_parameter_binds_its_value_not_its_name(pums):
    bob = pums.sql("SELECT COUNT(*) FROM pums WHERE name = 'Bob'", epsilon=1).fetchall()
    assert pums.sql("SELECT COUNT(*) FROM pums WHERE name = 'name'", epsilon=1).fetchall() != bob
    assert pums.execute("SELECT COUNT(*) FROM pums WHERE name = :name", {"name": "Bob"},
                        epsilon=1).fetchall() == bob


@pytest.mark.parametrize(("sql", "parameters"), [
    ("SELECT COUNT(*) FROM pums WHERE name = ?", ["x' OR 1=1 --"]),
    ("SELECT COUNT(*) FROM pums WHERE name = :v", {"v": "x' OR 1=1 --"}),
    ("SELECT COUNT(*) FROM pums WHERE name = %(v)s", {"v": "x' OR 1=1 --"}),
    ("SELECT COUNT(*) FROM pums WHERE name = $1", ["x' OR 1=1 --"]),
    ("SELECT COUNT(*) FROM pums WHERE name = ?", ["x'); SELECT * FROM pums; --"]),
])
def test_injection_attempts_stay_literals(pums, sql, parameters):
    value = next(iter(parameters.values())) if isinstance(parameters, dict) else parameters[0]
    literal = "SELECT COUNT(*) FROM pums WHERE name = '" + value.replace("'", "''") + "'"
    assert bind(sql, parameters) == literal
    assert pums.execute(sql, parameters, epsilon=1).fetchall() == pums.sql(
        literal, epsilon=1).fetchall()


def test_a_value_that_looks_like_a_placeholder_is_text(pums):
    sql = "SELECT COUNT(*) FROM pums WHERE name = :name OR name = :other"
    assert bind(sql, {"name": ":other", "other": "?"}) == (
        "SELECT COUNT(*) FROM pums WHERE name = ':other' OR name = '?'")
    assert bind("SELECT COUNT(*) FROM pums WHERE name = ? AND age > ?", ["?", 1]) == (
        "SELECT COUNT(*) FROM pums WHERE name = '?' AND age > 1")
    assert pums.execute(sql, {"name": ":other", "other": "$1"}, epsilon=1).fetchall() == (
        pums.sql("SELECT COUNT(*) FROM pums WHERE name = ':other' OR name = '$1'",
                 epsilon=1).fetchall())


@pytest.mark.parametrize(("value", "sql"), [
    (None, "NULL"), (True, "TRUE"), (False, "FALSE"), (-3, "-3"), (2.5, "2.5"),
    (Decimal("1.10"), "1.10"), (Decimal("-1E+2"), "-100"), ("it's", "'it''s'"),
    (dt.date(2020, 1, 2), "CAST('2020-01-02' AS DATE)"),
    (dt.datetime(2020, 1, 2, 3, 4, 5), "CAST('2020-01-02 03:04:05' AS TIMESTAMP)"),
    (dt.datetime(2020, 1, 2, 1, tzinfo=dt.timezone(dt.timedelta(hours=2))),
     "CAST('2020-01-01 23:00:00' AS TIMESTAMP)"),
    (dt.time(3, 4, 5), "CAST('03:04:05' AS TIME)"),
])
def test_python_values_bind_as_typed_literals(value, sql):
    assert bind("SELECT COUNT(*) FROM t WHERE x = ?", [value]) == (
        f"SELECT COUNT(*) FROM t WHERE x = {sql}")


@pytest.mark.parametrize("value", [dt.date(2020, 1, 10), dt.datetime(2020, 1, 10),
                                   dt.datetime(2020, 1, 10, tzinfo=dt.UTC)])
def test_dates_answer_like_a_date_literal(pums, value):
    expected = pums.sql("SELECT COUNT(*) FROM pums WHERE day >= DATE '2020-01-10'",
                        epsilon=1).fetchall()
    assert pums.execute("SELECT COUNT(*) FROM pums WHERE day >= ?", [value],
                        epsilon=1).fetchall() == expected


@pytest.mark.parametrize(("sql", "parameters", "message"), [
    ("SELECT COUNT(*) FROM pums WHERE name = ?", {"name": "Bob"}, "are qmark but .* dict"),
    ("SELECT COUNT(*) FROM pums WHERE day = ?", [dt.time(1, tzinfo=dt.UTC)], "time zone"),
    ("SELECT COUNT(*) FROM pums WHERE name = $1", {"1": "Bob"}, "are numeric but .* dict"),
    ("SELECT COUNT(*) FROM pums WHERE name = :name", ["Bob"], "are named but .* list"),
    ("SELECT COUNT(*) FROM pums WHERE name = %(name)s", ("Bob",), "are pyformat but .* tuple"),
    ("SELECT COUNT(*) FROM pums WHERE name = :name", {"nam": "Bob"}, "no parameter for :name"),
    ("SELECT COUNT(*) FROM pums WHERE name = :name", {"name": "Bob", "age": 3},
     "unused parameters 'age'"),
    ("SELECT COUNT(*) FROM pums WHERE name = $1", ["Bob", 3], r"unused parameters \$2"),
    ("SELECT COUNT(*) FROM pums WHERE name = $1 AND age > $3", ["Bob", 3, 4],
     r"unused parameters \$2 \(the query has \$1, \$3\)"),
    ("SELECT COUNT(*) FROM pums WHERE name = $2", ["Bob"], r"no parameter for \$2"),
    ("SELECT COUNT(*) FROM pums WHERE name = ?", ["Bob", 3], "1 \\? placeholder but got 2"),
    ("SELECT COUNT(*) FROM pums WHERE name = ? AND age > ?", ["Bob"], "got 1 parameter:"),
    ("SELECT COUNT(*) FROM pums WHERE name = :name AND age > ?", {"name": "Bob"},
     r"mixes placeholder styles: :name \(named\), \? \(qmark\)"),
    ("SELECT COUNT(*) FROM pums WHERE name = :name AND age > %(age)s",
     {"name": "Bob", "age": 1}, "mixes placeholder styles"),
    ("SELECT COUNT(*) FROM pums WHERE name = ?", None, "no parameters were given"),
    ("SELECT COUNT(*) FROM pums WHERE name = :name", None, "no parameters were given"),
    ("SELECT COUNT(*) FROM pums", ["Bob"], "no placeholders but got 1 parameter"),
    ("SELECT COUNT(*) FROM pums WHERE name = ?", "Bob", "not str"),
    ("SELECT COUNT(*) FROM ?", ["pums"], "table, column or alias name"),
    ("SELECT COUNT(*) FROM pums WHERE name = ?", [float("nan")], "not a finite number"),
    ("SELECT COUNT(*) FROM pums WHERE age > ?", [float("-inf")], "not a finite number"),
    ("SELECT COUNT(*) FROM pums WHERE age > ?", [Decimal("Infinity")], "not a finite number"),
    ("SELECT COUNT(*) FROM pums WHERE name = ?", [b"Bob"], "bytes is not supported"),
    ("SELECT COUNT(*) FROM pums WHERE name = ?", [["Bob"]], "list is not supported"),
])
def test_parameter_mistakes_are_refused_before_anything_is_spent(pums, sql, parameters,
                                                                   message):
    with pytest.raises(dpsql.ProgrammingError, match=message):
        pums.execute(sql, parameters, epsilon=1)
    assert pums.budget.spent.epsilon == 0


def test_executemany_binds_every_set_before_running_any(pums):
    with pytest.raises(dpsql.ProgrammingError, match="are qmark but"):
        pums.cursor().executemany("SELECT COUNT(*) FROM pums WHERE name = ?",
                                  [["Bob"], {"name": "Ann"}], epsilon=1)
    assert pums.budget.spent.epsilon == 0
    cur = pums.cursor().executemany("SELECT COUNT(*) FROM pums WHERE name = :name",
                                    [{"name": "Ann"}, {"name": "Bob"}], epsilon=1)
    assert cur.fetchall() == pums.sql("SELECT COUNT(*) FROM pums WHERE name = 'Bob'",
                                      epsilon=1).fetchall()


def test_executemany_charges_each_query(con):
    spent = con.budget.spent.epsilon
    cur = con.cursor().executemany("SELECT COUNT(*) FROM t WHERE k = ?", [["a"], ["b"]],
                                   epsilon=0.25)
    assert cur.rowcount == 1 and con.budget.spent.epsilon == spent + 0.5


def test_results_in_every_format(con):
    cur = con.execute("SELECT k, AVG(x) AS m FROM t GROUP BY k", epsilon=1.0)
    assert list(cur.df().columns) == ["k", "m"] and cur.pl().shape == (2, 2)
    assert cur.arrow().num_rows == 2 and cur.result.ci().num_columns == 4


def test_read_parquet_and_csv_register_private_tables(tmp_path):
    pq.write_table(pa.table({"pid": [1, 2, 3]}), tmp_path / "people.parquet")
    (tmp_path / "visits.csv").write_text("pid,k\n1,a\n2,b\n")
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1e7), seed=0)
    assert con.read_parquet(tmp_path / "people.parquet", privacy_unit="pid") == "people"
    assert con.read_csv(tmp_path / "visits.csv", name="v", privacy_unit="pid") == "v"
    assert con.sql("SELECT COUNT(*) FROM people", epsilon=1e6).fetchall() == [(3,)]
    con.commit()


def test_module_level_default_connection(monkeypatch):
    import dpsql.connection

    monkeypatch.setattr(dpsql.connection, "_default", None)
    dpsql.register("mod_t", pa.table({"pid": [1, 2, 3, 4]}), privacy_unit="pid")
    assert dpsql.sql("SELECT COUNT(*) AS n FROM mod_t", epsilon=0.5).columns == ["n"]
    assert dpsql.execute("SELECT COUNT(*) FROM mod_t", epsilon=0.25).rowcount == 1
    assert dpsql.default_connection() is dpsql.default_connection()


def test_connection_is_a_context_manager():
    with dpsql.connect() as con:
        con.register("t", pa.table({"pid": [1]}), privacy_unit="pid")
    with pytest.raises(dpsql.InterfaceError, match="closed"):
        con.sql("SELECT COUNT(*) FROM t")


def test_the_cursor_says_what_each_execute_cost_and_what_is_left():
    """``cursor.cost`` is the charge of the last execute (exact decimals; executemany adds
    its sets' charges; a cached answer or a listing is free), ``cursor.budget`` what is left."""
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1, delta=1e-6))
    con.register("t", pa.table({"pid": [1, 2, 3], "x": [1.0, 2.0, 3.0]}), privacy_unit="pid",
                 bounds={"x": (0, 5)})
    cur = con.cursor()
    assert (cur.cost, cur.budget) == (None, None)
    cur.execute("SELECT COUNT(*) AS n FROM t")  # no ε: a tenth of the ε = 1 left
    assert (str(cur.cost), str(cur.budget)) == ("ε=0.1, δ=0", "ε=0.9, δ=1e-06")
    cur.executemany("SELECT SUM(x) AS s FROM t WHERE x > ?", [[0], [1], [2]], epsilon=0.1)
    assert (str(cur.cost), str(cur.budget)) == ("ε=0.3, δ=0", "ε=0.6, δ=1e-06")
    cur.execute("SELECT SUM(x) AS s FROM t WHERE x > ?", [2], epsilon=0.1)  # asked before
    assert (str(cur.cost), str(cur.budget)) == ("ε=0, δ=0", "ε=0.6, δ=1e-06")
    cur.execute("SHOW TABLES")
    assert (str(cur.cost), str(cur.budget)) == ("ε=0, δ=0", "ε=0.6, δ=1e-06")
    assert con.budget.remaining.epsilon == 0.6


def test_the_cursor_cost_counts_the_estimates_the_query_paid_for_first():
    """A query over ``max_rows_per_unit="auto"`` pays for the limit's estimate first:
    ``cursor.cost`` is both charges, as the ledger added them (ε = 0.25 + 0.75)."""
    con = dpsql.connect(budget=dpsql.Budget(epsilon=2, delta=1e-6))
    con.register("t", pa.table({"pid": [1, 1, 2, 3], "x": [1.0, 2.0, 3.0, 4.0]}),
                 privacy_unit="pid", bounds={"x": (0, 5)}, max_rows_per_unit="auto")
    cur = con.cursor()
    with pytest.warns(dpsql.PrivacyWarning, match="max_rows_per_unit estimated"):
        cur.execute("SELECT SUM(x) AS s FROM t", epsilon=1, delta=1e-7)
    assert [charge.epsilon for charge in con.budget.charges] == [0.25, 0.75]
    assert cur.cost == con.budget.spent and str(cur.cost).startswith("ε=1, δ=")
    assert str(cur.budget) == f"ε=1, δ={con.budget.remaining.delta!r}"


def test_a_query_without_epsilon_spends_a_tenth_of_what_is_left():
    """The README's two ε = 0.2 examples, then ``dpsql.sql`` without ε: 0.06, not 1."""
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1, delta=1e-6))
    con.register("t", pa.table({"pid": [1, 2, 3]}), privacy_unit="pid")
    for bound in (0, 1):
        con.sql(f"SELECT COUNT(*) AS n FROM t WHERE pid > {bound}", epsilon=0.2)
    assert con.default_epsilon == 0.06
    assert con.explain("SELECT COUNT(*) FROM t").to_dict()["epsilon"] == 0.06
    res = con.sql("SELECT COUNT(*) AS n FROM t")
    assert (str(res.cost), str(res.left)) == ("ε=0.06, δ=0", "ε=0.54, δ=1e-06")
    assert "cost ε=0.06, δ=0; budget left ε=0.54, δ=1e-06" in repr(res)
    fixed = dpsql.connect(budget=dpsql.Budget(epsilon=1), default_epsilon=0.3)
    assert fixed.default_epsilon == 0.3


def test_a_spent_budget_refuses_a_query_without_epsilon_and_says_why():
    con = dpsql.connect(budget=dpsql.Budget(epsilon=0.5, delta=1e-6))
    con.register("t", pa.table({"pid": [1, 2, 3]}), privacy_unit="pid")
    con.sql("SELECT COUNT(*) AS n FROM t", epsilon=0.5)
    with pytest.raises(dpsql.BudgetExceededError, match="a query without ε spends a tenth"):
        con.sql("SELECT COUNT(*) AS n FROM t WHERE pid > 1")


def test_a_budget_without_delta_names_the_fix_at_both_refusals():
    """Budget(epsilon=2) is pure ε-DP: private group keys are refused for want of δ, and a
    δ asked per query by the budget; both messages say how to give the budget a δ."""
    con = dpsql.connect(budget=dpsql.Budget(epsilon=2))
    con.register("t", pa.table({"pid": [1, 2, 3], "k": ["a", "b", "a"]}), privacy_unit="pid")
    query = "SELECT k, COUNT(*) AS n FROM t GROUP BY k"
    fix = "dpsql.Budget(epsilon=2, delta=1e-6)"
    with pytest.raises(dpsql.PrivacyError, match="needs delta > 0") as keys:
        con.sql(query)
    with pytest.raises(dpsql.BudgetExceededError, match="delta 1e-06 > remaining 0") as budget:
        con.sql(query, delta=1e-6)
    assert fix in str(keys.value) and fix in str(budget.value)
    assert con.budget.spent.epsilon == 0

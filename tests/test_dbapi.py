"""PEP 249 conformance and the DuckDB-like API of dpsql."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import dpsql


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
    with pytest.raises(dpsql.ProgrammingError, match="placeholders"):
        con.execute("SELECT COUNT(*) FROM t WHERE k = ?", [])
    with pytest.raises(dpsql.ProgrammingError, match="not supported"):
        con.execute("SELECT COUNT(*) FROM t WHERE k = ?", [object()])


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

"""Catalog: registration options are validated before any query runs."""

from __future__ import annotations

import pyarrow as pa
import pytest

import dpsql
from dpsql.catalog import Catalog, TableInfo, read_toml

COLUMNS = {"pid": "BIGINT", "k": "VARCHAR", "x": "DOUBLE", "d": "DATE"}


@pytest.mark.parametrize(("options", "match"), [
    ({}, "say who is protected"),
    ({"privacy_unit": "pid", "row_privacy": True}, "say who is protected"),
    ({"privacy_unit": "nope"}, "not a column"),
    ({"privacy_unit": "pid", "bounds": {"y": (0, 1)}}, "unknown column"),
    ({"privacy_unit": "pid", "bounds": {"x": (2, 1)}}, "lo <= hi"),
    ({"privacy_unit": "pid", "bounds": {"x": (0, float("inf"))}}, "finite"),
    ({"privacy_unit": "pid", "bounds": {"k": (0, 1)}}, "not numeric"),
    ({"privacy_unit": "pid", "bounds": {"x": "0..1"}}, "pair"),
    ({"privacy_unit": "pid", "max_groups_per_unit": 0}, "positive integer"),
    ({"privacy_unit": "pid", "max_rows_per_group": 1.5}, "positive integer"),
    ({"privacy_unit": "pid", "max_rows_per_unit": True}, "positive integer"),
    ({"privacy_unit": "pid", "public_keys": {"pid": [1]}}, "privacy unit"),
    ({"privacy_unit": "pid", "public_keys": {"zz": [1]}}, "unknown column"),
    ({"privacy_unit": "pid", "public_keys": {"k": [1, 2]}}, "not string"),
    ({"privacy_unit": "pid", "public_keys": {"x": ["a"]}}, "not numeric"),
])
def test_invalid_registrations_are_refused(options, match):
    with pytest.raises(dpsql.CatalogError, match=match):
        TableInfo.private("t", columns=COLUMNS, **options)


def test_names_are_case_insensitive():
    cat = Catalog()
    cat.add(TableInfo.private("Visits", columns={"PID": "INT"}, privacy_unit="Pid"))
    info = cat.get("VISITS")
    assert info.privacy_unit == "pid" and "visits" in cat
    with pytest.raises(dpsql.CatalogError, match="registered: visits"):
        cat.get("other")


def test_toml_errors_name_the_problem(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[tables.t]\nprivacy_unit = 'pid'\n")
    with pytest.raises(dpsql.CatalogError, match="needs source"):
        read_toml(bad)
    bad.write_text("[private.t]\nsource = 'x.csv'\n")
    with pytest.raises(dpsql.CatalogError, match="unknown sections"):
        read_toml(bad)
    bad.write_text("not toml [")
    with pytest.raises(dpsql.CatalogError, match="cannot read catalog"):
        read_toml(bad)


@pytest.mark.parametrize(("engine", "match"), [
    ('name = "postgres"', "not an engine dpsql runs on"),
    ('master = "local[2]"', 'add name = "spark"'),
    ('name = "duckdb"\nconfig = { a = "b" }', 'add name = "spark"'),
    ('name = "spark"\nmaster = 7077', "master URL as text"),
    ('name = "spark"\nconfig = { a = [1] }', "table of Spark settings"),
    ('name = "spark"\nmastr = "local"', "did you mean `master`"),
])
def test_engine_section_errors_name_the_key(tmp_path, engine, match):
    bad = tmp_path / "bad.toml"
    bad.write_text(f"[engine]\n{engine}\n")
    with pytest.raises(dpsql.CatalogError, match=match):
        read_toml(bad)


def test_the_catalogs_engine_stands_for_backend_unless_one_is_given(tmp_path):
    """An explicit backend= wins over [engine] (no Spark is started here); without [engine]
    the engine is DuckDB."""
    path = tmp_path / "c.toml"
    path.write_text('[engine]\nname = "spark"\nmaster = "local[1]"\n'
                    'config = { "spark.sql.shuffle.partitions" = 2, "spark.ui.enabled" = false }\n')
    assert read_toml(path).engine == {"name": "spark", "master": "local[1]", "config": {
        "spark.sql.shuffle.partitions": "2", "spark.ui.enabled": "false"}}
    assert dpsql.connect(catalog=path, backend="duckdb").backend.dialect == "duckdb"
    path.write_text("[budget]\nepsilon = 1\n")
    assert read_toml(path).engine == {"name": "duckdb"}
    assert dpsql.connect(catalog=path).backend.dialect == "duckdb"


def test_register_errors_for_missing_sources(tmp_path):
    con = dpsql.connect()
    with pytest.raises(dpsql.CatalogError, match="does not exist"):
        con.register("t", str(tmp_path / "missing.parquet"), privacy_unit="pid")
    with pytest.raises(dpsql.CatalogError, match="neither a file nor a table"):
        con.register("t", "no_such_table", privacy_unit="pid")
    with pytest.raises(dpsql.CatalogError, match="cannot register"):
        con.register("t", object(), privacy_unit="pid")


def test_reregistering_invalidates_cached_plans():
    con = dpsql.connect(budget=dpsql.Budget(epsilon=10), seed=0)
    con.register("t", pa.table({"pid": [1, 2], "x": [1.0, 2.0]}), privacy_unit="pid",
                 bounds={"x": (0, 10)})
    first = con.explain("SELECT SUM(x) FROM t").to_dict()["columns"][0]["l1_sensitivity"]
    con.register("t", pa.table({"pid": [1, 2], "x": [1.0, 2.0]}), privacy_unit="pid",
                 bounds={"x": (0, 20)})
    second = con.explain("SELECT SUM(x) FROM t").to_dict()["columns"][0]["l1_sensitivity"]
    assert (first, second) == (10, 20)


def test_querying_a_public_table_is_refused_with_the_reason():
    con = dpsql.connect()
    con.register_public("regions", pa.table({"region": ["a", "b"]}))
    with pytest.raises(dpsql.UnsupportedQueryError, match="public table"):
        con.sql("SELECT COUNT(*) FROM regions")


def test_registering_never_writes_to_or_replaces_objects_of_the_database_file(tmp_path):
    """Files and renamed tables become TEMP objects: the user's table ``visits`` and view
    ``v`` in their database file survive a registration under the same names, re-registering
    a name under another kind of source works, and nothing is left behind."""
    import duckdb

    path = tmp_path / "clinic.duckdb"
    csv = tmp_path / "visits.csv"
    csv.write_text("pid,x\n1,5\n2,7\n")
    with duckdb.connect(str(path)) as db:
        db.execute("CREATE TABLE visits AS SELECT 10 AS pid, 1.0 AS x")
        db.execute("CREATE VIEW v AS SELECT * FROM visits")
    con = dpsql.connect(str(path))
    con.register("visits", str(csv), privacy_unit="pid", bounds={"x": (0, 10)})
    con.register("v", "visits", privacy_unit="pid", bounds={"x": (0, 10)})
    assert con.catalog.get("v").columns == {"pid": "BIGINT", "x": "BIGINT"}
    con.register("v", pa.table({"pid": [1], "x": [2.0]}), privacy_unit="pid")
    con.register("v", str(csv), privacy_unit="pid")
    con.close()
    with duckdb.connect(str(path)) as db:
        assert db.sql("SELECT * FROM visits").fetchall() == [(10, 1.0)]
        assert db.sql("SELECT * FROM v").fetchall() == [(10, 1.0)]
        assert sorted(db.sql("SELECT table_name FROM duckdb_tables() UNION ALL "
                             "SELECT view_name FROM duckdb_views() WHERE NOT internal"
                             ).fetchall()) == [("v",), ("visits",)]


def test_a_connection_you_own_gets_its_registrations_dropped_on_close(tmp_path):
    import duckdb

    csv = tmp_path / "t.csv"
    csv.write_text("pid,x\n1,5\n")
    db = duckdb.connect()
    con = dpsql.connect(db)
    con.register("t", str(csv), privacy_unit="pid")
    con.register("frame", pa.table({"pid": [1]}), privacy_unit="pid")
    assert db.sql("SELECT COUNT(*) FROM t").fetchall() == [(1,)]
    con.close()
    with pytest.raises(duckdb.CatalogException):
        db.sql("SELECT * FROM t")
    with pytest.raises(duckdb.CatalogException):
        db.sql("SELECT * FROM frame")
    db.close()


@pytest.mark.parametrize(("values", "released"), [
    (["a", "a", "b"], ["a", "b"]),
    ([1, 1.0, 2], [1, 2]),
])
def test_duplicate_public_keys_are_released_once(values, released):
    """A key listed twice would be released twice with fresh noise while the plan counts it
    once (averaging the two answers halves the noise for free)."""
    kind = pa.string() if isinstance(values[0], str) else pa.int64()
    table = pa.table({"pid": [1, 2, 3], "k": pa.array(released[:1] * 3, kind)})
    con = dpsql.connect(budget=dpsql.Budget(epsilon=10))
    con.register("t", table, privacy_unit="pid", public_keys={"k": values})
    assert con.catalog.get("t").public_keys["k"] == tuple(released)
    rows = con.sql("SELECT k, COUNT(*) FROM t GROUP BY k", epsilon=1).fetchall()
    assert [row[0] for row in rows] == released


def test_public_keys_must_be_finite_values():
    with pytest.raises(dpsql.CatalogError, match="or not finite"):
        TableInfo.private("t", columns={"pid": "INT", "x": "DOUBLE"}, privacy_unit="pid",
                          public_keys={"x": [1.0, float("nan")]})


@pytest.mark.parametrize("privacy", [{"row_privacy": True}, {"privacy_unit": "pid"}])
def test_a_public_tables_keys_of_another_type_are_refused_before_any_row_is_read(privacy):
    """A text key whose public values come from a public table's integer column: the engine
    would compare them by casting each private text to a number, which fails on the rows
    that are not one, so whether the query failed would tell whether such a row exists.
    The values are checked like a list given at registration: refused when the query is
    compiled, whatever the private rows hold, and nothing is spent."""
    for texts in (["1", "2", "1"], ["1", "abc", "2"]):
        con = dpsql.connect(budget=dpsql.Budget(epsilon=10, delta=1e-5))
        con.register_public("codes", pa.table({"grp": pa.array([1, 2], pa.int32())}))
        con.register("t", pa.table({"pid": [1, 2, 3], "grp": texts}),
                     public_keys={"grp": "codes"}, **privacy)
        with pytest.raises(dpsql.CatalogError, match=r"\[1, 2\] are not string like the column"):
            con.sql("SELECT grp, COUNT(*) FROM t GROUP BY grp", epsilon=1, delta=1e-6)
        assert con.budget.spent.epsilon == 0

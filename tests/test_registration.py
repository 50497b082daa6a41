"""Registration rough edges: catalog typos, reader options (CSV, globs, hive partitions),
malformed CSVs, and the catalog's metadata (con.tables(), con.describe(), SHOW TABLES,
DESCRIBE) answered without reading data."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import dpsql


def write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


def test_a_catalog_key_typo_says_which_key_was_meant(tmp_path):
    write(tmp_path / "v.csv", "pid,age\n1,30\n")
    catalog = write(tmp_path / "c.toml", '[tables.v]\nsource = "v.csv"\nprivacy_unit = "pid"\n'
                                         "bound = { age = [0, 100] }\n")
    with pytest.raises(dpsql.CatalogError, match="unknown key `bound`; did you mean `bounds`"):
        dpsql.connect(catalog=catalog)


def test_an_unknown_column_is_a_catalog_error(tmp_path):
    catalog = write(tmp_path / "c.toml", '[tables.v]\nsource = "v.csv"\nprivacy_unit = "pid"\n'
                                         "bounds = { agee = [0, 100] }\n")
    write(tmp_path / "v.csv", "pid,age\n1,30\n")
    with pytest.raises(dpsql.CatalogError, match="unknown column 'agee'"):
        dpsql.connect(catalog=catalog)


def test_reader_options_reach_duckdbs_reader(tmp_path):
    path = write(tmp_path / "v.csv", "pid;age;seen\n1;30;01/02/2023\n2;'4;0';03/04/2023\n")
    con = dpsql.connect()
    con.register("v", path, privacy_unit="pid", options={
        "delim": ";", "header": True, "quote": "'", "dateformat": "%d/%m/%Y",
        "types": {"age": "VARCHAR"}})
    assert dict(con.catalog.get("v").columns) == {"pid": "BIGINT", "age": "VARCHAR(1024)",
                                                  "seen": "DATE"}


def test_a_header_only_csv_keeps_declared_types(tmp_path):
    path = write(tmp_path / "v.csv", "pid,age\n")
    con = dpsql.connect()
    con.register("v", path, privacy_unit="pid", bounds={"age": (0, 100)},
                 options={"types": {"pid": "BIGINT", "age": "INTEGER"}})
    assert dict(con.catalog.get("v").columns) == {"pid": "BIGINT", "age": "INTEGER"}
    assert con.sql("SELECT COUNT(*), SUM(age) FROM v", epsilon=0.1).columns == \
        ["COUNT(*)", "SUM(age)"]


def test_catalog_entries_take_reader_options(tmp_path):
    write(tmp_path / "v.csv", "pid|age\n1|30\n")
    catalog = write(tmp_path / "c.toml", '[tables.v]\nsource = "v.csv"\nprivacy_unit = "pid"\n'
                                         'options = { delim = "|" }\n')
    assert list(dpsql.connect(catalog=catalog).catalog.get("v").columns) == ["pid", "age"]


def test_globs_and_hive_partitions(tmp_path):
    for year in (2023, 2024):
        folder = tmp_path / "visits" / f"year={year}"
        folder.mkdir(parents=True)
        pq.write_table(pa.table({"pid": [1, 2], "cost": [1.0, 2.0]}), folder / "part.parquet")
    con = dpsql.connect()
    con.register("v", str(tmp_path / "visits" / "*" / "*.parquet"), privacy_unit="pid",
                 options={"hive_partitioning": True})
    assert set(con.catalog.get("v").columns) == {"pid", "cost", "year"}
    with pytest.raises(dpsql.CatalogError, match="the glob matches no file"):
        con.register("w", str(tmp_path / "nothing" / "*.parquet"), privacy_unit="pid")


@pytest.mark.parametrize("text, line", [
    ("pid,age,city\n1,30,a\n2,40,b,extra\n3,50,c\n", "line 3 has 4 fields"),
    ('pid,age,city\n1,30,a\n2,40,b\n3,"x,y\n4,50\n', "line 4 has 2 fields where the header "
     "has 3 \\(a quote opened there runs to line 5\\)"),
])
def test_a_malformed_csv_names_its_line(tmp_path, text, line):
    path = write(tmp_path / "v.csv", text)
    with pytest.raises(dpsql.CatalogError, match=line):
        dpsql.connect().register("v", path, privacy_unit="pid")


@pytest.mark.parametrize("options, message", [
    ({"delim;": 1}, "not an option name"),
    ({"delim": object()}, "is not a text, number"),
])
def test_bad_reader_options_are_catalog_errors(tmp_path, options, message):
    path = write(tmp_path / "v.csv", "pid,age\n1,30\n")
    with pytest.raises(dpsql.CatalogError, match=message):
        dpsql.connect().register("v", path, privacy_unit="pid", options=options)
    with pytest.raises(dpsql.CatalogError, match="files only"):
        dpsql.connect().register("v", pa.table({"pid": [1]}), privacy_unit="pid",
                                 options={"delim": ","})


def test_metadata_comes_from_the_catalog_and_costs_nothing():
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1.0))
    con.register("v", pa.table({"pid": [1, 2], "age": [30, 40], "k": ["a", "b"]}),
                 privacy_unit="pid", bounds={"age": (0, 100)}, public_keys={"k": ["a", "b"]},
                 max_groups_per_unit=2)
    con.register_public("p", pa.table({"k": ["a"]}))
    assert con.tables().fetchall() == [("p", "public", None, None, None, None),
                                       ("v", "private", "pid", 2, None, None)]
    assert con.describe("v").fetchall() == [("pid", "BIGINT", "privacy unit", None, None),
                                            ("age", "BIGINT", "", 0.0, 100.0),
                                            ("k", "VARCHAR(1024)", "public key", None, None)]
    assert con.sql("SHOW TABLES").fetchall() == con.tables().fetchall()
    assert con.sql("  describe V").fetchall() == con.describe("v").fetchall()
    # A public table's text is public: its width is measured (one character here).
    assert con.execute("DESC p").fetchall() == [("k", "VARCHAR(1)", "public key", None, None)]
    assert con.budget.spent.epsilon == 0
    assert "(3 rows)" in repr(con.describe("v"))
    with pytest.raises(dpsql.CatalogError, match="not registered"):
        con.describe("nope")


@pytest.mark.parametrize("pair", [("0", "100"), (True, 5), (0, False), "0-100"])
def test_text_and_boolean_bounds_are_refused(pair):
    with pytest.raises(dpsql.CatalogError, match="not text or booleans"):
        dpsql.connect().register("v", pa.table({"pid": [1], "age": [3.0]}), privacy_unit="pid",
                                 bounds={"age": pair})

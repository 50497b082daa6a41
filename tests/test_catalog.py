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

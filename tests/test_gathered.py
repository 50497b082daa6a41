"""The groups' codes ``gathered`` (``dpsql.expr.nodes``): the same rows and types in
DuckDB, and counted right by DuckDB's optimizer over a file (docs/benchmarks.md)."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
from sqlglot import exp

from dpsql.engines.duckdb import DuckDBEngine
from dpsql.expr.nodes import gathered

KEYS = ("SELECT * FROM (VALUES ('a', {'x': 1}, [1, 2], 1.5::DECIMAL(9, 2), DATE '2020-01-02'), "
        "(NULL, NULL, NULL, NULL, NULL), ('b', {'x': 2}, [], 2.25, DATE '2021-03-04')) "
        "AS v(\"Key a\", s, l, d, day)")


def test_gathered_rows_keep_their_values_names_and_types():
    """A STRUCT or a list key stays whole (unnested a list and a STRUCT deep), a NULL key
    stays a row, names keep their case and spaces; no rows stay no rows."""
    con = duckdb.connect()
    plain = exp.select("*").from_(exp.maybe_parse(KEYS, dialect="duckdb").subquery("k"))
    for rows in (plain, plain.where("FALSE")):
        want = con.execute(rows.sql(DuckDBEngine))
        want_types, want_rows = [d[:2] for d in want.description], sorted(map(str, want.fetchall()))
        got = con.execute(gathered(rows).sql(DuckDBEngine))
        assert [d[:2] for d in got.description] == want_types
        assert sorted(map(str, got.fetchall())) == want_rows


def test_duckdb_counts_the_gathered_groups_of_a_file_as_few(tmp_path: Path):
    """Over a Parquet file (no distinct counts), DuckDB estimates the distinct groups at as
    many rows as the file and would build a join's hash table on the file's side; gathered,
    it estimates them at one row. If a DuckDB release changes that, this fails: the joins
    to the codes would then need another way to build on the codes."""
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"k": [f"k{i % 7}" for i in range(100_000)]}), path)
    groups = exp.select("k").from_(f"read_parquet('{path}')").distinct()

    def estimate(query: exp.Select) -> int:
        plan = duckdb.connect().execute("EXPLAIN " + query.sql(DuckDBEngine)).fetchall()[0][1]
        return int(re.search(r"~([\d,]+) rows?", plan).group(1).replace(",", ""))

    assert estimate(groups) >= 10_000
    assert estimate(gathered(groups)) == 1

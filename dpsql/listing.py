"""What the catalog says about the registered tables: ``con.tables()``, ``con.describe(name)``,
and in SQL ``SHOW TABLES`` and ``DESCRIBE name``.

Only public metadata is shown — names, column types, the privacy unit, declared bounds and
contribution limits, which columns are public keys — never anything read from private rows,
so these answers cost no budget and are open to analysts.

>>> from dpsql.catalog import Catalog, TableInfo
>>> cat = Catalog()
>>> _ = cat.add(TableInfo.private("v", columns={"pid": "BIGINT", "age": "INTEGER"},
...                               privacy_unit="pid", bounds={"age": (0, 100)}))
>>> tables(cat).fetchall()
[('v', 'private', 'pid', None, None, None)]
>>> describe(cat, "V").fetchall()
[('pid', 'BIGINT', 'privacy unit', None, None), ('age', 'INTEGER', '', 0.0, 100.0)]
>>> statement("show tables"), statement("DESCRIBE v"), statement("SELECT 1")
(('tables', None), ('describe', 'v'), None)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from sqlglot import exp

from dpsql.catalog import Catalog
from dpsql.errors import ParseError
from dpsql.parse import parse
from dpsql.render import html_table, text_table


@dataclass(frozen=True)
class Listing:
    """A metadata answer: ``.arrow() .df() .pl() .fetchall()`` like a Result, no noise."""

    table: pa.Table

    @property
    def columns(self) -> list[str]:
        return self.table.column_names

    def arrow(self) -> pa.Table:
        return self.table

    def df(self):
        """As a pandas DataFrame (needs pandas)."""
        return self.table.to_pandas()

    def pl(self):
        """As a polars DataFrame (needs polars)."""
        import polars as pl

        return pl.from_arrow(self.table)

    def fetchall(self) -> list[tuple[Any, ...]]:
        names = self.table.column_names
        return [tuple(row[n] for n in names) for row in self.table.to_pylist()]

    def __len__(self) -> int:
        return self.table.num_rows

    def __repr__(self) -> str:
        return text_table(*self._cells())

    def _repr_html_(self) -> str:
        return html_table(*self._cells())

    def _cells(self) -> tuple[list[str], list[list[str]], str]:
        rows = [[("NULL" if v is None else str(v)) for v in row] for row in self.fetchall()]
        return self.columns, rows, f"({len(rows)} {'row' if len(rows) == 1 else 'rows'})"


def tables(catalog: Catalog) -> Listing:
    """One row per registered table: its kind, privacy unit and declared limits."""
    infos = sorted(catalog, key=lambda i: i.name.lower())
    kinds = ["public" if i.public else "private" for i in infos]
    return Listing(pa.table({
        "name": [i.name for i in infos], "kind": kinds,
        "privacy_unit": [i.privacy_unit for i in infos],
        "max_groups_per_unit": pa.array([i.max_groups_per_unit for i in infos], pa.int64()),
        "max_rows_per_group": pa.array([i.max_rows_per_group for i in infos], pa.int64()),
        "max_rows_per_unit": pa.array([i.max_rows_per_unit for i in infos], pa.int64()),
    }))


def describe(catalog: Catalog, name: str) -> Listing:
    """One row per column of table ``name``: its type, its role and its declared bounds."""
    info = catalog.get(name)
    names = list(info.columns)

    def role(column: str) -> str:
        if column == info.privacy_unit:
            return "privacy unit"
        return "public key" if info.public or column in info.public_keys else ""

    bounds = [info.bounds.get(c) for c in names]
    return Listing(pa.table({
        "column_name": names, "column_type": [info.columns[c] for c in names],
        "role": [role(c) for c in names],
        "lower": pa.array([None if b is None else float(b[0]) for b in bounds], pa.float64()),
        "upper": pa.array([None if b is None else float(b[1]) for b in bounds], pa.float64()),
    }))


def column_notes(info, column: str, *, key_values: bool = False) -> list[str]:
    """What the catalog declares of one column (public metadata): privacy unit, bounds,
    public key (with its number of values if ``key_values``).

    >>> from dpsql.catalog import TableInfo
    >>> info = TableInfo.private("t", columns={"pid": "INT", "x": "DOUBLE"}, privacy_unit="pid",
    ...                          bounds={"x": (0, 1)}, public_keys={"x": [0, 1]})
    >>> column_notes(info, "pid"), column_notes(info, "x", key_values=True)
    (['privacy unit'], ['bounds [0, 1]', 'public key: 2 values'])
    """
    notes = []
    if column == info.privacy_unit:
        notes.append("privacy unit")
    if column in info.bounds:
        lo, hi = info.bounds[column]
        notes.append(f"bounds [{lo:g}, {hi:g}]")
    if column in getattr(info, "auto_bounds", ()):
        notes.append('bounds "auto"')
    if column in info.public_keys:
        notes.append(f"public key: {len(info.public_keys[column])} values" if key_values
                     else "public key")
    return notes


def statement(sql: str, dialect: str = "duckdb") -> tuple[str, str | None] | None:
    """``('tables', None)`` for SHOW TABLES, ``('describe', name)`` for DESCRIBE/DESC name;
    None for any other statement (those are queries)."""
    if not sql.lstrip().upper().startswith(("SHOW", "DESC")):
        return None
    try:
        tree = parse(sql, dialect=dialect)
    except ParseError:
        return None
    if isinstance(tree, exp.Show) and str(tree.this).upper() == "TABLES":
        return "tables", None
    if isinstance(tree, exp.Describe) and isinstance(tree.this, exp.Table) \
            and not tree.this.args.get("db"):
        return "describe", tree.this.name
    return None

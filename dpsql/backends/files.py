"""Files as DuckDB reads them: the reader call with its options, globs, and CSV diagnostics.

A file is registered with the options DuckDB's reader takes (``read_csv``: ``delim``,
``header``, ``quote``, ``types``, ``dateformat``, ...; ``read_parquet``: ``hive_partitioning``,
``union_by_name``, ...), passed through as SQL literals, never as SQL text; a path may be a
glob (``visits/*.parquet``, ``visits/**/*.parquet`` for hive-partitioned folders).

>>> reader_call("read_csv_auto", "v.csv", {"delim": ";", "header": True, "types": {"age": "INT"}})
"read_csv('v.csv', delim = ';', header = true, types = {'age': 'INT'})"
>>> reader_call("read_parquet", "v/*/*.parquet", {"hive_partitioning": True})
"read_parquet('v/*/*.parquet', hive_partitioning = true)"
"""

from __future__ import annotations

import csv
import glob
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dpsql.errors import CatalogError

DELIMITERS = ",;|\t"


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def option_value(value: Any, where: str) -> str:
    """A reader option's value as a DuckDB literal: text, number, boolean, list or struct."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return _literal(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(option_value(v, where) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_literal(str(k))}: {option_value(v, where)}"
                               for k, v in value.items()) + "}"
    raise CatalogError(f"{where}: {value!r} is not a text, number, boolean, list or mapping")


def reader_call(reader: str, path: str, options: Mapping[str, Any] | None) -> str:
    """``reader(path, name = value, ...)``; with options, CSV is read by ``read_csv`` (which
    still detects what the options leave open)."""
    options = dict(options or {})
    for key in options:
        if not (isinstance(key, str) and key.isidentifier()):
            raise CatalogError(f"reader option {key!r} is not an option name: give DuckDB's "
                               "reader options by name, e.g. options={'delim': ';'}")
    if options and reader == "read_csv_auto":
        reader = "read_csv"
    args = [_literal(path), *(f"{key} = {option_value(value, f'option {key}')}"
                              for key, value in options.items())]
    return f"{reader}({', '.join(args)})"


def matches(pattern: str) -> list[str]:
    """The paths a glob matches as DuckDB's readers match them: ``**`` crosses folders and
    ``*`` matches hidden files too."""
    return glob.glob(pattern, recursive=True, include_hidden=True)


def exists(path: Path) -> bool:
    """The file, or for a glob at least one file it matches."""
    return path.exists() or bool(matches(str(path)))


def csv_problem(path: Path, columns: list[str]) -> str | None:
    """Why a CSV read as one column whose name holds a delimiter (DuckDB's sniffer gave up on
    some row) could not be split: the first row whose field count differs from the header's,
    by line number. None when the file is not like that.

    >>> import tempfile, os
    >>> f = tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False)
    >>> _ = f.write("pid,age\\n1,30\\n2,40,9\\n"); f.close()
    >>> csv_problem(Path(f.name), ["pid,age"])
    'line 3 has 3 fields where the header has 2'
    >>> os.unlink(f.name)
    """
    if len(columns) != 1 or glob.has_magic(str(path)):
        return None
    delimiter = next((d for d in DELIMITERS if d in columns[0]), None)
    if delimiter is None:
        return None
    with path.open(newline="", errors="replace") as handle:
        rows = csv.reader(handle, delimiter=delimiter)
        header = next(rows, [])
        start = rows.line_num + 1
        for row in rows:
            if len(row) != len(header) and row:
                more = f" (a quote opened there runs to line {rows.line_num})" \
                    if rows.line_num > start else ""
                return (f"line {start} has {len(row)} fields where the header has "
                        f"{len(header)}{more}")
            start = rows.line_num + 1
    return f"its rows could not be split at {delimiter!r}"

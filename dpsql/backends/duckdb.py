"""The embedded default backend: DuckDB, in memory, in a file, or a connection you own.

Registered tables are the connection's own: Python objects are registered on the
connection, files and renamed tables become TEMP tables and views, which shadow a
database object of the same name for dpsql's queries but are never written to the
database file and never replace what it holds (``close()`` drops them).

>>> import pyarrow as pa
>>> backend = DuckDBBackend()
>>> backend.load("t", pa.table({"x": [1, 2, 3]}))
{'x': 'BIGINT'}
>>> backend.run_sql("SELECT SUM(x) AS s FROM t").to_pylist()
[{'s': Decimal('6')}]
"""

from __future__ import annotations

import glob
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa

from dpsql.backends import files
from dpsql.engines import DUCKDB
from dpsql.errors import CatalogError, ExecutionError, QueryCancelled

if TYPE_CHECKING:
    from dpsql.compile import CompiledQuery
    from dpsql.rewrite import BoundedQuery

FILE_READERS = {
    ".parquet": "read_parquet", ".pq": "read_parquet", ".csv": "read_csv_auto",
    ".tsv": "read_csv_auto", ".txt": "read_csv_auto", ".json": "read_json_auto",
    ".jsonl": "read_json_auto", ".ndjson": "read_json_auto",
}


SIGINT_MESSAGE = "Query interrupted"
"""What DuckDB raises (a RuntimeError) when SIGINT, Ctrl-C, stops a query in the main
thread; dpsql turns it back into the KeyboardInterrupt it was."""


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class DuckDBBackend:
    """Runs bounded queries on one DuckDB connection (thread-safe via a lock)."""

    dialect = "duckdb"
    traits = DUCKDB

    def __init__(self, database: str | duckdb.DuckDBPyConnection = ":memory:"):
        owns = not isinstance(database, duckdb.DuckDBPyConnection)
        self.con = duckdb.connect(database) if owns else database
        self._owns = owns
        self.closed = False
        self._lock = threading.Lock()
        self._pinned: dict[str, Any] = {}
        self._created: dict[str, str] = {}

    def load(self, name: str, source: Any,
             options: Mapping[str, Any] | None = None) -> dict[str, str]:
        """Make ``source`` queryable as ``name``; return its column types (lower-case names).

        ``options`` are the file reader's (``dpsql.backends.files``); other sources take none.
        """
        with self._lock:
            if isinstance(source, str | Path) and self._is_file(source):
                self._load_file(name, Path(source), options)
            elif options:
                raise CatalogError(f"cannot register {name!r}: reader options apply to files "
                                   "only, not to tables or Python objects")
            elif isinstance(source, str):
                self._load_table(name, source)
            else:
                self._load_object(name, source)
            rows = self.con.execute(f"DESCRIBE {_quote(name)}").fetchall()
        return {str(r[0]).lower(): str(r[1]) for r in rows}

    @staticmethod
    def _is_file(source: str | Path) -> bool:
        return Path(source).suffix.lower() in FILE_READERS or Path(source).exists()

    def _load_file(self, name: str, path: Path, options: Mapping[str, Any] | None) -> None:
        if not files.exists(path):
            raise CatalogError(f"cannot register {name!r}: file {str(path)!r} does not exist"
                               + (" (the glob matches no file)" if glob.has_magic(str(path))
                                  else ""))
        reader = FILE_READERS.get(path.suffix.lower(), "read_csv_auto")
        kind = "VIEW" if reader == "read_parquet" else "TABLE"
        call = files.reader_call(reader, str(path), options)
        self._forget(name)
        try:
            self.con.execute(f"CREATE TEMP {kind} {_quote(name)} AS SELECT * FROM {call}")
            self._created[name] = kind
        except duckdb.Error as err:
            raise CatalogError(f"cannot read {str(path)!r} for table {name!r}: {err}") from None
        if reader.startswith("read_csv"):
            columns = [r[0] for r in self.con.execute(f"DESCRIBE {_quote(name)}").fetchall()]
            problem = files.csv_problem(path, columns)
            if problem is not None:
                self._forget(name)
                raise CatalogError(
                    f"cannot read {str(path)!r} for table {name!r} as CSV: {problem}. Fix the "
                    "row, or give reader options, e.g. options={'delim': ',', 'quote': '\"', "
                    "'ignore_errors': True} (rows that do not parse are then skipped)")

    def _load_table(self, name: str, source: str) -> None:
        self._forget(name)
        exists = self.con.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE table_name = ? UNION ALL "
            "SELECT count(*) FROM duckdb_views() WHERE view_name = ?", [source, source]).fetchall()
        if not any(n for (n,) in exists):
            raise CatalogError(f"cannot register {name!r}: {source!r} is neither a file nor a "
                               "table or view of this DuckDB database")
        if source != name:
            self.con.execute(f"CREATE TEMP VIEW {_quote(name)} AS SELECT * FROM {_quote(source)}")
            self._created[name] = "VIEW"

    def _load_object(self, name: str, source: Any) -> None:
        if not isinstance(source, pa.Table):
            source = to_arrow(source, name)
        self._forget(name)
        self._pinned[name] = source
        self.con.register(name, source)

    def _forget(self, name: str) -> None:
        """Drop what an earlier registration of ``name`` created (a name may change kind)."""
        kind = self._created.pop(name, None)
        if kind is not None:
            self.con.execute(f"DROP {kind} IF EXISTS temp.main.{_quote(name)}")
        if self._pinned.pop(name, None) is not None:
            self.con.unregister(name)

    @staticmethod
    def identifier(name: str) -> str:
        """How DuckDB SQL names the table registered as ``name`` (quoted)."""
        return _quote(name)

    def render(self, query: BoundedQuery) -> str:
        """The SQL DuckDB runs for a bounded query (the salt stays the parameter)."""
        return query.sql(self.dialect)

    def execute(self, compiled: CompiledQuery, *, salt: str) -> pa.Table:
        """Run a compiled query's bounded query, its salt bound as a parameter; every row."""
        return compiled.named(self.run_sql(compiled.bounded_sql(self.dialect),
                                           compiled.parameters(salt)))

    def run_sql(self, sql: str, parameters: dict[str, Any] | None = None) -> pa.Table:
        """Run SQL (with named ``$parameters``) to completion and return every row."""
        with self._lock:
            try:
                return self.con.sql(sql, params=parameters or None).to_arrow_table()
            except duckdb.InterruptException:
                raise QueryCancelled("the query was cancelled") from None
            except duckdb.Error as err:
                raise execution_failed("DuckDB", err) from None
            except RuntimeError as err:
                if str(err) == SIGINT_MESSAGE:  # DuckDB stopped the query for a Ctrl-C
                    raise KeyboardInterrupt from None
                raise

    def interrupt(self) -> None:
        """Cancel the query running now, if any (from another thread)."""
        self.con.interrupt()

    def public_values(self, table: str, column: str) -> tuple[Any, ...]:
        """Distinct values of a public table's column (public data: no noise needed)."""
        sql = f"SELECT DISTINCT {_quote(column)} FROM {_quote(table)} ORDER BY 1"
        with self._lock:
            try:
                return tuple(v for (v,) in self.con.execute(sql).fetchall())
            except duckdb.Error as err:
                raise CatalogError(f"cannot read public keys {table}.{column}: {err}") from None

    def text_widths(self, table: str, columns: list[str]) -> dict[str, int]:
        """The most characters of each text column of a public table (public data)."""
        if not columns:
            return {}
        with self._lock:
            try:
                found = self.con.execute(widths_sql(_quote(table), columns)).fetchall()[0]
            except duckdb.Error as err:
                raise CatalogError(f"cannot measure the text of public table {table}: "
                                   f"{err}") from None
        return widths(columns, found)

    def close(self) -> None:
        self.closed = True
        if self._owns:
            self.con.close()
            return
        with self._lock:
            for name in list(self._created) + list(self._pinned):
                self._forget(name)


def widths_sql(table: str, columns: list[str], quote: Callable[[str], str] = _quote) -> str:
    """SQL of the most characters of each of ``columns`` (LENGTH counts characters in
    DuckDB and Spark alike); ``table`` and ``quote`` as the engine names them."""
    return "SELECT " + ", ".join(f"MAX(LENGTH({quote(c)}))" for c in columns) + \
        f" FROM {table}"


def widths(columns: list[str], found: Any) -> dict[str, int]:
    """Each column's width from ``widths_sql``'s row (1 for a table without text)."""
    return {c: max(1, int(w or 0)) for c, w in zip(columns, found, strict=True)}


def to_arrow(source: Any, name: str) -> pa.Table:
    """An Arrow table from a pyarrow, polars or pandas table (or anything Arrow-streamable)."""
    for method in ("to_arrow", "__arrow_c_stream__"):
        if hasattr(source, method):
            return pa.table(source) if method == "__arrow_c_stream__" else source.to_arrow()
    try:
        import pandas as pd
    except ImportError:
        pd = None
    if pd is not None and isinstance(source, pd.DataFrame):
        return pa.Table.from_pandas(source, preserve_index=False)
    raise CatalogError(f"cannot register {name!r} from {type(source).__name__}: give a file path, "
                       "a table name, a pandas/polars DataFrame or a pyarrow Table")


def execution_failed(engine: str, err: Exception) -> ExecutionError:
    """The error for a failed bounded query. The engine's message may quote private
    values, so only its kind is reported."""
    return ExecutionError(f"the bounded query failed in {engine} ({type(err).__name__})")

"""The distributed backend: Spark, through a SparkSession you own or one made from a master URL.

The bounded query is built for Spark's traits (``dpsql.engines.SPARK``) and written in
DuckDB's meaning by dpsql's Spark dialect (``dpsql.engines.spark``); Spark runs it where the
data lives and returns one row per group as Arrow.
Noise, partition selection and accounting stay on the driver, in the same code as for
DuckDB. Private tables come from Spark tables or views, DataFrames, Arrow/pandas/polars
tables, or files (parquet, CSV, JSON; local paths or any URI Spark can read).

Temporary views are visible to everything using the same SparkSession, so each backend
names its views ``dpsql_<token>_<name>`` and prints its queries against those names:
two dpsql connections on one session (or the user's own view called ``pums``) never
replace each other's tables. A table registered under its own Spark name is used as is.

For example (``spark`` is a SparkSession)::

    backend = SparkBackend(spark)
    backend.load("t", pa.table({"x": [1, 2, 3]}))     # {'x': 'BIGINT'}
    backend.run_sql("SELECT SUM(x) AS s FROM t")      # pyarrow.Table: s = [6]
"""

from __future__ import annotations

import glob
import secrets
import threading
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from sqlglot import exp

from dpsql.backends.duckdb import FILE_READERS, execution_failed, to_arrow, widths, widths_sql
from dpsql.engines import SPARK
from dpsql.errors import CatalogError, InterfaceError, QueryCancelled

if TYPE_CHECKING:
    from dpsql.compile import CompiledQuery
    from dpsql.rewrite import BoundedQuery

SCALAR_TYPES = {
    "tinyint": "TINYINT", "smallint": "SMALLINT", "int": "INTEGER", "bigint": "BIGINT",
    "float": "FLOAT", "double": "DOUBLE", "string": "VARCHAR", "boolean": "BOOLEAN",
    "date": "DATE", "timestamp": "TIMESTAMP WITH TIME ZONE", "timestamp_ntz": "TIMESTAMP",
    "binary": "BLOB", "void": "NULL",
}
"""Spark's type names as the catalog (and DuckDB) spell them; others are upper-cased."""

LOG_SETTINGS = Path(__file__).with_name("log4j2-quiet.properties")
QUIET = {"spark.ui.showConsoleProgress": "false", "spark.ui.enabled": "false",
         "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={LOG_SETTINGS.as_uri()}"}
"""Settings of a session dpsql creates itself from a master URL: no progress bars, no UI,
and Spark's log at level ERROR (``log4j2-quiet.properties``), so that start-up notices and
warnings do not mix with query output."""

URI_SCHEMES = ("s3://", "s3a://", "gs://", "abfss://", "hdfs://", "dbfs:/", "file:/")


def catalog_type(spark_type: str) -> str:
    """A Spark ``simpleString`` type as the catalog spells it.

    A ``varchar(n)`` or ``char(n)`` keeps its n: the schema's width is the column's most
    characters (``dpsql.expr.size``; dpsql cuts longer values anyway).

    >>> catalog_type("int"), catalog_type("decimal(10,2)"), catalog_type("varchar(5)")
    ('INTEGER', 'DECIMAL(10,2)', 'VARCHAR(5)')

    A ``time(p)`` is a TIME (Spark 4.1 gives its fractional digits, which DuckDB's TIME
    does not take).

    >>> catalog_type("array<int>"), catalog_type("time(6)")
    ('ARRAY<INT>', 'TIME')
    """
    name = spark_type.lower()
    if name.startswith(("varchar", "char")):
        return "VARCHAR" + name[name.find("("):] if "(" in name else "VARCHAR"
    if name.startswith("time("):
        return "TIME"
    return SCALAR_TYPES.get(name, spark_type.upper())


def _reader(path: str) -> str:
    """Spark's reader for a path, from its suffix (a folder is read as parquet)."""
    reader = FILE_READERS.get(Path(path).suffix.lower(), "read_parquet")
    return {"read_parquet": "parquet", "read_csv_auto": "csv", "read_json_auto": "json"}[reader]


def start_session(master: str | None = None,
                  config: Mapping[str, str] | None = None) -> tuple[Any, bool]:
    """The SparkSession to run on, and whether this call started it.

    ``getOrCreate`` returns the process's active session if there is one (a notebook's,
    Databricks', or one ``spark-submit`` configured: its ``--master`` applies when
    ``master`` is None); otherwise a new quiet session (``QUIET``) on ``master`` (None:
    ``spark-submit``'s or Spark's default, local) with the owner's ``config``."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise InterfaceError("the Spark backend needs pyspark: pip install 'dpsql[spark]'"
                             ) from None
    started = SparkSession.getActiveSession() is None
    builder = SparkSession.builder.appName("dpsql")
    if master is not None:
        builder = builder.master(master)
    for key, value in {**QUIET, **(config or {})}.items():
        builder = builder.config(key, value)
    with warnings.catch_warnings():
        # pyspark warns on import about pandas versions it has not been tested with;
        # dpsql hands Spark Arrow tables, never pandas frames.
        warnings.filterwarnings("ignore", category=FutureWarning, module="pyspark")
        return builder.getOrCreate(), started


class SparkBackend:
    """Runs bounded queries on a SparkSession (thread-safe via a lock)."""

    dialect = "spark"
    traits = SPARK

    def __init__(self, spark: Any = None, *, config: Mapping[str, str] | None = None):
        """``spark``: a SparkSession, a master URL or None (see :func:`start_session`, which
        ``config`` is passed to); dpsql stops on close() only a session it started itself."""
        self._owns = False
        if spark is None or isinstance(spark, str):
            spark, self._owns = start_session(spark, config)
        elif config:
            raise InterfaceError("Spark settings (config) apply to a session dpsql starts; set "
                                 "them on the SparkSession you pass in")
        self.spark = spark
        self.closed = False
        self._lock = threading.Lock()
        self._prefix = f"dpsql_{secrets.token_hex(4)}_"
        self._group = self._prefix + "jobs"
        self._cancelled = threading.Event()
        self._views: dict[str, str] = {}

    def load(self, name: str, source: Any,
             options: Mapping[str, Any] | None = None) -> dict[str, str]:
        """Make ``source`` queryable as ``name``; return its column types (lower-case names).

        ``options`` are Spark's reader options for a file (``sep``, ``header``, ...)."""
        with self._lock:
            if isinstance(source, str | Path) and self._is_file(source):
                frame = self._read_file(name, str(source), options or {})
            elif options:
                raise CatalogError(f"cannot register {name!r}: reader options apply to files "
                                   "only, not to tables or DataFrames")
            elif isinstance(source, str):
                frame = self._table(name, source)
            else:
                frame = self._frame(name, source)
            if isinstance(source, str) and source == name:
                self._views.pop(name.lower(), None)
            else:
                self._views[name.lower()] = self._prefix + name
                frame.createOrReplaceTempView(self._views[name.lower()])
            return {field: catalog_type(kind) for field, kind in
                    ((f.lower(), k) for f, k in frame.dtypes)}

    @staticmethod
    def _is_file(source: str | Path) -> bool:
        text = str(source)
        return (Path(text).suffix.lower() in FILE_READERS or text.startswith(URI_SCHEMES)
                or Path(text).exists())

    def _read_file(self, name: str, path: str, options: Mapping[str, Any]) -> Any:
        if "://" not in path and not path.startswith("dbfs:/") and not Path(path).exists() \
                and not glob.glob(path, recursive=True):
            raise CatalogError(f"cannot register {name!r}: file {path!r} does not exist")
        reader = self.spark.read
        if _reader(path) == "csv":
            reader = reader.option("header", "true").option("inferSchema", "true")
        reader = reader.options(**{k: str(v).lower() if isinstance(v, bool) else v
                                   for k, v in options.items()})
        try:
            return getattr(reader, _reader(path))(path)
        except Exception as err:  # pyspark raises many kinds; report the reader's message
            raise CatalogError(f"cannot read {path!r} for table {name!r}: {_first_line(err)}"
                               ) from None

    def _table(self, name: str, source: str) -> Any:
        if not self.spark.catalog.tableExists(source):
            raise CatalogError(f"cannot register {name!r}: {source!r} is neither a file nor a "
                               "table or view of this Spark session")
        return self.spark.table(source)

    def _frame(self, name: str, source: Any) -> Any:
        from pyspark.sql import DataFrame

        if isinstance(source, DataFrame):
            if source.sparkSession is not self.spark:
                raise CatalogError(f"cannot register {name!r}: the DataFrame belongs to another "
                                   "SparkSession than this connection's")
            return source
        from pyspark.sql.pandas.types import from_arrow_schema

        table = to_arrow(source, name)
        # Naive timestamps stay wall-clock (TIMESTAMP_NTZ), as in DuckDB, not session-local.
        return self.spark.createDataFrame(table, schema=from_arrow_schema(table.schema))

    def identifier(self, name: str) -> str:
        """How Spark SQL names the table registered as ``name`` (quoted)."""
        return _quote(self._views.get(name.lower(), name))

    def render(self, query: BoundedQuery) -> str:
        """The bounded query as Spark SQL over this backend's views, in DuckDB's meaning
        (``dpsql.engines.spark``); the salt stays the parameter ``:__dp_salt``."""
        return self._over_views(query.ast).sql(dialect=SPARK.dialect)

    def _over_views(self, tree: exp.Expression) -> exp.Expression:
        """A copy of ``tree`` reading this backend's view for each table registered under
        another name, aliased by the table's own name."""
        tree = tree.copy()
        for table in tree.find_all(exp.Table):
            view = self._views.get(table.name.lower()) if not table.args.get("db") else None
            if view is not None:
                if not table.alias:
                    table.set("alias", exp.TableAlias(
                        this=exp.to_identifier(table.name, quoted=True)))
                table.set("this", exp.to_identifier(view, quoted=True))
        return tree

    def execute(self, compiled: CompiledQuery, *, salt: str) -> pa.Table:
        """Run a compiled query's bounded query, its salt bound as a parameter; every row."""
        return compiled.named(self.run_sql(self.render(compiled.bounded),
                                           compiled.parameters(salt)))

    def run_sql(self, sql: str, parameters: dict[str, Any] | None = None) -> pa.Table:
        """Run Spark SQL (with named ``:parameters``) in this backend's job group."""
        with self._lock:
            context = self.spark.sparkContext
            context.setJobGroup(self._group, "dpsql bounded query", interruptOnCancel=True)
            try:
                return _as_duckdb_types(self.spark.sql(sql, args=parameters or None).toArrow())
            except Exception as err:
                if self._cancelled.is_set():
                    raise QueryCancelled("the query was cancelled") from None
                raise execution_failed("Spark", err) from None
            finally:
                self._cancelled.clear()

    def interrupt(self) -> None:
        """Cancel this backend's running Spark jobs (its job group), not the session's."""
        self._cancelled.set()
        self.spark.sparkContext.cancelJobGroup(self._group)

    def public_values(self, table: str, column: str) -> tuple[Any, ...]:
        """Distinct values of a public table's column (public data: no noise needed)."""
        sql = f"SELECT DISTINCT {_quote(column)} FROM {self.identifier(table)} ORDER BY 1"
        with self._lock:
            try:
                return tuple(row[0] for row in self.spark.sql(sql).collect())
            except Exception as err:
                raise CatalogError(f"cannot read public keys {table}.{column}: "
                                   f"{_first_line(err)}") from None

    def text_widths(self, table: str, columns: list[str]) -> dict[str, int]:
        """The most characters of each text column of a public table (public data)."""
        if not columns:
            return {}
        with self._lock:
            try:
                found = self.spark.sql(widths_sql(self.identifier(table), columns,
                                                  _quote)).collect()[0]
            except Exception as err:
                raise CatalogError(f"cannot measure the text of public table {table}: "
                                   f"{_first_line(err)}") from None
        return widths(columns, found)

    def close(self) -> None:
        self.closed = True
        if self._owns:
            self.spark.stop()
        else:
            for view in self._views.values():
                self.spark.catalog.dropTempView(view)


def _as_duckdb_types(table: pa.Table) -> pa.Table:
    """Spark's TIME columns come back in nanoseconds; DuckDB's (and every TIME dpsql
    registers) in microseconds, so results of the two engines compare equal.

    >>> t = pa.table({"tm": pa.array([1000], pa.time64("ns"))})
    >>> _as_duckdb_types(t).column("tm").type
    Time64Type(time64[us])
    """
    fields = [pa.field(f.name, pa.time64("us"), f.nullable) if f.type == pa.time64("ns") else f
              for f in table.schema]
    return table.cast(pa.schema(fields)) if fields != list(table.schema) else table


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _first_line(err: Exception) -> str:
    return str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__

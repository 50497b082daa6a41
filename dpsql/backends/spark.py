"""The distributed backend: Spark, through a SparkSession you own or one made from a master URL.

The bounded query is the same dialect-neutral tree as for DuckDB, printed as Spark SQL
by sqlglot; Spark runs it where the data lives and returns one row per group as Arrow.
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
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from sqlglot import exp

from dpsql.backends.duckdb import FILE_READERS, execution_failed, to_arrow, widths, widths_sql
from dpsql.backends.like import like_regex
from dpsql.errors import CatalogError, InterfaceError, QueryCancelled
from dpsql.expr.nodes import (
    BIGINT_ROOM,
    COMPUTE_ONCE,
    HEX_NUMBER,
    INLINED_FORM,
    ROUND_IN_RANGE,
    SUM_BOUND,
    ArgMinNull,
    ExactSum,
    as_bigint,
)
from dpsql.plan import BoundedQuery

if TYPE_CHECKING:
    from dpsql.compile import CompiledQuery

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
    >>> catalog_type("array<int>")
    'ARRAY<INT>'
    """
    name = spark_type.lower()
    if name.startswith(("varchar", "char")):
        return "VARCHAR" + name[name.find("("):] if "(" in name else "VARCHAR"
    return SCALAR_TYPES.get(name, spark_type.upper())


def _reader(path: str) -> str:
    """Spark's reader for a path, from its suffix (a folder is read as parquet)."""
    reader = FILE_READERS.get(Path(path).suffix.lower(), "read_parquet")
    return {"read_parquet": "parquet", "read_csv_auto": "csv", "read_json_auto": "json"}[reader]


class SparkBackend:
    """Runs bounded queries on a SparkSession (thread-safe via a lock)."""

    dialect = "spark"

    def __init__(self, spark: Any = None):
        try:
            from pyspark.sql import SparkSession
        except ImportError:
            raise InterfaceError("the Spark backend needs pyspark: pip install 'dpsql[spark]'"
                                 ) from None
        self._owns = False
        if spark is None or isinstance(spark, str):
            # getOrCreate returns the process's active session if there is one (as on
            # Databricks); dpsql stops on close() only a session it started itself.
            self._owns = SparkSession.getActiveSession() is None
            builder = SparkSession.builder.appName("dpsql")
            if spark is not None:
                builder = builder.master(spark)
            for key, value in QUIET.items():
                builder = builder.config(key, value)
            with warnings.catch_warnings():
                # pyspark warns on import about pandas versions it has not been tested with;
                # dpsql hands Spark Arrow tables, never pandas frames.
                warnings.filterwarnings("ignore", category=FutureWarning, module="pyspark")
                spark = builder.getOrCreate()
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
        """The bounded query as Spark SQL over this backend's views, with DuckDB's meaning
        where a namesake function differs (the salt stays the parameter ``:__dp_salt``),
        each SELECT the rewrite marked with an ``INLINED_FORM`` written in that form, and
        each CTE it marked ``COMPUTE_ONCE`` computed once for all its readers."""
        tree = _materialized(_inlined(_unshared(query.ast.copy())))
        # Children first: a replacement built from copies of its node's children (FLOOR's
        # range guard, EXTRACT's functions) then holds children already given their meaning
        # (sqlglot's transform, parents first, would not visit them).
        for node in reversed(list(tree.walk())):
            new = self._spark_meaning(node)
            if new is not node:
                if node is tree:
                    tree = new
                else:
                    node.replace(new)
        return tree.sql("spark")

    def _spark_meaning(self, node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Table) and not node.args.get("db"):
            view = self._views.get(node.name.lower())
            if view is not None:
                renamed = node.copy()
                renamed.set("this", exp.to_identifier(view, quoted=True))
                if not node.alias:
                    renamed.set("alias", exp.TableAlias(
                        this=exp.to_identifier(node.name, quoted=True)))
                return renamed
        return _duckdb_meaning(node)

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


def _time_literal(text: str) -> exp.Expression:
    return exp.Var(this="TIME '" + text.replace("'", "''") + "'")


FLOOR_RANGE = 2.0**62
"""Spark's FLOOR and CEIL of a DOUBLE return BIGINT, which fails in ANSI mode on ±inf, NaN
and values beyond it; every DOUBLE outside ±2^62 is a whole number already."""


def _duckdb_meaning(node: exp.Expression) -> exp.Expression:
    """What the node means in DuckDB, written so that Spark (ANSI mode) computes the same
    and never raises where DuckDB does not.

    - Spark's DAYOFWEEK counts Sunday as 1, DuckDB's as 0; sqlglot keeps the name for both
      (and prints ISODOW, Monday = 1 to Sunday = 7, as one day off).
    - The rewrite's exact integer sums (``ExactSum``) are summed in 16-bit limbs or as
      DECIMAL(38, 0) (``_exact_sum``); Spark's BIGINT sum can overflow.
    - ``ArgMinNull`` (DuckDB's ARG_MIN_NULL) is Spark's MIN_BY, which also keeps a NULL.
    - A ROUND the rewrite marked ``ROUND_IN_RANGE`` is ``_rounded``.
    - FLOOR and CEIL keep values outside ±2^62 as they are (``FLOOR_RANGE``).
    - ``SIGN(NaN)`` is 0 in DuckDB and NaN in Spark: Spark's argument is ``NANVL(x, 0)``.
    - LIKE and ILIKE (a literal pattern: ``dpsql.expr.types``) are ``RLIKE`` of
      ``like_regex``, which cannot backtrack: Spark's own LIKE is a backtracking regular
      expression, text^k steps for k wildcards, where ``dpsql.expr.size`` bounds a row's
      work assuming linear matching (ILIKE compares lower case, as Spark's own does).
    - DuckDB's CONCAT reads NULL as '' and any value as text; sqlglot prints it for Spark as
      ``CONCAT(COALESCE(i, ''), …)``, which casts '' to ``i``'s type and raises on the rows
      where ``i`` is NULL, so each argument is made text first (CONCAT_WS, a subclass in
      sqlglot, is left alone: the group-choice digest relies on its separator).
    - A tuple ``IN`` is the OR of field-wise null-safe equalities (Spark compares structs
      only when their field names agree; DuckDB's row equality is null-safe: ``(NULL, 1)
      IN ((NULL, 1))`` is true, ``(NULL, 1) IN (('a', 1))`` false, not NULL).
    - A NULL literal where a condition goes is a NULL BOOLEAN (Spark refuses type VOID there).
    - A hex number (``hex_number``: DuckDB casts '0x…' text) is ``CONV(…, 16, 10)``.
    - ``EXTRACT(second FROM ts)`` is ``SECOND(ts)``: Spark's EXTRACT gives the seconds with
      their fraction (DECIMAL(8, 6)), DuckDB's whole seconds; the day-of-week and
      day-of-year parts are the functions too (Spark's EXTRACT knows neither DAYOFYEAR nor
      DuckDB's day numbers), see ``EXTRACT_AS_FUNCTION``; ``WEEK(d)``, which Spark lacks,
      is its ISO week ``WEEKOFYEAR(d)``.
    - A TIME literal is ``TIME '…'``: sqlglot writes CAST(… AS TIMESTAMP) for Spark, which
      cannot compare that with a TIME column, and Spark refuses CAST(… AS TIME). A NULL
      TIME (totality rule 5) is ``CASE WHEN FALSE THEN TIME '00:00:00' END``, a NULL whose
      type Spark infers as TIME.
    """
    if isinstance(node, exp.Cast) and node.to.this == exp.DataType.Type.TIME:
        if isinstance(node.this, exp.Null):
            return exp.Case(ifs=[exp.If(this=exp.false(), true=_time_literal("00:00:00"))])
        if isinstance(node.this, exp.Literal) and node.this.is_string:
            return _time_literal(node.this.name)
    if type(node) is exp.Week:
        return exp.WeekOfYear(this=node.this.copy())
    if isinstance(node, exp.Extract) and node.this.name.lower() in EXTRACT_AS_FUNCTION:
        function = EXTRACT_AS_FUNCTION[node.this.name.lower()]
        return _duckdb_meaning(function(this=node.expression.copy()))
    if isinstance(node, exp.Cast) and node.meta.get(HEX_NUMBER):
        digits = node.this.expression.copy()
        return exp.Cast(this=exp.Anonymous(this="CONV", expressions=[
            digits, exp.Literal.number(16), exp.Literal.number(10)]),
            to=exp.DataType.build("BIGINT"))
    if type(node) is exp.Concat and node.args.get("coalesce"):
        text = exp.DataType.build("STRING")
        return exp.Concat(expressions=[
            exp.Coalesce(this=exp.Cast(this=arg.copy(), to=text.copy()),
                         expressions=[exp.Literal.string("")]) for arg in node.expressions])
    if isinstance(node, exp.In) and isinstance(node.this, exp.Tuple) and node.expressions:
        fields = node.this.expressions
        return exp.paren(exp.or_(*(
            exp.and_(*(exp.NullSafeEQ(this=f.copy(), expression=v.copy())
                       for f, v in zip(fields, row.expressions, strict=True)))
            for row in node.expressions)))
    if isinstance(node, exp.Null) and _is_condition(node):
        return exp.Cast(this=exp.Null(), to=exp.DataType.build("BOOLEAN"))
    if isinstance(node, ArgMinNull):
        return exp.ArgMin(this=node.this, expression=node.expression)
    if type(node) is ExactSum:
        return _exact_sum(node)
    if isinstance(node, exp.Round) and node.meta.get(ROUND_IN_RANGE):
        return _rounded(node.this)
    if isinstance(node, exp.Floor | exp.Ceil):
        value = node.this
        inside = exp.Between(this=value.copy(), low=exp.Literal.number(-FLOOR_RANGE),
                             high=exp.Literal.number(FLOOR_RANGE))
        return exp.Case(ifs=[exp.If(this=inside, true=node.copy())], default=value.copy())
    if isinstance(node, exp.Sign):
        return exp.Sign(this=exp.Anonymous(this="NANVL", expressions=[
            node.this.copy(), exp.Literal.number(0)]))
    if isinstance(node, exp.Like | exp.ILike) and isinstance(node.expression, exp.Literal):
        text, pattern = node.this.copy(), node.expression.name
        if isinstance(node, exp.ILike):
            text, pattern = exp.Lower(this=text), pattern.lower()
        match = exp.RegexpLike(this=text, expression=exp.Literal.string(like_regex(pattern)))
        return exp.Not(this=exp.paren(match)) if node.args.get("negate") else match
    if isinstance(node, exp.DayOfWeekIso):
        shifted = exp.Mod(this=exp.paren(exp.Add(this=exp.DayOfWeek(this=node.this.copy()),
                                                 expression=exp.Literal.number(5))),
                          expression=exp.Literal.number(7))
        return exp.paren(exp.Add(this=exp.paren(shifted), expression=exp.Literal.number(1)))
    if isinstance(node, exp.DayOfWeek):
        return exp.paren(exp.Sub(this=node.copy(), expression=exp.Literal.number(1)))
    return node


MATERIALIZED = "__dp_m"
"""The alias of a CTE's query inside ``_materialized``'s filter."""

LIMB_BITS = 16
"""A bounded exact sum adds each value's 16-bit limbs in BIGINT: no limb exceeds 2¹⁶ in
magnitude, so a limb's sum cannot overflow below 2⁴⁷ (1.4·10¹⁴) values in one group."""


def _exact_sum(node: exp.Expression) -> exp.Expression:
    """An ``ExactSum`` in Spark SQL: exact, and no overflow error short of 2⁴⁷ values in
    one group (``LIMB_BITS``; DECIMAL(38, 0) holds more).

    Within a bound below ``BIGINT_ROOM`` (``SUM_BOUND``: the rewrite's clamp), the value is
    split into ⌈bits/16⌉ limbs (the low ones ``& 65535``, the top one shifted, signed), each limb
    summed in BIGINT and the sums recombined in DECIMAL(38, 0) once per group, instead of
    casting every value to DECIMAL(38, 0) and adding in BigDecimal (docs/benchmarks.md:
    about 0.2 of Spark's floor on SUM and AVG). A sum in a window keeps the DECIMAL form.

    >>> from dpsql.expr.nodes import exact_sum
    >>> print(*_exact_sum(exact_sum(exp.column("x"), bound=2**31 - 1)).sql("spark")
    ...       .split(" + "), sep="\\n")
    (CAST(SUM(CAST(x AS BIGINT) & 65535) AS DECIMAL(38, 0))
    CAST(SUM(SHIFTRIGHT(CAST(x AS BIGINT), 16)) AS DECIMAL(38, 0)) * 65536)
    >>> _exact_sum(exact_sum(exp.column("x"))).sql("spark")
    'SUM(CAST(x AS DECIMAL(38, 0)))'
    """
    decimal = exp.DataType.build("DECIMAL(38, 0)")
    bound = node.meta.get(SUM_BOUND)
    if bound is None or bound >= BIGINT_ROOM or isinstance(node.parent, exp.Window):
        return exp.Sum(this=exp.Cast(this=node.this, to=decimal))
    value = as_bigint(node.this)
    limbs = max(1, -(-bound.bit_length() // LIMB_BITS))
    total: exp.Expression | None = None
    for i in range(limbs):
        limb: exp.Expression = value.copy() if i == 0 else exp.BitwiseRightShift(
            this=value.copy(), expression=exp.Literal.number(LIMB_BITS * i))
        if i < limbs - 1:
            limb = exp.BitwiseAnd(this=limb, expression=exp.Literal.number(2**LIMB_BITS - 1))
        term: exp.Expression = exp.Cast(this=exp.Sum(this=limb), to=decimal.copy())
        if i:
            term = exp.Mul(this=term, expression=exp.Literal.number(2 ** (LIMB_BITS * i)))
        total = term if total is None else exp.Add(this=total, expression=term)
    return exp.paren(total) if limbs > 1 else total


def _rounded(x: exp.Expression) -> exp.Expression:
    """ROUND(x), halves away from zero as both engines round, for a DOUBLE x within ±2⁵²:
    TRUNC(x) (Spark: a cast to BIGINT) plus SIGN(x) where |x − TRUNC(x)| ≥ 0.5, a
    difference that is exact there. Spark's own ROUND of a DOUBLE goes through BigDecimal
    (0.14 of Spark's floor on 10M rows); DuckDB's is cheaper than this expression.

    >>> _rounded(exp.column("x")).sql("spark")
    'CAST(x AS BIGINT) + CASE WHEN ABS(x - CAST(x AS BIGINT)) >= 0.5 THEN SIGN(x) ELSE 0 END'
    """
    whole = exp.Trunc(this=x.copy())
    fraction = exp.Abs(this=exp.Sub(this=x.copy(), expression=whole.copy()))
    half_up = exp.If(this=exp.GTE(this=fraction, expression=exp.Literal.number("0.5")),
                     true=exp.Sign(this=x.copy()))
    return exp.Add(this=whole, expression=exp.Case(ifs=[half_up], default=exp.Literal.number(0)))


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


EXTRACT_AS_FUNCTION: dict[str, type[exp.Expression]] = {
    "second": exp.Second, "dayofyear": exp.DayOfYear, "doy": exp.DayOfYear,
    "dayofweek": exp.DayOfWeek, "dow": exp.DayOfWeek, "isodow": exp.DayOfWeekIso,
}
"""EXTRACT parts that Spark's EXTRACT lacks or computes otherwise, as the function nodes
whose DuckDB meaning ``_duckdb_meaning`` writes for Spark."""


def _unshared(tree: exp.Expression) -> exp.Expression:
    """``tree`` with every node object in one place only: the rewrite may put one node in
    several places (a filter in each histogram branch), and a transform replaces a node
    under one parent only, so the other places kept DuckDB's meaning (found by the fuzzer:
    a tuple IN inside a quantile's FILTER reached Spark as a struct comparison).

    >>> shared = exp.column("x")
    >>> tree = exp.and_(exp.EQ(this=shared, expression=exp.Literal.number(1)),
    ...                 exp.EQ(this=shared, expression=exp.Literal.number(2)))
    >>> left, right = _unshared(tree).find_all(exp.Column)
    >>> left is right, left.parent is not right.parent
    (False, True)
    """
    seen: set[int] = set()
    stack = [tree]
    while stack:
        node = stack.pop()
        for key, value in list(node.args.items()):
            children = value if isinstance(value, list) else [value]
            fresh = [child.copy() if isinstance(child, exp.Expression) and id(child) in seen
                     else child for child in children]
            if any(new is not old for new, old in zip(fresh, children, strict=True)):
                node.set(key, fresh if isinstance(value, list) else fresh[0])
            for child in fresh:
                if isinstance(child, exp.Expression):
                    seen.add(id(child))
                    stack.append(child)
    return tree


def _inlined(tree: exp.Expression) -> exp.Expression:
    """``tree`` with each SELECT marked ``INLINED_FORM`` replaced by that form, and the CTEs
    no query reads any more dropped (Spark would only parse them).

    >>> codes = exp.select("k", "k * 2 AS c").from_("p")
    >>> joined = exp.select("p.*", "c.c").from_("p").join("codes AS c", on="p.k = c.k")
    >>> joined.meta[INLINED_FORM] = exp.select("*", "k * 2 AS c").from_("p")
    >>> tree = exp.select("*").from_(joined.subquery("j")).with_("codes", as_=codes)
    >>> _inlined(tree).sql()
    'SELECT * FROM (SELECT *, k * 2 AS c FROM p) AS j'

    A marked SELECT's CTEs and other marks go with its form:

    >>> joined = exp.select("p.*", "c.c").from_("p").join("codes AS c", on="p.k = c.k")
    >>> joined.meta[INLINED_FORM] = exp.select("*", "k * 2 AS c").from_("p")
    >>> joined.meta[COMPUTE_ONCE] = True
    >>> tree = _inlined(joined.with_("p", as_="SELECT 1 AS k").with_("codes", as_=codes))
    >>> tree.sql(), tree.meta[COMPUTE_ONCE]
    ('WITH p AS (SELECT 1 AS k) SELECT *, k * 2 AS c FROM p', True)
    """
    for select in list(tree.find_all(exp.Select)):
        form = select.meta.get(INLINED_FORM)
        if form is not None:
            # The form takes the SELECT's place with its CTEs and its other marks.
            inlined = form.copy()
            inlined.set("with_", select.args.get("with_"))
            inlined.meta.update((k, v) for k, v in select.meta.items() if k != INLINED_FORM)
            if select is tree:
                tree = inlined
            else:
                select.replace(inlined)
    read = {table.name.lower() for table in tree.find_all(exp.Table)}
    for cte in list(tree.find_all(exp.CTE)):
        if cte.alias.lower() not in read:
            with_ = cte.parent
            cte.pop()
            if not with_.expressions:
                with_.pop()
    return tree


def _materialized(tree: exp.Expression) -> exp.Expression:
    """``tree`` with each CTE marked ``COMPUTE_ONCE`` that several table references read
    computed once.

    Spark inlines a deterministic CTE at every reference, so the kept pairs of a quantile
    (the (unit, group) aggregate and the group choice) were computed twice: for the counts
    per group and for the histogram's join. A CTE with a non-deterministic expression is
    not inlined: Spark plans it as one shuffle that every reference reads (SPARK-36447). The
    filter ``RAND() < 2`` holds on every row (RAND is in [0, 1)) and makes the CTE so.
    Unmarked CTEs stay inlined: the pairs that the one-group choice also reads for its
    codes cost more to shuffle than to aggregate again (docs/benchmarks.md), and caching
    (``persist``) cost more than either.

    >>> pairs = exp.select("u", "k").from_("t")
    >>> pairs.meta[COMPUTE_ONCE] = True
    >>> tree = exp.select("*").from_("pairs AS a").join("pairs AS b", on="a.u = b.u")
    >>> _materialized(tree.with_("pairs", as_=pairs, copy=False)).sql("spark")
    'WITH pairs AS (SELECT * FROM (SELECT u, k FROM t) AS __dp_m WHERE RAND() < 2) SELECT * \
FROM pairs AS a JOIN pairs AS b ON a.u = b.u'
    """
    reads = Counter(table.name.lower() for table in tree.find_all(exp.Table))
    for cte in tree.find_all(exp.CTE):
        if cte.this.meta.get(COMPUTE_ONCE) and reads[cte.alias.lower()] > 1:
            once = exp.select("*").from_(cte.this.subquery(MATERIALIZED)).where(
                exp.LT(this=exp.Rand(), expression=exp.Literal.number(2)))
            cte.set("this", once)
    return tree


def _is_condition(node: exp.Expression) -> bool:
    """Where a NULL literal must be a BOOLEAN: a WHEN of a CASE without an operand (``CASE
    k WHEN NULL`` compares k with it: left alone), WHERE, HAVING, AND, OR, NOT."""
    parent = node.parent
    in_when = isinstance(parent, exp.If) and node.arg_key == "this" and not (
        isinstance(parent.parent, exp.Case) and parent.parent.this is not None)
    return in_when or \
        isinstance(parent, exp.Where | exp.Having | exp.And | exp.Or | exp.Not)


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _first_line(err: Exception) -> str:
    return str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__

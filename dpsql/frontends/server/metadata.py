"""Catalog queries from tools (psql's ``\\dt``, JDBC's ``getTables``), answered from public
metadata only.

A tool's probe is a SELECT that reads only ``pg_catalog`` / ``information_schema`` relations
(or no relation at all: ``SELECT version()``, ``SELECT 1``). Such a statement runs on a
*metadata database*: a separate in-memory DuckDB holding, for every catalog table, an
**empty** table of the same name and column types, and nothing else. It cannot reach the
data (it has none), files (external access is off and its configuration locked) or table
functions (only named system relations may appear in FROM). Functions of PostgreSQL's
catalog that DuckDB lacks are replaced by constants first (``version()``,
``pg_get_userbyid``, ``pg_table_is_visible``...). Any other statement goes to dpsql.

A probe costs bounded work: it may call only the functions :mod:`.probecheck` lists, its
answer is cut off past MAX_ROWS rows or MAX_BYTES bytes, it is interrupted after TIMEOUT
seconds, and the database runs in a process of its own whose memory has a hard ceiling
(PROBE_CEILING, :mod:`.probeworker`).

>>> from dpsql.parse import parse
>>> is_probe(parse("SELECT c.relname FROM pg_catalog.pg_class c", dialect="postgres"), set())
True
>>> is_probe(parse("SELECT COUNT(*) FROM pums", dialect="postgres"), {"pums"})
False
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import pyarrow as pa
from sqlglot import exp, parse_one

from dpsql.frontends.server import pgcatalog, probecheck
from dpsql.frontends.server.probecheck import MAX_SERIES, function_name
from dpsql.frontends.server.probechild import NO_MEMORY, TOO_LARGE, Limits
from dpsql.frontends.server.probeworker import ProbeCursor, ProbeFailed, ProbeWorker
from dpsql.frontends.server.sqlstates import SessionError
from dpsql.frontends.server.types import parse_array

SYSTEM_SCHEMAS = frozenset({"pg_catalog", "information_schema"})
SCHEMA = "public"
"""The schema the catalog's tables appear in, for tools."""
SERVER_VERSION = "15.0"
TIMEOUT = 5.0
"""Seconds a probe may run before it is interrupted."""
PROBE_MEMORY = 64
"""MiB the metadata database may use (its ``memory_limit``), shared by every session."""
PROBE_CEILING = 448
"""MiB of data the probe process may hold in all (``RLIMIT_DATA``: DuckDB, Python, the
threads' stacks), whatever DuckDB counts: its resident memory stays below this and its
libraries' code."""
MAX_ROWS = 100_000
MAX_BYTES = 16 * 2**20
"""The largest answer to a probe (rows, bytes): past either it is cut off with 54000."""
PROBE_THREADS = 8
"""Probes answered at once; more wait their turn (within the time limit)."""


@dataclass(frozen=True)
class Identity:
    """What the constant functions answer: who is connected, to what, and from which pid."""

    user: str
    database: str
    pid: int
    version: str


def is_probe(tree: exp.Expression, tables: set[str]) -> bool:
    """True if ``tree`` is a SELECT reading only system relations (or none) and no catalog
    table: a tool's probe, answered from the metadata database."""
    if not isinstance(tree, exp.Select | exp.Union) or any(
            w.args.get("recursive") for w in tree.find_all(exp.With)):
        return False
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    for table in tree.find_all(exp.Table):
        if isinstance(table.this, SERIES) and table.db.lower() in ("pg_catalog", ""):
            continue  # numbers only (psql's \d sends one); the time limit bounds it
        if not isinstance(table.this, exp.Identifier):
            return False  # a table function: read_csv(...), range(...)
        name, schema = table.name.lower(), table.db.lower()
        if table.catalog or name in tables:
            return False
        if schema not in SYSTEM_SCHEMAS and not (not schema and (
                name in ctes or name.startswith("pg_"))):
            return False
    return not any(isinstance(node, exp.Anonymous) and node.name.lower() in FORBIDDEN
                   for node in tree.walk())


RENAMED = {"array_upper": "array_length", "json_build_object": "json_object"}
"""PostgreSQL functions under DuckDB's name for them."""
SERIES = (exp.GenerateSeries, exp.ExplodingGenerateSeries, exp.Explode, exp.Unnest)
"""Table functions a probe may use (psql's \\d+ does): numbers and arrays, no reading."""
FORBIDDEN = frozenset({"getenv", "query", "query_table"})
"""Scalar functions that read the engine's state rather than metadata."""
SETTINGS = {"default_table_access_method": "heap", "server_version_num": "150000",
            "server_version": SERVER_VERSION, "max_index_keys": "32",
            "max_identifier_length": "63", "standard_conforming_strings": "on",
            "server_encoding": "UTF8", "client_encoding": "UTF8", "datestyle": "ISO, MDY",
            "integer_datetimes": "on", "search_path": SCHEMA}
"""What ``current_setting(name)`` answers in a probe: PostgreSQL's values that drivers read
(SQLAlchemy's reflection reads ``default_table_access_method``), never the engine's; NULL
for any other name."""


def _constant(value: object) -> Callable[[Identity], exp.Expression]:
    return lambda _: exp.convert(value)


CONSTANTS: Mapping[str, Callable[[Identity], exp.Expression]] = {
    "version": lambda who: exp.Literal.string(who.version),
    "current_database": lambda who: exp.Literal.string(who.database),
    "current_catalog": lambda who: exp.Literal.string(who.database),
    "pg_backend_pid": lambda who: exp.Literal.number(who.pid),
    "pg_get_userbyid": _constant("dpsql"),
    # The schemas searched (pgcli's search path): PostgreSQL's answer to current_schemas(true).
    "current_schemas": lambda _: exp.Array(expressions=[exp.Literal.string("pg_catalog"),
                                                        exp.Literal.string(SCHEMA)]),
    "pg_table_is_visible": _constant(True),
    "pg_type_is_visible": _constant(True),
    "pg_function_is_visible": _constant(True),
    "pg_collation_is_visible": _constant(True),
    "has_table_privilege": _constant(True),
    "has_schema_privilege": _constant(True),
    "has_database_privilege": _constant(True),
    "obj_description": _constant(None),
    "col_description": _constant(None),
    "shobj_description": _constant(None),
    "pg_encoding_to_char": _constant("UTF8"),
    "pg_is_in_recovery": _constant(False),
    "to_regtype": _constant(None),
    "to_regclass": _constant(None),
    "to_regnamespace": _constant(None),
    "pg_get_expr": _constant(None),  # defaults, checks, partitions: none exist here
    "pg_get_indexdef": _constant(None),
    "pg_get_constraintdef": _constant(None),
    "pg_get_triggerdef": _constant(None),
    "pg_get_statisticsobjdef_columns": _constant(None),
    "pg_get_partkeydef": _constant(None),
    "pg_get_function_result": _constant(None),
    "pg_get_function_arguments": _constant(None),
    "pg_get_serial_sequence": _constant(None),  # no column has a sequence
    # A set of (element, index) pairs of an index's key array: the only arrays it is
    # given are pg_index's, which is empty here, so one typed NULL pair will do.
    "_pg_expandarray": lambda _: parse_one("{'x': CAST(NULL AS INTEGER), "
                                           "'n': CAST(NULL AS INTEGER)}", dialect="duckdb"),
    "pg_relation_is_publishable": _constant(False),
    "pg_table_size": _constant(0),  # the metadata database's tables are empty
    "pg_total_relation_size": _constant(0),
    "pg_relation_size": _constant(0),
    "pg_database_size": _constant(0),
}
"""PostgreSQL functions DuckDB lacks (or answers about itself), as constants."""


def _replace(node: exp.Expression, who: Identity) -> exp.Expression:
    if isinstance(node, exp.Dot) and isinstance(node.expression, exp.Func) and \
            node.this.name.lower() in SYSTEM_SCHEMAS:
        # A replaced node's children are not visited by transform: do them here.
        return node.expression.transform(lambda inner: _replace(inner, who))
    if isinstance(node, exp.CurrentVersion):
        return exp.Literal.string(who.version)
    if isinstance(node, exp.CurrentUser | exp.SessionUser):
        return exp.Literal.string(who.user)
    if isinstance(node, exp.CurrentSchema):
        return exp.Literal.string(SCHEMA)
    if isinstance(node, exp.Table) and isinstance(node.this, SERIES):
        node.set("db", None)  # DuckDB's generate_series is not in a schema
    if isinstance(node, exp.GenerateSeries):
        return _clamped(node)
    if isinstance(node, exp.Any) and isinstance(node.this.unnest(), exp.Literal) and \
            node.this.unnest().is_string:
        return _any_of_array_text(node.this.unnest())
    if isinstance(node, exp.Table) and (moved := pgcatalog.redirect(node)) is not node:
        for join in moved.args.get("joins") or []:  # the joins it carries, not its body
            join.replace(join.transform(lambda inner: _replace(inner, who)))
        return moved
    if isinstance(node, exp.Column):
        return pgcatalog.unqualify(node)
    if isinstance(node, exp.Func) and (name := function_name(node)) in CONSTANTS:
        return CONSTANTS[name](who)
    if isinstance(node, exp.Func) and function_name(node) == "current_setting":
        return _setting(node)
    if isinstance(node, exp.Func) and function_name(node) == "format_type":
        oid, typmod = [argument.transform(lambda inner: _replace(inner, who))
                       for argument in [*_arguments(node), exp.null()][:2]]
        return pgcatalog.format_type(oid, typmod)
    if isinstance(node, exp.Cast) and (cast := _object_identifier_cast(node, who)) is not None:
        return cast
    if isinstance(node, exp.DataType) and (target := _type_name(node)) is not None:
        return exp.DataType.build(target, dialect="postgres")  # pg_catalog.int2 -> int2
    if isinstance(node, exp.Anonymous) and node.name.lower() in RENAMED:
        node.set("this", RENAMED[node.name.lower()])
    if isinstance(node, exp.Operator):
        operator = node.text("operator").lower().removeprefix("pg_catalog.")
        if operator in ("~", "!~"):
            match = exp.RegexpLike(this=node.this, expression=node.expression)
            return match if operator == "~" else exp.Not(this=match)
    return node


def _any_of_array_text(text: exp.Literal) -> exp.Any:
    """``relkind = ANY('{r,v}')``: an array written as text (pgcli's client-side binding of
    a list), which PostgreSQL reads as an array from the context, as the array of its
    elements; refused (22P02) if the text is not a one-dimensional array."""
    try:
        items = parse_array(text.this, str)
    except ValueError:
        raise SessionError("22P02", f"ANY({text.sql('postgres')[:60]}): write an array "
                           "as '{a,b}' or ARRAY['a', 'b']") from None
    return exp.Any(this=exp.Array(expressions=[exp.convert(item) for item in items]))


def _setting(call: exp.Func) -> exp.Expression:
    """``current_setting('name')`` as the constant :data:`SETTINGS` gives (NULL for a name
    not written as a literal, or not listed)."""
    arguments = _arguments(call)
    name = arguments[0] if arguments else None
    while isinstance(name, exp.Cast):
        name = name.this
    known = isinstance(name, exp.Literal) and name.is_string
    return exp.convert(SETTINGS.get(name.name.lower()) if known else None)


def _arguments(call: exp.Func) -> list[exp.Expression]:
    """A call's arguments in order (sqlglot keeps the first in ``this`` for some calls)."""
    return [call.this, *call.expressions] if isinstance(call.this, exp.Expression) \
        else list(call.expressions)


def _type_name(to: exp.DataType) -> str | None:
    """The name of an object identifier type (``regclass``) or of a type qualified by
    ``pg_catalog``, lower case; None for other types."""
    if isinstance(to.this, str):
        return to.this.lower() if to.this.lower().startswith("reg") else None
    kind = to.args.get("kind")
    if to.this == exp.DataType.Type.USERDEFINED and isinstance(kind, exp.Dot) and \
            kind.this.name.lower() == "pg_catalog":
        return kind.expression.name.lower()
    return None


def _target(to: exp.DataType) -> str:
    """A cast's target type, lower case: ``regtype``, ``text``, ``regtype[]``."""
    if isinstance(to.this, exp.DataType.Type) and to.this == exp.DataType.Type.ARRAY and \
            to.expressions:
        return _target(to.expressions[0]) + "[]"
    name = _type_name(to)
    if name is not None:
        return name
    return to.this.value.lower() if isinstance(to.this, exp.DataType.Type) else str(to.this).lower()


def _object_identifier_cast(cast: exp.Cast, who: Identity) -> exp.Expression | None:
    """A cast to or from an object identifier type (``regtype``, ``regclass``...), which
    DuckDB lacks, as DuckDB computes it; None for other casts.

    ``atttypid::regtype::text`` is the type's name, as ``format_type(atttypid, NULL)``
    (PostgreSQL prints a regtype so: pgcli lists column types this way); an array of them
    (``proargtypes::regtype[]``, pgcli's function list) stays an array of numbers: no
    catalog row here has one. ``'pg_class'::regclass`` names a system object: an OID that
    matches nothing here (no comments, no system relations to point at); ``oid::regtype``
    stays the number."""
    target, operand = _target(cast.to), cast.this
    if target in ("text", "varchar") and isinstance(operand, exp.Cast) and \
            _target(operand.to) == "regtype":
        return pgcatalog.format_type(_rewritten(operand.this, who), None)
    if not target.startswith("reg"):
        return None
    if isinstance(operand, exp.Literal) and operand.is_string and not target.endswith("[]"):
        return exp.Literal.number(0)
    return _rewritten(operand, who)


def _rewritten(node: exp.Expression, who: Identity) -> exp.Expression:
    """``node`` with its PostgreSQL-only parts replaced (a replaced node's children are not
    visited by ``transform``: a replacement that keeps some does them with this)."""
    return node.transform(lambda inner: _replace(inner, who))


def _clamped(series: exp.GenerateSeries) -> exp.GenerateSeries:
    """A series whose end is computed (``generate_series(1, array_upper(a, 1))``) counts at
    most MAX_SERIES numbers: its end becomes LEAST(end, start + MAX_SERIES) (GREATEST and
    minus when it counts down). :func:`probecheck.check` refused literal ends beyond it."""
    start, end, step = series.args["start"], series.args["end"], series.args.get("step")
    if isinstance(end, exp.Literal):
        return series
    down = isinstance(step, exp.Neg)
    reach = (exp.Sub if down else exp.Add)(this=start.copy(),
                                           expression=exp.Literal.number(MAX_SERIES))
    series.set("end", (exp.Greatest if down else exp.Least)(this=end.copy(),
                                                            expressions=[reach]))
    return series


def check(tree: exp.Expression) -> None:
    """Refuse, before it runs, a probe that calls what catalog queries need not
    (:mod:`.probecheck`); the functions replaced by constants are allowed."""
    probecheck.check(tree, replaced={*CONSTANTS, "current_setting"})


def rewrite(tree: exp.Expression, who: Identity) -> str:
    """``tree`` as DuckDB SQL, PostgreSQL-only functions replaced by constants (named as
    PostgreSQL names them: ``SELECT version()`` has a column ``version``)."""
    tree = tree.copy()
    if isinstance(tree, exp.Select):
        for column in tree.expressions:
            name = _output_name(column)
            if name:
                column.replace(exp.alias_(column.copy(), name))
    tree = tree.transform(lambda node: node.this if isinstance(node, exp.Collate) else node)
    return tree.transform(lambda node: _replace(node, who)).sql("duckdb")


def _output_name(node: exp.Expression) -> str | None:
    """The column name PostgreSQL gives an unaliased function call."""
    if isinstance(node, exp.Dot) and isinstance(node.expression, exp.Func):
        node = node.expression
    named = {exp.CurrentUser: "current_user", exp.SessionUser: "session_user",
             exp.CurrentSchema: "current_schema", exp.CurrentVersion: "version"}
    for cls, name in named.items():
        if isinstance(node, cls):
            return name
    if isinstance(node, exp.Func) and function_name(node) in {*CONSTANTS, "current_setting",
                                                             "format_type"}:
        return function_name(node)
    return None


class MetadataDatabase:
    """The empty tables of a catalog, in a locked-down in-memory DuckDB of a process of its
    own (:mod:`.probeworker`; see the module)."""

    def __init__(self, columns: Mapping[str, Mapping[str, str]]) -> None:
        statements = [f"CREATE SCHEMA {SCHEMA}", f"USE {SCHEMA}"]
        for table, types in columns.items():
            body = ", ".join(f"{_quote(c)} {t}" for c, t in types.items())
            statements.append(f"CREATE TABLE {SCHEMA}.{_quote(table)} ({body})")
        statements += ["SET enable_external_access = false", "SET lock_configuration = true"]
        self.worker = ProbeWorker(statements, [f"USE {SCHEMA}"], Limits(
            ceiling_mib=PROBE_CEILING, memory_limit_mib=PROBE_MEMORY, timeout=TIMEOUT,
            max_rows=MAX_ROWS, max_bytes=MAX_BYTES, threads=PROBE_THREADS))
        self.tables = {t.lower() for t in columns}

    def cursor(self) -> ProbeCursor:
        """A cursor for one session (interruptible on its own)."""
        return ProbeCursor(self.worker)

    def close(self) -> None:
        self.worker.close()


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def run_probe(cursor: ProbeCursor, sql: str) -> pa.Table:
    """Run a rewritten probe: interrupted after TIMEOUT seconds, cut off past MAX_ROWS rows
    or MAX_BYTES bytes or PROBE_CEILING MiB of memory (54000)."""
    try:
        return cursor.run(sql)
    except ProbeFailed as failed:
        if failed.kind == TOO_LARGE:
            raise SessionError("54000", f"the catalog query's answer {failed}: narrow it "
                               "with WHERE or LIMIT") from None
        if failed.kind == NO_MEMORY:
            raise SessionError("54000", "the catalog query needed more memory than catalog "
                               f"queries have ({PROBE_CEILING} MiB in all): narrow it") from None
        raise


def catalog_columns(tables: Iterable) -> dict[str, dict[str, str]]:
    """Column types per table, from dpsql's catalog entries (``TableInfo``)."""
    return {info.name: dict(info.columns) for info in tables}

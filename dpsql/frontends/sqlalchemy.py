"""A SQLAlchemy dialect: ``create_engine("dpsql:///...")`` over dpsql's PEP 249 interface.

The URL mirrors the command line (``dpsql [DATABASE] --catalog ... --budget-epsilon ...``)::

    dpsql:///:memory:?catalog=catalog.toml&budget_epsilon=3&epsilon=0.5
    dpsql:///clinic.duckdb?catalog=catalog.toml&ledger=ledger.db&analyst=ann

The path is the DuckDB database (``dpsql://`` or ``dpsql:///:memory:``: in memory; three
slashes then a relative path, four for an absolute one). The query string holds the options
(:data:`PARAMETERS`). The tables and their privacy metadata come from ``catalog``, or are
registered on the dpsql connection itself: ``engine.raw_connection().driver_connection``.

One engine holds exactly one dpsql connection (a static pool), so every SQLAlchemy
connection of that engine spends from one budget. An in-memory budget lives as long as
the engine (until ``engine.dispose()``); a ``ledger`` file keeps it across engines and
processes. dpsql never writes, so commit and rollback do nothing.

Installed with ``pip install 'dpsql[sqlalchemy]'``; the ``dpsql`` name is registered
through the ``sqlalchemy.dialects`` entry point.

>>> import sqlalchemy as sa
>>> url = sa.make_url("dpsql:///:memory:?budget_epsilon=2&epsilon=0.5&seed=0")
>>> database, options = DpsqlDialect().create_connect_args(url)
>>> database, options["default_epsilon"], str(options["budget"]), options["seed"]
([':memory:'], 0.5, 'ε=2, δ=1e-06', 0)
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from sqlalchemy.engine import URL, default
from sqlalchemy.exc import ArgumentError
from sqlalchemy.pool import StaticPool

from dpsql.accounting import Budget
from dpsql.connection import DEFAULT_BUDGET
from dpsql.listing import column_notes

PARAMETERS = {
    "catalog": "TOML file declaring the private and public tables",
    "budget_epsilon": "total ε budget (default 1, or what the ledger file holds)",
    "budget_rho": "total ρ budget instead, for zCDP accounting",
    "budget_delta": "total δ budget (default 1e-6)",
    "epsilon": "ε of each query (default: a tenth of the ε the budget has left)",
    "delta": "δ of each query (the connection's default_delta)",
    "ledger": "durable privacy ledger file shared by every process",
    "analyst": "whose budget to spend in the ledger (default 'default')",
    "seed": "fixed noise seed: reproducible but NOT private (tests only)",
}
"""The URL's query parameters and what each sets."""


class DpsqlDialect(default.DefaultDialect):
    """``dpsql://``: SQL in, noisy rows out; ``text(...)`` with ``:name`` parameters."""

    name = "dpsql"
    driver = "dpsql"
    paramstyle = "qmark"
    poolclass = StaticPool
    supports_statement_cache = True
    supports_alter = False
    supports_sequences = False
    supports_native_boolean = True

    @classmethod
    def import_dbapi(cls) -> ModuleType:
        import dpsql

        return dpsql

    def create_connect_args(self, url: URL) -> tuple[list[Any], dict[str, Any]]:
        """``dpsql.connect(database, **options)`` arguments for ``url``."""
        if url.host or url.port or url.username or url.password:
            raise ArgumentError(f"{url}: dpsql runs in this process, there is no server: "
                                "write dpsql:///:memory: or dpsql:///path/to/database.duckdb")
        database = url.database or ":memory:"
        if database.endswith(".toml"):
            raise ArgumentError(f"{url}: the path is the DuckDB database; pass the catalog as "
                                f"a parameter: dpsql:///:memory:?catalog={database}")
        options = dict(url.query)
        unknown = sorted(set(options) - set(PARAMETERS))
        if unknown:
            raise ArgumentError(f"unknown dpsql URL parameter(s) {', '.join(unknown)}; "
                                f"known: {', '.join(PARAMETERS)}")
        return [database], _connect_options(options)

    def do_rollback(self, dbapi_connection: Any) -> None:
        """dpsql never writes: there is nothing to roll back (spending is final)."""

    def do_ping(self, dbapi_connection: Any) -> bool:
        """In-process: no server to lose (``SELECT 1`` reads no private table, so is refused)."""
        return True

    def _get_server_version_info(self, connection: Any) -> tuple[int, ...]:
        import dpsql

        return tuple(int(part) for part in dpsql.__version__.split("."))

    def get_table_names(self, connection: Any, schema: str | None = None,
                        **kw: Any) -> list[str]:
        """The registered tables (``inspect(engine).get_table_names()``, ``%sqlcmd tables``)."""
        return [info.name for info in _catalog(connection)]

    def has_table(self, connection: Any, table_name: str, schema: str | None = None,
                  **kw: Any) -> bool:
        return table_name.lower() in {info.name.lower() for info in _catalog(connection)}

    def get_columns(self, connection: Any, table_name: str, schema: str | None = None,
                    **kw: Any) -> list[dict[str, Any]]:
        """Each column's name and type from the catalog's public metadata (no data read);
        what dpsql knows of it (privacy unit, bounds, public key) as its comment.

        ``pd.read_sql_table`` reflects a table this way and then asks for every row, which
        dpsql refuses (a ``ProgrammingError`` that says why and gives an aggregate query).
        """
        from sqlalchemy.exc import NoSuchTableError

        from dpsql.errors import CatalogError

        try:
            info = _catalog(connection).get(table_name)
        except CatalogError:
            raise NoSuchTableError(table_name) from None
        return [{"name": name, "type": _sqlalchemy_type(sql_type), "nullable": True,
                 "default": None, "comment": "; ".join(column_notes(info, name)) or None}
                for name, sql_type in info.columns.items()]

    def get_pk_constraint(self, connection: Any, table_name: str, schema: str | None = None,
                          **kw: Any) -> dict[str, Any]:
        return {"constrained_columns": [], "name": None}

    def get_foreign_keys(self, connection: Any, table_name: str, schema: str | None = None,
                         **kw: Any) -> list[dict[str, Any]]:
        return []

    def get_indexes(self, connection: Any, table_name: str, schema: str | None = None,
                    **kw: Any) -> list[dict[str, Any]]:
        return []

    def get_view_names(self, connection: Any, schema: str | None = None,
                       **kw: Any) -> list[str]:
        return []

    def get_schema_names(self, connection: Any, **kw: Any) -> list[str]:
        """One namespace: the catalog's tables (JupySQL's ``%sqlplot`` asks first)."""
        return [DEFAULT_SCHEMA]

    def _get_default_schema_name(self, connection: Any) -> str:
        return DEFAULT_SCHEMA


DEFAULT_SCHEMA = "main"
"""The name of the catalog's one namespace, as DuckDB names its default schema."""

_OPTIONS = {"catalog": ("catalog", str), "ledger": ("ledger", str),
            "analyst": ("analyst", str), "epsilon": ("default_epsilon", float),
            "delta": ("default_delta", float), "seed": ("seed", int)}
"""URL parameters passed on to ``dpsql.connect`` as the named option, of that type."""


def _connect_options(query: dict[str, str | tuple[str, ...]]) -> dict[str, Any]:
    """``dpsql.connect`` options from the URL's query parameters (see :data:`PARAMETERS`)."""
    text = {name: _single(name, value) for name, value in query.items()}
    options = {option: _value(name, text[name], kind)
               for name, (option, kind) in _OPTIONS.items() if name in text}
    total = {name: _value(name, text[name], float)
             for name in ("budget_epsilon", "budget_rho", "budget_delta") if name in text}
    if total or "ledger" not in text:  # else the budget stored in the ledger file applies
        rho = total.get("budget_rho")
        epsilon = total.get("budget_epsilon", DEFAULT_BUDGET.epsilon if rho is None else None)
        options["budget"] = Budget(epsilon=epsilon, rho=rho,
                                   delta=total.get("budget_delta", DEFAULT_BUDGET.delta))
    return options


def _single(name: str, value: str | tuple[str, ...]) -> str:
    if isinstance(value, tuple):
        raise ArgumentError(f"dpsql URL parameter {name} is given {len(value)} times; "
                            "give it once")
    return value


def _value(name: str, text: str, kind: type) -> Any:
    try:
        return kind(text)
    except ValueError:
        what, example = ("an integer", "0") if kind is int else ("a number", "0.5")
        raise ArgumentError(f"dpsql URL parameter {name}={text!r} is not {what}, "
                            f"e.g. {name}={example}") from None


def _sqlalchemy_type(sql_type: str) -> Any:
    """The SQLAlchemy type of a catalog (DuckDB) type name; NullType when there is none.

    >>> _sqlalchemy_type("BIGINT"), _sqlalchemy_type("DECIMAL(10, 2)"), _sqlalchemy_type("MAP")
    (BIGINT(), DECIMAL(precision=10, scale=2), NullType())
    """
    import sqlalchemy.types as types
    from sqlglot import exp

    try:
        parsed = exp.DataType.build(sql_type, dialect="duckdb")
    except Exception:
        return types.NullType()
    found = {exp.DataType.Type.TINYINT: types.SMALLINT, exp.DataType.Type.SMALLINT: types.SMALLINT,
             exp.DataType.Type.INT: types.INTEGER, exp.DataType.Type.BIGINT: types.BIGINT,
             exp.DataType.Type.FLOAT: types.FLOAT, exp.DataType.Type.DOUBLE: types.DOUBLE,
             exp.DataType.Type.VARCHAR: types.VARCHAR, exp.DataType.Type.TEXT: types.TEXT,
             exp.DataType.Type.BOOLEAN: types.BOOLEAN, exp.DataType.Type.DATE: types.DATE,
             exp.DataType.Type.TIMESTAMP: types.TIMESTAMP, exp.DataType.Type.TIME: types.TIME,
             }.get(parsed.this)
    if parsed.this == exp.DataType.Type.DECIMAL:
        precision, scale = ([int(e.name) for e in parsed.expressions] + [18, 3])[:2]
        return types.DECIMAL(precision=precision, scale=scale)
    return found() if found is not None else types.NullType()


def _catalog(connection: Any):
    """The catalog of the dpsql connection behind a SQLAlchemy connection."""
    return connection.connection.driver_connection.catalog

"""What dpsql knows about tables: who the privacy unit is and what is bounded.

The catalog holds metadata only; the connection loads the data into the
backend. Metadata comes from ``register(...)`` calls or from a TOML file.

>>> cat = Catalog()
>>> info = cat.add(TableInfo.private("visits", columns={"pid": "BIGINT", "cost": "DOUBLE"},
...                                  privacy_unit="pid", bounds={"cost": (0, 1000)}))
>>> cat.get("VISITS").bounds["cost"]
(0.0, 1000.0)
"""

from __future__ import annotations

import datetime as dt
import difflib
import math
import reprlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dpsql.errors import CatalogError
from dpsql.names import is_reserved, reserved_message
from dpsql.plan import check_value_bounds

NUMERIC_TYPES = ("TINYINT", "SMALLINT", "INT", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
                 "UINTEGER", "UBIGINT", "FLOAT", "DOUBLE", "REAL", "DECIMAL")
FLOAT_TYPES = ("FLOAT", "DOUBLE", "REAL")
INTEGER_TYPES = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT",
                 "UINTEGER", "INT", "INT4", "INT8", "INT2")
STRING_TYPES = ("VARCHAR", "TEXT", "STRING", "CHAR", "BPCHAR", "UUID")
TEMPORAL_TYPES = ("DATE", "TIMESTAMP", "TIME", "INTERVAL")


@dataclass(frozen=True)
class WorkLimits:
    """What one row may cost, set by the data owner (``dpsql.expr.size`` applies them).

    ``max_text_value``: the most characters any text value of a row expression may reach;
    ``max_row_work``: the most steps (about one character read or written each) a query's
    row expressions may take on one row; ``default_text_length``: the width of a private
    text column whose ``max_text_length`` is not declared (longer values are cut to it).

    >>> WorkLimits(max_text_value=0)
    Traceback (most recent call last):
    ...
    dpsql.errors.CatalogError: max_text_value=0: must be a positive integer...
    """

    max_text_value: int = 65_536
    max_row_work: int = 1 << 17
    default_text_length: int = 1024

    def __post_init__(self) -> None:
        for name in ("max_text_value", "max_row_work", "default_text_length"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 2**40:
                raise CatalogError(f"{name}={value!r}: must be a positive integer below 2**40 "
                                   f"(the default is {getattr(WorkLimits, name)})")


TEXT_WIDTHS = {"UUID": 36}
"""Text types whose width their type gives."""


def text_width(sql_type: str) -> int | None:
    """The most characters a text column of this type holds: n for ``VARCHAR(n)`` (dpsql
    cuts every value read to it), 36 for a UUID; None for text without a width (the
    privacy unit, never cut) and for other types.

    >>> text_width("VARCHAR(80)"), text_width("UUID"), text_width("VARCHAR"), text_width("INT")
    (80, 36, None, None)
    """
    name = sql_type.upper().replace(" ", "")
    if name in TEXT_WIDTHS:
        return TEXT_WIDTHS[name]
    head, _, rest = name.partition("(")
    if column_class(head) != "string" or not rest.rstrip(")").isdigit():
        return None
    return int(rest.rstrip(")"))


def with_width(sql_type: str, width: int) -> str:
    """A text type as ``VARCHAR(width)`` (a UUID keeps its own); other types unchanged.

    >>> with_width("TEXT", 80), with_width("VARCHAR(12)", 5), with_width("BIGINT", 5)
    ('VARCHAR(80)', 'VARCHAR(5)', 'BIGINT')
    """
    if column_class(sql_type) != "string" or sql_type.upper() in TEXT_WIDTHS:
        return sql_type
    return f"VARCHAR({width})"


def text_widths(columns: Mapping[str, str], declared: Mapping[str, Any] | None, *,
                unit: str | None, default: int, table: str) -> dict[str, str]:
    """``columns`` with every text column but the privacy unit given its width: the
    declared ``max_text_length`` or ``default``.

    >>> text_widths({"pid": "VARCHAR", "name": "VARCHAR", "note": "TEXT", "n": "INT"},
    ...             {"note": 5000}, unit="pid", default=1024, table="t")
    {'pid': 'VARCHAR', 'name': 'VARCHAR(1024)', 'note': 'VARCHAR(5000)', 'n': 'INT'}
    """
    texts = sorted(c for c, t in columns.items() if c != unit and column_class(t) == "string")
    widths = {}
    for column, width in (declared or {}).items():
        name = column.lower()
        if name not in texts:
            raise CatalogError(
                f"max_text_length[{column!r}] of table {table!r}: give widths of text columns "
                f"({', '.join(texts) or 'it has none'}); the privacy unit is never cut")
        if isinstance(width, bool) or not isinstance(width, int) or not 0 < width < 2**40:
            raise CatalogError(f"max_text_length[{column!r}]={width!r} of table {table!r}: "
                               "must be a positive integer (the most characters a value has)")
        widths[name] = width
    return {c: t if c == unit else with_width(t, widths.get(c, text_width(t) or default))
            for c, t in columns.items()}


def type_name(sql_type: str) -> str:
    """An engine type's name without its parameters, upper-case.

    >>> type_name("varchar(1024)"), type_name("DECIMAL (10, 2)"), type_name("BIGINT")
    ('VARCHAR', 'DECIMAL', 'BIGINT')
    """
    return sql_type.upper().split("(")[0].strip()


def column_class(sql_type: str) -> str:
    """numeric, string, boolean, temporal or other, from an engine type name.

    >>> column_class("DECIMAL(10,2)"), column_class("VARCHAR"), column_class("INTEGER[]")
    ('numeric', 'string', 'other')
    >>> column_class("INTERVAL"), column_class("INT8")
    ('temporal', 'numeric')
    """
    name = sql_type.upper()
    if name.endswith("]") or name.startswith(("STRUCT", "MAP", "UNION")):
        return "other"
    if name.startswith("INTERVAL"):  # before numeric: it starts like INT
        return "temporal"
    if name.startswith(NUMERIC_TYPES):
        return "numeric"
    if name.startswith(STRING_TYPES):
        return "string"
    if name.startswith("BOOL"):
        return "boolean"
    if name.startswith(TEMPORAL_TYPES):
        return "temporal"
    return "other"


def key_values(column: str, sql_type: str, values: Iterable[Any], table: str
               ) -> tuple[Any, ...]:
    """Public key values, checked against the column's type and each listed once: a list
    at registration, or a public table's values when a query reads them.

    A value listed twice (``["a", "a"]``, or ``[1, 1.0]`` for a number) would be released
    twice with fresh noise while the plan counts it once; duplicates are dropped, by value,
    keeping the first. Numbers must be finite: NaN equals nothing, ±inf nothing useful.

    >>> key_values("k", "INTEGER", [1, 1.0, 2, 2**60 + 1, 2**60 + 3], "t")
    (1, 2, 1152921504606846977, 1152921504606846979)

    A number is not a text column's value: the engine would compare the two by casting
    every private text to a number, and fail on the rows that are not one. Dates are
    ``datetime.date``, timestamps naive ``datetime.datetime``, and booleans ``bool``: a
    text such as ``"2024-01-31"`` would be cast on the rows too.

    >>> key_values("k", "VARCHAR", [1, 2], "t")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    dpsql.errors.CatalogError: public_keys['k'] of table 't': [1, 2] are not string like ...
    >>> import datetime as dt
    >>> key_values("d", "DATE", [dt.date(2024, 1, 31)], "t")
    (datetime.date(2024, 1, 31),)
    >>> key_values("d", "DATE", ["2024-01-31"], "t")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    dpsql.errors.CatalogError: public_keys['d'] of table 't': ['2024-01-31'] are not date like ...
    """
    try:
        values = tuple(values)
        hash(values)
    except TypeError:
        raise CatalogError(f"public_keys[{column!r}] of table {table!r}: give a list of "
                           "values, e.g. [\"a\", \"b\"], or a public table's name") from None
    kind = key_class(sql_type)
    if kind is None:
        raise CatalogError(
            f"public_keys[{column!r}] of table {table!r}: a {sql_type} column has no public "
            "values dpsql can list; public keys may be numbers, text, booleans, DATE or "
            "TIMESTAMP. Leave this key private (its groups are then selected privately)")
    wrong = [v for v in values if v is not None and not KEY_VALUE_CHECKS[kind](v)]
    if wrong:
        raise CatalogError(f"public_keys[{column!r}] of table {table!r}: {wrong[:3]!r} are not "
                           f"{kind} like the column ({sql_type}), or not finite; list values "
                           "of the column's own type (a public table's column too)")
    width = text_width(sql_type)
    long = [v for v in values if isinstance(v, str) and width is not None and len(v) > width]
    if long:
        raise CatalogError(f"public_keys[{column!r}] of table {table!r}: {reprlib.repr(long[0])} "
                           f"is longer than the column's width, {width} characters: values are "
                           "cut to it when read, so it would never match. Declare "
                           f"max_text_length={{{column!r}: {len(max(long, key=len))}}}")
    seen: dict[Any, Any] = {}
    for value in values:  # Python's equality of numbers is exact: 1 == 1.0, 2**60 != 2**60 + 1
        seen.setdefault(value, value)
    return tuple(seen.values())


KEY_VALUE_CHECKS = {
    "numeric": lambda v: (isinstance(v, int | float) and not isinstance(v, bool)
                          and math.isfinite(v)),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "date": lambda v: isinstance(v, dt.date) and not isinstance(v, dt.datetime),
    "timestamp": lambda v: isinstance(v, dt.datetime) and v.tzinfo is None,
}
"""What a public key value of each ``key_class`` must be (a Python value of its type)."""


def key_class(sql_type: str) -> str | None:
    """The class of public key values a column of this type takes (``KEY_VALUE_CHECKS``),
    or None where dpsql lists none (times of day, zoned or sub-microsecond timestamps,
    intervals, nested types).

    >>> key_class("DECIMAL(10,2)"), key_class("DATE"), key_class("TIMESTAMP")
    ('numeric', 'date', 'timestamp')
    >>> key_class("ENUM('x', 'y')")
    'string'
    >>> key_class("TIMESTAMP WITH TIME ZONE"), key_class("TIME"), key_class("INTEGER[]")
    (None, None, None)
    """
    kind = column_class(sql_type)
    if kind in ("numeric", "string", "boolean"):
        return kind
    if sql_type.upper().startswith("ENUM"):  # its members are text
        return "string"
    return {"DATE": "date", "TIMESTAMP": "timestamp"}.get(sql_type.upper())


def _positive_int(name: str, value: Any, table: str) -> int | None:
    if value is None or (value == AUTO and name in AUTO_LIMITS):
        return None
    if value == AUTO:
        raise CatalogError(
            f"{name}=\"auto\" for table {table!r}: this limit depends on the column each "
            "query groups by, so dpsql cannot choose it once for all queries; ask "
            f"con.suggest_bounds({table!r}, group_by=..., epsilon=..., delta=...) and declare "
            "the limit it suggests (or max_rows_per_unit=\"auto\")")
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise CatalogError(f"{name}={value!r} for table {table!r}: must be a positive integer")
    return value


AUTO = "auto"
"""``bounds={"income": "auto"}``: dpsql estimates the bounds privately when a query first
needs them (``dpsql.connection.Connection.estimate_bounds``)."""
AUTO_LIMITS = ("max_rows_per_unit",)
"""Contribution limits that may be ``"auto"`` (``Connection.estimate_limits``): the ones
that do not depend on a query's GROUP BY."""


def not_null_columns(names: Iterable[str], columns: Mapping[str, str], table: str
                     ) -> frozenset[str]:
    """The columns declared to hold no NULL, lower case.

    A public fact about the schema, like a column's type; like bounds it is enforced, not
    trusted: a NULL read anyway counts as a value (COUNT(x) is COUNT(*)) and adds the
    middle of the column's bounds to SUM and AVG (docs/mechanisms.md §12).

    >>> sorted(not_null_columns(["Age"], {"age": "INT", "pid": "INT"}, "t"))
    ['age']
    >>> not_null_columns(["wage"], {"age": "INT"}, "t")
    Traceback (most recent call last):
    dpsql.errors.CatalogError: not_null names 'wage', not a column of 't'; columns are ['age']
    """
    if isinstance(names, str):
        names = [names]
    declared = frozenset(str(n).lower() for n in names)
    for name in sorted(declared - set(columns)):
        raise CatalogError(f"not_null names {name!r}, not a column of {table!r}; "
                           f"columns are {sorted(columns)}")
    return declared


def _bounds(bounds: Mapping[str, Any] | None, columns: Mapping[str, str], table: str
            ) -> tuple[dict[str, tuple[float, float]], tuple[str, ...]]:
    """Declared value bounds by column, and the columns whose bounds are ``"auto"``.

    Bounds must be numbers dpsql can compute with (``check_value_bounds``: finite,
    lo <= hi, each 0 or between 1e-100 and 1e100 in size), on numeric columns.
    """
    result, auto = {}, []
    for col, pair in (bounds or {}).items():
        name = col.lower()
        if name not in columns:
            raise CatalogError(f"bounds for unknown column {col!r} of table {table!r}; "
                               f"columns are {sorted(columns)}")
        if not columns[name].upper().startswith(NUMERIC_TYPES):
            raise CatalogError(f"bounds[{col!r}]: column has type {columns[name]}, not numeric")
        if isinstance(pair, str) and pair.lower() == AUTO:
            auto.append(name)
            continue
        try:
            # Text and booleans are refused, not converted: ("0", "100") or (True, 5) is a
            # mistake that float() would silently turn into bounds.
            if isinstance(pair, str) or any(isinstance(v, str | bool) for v in pair):
                raise TypeError
            lo, hi = (float(v) for v in pair)
        except (TypeError, ValueError, OverflowError):
            raise CatalogError(
                f"bounds[{col!r}]={reprlib.repr(pair)}: give a pair (lo, hi) of finite "
                "numbers (not text or booleans), or \"auto\" to have dpsql estimate them "
                "privately") from None
        result[name] = check_value_bounds(lo, hi, f"bounds[{col!r}] of table {table!r}",
                                          error=CatalogError)
    return result, tuple(auto)


@dataclass(frozen=True)
class PublicColumn:
    """A public key domain read from a column of a public table (its distinct values)."""

    table: str
    column: str


@dataclass(frozen=True)
class TableInfo:
    """Metadata of one registered table.

    ``privacy_unit`` is the column identifying a person; None means row-level
    privacy (every row is its own unit). ``public`` tables hold no private data.
    ``public_keys`` maps a column to its public values, or to the name of a
    public table whose column of the same name lists them.
    """

    name: str
    columns: Mapping[str, str]
    privacy_unit: str | None = None
    public: bool = False
    bounds: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    max_groups_per_unit: int | None = None
    max_rows_per_group: int | None = None
    max_rows_per_unit: int | None = None
    public_keys: Mapping[str, tuple[Any, ...] | str | PublicColumn] = field(
        default_factory=dict)
    auto_bounds: tuple[str, ...] = ()
    """Columns declared ``bounds="auto"`` whose bounds are not estimated yet."""
    auto_limits: tuple[str, ...] = ()
    """Limits declared ``"auto"`` (``AUTO_LIMITS``) that are not estimated yet."""
    not_null: frozenset[str] = frozenset()
    """Columns declared to hold no NULL (``not_null_columns``): COUNT(x) of one is COUNT(*)."""
    rows_for: Mapping[str, int] = field(default_factory=dict)
    """Columns whose aggregates keep fewer rows per unit and group than the table's limit
    (column → rows): chosen with the column's bounds when ``max_rows_per_unit="auto"`` is
    estimated (``owner.estimate_limits``). Not declared; a joined or derived source has none."""

    @classmethod
    def private(cls, name: str, *, columns: Mapping[str, str], privacy_unit: str | None = None,
                row_privacy: bool = False, bounds: Mapping[str, Any] | None = None,
                max_groups_per_unit: int | None = None, max_rows_per_group: int | None = None,
                max_rows_per_unit: int | str | None = None,
                public_keys: Mapping[str, Iterable[Any] | str] | None = None,
                max_text_length: Mapping[str, int] | None = None,
                default_text_length: int = WorkLimits.default_text_length,
                not_null: Iterable[str] = ()) -> TableInfo:
        """Validate registration options and build the metadata of a private table.

        Text columns get their width (``text_widths``): ``max_text_length`` declares the
        most characters of a column's values (longer ones are cut to it when read),
        ``default_text_length`` applies to the others.
        """
        columns = {c.lower(): t for c, t in columns.items()}
        if (privacy_unit is None) == (not row_privacy):
            raise CatalogError(
                f"table {name!r}: say who is protected: privacy_unit='<person id column>' "
                "for user-level privacy, or row_privacy=True if every row is a different person")
        unit = None if privacy_unit is None else privacy_unit.lower()
        if unit is not None and unit not in columns:
            raise CatalogError(f"privacy_unit {privacy_unit!r} is not a column of {name!r}; "
                               f"columns are {sorted(columns)}")
        columns = text_widths(columns, max_text_length, unit=unit, default=default_text_length,
                              table=name)
        keys = {}
        for col, values in (public_keys or {}).items():
            if col.lower() not in columns:
                raise CatalogError(f"public_keys for unknown column {col!r} of table {name!r}")
            if col.lower() == unit:
                raise CatalogError(f"public_keys cannot list the privacy unit {col!r}")
            keys[col.lower()] = values if isinstance(values, str) else key_values(
                col, columns[col.lower()], values, name)
        declared, auto = _bounds(bounds, columns, name)
        return cls(
            name=name, columns=columns, privacy_unit=unit, bounds=declared, auto_bounds=auto,
            max_groups_per_unit=_positive_int("max_groups_per_unit", max_groups_per_unit, name),
            max_rows_per_group=_positive_int("max_rows_per_group", max_rows_per_group, name),
            max_rows_per_unit=_positive_int("max_rows_per_unit", max_rows_per_unit, name),
            public_keys=keys, not_null=not_null_columns(not_null, columns, name),
            auto_limits=tuple(limit for limit, value in (
                ("max_rows_per_unit", max_rows_per_unit),) if value == AUTO and unit is not None),
        )

    @property
    def row_level(self) -> bool:
        return self.privacy_unit is None and not self.public


class Catalog:
    """Case-insensitive registry of tables."""

    def __init__(self, limits: WorkLimits | None = None) -> None:
        self._tables: dict[str, TableInfo] = {}
        self.version = 0
        """Bumped on every change, so cached plans know when they are stale."""
        self.limits = limits or WorkLimits()
        """What one row may cost (``dpsql.expr.size``): the data owner's, for every query."""

    def add(self, info: TableInfo) -> TableInfo:
        """Register ``info`` (replacing a table of the same name); reserved names refused."""
        for name, what in ((info.name, "table"), *((c, f"column of {info.name!r}")
                                                   for c in info.columns)):
            if is_reserved(name):
                raise CatalogError(reserved_message(name, what))
        self._tables[info.name.lower()] = info
        self.version += 1
        return info

    def get(self, name: str) -> TableInfo:
        try:
            return self._tables[name.lower()]
        except KeyError:
            known = ", ".join(sorted(self._tables)) or "none yet"
            raise CatalogError(
                f"table {name!r} is not registered with dpsql (registered: {known}); "
                "register it with con.register(name, source, privacy_unit=...) "
                "or con.register_public(name, source)") from None

    def __contains__(self, name: str) -> bool:
        return name.lower() in self._tables

    def __iter__(self):
        return iter(self._tables.values())


@dataclass(frozen=True)
class TomlTable:
    """One table entry of a TOML catalog: where the data is and its options."""

    name: str
    source: str
    public: bool
    options: Mapping[str, Any]


@dataclass(frozen=True)
class CatalogFile:
    """A TOML catalog: its tables, and the total budget it declares (empty if none)."""

    tables: tuple[TomlTable, ...]
    budget: Mapping[str, Any]
    limits: Mapping[str, Any] = field(default_factory=dict)
    """``[limits]``: the data owner's ``WorkLimits``."""
    engine: Mapping[str, Any] = field(default_factory=dict)
    """``[engine]``: which engine runs the bounded queries (``name``: ``"duckdb"`` or
    ``"spark"``) and, for Spark, the ``master`` URL and ``config`` of the session dpsql
    starts (checked by :func:`engine_section`)."""


BUDGET_KEYS = ("epsilon", "delta", "rho")
LIMIT_KEYS = ("max_text_value", "max_row_work", "default_text_length")
ENGINE_KEYS = ("name", "master", "config")
ENGINES = ("duckdb", "spark")


def read_toml(path: str | Path) -> CatalogFile:
    """Read a TOML catalog; relative sources resolve against the file's folder.

    Format::

        [budget]                       # optional: the total budget (or rho = ... for zCDP)
        epsilon = 2.0
        delta = 1e-6

        [limits]                       # optional: what one row may cost (WorkLimits)
        default_text_length = 256

        [engine]                       # optional: DuckDB (the default) or Spark
        name = "spark"
        master = "spark://head:7077"   # left out: spark-submit's --master, or local
        config = { "spark.executor.memory" = "8g" }

        [tables.visits]
        source = "visits.parquet"
        privacy_unit = "patient_id"
        bounds = { cost = [0, 1000] }
        max_groups_per_unit = 4

        [public.specialties]
        source = "specialties.csv"
    """
    import tomllib  # only for a catalog file: docs/benchmarks.md, "Start-up"

    path = Path(path)
    try:
        doc = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as err:
        raise CatalogError(f"cannot read catalog {str(path)!r}: {err}") from None
    unknown = set(doc) - {"tables", "public", "budget", "limits", "engine"}
    if unknown:
        raise CatalogError(f"catalog {str(path)!r}: unknown sections {sorted(unknown)}; "
                           "use [tables.NAME] for private and [public.NAME] for public "
                           "tables, [budget] for the total budget, [limits] for what one "
                           "row may cost and [engine] for the engine that runs the queries")
    return CatalogFile(tables=tuple(_toml_tables(doc, path)),
                       budget=_toml_section(doc.get("budget", {}), path, "budget", BUDGET_KEYS),
                       limits=_toml_section(doc.get("limits", {}), path, "limits", LIMIT_KEYS),
                       engine=engine_section(_toml_section(doc.get("engine", {}), path,
                                                           "engine", ENGINE_KEYS), path))


def engine_section(section: Mapping[str, Any], path: str | Path) -> Mapping[str, Any]:
    """The ``[engine]`` section's values checked: a known ``name``; ``master`` (text) and
    ``config`` (a table of Spark settings, values as text, numbers or booleans) for Spark.

    >>> engine_section({"name": "spark", "config": {"spark.sql.shuffle.partitions": 8}}, "c")
    {'name': 'spark', 'config': {'spark.sql.shuffle.partitions': '8'}}
    >>> engine_section({"master": "local[2]"}, "c.toml")
    Traceback (most recent call last):
    ...
    dpsql.errors.CatalogError: catalog 'c.toml', [engine]: master = ... is a setting of Spark...
    """
    where = f"catalog {str(path)!r}, [engine]"
    name = section.get("name", "duckdb")
    if name not in ENGINES:
        raise CatalogError(f"{where}: name = {name!r} is not an engine dpsql runs on; write "
                           'name = "duckdb" (the default) or name = "spark"')
    checked: dict[str, Any] = {"name": name}
    for key in ("master", "config"):
        if key in section and name != "spark":
            raise CatalogError(f'{where}: {key} = ... is a setting of Spark: add name = "spark"')
    if "master" in section:
        if not isinstance(section["master"], str) or not section["master"]:
            raise CatalogError(f"{where}: master must be Spark's master URL as text, such as "
                               '"spark://host:7077", "yarn" or "local[2]"')
        checked["master"] = section["master"]
    if "config" in section:
        config = section["config"]
        if not isinstance(config, dict) or not all(
                isinstance(v, str | int | float) for v in config.values()):
            raise CatalogError(f"{where}: config must be a table of Spark settings, such as "
                               'config = { "spark.executor.memory" = "8g" }')
        checked["config"] = {key: str(v).lower() if isinstance(v, bool) else str(v)
                             for key, v in config.items()}
    return checked


def _toml_section(section: Any, path: Path, name: str, keys: tuple[str, ...]
                  ) -> Mapping[str, Any]:
    """The [budget] or [limits] section's keys, checked by name (``Budget`` and
    ``WorkLimits`` check the values)."""
    if not isinstance(section, dict):
        raise CatalogError(f"catalog {str(path)!r}: {name} must be a section, [{name}], with "
                           f"keys among {', '.join(keys)}")
    for key in section:
        if key not in keys:
            close = difflib.get_close_matches(key, keys, n=1)
            hint = f"did you mean `{close[0]}`? " if close else ""
            raise CatalogError(f"catalog {str(path)!r}, [{name}]: unknown key `{key}`; "
                               f"{hint}the keys are {', '.join(keys)}")
    return dict(section)


def _toml_tables(doc: Mapping[str, Any], path: Path) -> list[TomlTable]:
    entries = []
    for section, public in (("tables", False), ("public", True)):
        for name, spec in doc.get(section, {}).items():
            spec = dict(spec)
            if "source" not in spec:
                raise CatalogError(f"catalog entry [{section}.{name}] needs source = \"...\"")
            source = str(spec.pop("source"))
            candidate = path.parent / source
            if not Path(source).is_absolute() and candidate.exists():
                source = str(candidate)
            entries.append(TomlTable(name=name, source=source, public=public, options=spec))
    return entries

"""Adversarial databases for the fuzzer, and their neighbours (one privacy unit removed).

Four tables, always with the same columns (the query generator knows them):

- ``t``, private, unit ``pid``: every column type the analysis treats differently —
  VARCHAR keys and odd strings, INTEGER, BIGINT, HUGEINT, DECIMAL(38, 6) and DOUBLE at
  their limits (NULL, NaN, ±inf, ±1e308, ±2⁶³, ±2¹²⁷), DATE and TIMESTAMP at and beyond
  the ends of DuckDB's range (and its ±infinity), TIME up to 24:00:00, BOOLEAN;
- ``u``, private, the same units: joined to ``t`` on ``pid``; its ``a_pid`` column is
  named like a join renaming;
- ``r``, private with row-level privacy (each row its own unit);
- ``pub``, public: a lookup joined on ``k`` and the public key domain of ``t.k``.

``t.x`` and ``t.h`` are declared NOT NULL and hold NULLs anyway (``NOT_NULL``).

Units have very different numbers of rows (none to a dozen per table) and touch few or
many groups; some rows of ``t`` have no unit at all. Values are usual ones from small pools
(so that units share groups) or hostile ones, the extremes of each type; now and then a
whole column holds one hostile value.

``spark=True`` stores HUGEINT, which Spark lacks, as DECIMAL(38, 0) in both engines (and
so leaves out its values beyond 38 digits); every other value stays, DuckDB's ±infinity
dates and timestamps and TIME '24:00:00' included: Arrow hands them to Spark as the
numbers they are (day 2³¹ − 1 is the date 5881580-07-11 there, microsecond 2⁶³ − 1 a
timestamp in 294247), and every engine must answer alike on them (see ``test_fuzz_spark``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pyarrow as pa
from hypothesis import strategies as st

DAY_US = 86_400_000_000
YEAR_1, YEAR_9999 = -719_162, 2_932_896
"""Days from 1970-01-01 to 0001-01-01 and to 9999-12-31."""
US_YEAR_1, US_YEAR_9999 = YEAR_1 * DAY_US, (YEAR_9999 + 1) * DAY_US - 1
INT64 = 2**63
HUGE = 2**127
DECIMAL_38_6 = Decimal("99999999999999999999999999999999.999999")
ODD_STRINGS = ("", " ", "a", "A", "é", "'", "''", '"', "%", "_", "\\", "a|b", "NULL", "nan",
               "1e308", "-0", "2020-01-01", "2020-02-30", "25:00", "garbage", "🙂", "\u0301",
               "x" * 5000, "infinity", "-infinity", "epoch", "2020", "+2020-01-01",
               "2020-01-01 24:00:00", "2020-01-01 10:00:00+02", None)
DOUBLES = (None, math.nan, math.inf, -math.inf, 1e308, -1e308, 5e-324, -0.0, 2.0**53 + 2, 1e15)
TIMESTAMP_DAYS = 106_751_991
"""The most days from 1970 whose midnight TIMESTAMP holds (in 64-bit microseconds)."""
DAYS = (None, 0, YEAR_1, YEAR_9999, YEAR_1 - 1, YEAR_9999 + 1, TIMESTAMP_DAYS + 1,
        -TIMESTAMP_DAYS - 1, -2_147_483_646, 2_147_483_646, -(2**31) + 1, 2**31 - 1)
"""Days since 1970: the ends of Python's range and just beyond, beyond TIMESTAMP's, the
ends of DuckDB's, ±infinity."""
MICROS = (None, 0, US_YEAR_1, US_YEAR_9999, US_YEAR_1 - 1, US_YEAR_9999 + 1,
          -9_223_372_022_400_000_000, INT64 - 2, INT64 - 1, -INT64 + 1)
"""Microseconds since 1970: years 1 and 9999 and just beyond, DuckDB's limits, ±infinity."""


def _within(lo: int, hi: int) -> Callable[[Any], bool]:
    return lambda v: v is None or lo <= v <= hi


@dataclass(frozen=True)
class Column:
    """One column: its Arrow storage, its usual and its hostile values.

    ``spark_ok`` says which values the data of both engines holds (a HUGEINT within 38
    digits, stored as DECIMAL(38, 0)); ``view`` is the DuckDB type the column is cast to
    when Arrow cannot hold it (HUGEINT, stored as text).
    """

    name: str
    arrow: pa.DataType
    usual: st.SearchStrategy
    hostile: tuple[Any, ...] = ()
    spark_ok: Callable[[Any], bool] = lambda v: True
    view: str | None = None

    def values(self, spark: bool) -> st.SearchStrategy:
        """Usual or hostile values, half and half (usual values suit both engines)."""
        hostile = self.pinned(spark)
        return st.one_of(self.usual, st.sampled_from(hostile)) if hostile else self.usual

    def pinned(self, spark: bool) -> tuple[Any, ...]:
        """The hostile values a whole table's column may be set to."""
        return tuple(v for v in self.hostile if not spark or self.spark_ok(v))


KEYS = st.sampled_from(["a", "b", "c", "A", "", "é", None])
INTEGERS = (None, 2**31, 2**53 + 1, 2**62, INT64 - 1, -INT64, -INT64 + 1)
"""Hostile BIGINTs: beyond INTEGER and exact doubles, and the ends (ABS(-2⁶³) overflows)."""
T_COLUMNS = (
    Column("pid", pa.int64(), st.none()),
    Column("k", pa.string(), KEYS),
    Column("s", pa.string(), st.sampled_from(ODD_STRINGS)),
    Column("g", pa.int32(), st.integers(0, 3), (None, -1, 2**31 - 1, -(2**31))),
    Column("i", pa.int64(), st.integers(-3, 100), INTEGERS),
    Column("h", pa.string(), st.integers(-3, 100),
           (None, 10**20, -(10**20), INT64, HUGE - 1, -HUGE, -HUGE + 1, 10**38 - 1),
           _within(-(10**38) + 1, 10**38 - 1), view="HUGEINT"),
    Column("m", pa.decimal128(38, 6), st.decimals(-1000, 1000, places=2),
           (None, DECIMAL_38_6, DECIMAL_38_6.copy_negate(), Decimal("0.000001"),
            Decimal("1E+20"))),
    Column("x", pa.float64(), st.floats(-20, 20), DOUBLES),
    Column("dt", pa.date32(), st.integers(18_000, 19_500), DAYS),
    Column("ts", pa.timestamp("us"),
           st.integers(1_546_300_800 * 10**6, 1_703_980_800 * 10**6), MICROS),
    Column("tm", pa.time64("us"), st.integers(0, DAY_US - 1), (None, 0, DAY_US)),
    Column("b", pa.bool_(), st.sampled_from([True, False, None])),
)
U_COLUMNS = (
    Column("pid", pa.int32(), st.none()),  # a narrow unit: dpsql widens it where it must
    Column("k", pa.string(), KEYS),
    Column("y", pa.float64(), st.floats(-20, 20), DOUBLES),
    Column("dt", pa.date32(), st.integers(18_000, 19_500), DAYS),
    Column("a_pid", pa.int64(), st.integers(-3, 100), INTEGERS),
)
R_COLUMNS = (
    Column("rid", pa.int64(), st.integers(0, 5)),
    Column("k", pa.string(), KEYS),
    Column("x", pa.float64(), st.floats(-20, 20), DOUBLES),
    Column("dt", pa.date32(), st.integers(18_000, 19_500), DAYS),
)
PUB_COLUMNS = (
    Column("k", pa.string(), KEYS),
    Column("label", pa.string(), st.sampled_from(ODD_STRINGS)),
    Column("fee", pa.float64(), st.floats(0, 100)),
    Column("w", pa.int32(), st.integers(0, 3)),
)
SCHEMA: Mapping[str, tuple[Column, ...]] = {"t": T_COLUMNS, "u": U_COLUMNS, "r": R_COLUMNS,
                                            "pub": PUB_COLUMNS}
UNIT_TABLES = ("t", "u")
ROW_LEVEL = "r"
UNITS = (1, 2, 3, 4, 5, 6, 7, 8, 0, -1, INT64 - 1, -INT64, 2**31 - 1, -(2**31))
"""Unit values; u's INTEGER units hold those within ``INT32``."""
INT32 = (-(2**31), 2**31 - 1)
ROWS_PER_UNIT = (0, 1, 1, 2, 3, 4, 7, 12)


@dataclass(frozen=True)
class Database:
    """Rows per table (tuples in ``SCHEMA`` order); ``spark`` if both engines hold them."""

    rows: Mapping[str, tuple[tuple, ...]]
    spark: bool = False

    def arrow(self, table: str) -> pa.Table:
        """The table as Arrow; HUGEINT as text (cast in a DuckDB view) or, for Spark,
        as DECIMAL(38, 0)."""
        columns = SCHEMA[table]
        values = list(zip(*self.rows[table], strict=True)) or [()] * len(columns)
        arrays = {c.name: _array(c, v, self.spark) for c, v in zip(columns, values, strict=True)}
        return pa.table(arrays)

    def neighbours(self, tables: tuple[str, ...]) -> Iterator[tuple[Any, Database]]:
        """(unit, D − unit) for every unit with rows in ``tables``: all rows of one person,
        or one row of the row-level table."""
        if ROW_LEVEL in tables:
            rows = self.rows[ROW_LEVEL]
            for index in range(len(rows)):
                yield f"row {index}", self._with(ROW_LEVEL, rows[:index] + rows[index + 1:])
            return
        units = sorted({r[0] for t in tables for r in self.rows[t] if r[0] is not None})
        for unit in units:
            kept = {t: tuple(r for r in self.rows[t] if r[0] != unit) for t in UNIT_TABLES}
            yield unit, Database({**self.rows, **kept}, self.spark)

    def _with(self, table: str, rows: tuple[tuple, ...]) -> Database:
        return Database({**self.rows, table: rows}, self.spark)


def _array(column: Column, values: tuple, spark: bool) -> pa.Array:
    if column.view is None:
        storage = {pa.date32(): pa.int32(), pa.timestamp("us"): pa.int64(),
                   pa.time64("us"): pa.int64()}.get(column.arrow)
        if storage is None:
            return pa.array(values, column.arrow)
        return pa.array(values, storage).cast(column.arrow)
    if spark:
        return pa.array([None if v is None else Decimal(v) for v in values],
                        pa.decimal128(38, 0))
    return pa.array([None if v is None else str(v) for v in values], pa.string())


@st.composite
def _rows(draw: st.DrawFn, table: str, units: list[Any], spark: bool) -> tuple[tuple, ...]:
    """Each unit's rows (a few units have many), in ``SCHEMA[table]`` order. One column in
    eight holds the same hostile value in every row (so sums of it overflow, say)."""
    columns = SCHEMA[table][1:]
    pins = {c.name: draw(st.sampled_from(c.pinned(spark))) for c in columns
            if c.pinned(spark) and draw(st.integers(0, 7)) == 7}
    rows = []
    for unit in units:
        for _ in range(draw(st.sampled_from(ROWS_PER_UNIT))):
            rows.append((unit, *(pins[c.name] if c.name in pins else draw(c.values(spark))
                                 for c in columns)))
    return tuple(draw(st.permutations(rows))) if rows else ()


@st.composite
def databases(draw: st.DrawFn, *, spark: bool = False) -> Database:
    """A database of hostile values: 1–6 units, each with 0–12 rows per private table (u's
    units are 32-bit, so its rows belong to the units within that range)."""
    units = draw(st.lists(st.sampled_from(UNITS), min_size=1, max_size=6, unique=True))
    t = draw(_rows("t", units, spark))
    orphans = draw(st.lists(st.tuples(*(c.values(spark) for c in T_COLUMNS)), max_size=2))
    narrow = [unit for unit in units if INT32[0] <= unit <= INT32[1]]
    rows = {"t": t + tuple(orphans), "u": draw(_rows("u", narrow, spark))}
    for table, most in ((ROW_LEVEL, 6), ("pub", 5)):
        columns = SCHEMA[table]
        rows[table] = tuple(draw(st.lists(st.tuples(*(c.values(spark) for c in columns)),
                                          min_size=1, max_size=most)))
    return Database(rows, spark)


BOUNDS: Mapping[str, Mapping[str, tuple[float, float]]] = {
    "t": {"x": (-2, 10), "i": (0, 100), "h": (-5, 5), "m": (-1000, 1000), "g": (0, 3)},
    "u": {"y": (0, 5), "a_pid": (0, 10)},
    "r": {"x": (-1, 1)},
}
"""Declared value bounds (the data ignores them: the rewrite must enforce them)."""
PUBLIC_KEYS: Mapping[str, Mapping[str, Any]] = {"t": {"k": "pub", "g": (0, 1, 2, 3)}}
"""Public key domains: ``t.k`` from the public table, ``t.g`` listed (its 2³¹ − 1 is not)."""
NOT_NULL: Mapping[str, tuple[str, ...]] = {"t": ("x", "h")}
"""Columns declared NOT NULL, whose data holds NULLs anyway: the declaration is enforced, not
trusted (COUNT(x) is COUNT(*), and CORR, AVG, VAR and SUM of them share statistics)."""
LIMITS = {"max_groups_per_unit": (None, 1, 2, 3), "max_rows_per_group": (None, 1, 2, 5),
          "max_rows_per_unit": (None, 1, 3, 8)}
OWN_ROWS: Mapping[str, tuple[Mapping[str, int], ...]] = {
    "t": ({}, {"x": 1}, {"x": 2, "h": 1, "m": 3}), "u": ({}, {"y": 1})}
"""Columns whose aggregates keep rows of their own (``TableInfo.rows_for``, as an estimate
of ``max_rows_per_unit="auto"`` stores them), under ``"rows_for"`` in a table's limits."""


def limits() -> st.SearchStrategy[dict[str, dict[str, Any]]]:
    """Declared contribution limits of each unit table (None: dpsql's default), and the
    columns that keep rows of their own."""
    def one(table: str) -> st.SearchStrategy[dict[str, Any]]:
        return st.fixed_dictionaries({**{k: st.sampled_from(v) for k, v in LIMITS.items()},
                                      "rows_for": st.sampled_from(OWN_ROWS.get(table, ({},)))})
    return st.fixed_dictionaries({table: one(table) for table in UNIT_TABLES})


NO_LIMITS = {table: {**dict.fromkeys(LIMITS), "rows_for": {}} for table in UNIT_TABLES}
"""Every contribution limit left to dpsql's default."""
USUAL_ROW = {"k": "a", "s": "", "g": 0, "i": 0, "h": 0, "m": Decimal(0), "x": 0.0, "dt": 18_000,
             "ts": 1_546_300_800 * 10**6, "tm": 0, "b": True}


def small(t_rows: list[Mapping[str, Any]], *, spark: bool = False) -> Database:
    """A hand-written database for regression tests: rows of ``t`` as column → value (the
    rest usual values), one row in ``r`` and in ``pub``, none in ``u``."""
    rows = tuple((r["pid"], *({**USUAL_ROW, **r}[c.name] for c in T_COLUMNS[1:]))
                 for r in t_rows)
    return Database({"t": rows, "u": (), "r": ((0, "a", 0.0, 18_000),),
                     "pub": (("a", "", 0.0, 0),)}, spark)

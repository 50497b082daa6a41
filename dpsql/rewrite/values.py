"""Row-level values of statistics, computed once and shared by every statistic that reads them.

Two kinds of value per row: whether an expression is present (COUNT counts
non-NULL, non-NaN values) and an expression in integer *quanta*: clamped to
[lo, hi] and rounded to a multiple of a power of two, so that sums are exact
integers whatever order the engine adds them in. SUM and AVG of the same
expression with the same bounds read the same quanta column.

>>> import sqlglot
>>> from dpsql.plan import StatSpec
>>> spec = StatSpec("s", "sum", sqlglot.parse_one("x"), lo=0, hi=4, quantum=0.5)
>>> print(quanta(spec, {"x": "INTEGER"}, {}).sql(pretty=True))
CASE
  WHEN x IS NULL
  THEN NULL
  ELSE CAST(ROUND(LEAST(GREATEST(CAST(x AS DOUBLE) / 0.5, 0), 8)) AS BIGINT)
END
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlglot import exp

from dpsql.catalog import FLOAT_TYPES
from dpsql.expr.nodes import (
    BIGINT_ROOM,
    RoundInRange,
    as_bigint,
    as_double,
    exact_sum,
    number,
)
from dpsql.plan import StatSpec
from dpsql.rewrite.expressions import bounded, missing


def limit(node: exp.Expression, lo: float, hi: float) -> exp.Expression:
    """LEAST(GREATEST(node, lo), hi) for a node known not to be NULL."""
    raised = exp.Greatest(this=node, expressions=[number(lo)], ignore_nulls=True)
    return exp.Least(this=raised, expressions=[number(hi)], ignore_nulls=True)


def present(spec: StatSpec, types: Mapping[str, str]) -> exp.Expression:
    """What COUNT(expr) counts: the expression with NaN turned into NULL."""
    return bounded(spec.expr, types, {})


def raw_value(expr: exp.Expression, types: Mapping[str, str],
              bounds: Mapping[str, tuple[float, float]]) -> tuple[exp.Expression, bool]:
    """The row's value before its final clamp, and whether it may be NaN (a float).

    A bare column needs no catalog clamp (the caller's clamp to [lo, hi] is at least as
    tight); an expression gets its columns cleaned and clamped, computed in DOUBLE.
    """
    if isinstance(expr, exp.Column):
        return expr.copy(), types.get(expr.name.lower(), "").upper().startswith(FLOAT_TYPES)
    return as_double(bounded(expr, types, bounds)), True


def quanta(spec: StatSpec, types: Mapping[str, str],
           bounds: Mapping[str, tuple[float, float]]) -> exp.Expression:
    """The value in integer quanta, clamped to [lo_units, hi_units]; NULL/NaN stay NULL."""
    raw, is_float = raw_value(spec.expr, types, bounds)
    if spec.value_quantum == 1 and not is_float and isinstance(spec.expr, exp.Column):
        units = limit(raw.copy(), spec.lo_units, spec.hi_units)  # integers: exact as they are
    else:
        scaled = exp.Div(this=as_double(raw.copy()), expression=number(spec.value_quantum))
        # Clamping to integer bounds before rounding gives what rounding first would, and
        # lets the Spark engine round without BigDecimal (``RoundInRange``).
        round_ = RoundInRange if quanta_bound(spec) < 2**52 else exp.Round
        units = as_bigint(round_(this=limit(scaled, spec.lo_units, spec.hi_units)))
    return exp.Case(ifs=[exp.If(this=missing(raw, is_float=is_float), true=exp.Null())],
                    default=units)


def raw(spec: StatSpec, types: Mapping[str, str],
        bounds: Mapping[str, tuple[float, float]]) -> exp.Expression:
    """The value as DOUBLE within its catalog bounds, NULL if NULL or NaN: what a
    per-group-bounded sum or mean adds up before it clamps the unit's partial."""
    return as_double(bounded(spec.expr, types, bounds))


def value_key(spec: StatSpec) -> tuple | None:
    """Statistics with the same key read the same row-level column."""
    if spec.kind in ("count", "distinct"):
        return ("present", spec.expr.sql())
    if spec.per_group and spec.kind in ("sum", "centered_sum"):
        return ("raw", spec.expr.sql())
    if spec.kind in ("sum", "centered_sum"):
        return ("quanta", spec.expr.sql(), spec.value_quantum, spec.lo_units, spec.hi_units)
    return None


class RowValues:
    """The distinct row-level value columns a plan needs, and which statistic reads which."""

    def __init__(self, stats: tuple[StatSpec, ...], types: Mapping[str, str],
                 bounds: Mapping[str, tuple[float, float]]) -> None:
        self.columns: dict[tuple, tuple[str, exp.Expression]] = {}
        self.of: dict[str, str] = {}
        # Quanta first: COUNT(column) can then read a bare column's quanta, which are NULL
        # exactly when the column is NULL or NaN (AVG needs both: one column, not two).
        for spec in sorted(stats, key=lambda s: s.kind in ("count", "distinct")):
            key = value_key(spec)
            if key is None:
                continue
            key = self._shared_quanta(spec) or key
            if key not in self.columns:
                self.columns[key] = (f"__dp_v{len(self.columns)}",
                                     self._value(key[0], spec, types, bounds))
            self.of[spec.name] = self.columns[key][0]

    @staticmethod
    def _value(kind: str, spec: StatSpec, types: Mapping[str, str],
               bounds: Mapping[str, tuple[float, float]]) -> exp.Expression:
        if kind == "present":
            return present(spec, types)
        return raw(spec, types, bounds) if kind == "raw" else quanta(spec, types, bounds)

    def _shared_quanta(self, spec: StatSpec) -> tuple | None:
        if spec.kind not in ("count", "distinct") or not isinstance(spec.expr, exp.Column):
            return None
        sql = spec.expr.sql()
        return next((k for k in self.columns if k[0] == "quanta" and k[1] == sql), None)

    def select_items(self) -> list[exp.Expression]:
        return [exp.alias_(expr, name) for name, expr in self.columns.values()]

    def inline(self, spec: StatSpec) -> exp.Expression:
        """The value expression itself (for queries without a row subquery)."""
        name = self.of[spec.name]
        return next(expr for n, expr in self.columns.values() if n == name).copy()


def quanta_bound(spec: StatSpec) -> int:
    """The largest |value| of ``quanta``: its clamp's."""
    return max(abs(spec.lo_units), abs(spec.hi_units))


def aggregate(spec: StatSpec, value: exp.Expression) -> exp.Expression:
    """The statistic over a set of rows whose value column is ``value`` (unclamped)."""
    if spec.kind == "count":
        return exp.Count(this=value)
    if spec.kind == "distinct":
        return exp.Count(this=exp.Distinct(expressions=[value]))
    total = exp.Coalesce(this=exact_sum(value, quanta_bound(spec)), expressions=[number(0)])
    if spec.kind == "sum":
        return total
    # Σ (2k − (lo + hi)) over non-NULL values, written to reuse the sum of k.
    return exp.Sub(this=exp.Mul(this=number(2), expression=total),
                   expression=exp.Mul(this=number(spec.lo_units + spec.hi_units),
                                      expression=exp.Count(this=value.copy())))


def weighted_partial(spec: StatSpec, value: exp.Expression, c: int) -> exp.Expression:
    """One unit's sum or centred sum in one group, its values weighted to at most c values.

    A unit with n values summing to S (in quanta) in a group enters it as min(n, c) values
    at its own mean: W = S if n ≤ c, else round(S·c/n). COUNT(x) keeps min(n, c) of the
    same values, so SUM, COUNT, AVG and VAR of x are statistics of one bounded dataset —
    each unit's values of x in each group, weighted by min(1, c/n) — and agree with one
    another (docs/privacy.md, "What a bounded answer means"). W is a function of the unit's
    own integers, so it is exact and the same in every engine; a centred sum is
    2W − (lo + hi)·min(n, c). Both lie within c values' bounds; the clamp only guards the
    rounding of S·c/n in floating point.
    """
    count = exp.Count(this=value.copy())
    whole = exp.Coalesce(this=exact_sum(value.copy(), quanta_bound(spec)),
                         expressions=[number(0)])
    scaled = as_bigint(exp.Round(this=exp.Div(
        this=exp.Mul(this=as_double(whole.copy()), expression=number(c)),
        expression=count.copy())))
    weighted: exp.Expression = exp.Case(
        ifs=[exp.If(this=exp.LTE(this=count.copy(), expression=number(c)), true=whole)],
        default=scaled)
    if spec.kind == "sum":
        partial = limit(weighted, c * min(spec.lo_units, 0), c * max(spec.hi_units, 0))
    else:
        kept = exp.Least(this=count, expressions=[number(c)])
        centred = exp.Sub(this=exp.Mul(this=number(2), expression=weighted),
                          expression=exp.Mul(this=number(spec.lo_units + spec.hi_units),
                                             expression=kept))
        partial = limit(centred, -c * spec.row_bound, c * spec.row_bound)
    # The exact sum made it 128-bit (DuckDB) or DECIMAL(38, 0) (Spark); within BIGINT's
    # range, the clamped partial travels through the group choice as a BIGINT.
    return as_bigint(partial) if c * spec.row_bound < BIGINT_ROOM else partial


def in_quanta(count: exp.Expression, spec: StatSpec) -> exp.Expression:
    """A count in its statistic's quanta (``COUNT_QUANTUM`` when a total row cap binds)."""
    if spec.per_row == 1:
        return count
    return exp.Mul(this=count, expression=number(spec.per_row))


def group_partial(spec: StatSpec, values: RowValues) -> exp.Expression:
    """A unit's partial in one group clamped to the statistic's per-group bounds (quanta).

    Counts clamp the unit's count; sums round the unit's sum to the quantum grid and clamp
    it; centred sums do the same with the unit's mean m and add 2m − (lo + hi) (in quanta).
    A unit without a value in the group adds 0 to sums (GREATEST would lift NULL to lo).
    """
    lo, hi = spec.lo_units, spec.hi_units
    if spec.kind == "rows":
        return limit(in_quanta(exp.Count(this=exp.Star()), spec), lo, hi)
    value = exp.column(values.of[spec.name])
    if spec.kind == "count":
        return limit(in_quanta(exp.Count(this=value), spec), lo, hi)
    inner = exp.Avg if spec.kind == "centered_sum" else exp.Sum
    scaled = exp.Round(this=exp.Div(this=inner(this=value.copy()),
                                    expression=number(spec.value_quantum)))
    units: exp.Expression = as_bigint(limit(scaled, lo, hi))
    if spec.kind == "centered_sum":
        units = exp.Sub(this=exp.Mul(this=number(2), expression=units),
                        expression=number(lo + hi))
    empty = exp.EQ(this=exp.Count(this=value.copy()), expression=number(0))
    return exp.Case(ifs=[exp.If(this=empty, true=number(0))], default=units)

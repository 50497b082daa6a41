"""Row-level value expressions that enforce declared and inferred bounds.

NULL stays NULL (LEAST/GREATEST skip NULLs in most engines, so clamps are
guarded), NaN becomes NULL, ±inf is clamped like any other value.

>>> import sqlglot
>>> clamp(sqlglot.parse_one("x"), 0, 10).sql()
'CASE WHEN x IS NULL THEN NULL ELSE LEAST(GREATEST(x, 0), 10) END'
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlglot import exp

from dpsql.catalog import FLOAT_TYPES
from dpsql.plan import PrivacyPlan


def number(value: float) -> exp.Expression:
    """A numeric literal; integral values print without a decimal point."""
    if float(value).is_integer() and abs(value) < 2**53:
        return exp.Literal.number(int(value))
    return exp.Literal.number(repr(float(value)))


def clamp(node: exp.Expression, lo: float, hi: float, *,
          is_float: bool = False) -> exp.Expression:
    """``node`` limited to [lo, hi]; NULL stays NULL, and NaN becomes NULL if ``is_float``."""
    raised = exp.Greatest(this=node.copy(), expressions=[number(lo)], ignore_nulls=True)
    limited = exp.Least(this=raised, expressions=[number(hi)], ignore_nulls=True)
    return exp.Case(ifs=[exp.If(this=missing(node, is_float), true=exp.Null())],
                    default=limited)


def missing(node: exp.Expression, is_float: bool) -> exp.Expression:
    missing: exp.Expression = exp.Is(this=node.copy(), expression=exp.Null())
    if is_float:
        missing = exp.or_(missing, exp.IsNan(this=node.copy()))
    return missing


def _clean_column(column: exp.Column, types: Mapping[str, str],
                  bounds: Mapping[str, tuple[float, float]]) -> exp.Expression:
    name = column.name.lower()
    node: exp.Expression = exp.column(name)
    is_float = types.get(name, "").upper().startswith(FLOAT_TYPES)
    if name in bounds:
        return clamp(node, *bounds[name], is_float=is_float)
    if is_float:
        return exp.Case(ifs=[exp.If(this=exp.IsNan(this=node.copy()), true=exp.Null())],
                        default=node)
    return node


def bounded(expr: exp.Expression, types: Mapping[str, str],
            bounds: Mapping[str, tuple[float, float]]) -> exp.Expression:
    """``expr`` with every column cleaned (NaN → NULL) and clamped to its catalog bounds."""

    def swap(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Column):
            return _clean_column(node, types, bounds)
        return node

    return total(expr.transform(swap, copy=True))


ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Neg, exp.Abs)


def total(expr: exp.Expression) -> exp.Expression:
    """``expr`` with arithmetic in DOUBLE, which overflows to ±inf instead of raising.

    Integer overflow raises an error for some rows and not others — an error
    that depends on private data. Floats never raise; infinities are clamped.

    >>> import sqlglot
    >>> total(sqlglot.parse_one("age * 1000000000000 > 5")).sql()
    'CAST(age AS DOUBLE) * CAST(1000000000000 AS DOUBLE) > 5'
    """

    def widen(node: exp.Expression) -> exp.Expression:
        if isinstance(node, ARITHMETIC):
            for arg in ("this", "expression"):
                child = node.args.get(arg)
                if child is not None and not _is_double(child):
                    node.set(arg, as_double(child))
        return node

    return expr.transform(widen, copy=True)


def _is_double(node: exp.Expression) -> bool:
    return isinstance(node, exp.Cast) and node.to.this == exp.DataType.Type.DOUBLE


def as_double(node: exp.Expression) -> exp.Expression:
    return exp.Cast(this=node, to=exp.DataType.build("DOUBLE"))


def as_bigint(node: exp.Expression) -> exp.Expression:
    return exp.Cast(this=node, to=exp.DataType.build("BIGINT"))


def source(plan: PrivacyPlan) -> exp.Expression:
    """A fresh copy of what the query reads: a table, or the source subquery of a join,
    CTE or derived table (``dpsql.analysis.relations``)."""
    if isinstance(plan.relation, str):
        return exp.to_table(plan.relation)
    return plan.relation.copy()

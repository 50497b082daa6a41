"""Aggregates rewritten into the forms dpsql knows how to bound.

- ``agg(x) FILTER (WHERE p)`` is ``agg(CASE WHEN p THEN x END)``;
- a variance or standard deviation needs, besides the count and the centred sum of x, the
  sum of squared deviations from the middle of [lo, hi] (``squared_deviation``);
- ``COUNT(DISTINCT e)`` where e can only be the privacy unit or NULL moves by one per group
  (``only_column``).
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlglot import exp

from dpsql.analysis.grammar import check_row_expression, refuse
from dpsql.expr.types import type_class, value_arguments

SPREADS: dict[type[exp.Expression], str] = {
    exp.VariancePop: "var_pop", exp.Variance: "var_samp", exp.StddevPop: "stddev_pop",
    exp.StddevSamp: "stddev_samp", exp.Stddev: "stddev_samp",
}
"""Variance and standard deviation aggregates (VARIANCE and STDDEV are the sample versions)."""


def only_column(node: exp.Expression, name: str) -> bool:
    """True when every non-NULL value ``node`` may return is column ``name`` itself.

    >>> import sqlglot
    >>> only_column(sqlglot.parse_one("CASE WHEN age > 65 THEN pid END"), "pid")
    True
    >>> only_column(sqlglot.parse_one("COALESCE(pid, 0)"), "pid")
    False
    """
    if isinstance(node, exp.Column):
        return node.name.lower() == name
    if isinstance(node, exp.Null):
        return True
    if isinstance(node, exp.Paren | exp.Case | exp.If | exp.Nullif | exp.Coalesce):
        return all(only_column(v, name) for v in value_arguments(node))
    return False


def squared_deviation(arg: exp.Expression, lo: float, hi: float) -> exp.Expression:
    """(clamp(arg, lo, hi) − (lo + hi)/2)², NULL when arg is NULL: a value in [0, ((hi−lo)/2)²].

    >>> import sqlglot
    >>> squared_deviation(sqlglot.parse_one("x"), 0, 10).sql()
    'POWER(CASE WHEN x IS NULL THEN NULL ELSE LEAST(GREATEST(x, 0.0), 10.0) END - 5.0, 2)'
    """
    raised = exp.Greatest(this=arg.copy(), expressions=[_literal(lo)], ignore_nulls=True)
    clamped = exp.Case(ifs=[exp.If(this=exp.Is(this=arg.copy(), expression=exp.Null()),
                                   true=exp.Null())],
                       default=exp.Least(this=raised, expressions=[_literal(hi)],
                                         ignore_nulls=True))
    deviation = exp.Sub(this=clamped, expression=_literal((lo + hi) / 2))
    return exp.Pow(this=deviation, expression=exp.Literal.number(2))


def _literal(value: float) -> exp.Literal:
    return exp.Literal.number(repr(float(value)))


def without_filter(node: exp.Expression, columns: Mapping[str, str]) -> exp.Expression:
    """``agg(x) FILTER (WHERE p)`` as ``agg(CASE WHEN p THEN x END)``: rows failing p give NULL,
    which every aggregate skips (``COUNT(*)`` becomes ``COUNT(CASE WHEN p THEN 1 END)``).

    >>> import sqlglot
    >>> without_filter(sqlglot.parse_one("COUNT(*) FILTER (WHERE a > 1)"), {"a": "INT"}).sql()
    'COUNT(CASE WHEN a > 1 THEN 1 END)'
    """
    if not isinstance(node, exp.Filter):
        return node
    predicate = node.expression.this
    check_row_expression(predicate, "FILTER (WHERE ...)")
    if type_class(predicate, columns) not in ("boolean", "null"):
        refuse(predicate, "FILTER (WHERE ...)", "a condition (a comparison, IN, LIKE, ...)")
    inner = node.this.copy()
    if isinstance(inner, exp.WithinGroup):
        target = inner.expression.expressions[0]
    elif isinstance(inner.this, exp.Distinct):
        target = inner.this.expressions[0] if len(inner.this.expressions) == 1 else inner.this
    else:
        target = inner.this
    value = exp.Literal.number(1) if isinstance(target, exp.Star) else target.this \
        if isinstance(target, exp.Ordered) else target
    case = exp.Case(ifs=[exp.If(this=predicate.copy(), true=value.copy())])
    if isinstance(target, exp.Ordered):
        target.set("this", case)
    else:
        target.replace(case)
    return inner

"""Aggregates rewritten into the forms dpsql knows how to bound.

- ``agg(x) FILTER (WHERE p)`` is ``agg(CASE WHEN p THEN x END)``;
- a variance or standard deviation needs, besides the count and the centred sum of x, the
  sum of squared deviations from the middle of [lo, hi] (``squared_deviation``);
- ``COUNT(DISTINCT e)`` where e can only be the privacy unit or NULL moves by one per group
  (``only_column``);
- CORR, COVAR_* and REGR_* of (y, x) read statistics of each argument over the rows where
  both are present (``present_with``), and the sum of products of the two deviations from
  the middles of their bounds (``deviation_product``).
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

PAIRS: dict[type[exp.Expression], str] = {
    exp.Corr: "corr", exp.CovarPop: "covar_pop", exp.CovarSamp: "covar_samp",
    exp.RegrSlope: "regr_slope", exp.RegrIntercept: "regr_intercept", exp.RegrR2: "regr_r2",
    exp.RegrCount: "regr_count", exp.RegrAvgx: "regr_avgx", exp.RegrAvgy: "regr_avgy",
    exp.RegrSxx: "regr_sxx", exp.RegrSyy: "regr_syy", exp.RegrSxy: "regr_sxy",
}
"""Aggregates of two arguments (y, x), computed over the rows where both are present."""


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
    """(clamp(arg, lo, hi) − (lo + hi)/2)², NULL when arg is NULL or NaN: a value in
    [0, ((hi−lo)/2)²].

    Written as arithmetic, not as a CASE on ``arg IS NULL``, so that the rewrite cleans arg
    as a value (``dpsql.rewrite.expressions.bounded``: NaN becomes NULL) and a row is
    missing here exactly where it is missing from the count and the mean: a CASE condition
    keeps a raw NaN, which the clamp would take to hi. ``0 * SIGN(arg)`` carries arg's NULL
    (GREATEST skips NULLs, and would lift one to lo) and is 0 for ±inf, which the clamp
    takes to lo or hi, as the mean's clamp does (``present_with``'s ``0 * other`` would
    make it NaN).

    >>> import sqlglot
    >>> squared_deviation(sqlglot.parse_one("x"), 0, 10).sql()
    '(LEAST(GREATEST(x, 0.0), 10.0) + 0 * SIGN(x) - 5.0) * (LEAST(GREATEST(x, 0.0), 10.0) + \
0 * SIGN(x) - 5.0)'
    """
    raised = exp.Greatest(this=arg.copy(), expressions=[_literal(lo)], ignore_nulls=True)
    clamped = exp.Least(this=raised, expressions=[_literal(hi)], ignore_nulls=True)
    carried = exp.Add(this=clamped, expression=exp.Mul(this=exp.Literal.number(0),
                                                       expression=exp.Sign(this=arg.copy())))
    deviation = exp.Paren(this=exp.Sub(this=carried, expression=_literal((lo + hi) / 2)))
    return exp.Mul(this=deviation, expression=deviation.copy())


def present_with(arg: exp.Expression, other: exp.Expression) -> exp.Expression:
    """``arg + 0 * other``: arg where other is present, NULL where other is NULL.

    Written as arithmetic, not as a CASE on ``other IS NULL``, so that the rewrite cleans
    both as values (``dpsql.rewrite.expressions.bounded``: NaN becomes NULL, columns are
    clamped to their bounds), and a row is missing from every statistic of a pair, or from
    none. Over finite values, 0 · other is exactly 0.

    >>> import sqlglot
    >>> present_with(sqlglot.parse_one("y"), sqlglot.parse_one("x")).sql()
    'y + 0 * x'
    >>> present_with(sqlglot.parse_one("a - b"), sqlglot.parse_one("x")).sql()
    '(a - b) + 0 * x'
    """
    return exp.Add(this=_operand(arg), expression=exp.Mul(this=exp.Literal.number(0),
                                                          expression=_operand(other)))


def deviation_product(x: exp.Expression, y: exp.Expression, x_bounds: tuple[float, float],
                      y_bounds: tuple[float, float]) -> exp.Expression:
    """(x − mx) · (y − my), mx and my the middles of the bounds: NULL where either is NULL,
    in [−hx·hy, hx·hy] (h the half-widths) for values within their bounds.

    >>> import sqlglot
    >>> deviation_product(sqlglot.parse_one("x"), sqlglot.parse_one("y"), (0, 10), (-1, 1)).sql()
    '(x - 5.0) * (y - 0.0)'
    """
    return exp.Mul(this=_deviation(x, x_bounds), expression=_deviation(y, y_bounds))


def _deviation(arg: exp.Expression, bounds: tuple[float, float]) -> exp.Paren:
    middle = (bounds[0] + bounds[1]) / 2
    return exp.Paren(this=exp.Sub(this=_operand(arg), expression=_literal(middle)))


def _operand(node: exp.Expression) -> exp.Expression:
    """A copy of ``node``, in parentheses unless it is a column, a literal or in them."""
    if isinstance(node, exp.Column | exp.Literal | exp.Paren):
        return node.copy()
    return exp.Paren(this=node.copy())


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

"""Builders of sqlglot nodes that the analysis, the rewrite and the backends share.

>>> number(3.0).sql(), number(0.25).sql(), as_bigint(exp.column("x")).sql()
('3', '0.25', 'CAST(x AS BIGINT)')
"""

from __future__ import annotations

from sqlglot import exp


def number(value: float) -> exp.Expression:
    """A numeric literal; integral values print without a decimal point."""
    if float(value).is_integer() and abs(value) < 2**53:
        return exp.Literal.number(int(value))
    return exp.Literal.number(repr(float(value)))


def as_double(node: exp.Expression) -> exp.Expression:
    return exp.Cast(this=node, to=exp.DataType.build("DOUBLE"))


ExactSum = type("Sum", (exp.Sum,), {
    "__module__": __name__,
    "__doc__": """SUM of integers that must be exact: the rewrite's quanta, counts and weights.

    Named ``Sum`` so that every dialect prints it as SUM (and sqlglot treats it as one);
    DuckDB sums BIGINT in 128-bit integers, while the Spark backend sums it as
    DECIMAL(38, 0): Spark's BIGINT sum raises on overflow in ANSI mode, and millions of
    people each at their bound reach it.""",
})


def exact_sum(node: exp.Expression) -> exp.Expression:
    """SUM(node) of integer values, exact in every backend (``ExactSum``).

    >>> exact_sum(exp.column("x")).sql("spark"), type(exact_sum(exp.column("x"))) is ExactSum
    ('SUM(x)', True)
    """
    return ExactSum(this=node)


def as_bigint(node: exp.Expression) -> exp.Expression:
    return exp.Cast(this=node, to=exp.DataType.build("BIGINT"))

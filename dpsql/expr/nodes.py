"""Builders of sqlglot nodes that the analysis, the rewrite and the backends share.

>>> number(3.0).sql(), number(0.25).sql(), as_bigint(exp.column("x")).sql()
('3', '0.25', 'CAST(x AS BIGINT)')
"""

from __future__ import annotations

from typing import ClassVar

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
    DuckDB sums BIGINT in 128-bit integers, while the Spark backend sums BIGINTs within a
    known bound (``SUM_BOUND``) in 16-bit limbs and others as DECIMAL(38, 0): Spark's
    BIGINT sum raises on overflow in ANSI mode, and millions of people each at their bound
    reach it.""",
})

SUM_BOUND = "dpsql_sum_bound"
"""The ``meta`` key of an ``ExactSum``'s bound: no value it sums exceeds it in magnitude."""

BIGINT_ROOM = 2**62
"""Values proven below this in magnitude are BIGINTs with room to spare: a clamped partial
travels as a BIGINT, and the Spark backend sums them in limbs (both only below it)."""


def exact_sum(node: exp.Expression, bound: int | None = None) -> exp.Expression:
    """SUM(node) of integer values, exact in every backend (``ExactSum``); ``bound``, when
    the rewrite has proven one, is the largest |value| of ``node`` (its clamp's).

    >>> exact_sum(exp.column("x")).sql("spark"), type(exact_sum(exp.column("x"))) is ExactSum
    ('SUM(x)', True)
    >>> exact_sum(exp.column("x"), bound=2**31).meta[SUM_BOUND]
    2147483648
    """
    total = ExactSum(this=node)
    if bound is not None:
        total.meta[SUM_BOUND] = bound
    return total


class ArgMinNull(exp.Expression, exp.AggFunc):
    """``ARG_MIN_NULL(this, expression)``: ``this`` on the row with the smallest
    ``expression``, NULL if ``this`` is NULL there. DuckDB's ``ARG_MIN`` would skip that row
    and answer from another; the Spark backend writes Spark's ``MIN_BY``, which keeps it.

    >>> ArgMinNull(this=exp.column("x"), expression=exp.column("k")).sql("duckdb")
    'ARG_MIN_NULL(x, k)'
    """

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "expression": True}
    _sql_names: ClassVar[list[str]] = ["ARG_MIN_NULL"]


INLINED_FORM = "dpsql_inlined_form"
"""The ``meta`` mark of a SELECT that reads a small CTE computed from its rows' own columns
(one row per distinct group: the group-choice codes, and the groups' rank), holding an
equivalent SELECT that computes what it needs in each row instead (the codes hashed per
pair, the keys in place of their rank; a unit's count of values in a window in place of
a join). DuckDB runs a CTE once and joins it cheaply; Spark inlines CTEs, so it would
aggregate the pairs a second time for the join and shuffle them to it: the Spark backend
writes the inlined form."""

COMPUTE_ONCE = "dpsql_compute_once"
"""The ``meta`` mark (True) of a CTE's query that several references read and that costs
much to compute: the kept pairs (the (unit, group) aggregate and the group choice under
them) when a quantile's histogram joins them beside the counts per group. DuckDB computes
such a CTE once by itself; the Spark backend, whose optimizer inlines it at every
reference, makes it non-deterministic so that it is computed once (``spark._materialized``)."""

ROUND_IN_RANGE = "dpsql_round_in_range"
"""The ``meta`` mark of a ROUND of a DOUBLE that the rewrite clamped within ±2⁵² first
(True): the Spark backend rounds it without BigDecimal (Spark's ROUND of a DOUBLE)."""

HEX_NUMBER = "dpsql_hex_number"
"""The ``meta`` mark of a ``hex_number`` cast, which the Spark backend writes with CONV."""


def hex_number(text: exp.Expression, digits: int) -> exp.Expression:
    """The BIGINT written by the first ``digits`` hex digits of ``text``: ``CAST('0x' ||
    SUBSTR(text, 1, digits) AS BIGINT)``, which DuckDB reads as hexadecimal. The cast is
    marked (``HEX_NUMBER``) so that the Spark backend writes ``CAST(CONV(SUBSTR(text, 1,
    digits), 16, 10) AS BIGINT)`` instead.

    >>> hex_number(exp.MD5(this=exp.column("x")), 7).sql("duckdb")
    "CAST('0x' || SUBSTRING(MD5(x), 1, 7) AS BIGINT)"
    """
    prefix = exp.Substring(this=text, start=exp.Literal.number(1),
                           length=exp.Literal.number(digits))
    cast = exp.Cast(this=exp.DPipe(this=exp.Literal.string("0x"), expression=prefix),
                    to=exp.DataType.build("BIGINT"))
    cast.meta[HEX_NUMBER] = True
    return cast


def as_bigint(node: exp.Expression) -> exp.Expression:
    return exp.Cast(this=node, to=exp.DataType.build("BIGINT"))

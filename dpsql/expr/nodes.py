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


RoundInRange = type("Round", (exp.Round,), {
    "__module__": __name__,
    "__doc__": """ROUND of a DOUBLE that the rewrite clamped within ±2⁵² first.

    Named ``Round`` so that it prints as ROUND where an engine's dialect has nothing better;
    the Spark engine's dialect (``dpsql.engines.spark``) rounds it without BigDecimal,
    which Spark's ROUND of a DOUBLE goes through.""",
})


class HexNumber(exp.Expression, exp.Func):
    """The BIGINT written by the first ``digits`` hex digits of the text ``this``.

    No engine spells it alike: DuckDB casts ``'0x' || SUBSTRING(text, 1, digits)`` to BIGINT,
    Spark converts the digits with ``CONV(…, 16, 10)``; each engine's dialect writes it
    (``dpsql.engines``). Printed by a plain dialect it reads ``HEX_NUMBER(text, digits)``,
    which no engine runs: a tree must be printed by its engine's dialect.

    >>> HexNumber(this=exp.column("x"), digits=exp.Literal.number(7)).sql()
    'HEX_NUMBER(x, 7)'
    """

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "digits": True}
    _sql_names: ClassVar[list[str]] = ["HEX_NUMBER"]


def hex_number(text: exp.Expression, digits: int) -> exp.Expression:
    """``HexNumber`` of the first ``digits`` hex digits of ``text``.

    >>> hex_number(exp.MD5(this=exp.column("x")), 7).sql()
    'HEX_NUMBER(MD5(x), 7)'
    """
    return HexNumber(this=text, digits=exp.Literal.number(digits))


def as_bigint(node: exp.Expression) -> exp.Expression:
    return exp.Cast(this=node, to=exp.DataType.build("BIGINT"))


GATHERED = "dpsql_gathered"
"""The ``meta`` key that marks a SELECT of few rows (a query's groups) that a join reads
beside many (``gathered``)."""


def gathered(query: exp.Select) -> exp.Select:
    """``query``, marked in place (``GATHERED``) as few rows that a join reads beside many.

    Every dialect prints it as the SELECT it is, but the DuckDB engine's: that one gathers
    its rows into one row's list and unnests them. The rows are the same, and DuckDB's
    optimizer knows them for one row, where it takes a DISTINCT over a file for as many rows
    as the file (a file has no distinct counts) and builds a join's hash table on the file's
    side instead (docs/benchmarks.md).

    >>> q = gathered(exp.select("k").from_("t").distinct())
    >>> q.sql(), q.copy().meta[GATHERED]
    ('SELECT DISTINCT k FROM t', True)
    """
    query.meta[GATHERED] = True
    return query

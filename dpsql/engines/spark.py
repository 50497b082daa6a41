"""Spark SQL that means what DuckDB means: sqlglot's Spark dialect with dpsql's cases.

The bounded query is built once, as a sqlglot tree in DuckDB's meaning. Spark (ANSI mode)
spells some of it differently, computes some of it otherwise, and raises on some rows where
DuckDB answers; this dialect's generator writes each such node so that Spark computes what
DuckDB does and raises nowhere DuckDB does not (``SparkEngine.Generator``'s ``TRANSFORMS``
and ``*_sql`` methods, one per case):

- dpsql's own nodes: an ``ExactSum`` is summed in 16-bit limbs or as DECIMAL(38, 0)
  (``exact_sum``: Spark's BIGINT sum can overflow); ``ArgMinNull`` is Spark's MIN_BY, which
  also keeps a NULL; ``RoundInRange`` is ``rounded``; ``HexNumber`` is ``CONV(…, 16, 10)``.
- FLOOR and CEIL keep values outside ±2⁶² as they are (``FLOOR_RANGE``).
- ``SIGN(NaN)`` is 0 in DuckDB and NaN in Spark: Spark's argument is ``NANVL(x, 0)``.
- LIKE and ILIKE of a literal pattern (``dpsql.expr.types``) are ``RLIKE`` of
  ``like_regex``, which cannot backtrack: Spark's own LIKE is a backtracking regular
  expression, text^k steps for k wildcards, where ``dpsql.expr.size`` bounds a row's work
  assuming linear matching (ILIKE compares lower case, as Spark's own does).
- DuckDB's CONCAT reads NULL as '' and any value as text; sqlglot writes it for Spark as
  ``CONCAT(COALESCE(i, ''), …)``, which casts '' to ``i``'s type and raises on the rows
  where ``i`` is NULL, so each argument is made text first (CONCAT_WS, a subclass in
  sqlglot, is left alone: the group-choice digest relies on its separator).
- A tuple ``IN`` is the OR of field-wise null-safe equalities (Spark compares structs only
  when their field names agree; DuckDB's row equality is null-safe: ``(NULL, 1) IN ((NULL,
  1))`` is true, ``(NULL, 1) IN (('a', 1))`` false, not NULL).
- A NULL literal where a condition goes is a NULL BOOLEAN (Spark refuses type VOID there).
- Spark's DAYOFWEEK counts Sunday as 1, DuckDB's as 0; sqlglot keeps the name for both (and
  writes ISODOW, Monday = 1 to Sunday = 7, as one day off).
- ``EXTRACT(second FROM ts)`` is ``SECOND(ts)``: Spark's EXTRACT gives the seconds with
  their fraction (DECIMAL(8, 6)), DuckDB's whole seconds; the day-of-week and day-of-year
  parts are the functions too (Spark's EXTRACT knows neither DAYOFYEAR nor DuckDB's day
  numbers), see ``EXTRACT_AS_FUNCTION``; ``WEEK(d)``, which Spark lacks, is its ISO week
  ``WEEKOFYEAR(d)``.
- A TIME literal is ``TIME '…'``: sqlglot writes CAST(… AS TIMESTAMP) for Spark, which
  cannot compare that with a TIME column, and Spark refuses CAST(… AS TIME). A NULL TIME
  (totality rule 5) is ``CASE WHEN FALSE THEN TIME '00:00:00' END``, a NULL whose type
  Spark infers as TIME.

>>> from sqlglot import parse_one
>>> parse_one("SELECT SIGN(x), DAYOFWEEK(d) FROM t", read="duckdb").sql(SparkEngine)
'SELECT SIGN(NANVL(x, 0)), (DAYOFWEEK(d) - 1) FROM t'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlglot import exp
from sqlglot.dialects.spark import Spark

from dpsql.engines.like import like_regex
from dpsql.expr.nodes import (
    BIGINT_ROOM,
    SUM_BOUND,
    ArgMinNull,
    ExactSum,
    HexNumber,
    RoundInRange,
    as_bigint,
)

FLOOR_RANGE = 2.0**62
"""Spark's FLOOR and CEIL of a DOUBLE return BIGINT, which fails in ANSI mode on ±inf, NaN
and values beyond it; every DOUBLE outside ±2^62 is a whole number already."""

LIMB_BITS = 16
"""A bounded exact sum adds each value's 16-bit limbs in BIGINT: no limb exceeds 2¹⁶ in
magnitude, so a limb's sum cannot overflow below 2⁴⁷ (1.4·10¹⁴) values in one group."""

EXTRACT_AS_FUNCTION: dict[str, type[exp.Expression]] = {
    "second": exp.Second, "dayofyear": exp.DayOfYear, "doy": exp.DayOfYear,
    "dayofweek": exp.DayOfWeek, "dow": exp.DayOfWeek, "isodow": exp.DayOfWeekIso,
}
"""EXTRACT parts that Spark's EXTRACT lacks or computes otherwise, as the function nodes
whose DuckDB meaning the dialect writes for Spark."""

SPARK = Spark.Generator
"""sqlglot's own Spark generator: what this dialect writes inside its replacements."""


def exact_sum(node: exp.Expression) -> exp.Expression:
    """An ``ExactSum`` in Spark SQL: exact, and no overflow error short of 2⁴⁷ values in
    one group (``LIMB_BITS``; DECIMAL(38, 0) holds more).

    Within a bound below ``BIGINT_ROOM`` (``SUM_BOUND``: the rewrite's clamp), the value is
    split into ⌈bits/16⌉ limbs (the low ones ``& 65535``, the top one shifted, signed), each
    limb summed in BIGINT and the sums recombined in DECIMAL(38, 0) once per group, instead
    of casting every value to DECIMAL(38, 0) and adding in BigDecimal (docs/benchmarks.md:
    about 0.2 of Spark's floor on SUM and AVG). A sum in a window keeps the DECIMAL form.

    >>> from dpsql.expr.nodes import exact_sum as sum_of
    >>> print(*exact_sum(sum_of(exp.column("x"), bound=2**31 - 1)).sql("spark")
    ...       .split(" + "), sep="\\n")
    (CAST(SUM(CAST(x AS BIGINT) & 65535) AS DECIMAL(38, 0))
    CAST(SUM(SHIFTRIGHT(CAST(x AS BIGINT), 16)) AS DECIMAL(38, 0)) * 65536)
    >>> exact_sum(sum_of(exp.column("x"))).sql("spark")
    'SUM(CAST(x AS DECIMAL(38, 0)))'
    """
    decimal = exp.DataType.build("DECIMAL(38, 0)")
    bound = node.meta.get(SUM_BOUND)
    if bound is None or bound >= BIGINT_ROOM or isinstance(node.parent, exp.Window):
        return exp.Sum(this=exp.Cast(this=node.this.copy(), to=decimal))
    value = as_bigint(node.this.copy())
    limbs = max(1, -(-bound.bit_length() // LIMB_BITS))
    total: exp.Expression | None = None
    for i in range(limbs):
        limb: exp.Expression = value.copy() if i == 0 else exp.BitwiseRightShift(
            this=value.copy(), expression=exp.Literal.number(LIMB_BITS * i))
        if i < limbs - 1:
            limb = exp.BitwiseAnd(this=limb, expression=exp.Literal.number(2**LIMB_BITS - 1))
        term: exp.Expression = exp.Cast(this=exp.Sum(this=limb), to=decimal.copy())
        if i:
            term = exp.Mul(this=term, expression=exp.Literal.number(2 ** (LIMB_BITS * i)))
        total = term if total is None else exp.Add(this=total, expression=term)
    return exp.paren(total) if limbs > 1 else total


def rounded(x: exp.Expression) -> exp.Expression:
    """ROUND(x), halves away from zero as both engines round, for a DOUBLE x within ±2⁵²:
    TRUNC(x) (Spark: a cast to BIGINT) plus SIGN(x) where |x − TRUNC(x)| ≥ 0.5, a
    difference that is exact there. Spark's own ROUND of a DOUBLE goes through BigDecimal
    (0.14 of Spark's floor on 10M rows); DuckDB's is cheaper than this expression.

    >>> rounded(exp.column("x")).sql(SparkEngine)
    'CAST(x AS BIGINT) + CASE WHEN ABS(x - CAST(x AS BIGINT)) >= 0.5 THEN SIGN(x) ELSE 0 END'
    """
    whole = exp.Trunc(this=x.copy())
    fraction = exp.Abs(this=exp.Sub(this=x.copy(), expression=whole.copy()))
    # SIGN as Spark writes it: x is a number here, never NaN (NANVL would cost a call).
    half_up = exp.If(this=exp.GTE(this=fraction, expression=exp.Literal.number("0.5")),
                     true=exp.Anonymous(this="SIGN", expressions=[x.copy()]))
    return exp.Add(this=whole, expression=exp.Case(ifs=[half_up], default=exp.Literal.number(0)))


def _time_literal(text: str) -> exp.Expression:
    return exp.Var(this="TIME '" + text.replace("'", "''") + "'")


def _written(sql: str) -> exp.Expression:
    """SQL already written by sqlglot's Spark generator, as a node (not written again)."""
    return exp.Var(this=sql)


def _is_condition(node: exp.Expression) -> bool:
    """Where a NULL literal must be a BOOLEAN: a WHEN of a CASE without an operand (``CASE
    k WHEN NULL`` compares k with it: left alone), WHERE, HAVING, AND, OR, NOT."""
    parent = node.parent
    in_when = isinstance(parent, exp.If) and node.arg_key == "this" and not (
        isinstance(parent.parent, exp.Case) and parent.parent.this is not None)
    return in_when or \
        isinstance(parent, exp.Where | exp.Having | exp.And | exp.Or | exp.Not)


def _floor_in_range(spark: Callable[..., str]) -> Callable[..., str]:
    """FLOOR or CEIL (sqlglot's Spark ``spark``) where the value is within ``FLOOR_RANGE``;
    the value itself outside it."""
    def write(self: Any, node: exp.Expression) -> str:
        value = node.this
        inside = exp.Between(this=value.copy(), low=exp.Literal.number(-FLOOR_RANGE),
                             high=exp.Literal.number(FLOOR_RANGE))
        return self.sql(exp.Case(ifs=[exp.If(this=inside, true=_written(spark(self, node)))],
                                 default=value.copy()))
    return write


def _day_of_week(self: Any, node: exp.DayOfWeek) -> str:
    """DuckDB's day of the week, Sunday = 0: Spark's less one."""
    spark = SPARK.TRANSFORMS[exp.DayOfWeek](self, node)
    return self.sql(exp.paren(exp.Sub(this=_written(spark), expression=exp.Literal.number(1))))


def _iso_day_of_week(self: Any, node: exp.DayOfWeekIso) -> str:
    """ISO day of the week, Monday = 1 to Sunday = 7, from Spark's Sunday = 1."""
    spark = _written(SPARK.TRANSFORMS[exp.DayOfWeek](self, exp.DayOfWeek(this=node.this.copy())))
    shifted = exp.Mod(this=exp.paren(exp.Add(this=spark, expression=exp.Literal.number(5))),
                      expression=exp.Literal.number(7))
    return self.sql(exp.paren(exp.Add(this=exp.paren(shifted), expression=exp.Literal.number(1))))


def _hex_number(self: Any, node: HexNumber) -> str:
    digits = exp.Substring(this=node.this.copy(), start=exp.Literal.number(1),
                           length=node.args["digits"].copy())
    return self.sql(exp.Cast(this=exp.Anonymous(this="CONV", expressions=[
        digits, exp.Literal.number(16), exp.Literal.number(10)]),
        to=exp.DataType.build("BIGINT")))


class SparkEngine(Spark):
    """Spark SQL in DuckDB's meaning (the module's cases)."""

    class Generator(Spark.Generator):
        TRANSFORMS = {  # noqa: RUF012 — sqlglot's own convention for dialect tables
            **Spark.Generator.TRANSFORMS,
            ExactSum: lambda self, node: self.sql(exact_sum(node)),
            ArgMinNull: lambda self, node: self.sql(
                exp.ArgMin(this=node.this.copy(), expression=node.expression.copy())),
            RoundInRange: lambda self, node: self.sql(rounded(node.this)),
            HexNumber: _hex_number,
            exp.Floor: _floor_in_range(Spark.Generator.TRANSFORMS[exp.Floor]),
            exp.Ceil: _floor_in_range(Spark.Generator.TRANSFORMS[exp.Ceil]),
            exp.Sign: lambda self, node: self.func("SIGN", exp.Anonymous(
                this="NANVL", expressions=[node.this.copy(), exp.Literal.number(0)])),
            exp.Week: lambda self, node: self.sql(exp.WeekOfYear(this=node.this.copy())),
            exp.DayOfWeek: _day_of_week,
            exp.DayOfWeekIso: _iso_day_of_week,
        }

        def cast_sql(self, expression: exp.Cast, safe_prefix: str | None = None) -> str:
            if expression.to.this == exp.DataType.Type.TIME:
                if isinstance(expression.this, exp.Null):
                    return self.sql(exp.Case(ifs=[exp.If(this=exp.false(),
                                                         true=_time_literal("00:00:00"))]))
                if isinstance(expression.this, exp.Literal) and expression.this.is_string:
                    return self.sql(_time_literal(expression.this.name))
            return super().cast_sql(expression, safe_prefix)

        def extract_sql(self, expression: exp.Extract) -> str:
            function = EXTRACT_AS_FUNCTION.get(expression.this.name.lower())
            if function is None:
                return super().extract_sql(expression)
            return self.sql(function(this=expression.expression.copy()))

        def concat_sql(self, expression: exp.Concat) -> str:
            if type(expression) is not exp.Concat or not expression.args.get("coalesce"):
                return super().concat_sql(expression)
            text = exp.DataType.build("STRING")
            return super().concat_sql(exp.Concat(expressions=[
                exp.Coalesce(this=exp.Cast(this=arg.copy(), to=text.copy()),
                             expressions=[exp.Literal.string("")])
                for arg in expression.expressions]))

        def in_sql(self, expression: exp.In) -> str:
            if not isinstance(expression.this, exp.Tuple) or not expression.expressions:
                return super().in_sql(expression)
            fields = expression.this.expressions
            return self.sql(exp.paren(exp.or_(*(
                exp.and_(*(exp.NullSafeEQ(this=f.copy(), expression=v.copy())
                           for f, v in zip(fields, row.expressions, strict=True)))
                for row in expression.expressions))))

        def null_sql(self, *args: Any) -> str:
            if args and _is_condition(args[0]):
                return "CAST(NULL AS BOOLEAN)"
            return super().null_sql(*args)

        def like_sql(self, expression: exp.Like) -> str:
            return self._like(expression, super().like_sql)

        def ilike_sql(self, expression: exp.ILike) -> str:
            return self._like(expression, super().ilike_sql)

        def _like(self, expression: exp.Like | exp.ILike, spark: Callable[..., str]) -> str:
            if not isinstance(expression.expression, exp.Literal):
                return spark(expression)
            text, pattern = expression.this.copy(), expression.expression.name
            if isinstance(expression, exp.ILike):
                text, pattern = exp.Lower(this=text), pattern.lower()
            match = exp.RegexpLike(this=text,
                                   expression=exp.Literal.string(like_regex(pattern)))
            negated = exp.Not(this=exp.paren(match)) if expression.args.get("negate") \
                else match
            return self.sql(negated)

"""Totality: every row expression of an accepted query evaluates on every row without raising.

A query that fails on some data and not on other data answers a yes/no question for free
(refused and failed queries spend nothing). The type checker
(``dpsql.expr.types``) refuses what cannot be made safe; ``error_free`` makes the rest
safe, and it is the one function every row expression passes through on its way to an
engine (WHERE, GROUP BY expressions, aggregate arguments, subquery columns, join
conditions). The rule, in the order it is applied:

1. **Literals are typed at plan time.** A text literal compared with a date, timestamp or
   time (``d = '2020-01-31'``, ``IN``, ``BETWEEN``, ``CASE d WHEN ...``) was parsed by the
   checker and is printed as a typed literal of its canonical form; engines otherwise
   convert it row by row, failing only when a row reaches it. Numbers are BIGINT (integers
   that fit) or DOUBLE, never DECIMAL or HUGEINT.
2. **Numbers are 64-bit integers or doubles.** DECIMAL, HUGEINT and unsigned 64-bit
   columns are read as DOUBLE, so no comparison, CASE or sum can overflow; arithmetic,
   ``ABS`` and negation are computed in DOUBLE (floats never raise; ±inf is clamped
   later), and a subquery's ``SUM`` is returned as DOUBLE. A ``SUM`` or ``AVG`` of an
   integer-typed value (an integer column, or a COALESCE, CASE, LEAST ... of them) adds its
   values as DECIMAL(38, 0), exact on every engine: Spark's BIGINT sum raises on overflow
   (where DuckDB sums in 128 bits) and its AVG adds in DOUBLE.
3. **Dates never overflow timestamps.** Where a date meets a timestamp (comparisons, CASE,
   COALESCE, LEAST/GREATEST, ``date_trunc``, ``CAST(d AS TIMESTAMP)``) the date is
   ``TRY_CAST`` to TIMESTAMP, read within years 1–9999 (rule 8): DATE's range is wider than
   TIMESTAMP's, and Spark's TRY_CAST, too, raises beyond it.
4. **Division, ``//`` and ``%`` by zero give NULL** in every dialect.
5. **A NULL given to a date function is a NULL TIMESTAMP**: DuckDB cannot choose among
   ``year``'s or ``date_trunc``'s overloads for an untyped NULL and refuses the query
   (``EXTRACT(year FROM NULL)``, found by the fuzzer). **A NULL beside a TIME is a NULL
   TIME** (compared with it, in its ``IN`` list or tuple, or another result of its
   COALESCE, CASE, IF, LEAST or GREATEST): Spark cannot bring TIME and an untyped NULL to
   one type and refuses ``tm = NULL`` (found by the seeded Spark fuzz).
6. **Text is a number or a date only when written as one.** ``TRY_CAST(text AS <number>)``
   is NULL unless the text is plain decimal notation (``PLAIN_NUMBERS``: spaces, a sign,
   digits, for DECIMAL a point, for floats an exponent): engines read other spellings
   differently (DuckDB reads ``'0x1F'``, ``'1_000'`` and ``'2.5'`` as the BIGINTs 31, 1000
   and 3; Spark gives NULL for each and reads ``'1d'`` as a DOUBLE), so a query would mean
   one thing on DuckDB and another on Spark. Likewise ``TRY_CAST(text AS DATE)`` reads
   ``YYYY-MM-DD`` only, and ``AS TIMESTAMP`` that, then maybe `` hh:mm[:ss[.ffffff]]``
   (``PLAIN_DATES``): DuckDB reads ``'infinity'``, ``'epoch'`` and ``'2020/01/01'``, Spark
   ``'2020'``, ``'+2020-01-01'`` and ``'2020-01-01 BC'``, DuckDB ``'2020-01-01 24:00:00'``
   as the next midnight, Spark ``'… 10:00:00+02'`` as 08:00.
7. **Rounding to decimals is binary.** ``ROUND(x, d)`` of a DOUBLE is
   ``ROUND(x · 10^d) / 10^d`` in doubles (``_round_in_binary``): DuckDB rounded x·10^d,
   Spark the decimal text of x, so ``ROUND(1.005, 2)`` was 1.0 in one and 1.01 in the other.
8. **Dates and timestamps are read within years 1–9999** where they are converted or taken
   apart: as the argument of a date function (``year``, ``hour``, ``EXTRACT``,
   ``date_trunc``, ``strftime``), as what a cast converts (to TIMESTAMP, DATE or text, so
   also where rule 3 meets a date with a timestamp) and in CONCAT. Outside those years,
   DuckDB's ``'infinity'`` and ``'-infinity'`` included, the value is NULL there
   (``_within_years``). Spark raises on such values: its dates reach far beyond its
   timestamps (a date converted to a timestamp overflows, ``TRY_CAST`` too), ``date_trunc``
   of a timestamp near its least falls below it (DuckDB raises there as well), and DuckDB's
   ``'infinity'`` date, handed over by Arrow, is the ordinary date 5881580-07-11 in Spark.
   And the engines read the others differently: ``year`` of an infinite timestamp is NULL
   in DuckDB and 294247 in Spark, the text of 10000-01-01 is ``10000-01-01`` in one and
   ``+10000-01-01`` in the other. Likewise a TIME of 24:00:00 (DuckDB's end of the day,
   which Spark stores but cannot print) is NULL as text.

>>> import sqlglot
>>> types = {"age": "INTEGER", "d": "DATE", "ts": "TIMESTAMP", "m": "DECIMAL(38,2)"}
>>> error_free(sqlglot.parse_one("d = '2020-1-5'"), types).sql()
Traceback (most recent call last):
...
dpsql.errors.InternalError: the text literal '2020-1-5' reached the rewrite unchecked: ...
>>> error_free(sqlglot.parse_one("d BETWEEN '2020-01-05' AND ts"), types).sql()
"TRY_CAST(CASE WHEN YEAR(d) BETWEEN 1 AND 9999 THEN d END AS TIMESTAMP) BETWEEN \
TRY_CAST(CAST('2020-01-05' AS DATE) AS TIMESTAMP) AND ts"
>>> error_free(sqlglot.parse_one("m > 2.5 AND age * 1000000000000 > 5"), types).sql()
'CAST(m AS DOUBLE) > CAST(2.5 AS DOUBLE) AND CAST(age AS DOUBLE) * CAST(1000000000000 AS \
DOUBLE) > 5'
>>> error_free(sqlglot.parse_one("age / (age - 1)"), types).sql()
'CASE WHEN (CAST(age AS DOUBLE) - CAST(1 AS DOUBLE)) = 0 THEN NULL ELSE CAST(age AS DOUBLE) / \
(CAST(age AS DOUBLE) - CAST(1 AS DOUBLE)) END'
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlglot import exp

from dpsql.catalog import FLOAT_TYPES, INTEGER_TYPES, column_class
from dpsql.errors import InternalError, UnsupportedQueryError
from dpsql.expr.functions import DATES, SIGNATURES
from dpsql.expr.nodes import as_double, number
from dpsql.expr.types import (
    COMPARISONS,
    sql_type,
    temporal_literal,
    text_meets_temporal,
    type_class,
    value_arguments,
)

ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.IntDiv, exp.Mod, exp.Neg, exp.Abs)
BIGINT_RANGE = (-(2**63), 2**63 - 1)
TEMPORAL_TYPES = {"date": "DATE", "timestamp": "TIMESTAMP", "time": "TIME"}
SIGNED_INTEGERS = (exp.DataType.Type.TINYINT, exp.DataType.Type.SMALLINT, exp.DataType.Type.INT,
                   exp.DataType.Type.BIGINT)
INTEGER_CHOICES = (exp.Paren, exp.Coalesce, exp.Case, exp.If, exp.Nullif, exp.Least, exp.Greatest)


PLAIN_NUMBERS = {"integer": r"^ *[+-]?[0-9]+ *\z",
                 "decimal": r"^ *[+-]?([0-9]+([.][0-9]*)?|[.][0-9]+) *\z",
                 "float": r"^ *[+-]?([0-9]+([.][0-9]*)?|[.][0-9]+)([eE][+-]?[0-9]+)? *\z"}
"""The text each kind of number target reads (rule 6), in the regular-expression syntax
DuckDB (RE2) and Spark (Java) share: ASCII classes only, and backslash-z for the end of the
text, since Java's ``$`` also matches before a final newline. Each reads its text one way
only (no two of its parts can take the same digit): Java's engine backtracks, and
``[0-9]+[.]?[0-9]*`` tried every split of a long run of digits, text² steps on one row."""
PLAIN_DATES = {"date": r"^[0-9]{4}-[0-9]{2}-[0-9]{2}\z",
               "timestamp": r"^[0-9]{4}-[0-9]{2}-[0-9]{2}"
                            r"([ T]([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9]([.][0-9]{1,6})?)?)?\z"}
"""The text dates and timestamps are read from (rule 6): digits in ISO 8601's order, in the
forms that both engines read as the same value (or both as NULL: ``'2021-02-29'``)."""


def error_free(expr: exp.Expression, types: Mapping[str, str]) -> exp.Expression:
    """``expr`` made total under the module's rule; ``types`` maps its columns to SQL types."""
    holder = exp.Paren(this=expr.copy())  # so that the root, too, can be replaced
    for step in (_typed_literals, _dates_as_timestamps, _dates_within_years, _numbers,
                 _typed_nulls, _plain_text):
        step(holder, types)
    return guard_division(holder.this, copy=False)


def _plain_text(tree: exp.Expression, types: Mapping[str, str]) -> None:
    """Rule 6: ``TRY_CAST(text AS number)`` reads plain decimal notation only, ``AS DATE``
    and ``AS TIMESTAMP`` ISO 8601's digits only.

    >>> import sqlglot
    >>> sql = error_free(sqlglot.parse_one("TRY_CAST(s AS INT) > 1"), {"s": "VARCHAR"})
    >>> print(sql.sql("duckdb")[:62])
    CASE WHEN REGEXP_MATCHES(s, '^ *[+-]?[0-9]+ *...
    """
    for node in _bottom_up(tree):
        if not isinstance(node, exp.TryCast) or _kind(node.this, types) != "string":
            continue
        to = node.to
        kind = ("integer" if to.is_type(*exp.DataType.INTEGER_TYPES) else
                "decimal" if to.is_type(exp.DataType.Type.DECIMAL) else
                "float" if to.is_type(*exp.DataType.REAL_TYPES) else
                sql_type(to.sql(dialect="duckdb")))
        pattern = PLAIN_NUMBERS.get(kind) or PLAIN_DATES.get(kind)
        if pattern is None:
            continue
        plain = exp.RegexpLike(this=node.this.copy(), expression=exp.Literal.string(pattern))
        _replace(node, exp.Case(ifs=[exp.If(this=plain, true=node.copy())]))


def _kind(node: exp.Expression, types: Mapping[str, str]) -> str:
    """The type class of ``node``; "other" for nodes the rewrite itself built (``ISNAN``),
    which the checker does not list and which need no change."""
    try:
        return type_class(node, types)
    except UnsupportedQueryError:
        return "other"


def _bottom_up(tree: exp.Expression) -> list[exp.Expression]:
    """Every node, each after all of its descendants: a node may then wrap a copy of a child
    whose subtree is already done."""
    return list(reversed(list(tree.walk())))


def _operands(node: exp.Expression) -> list[exp.Expression]:
    """The values ``node`` compares with one another (empty if it compares none)."""
    if isinstance(node, (*COMPARISONS, exp.Nullif)):
        return [node.this, node.expression]
    if isinstance(node, exp.In):
        return [node.this, *node.expressions]
    if isinstance(node, exp.Between):
        return [node.this, node.args["low"], node.args["high"]]
    if isinstance(node, exp.Case) and node.this is not None:
        return [node.this, *(branch.this for branch in node.args.get("ifs") or [])]
    return []


def _results(node: exp.Expression) -> list[exp.Expression]:
    """The values ``node`` may return, which the engine brings to one type."""
    if isinstance(node, exp.Least | exp.Greatest | exp.Coalesce):
        return [node.this, *node.expressions]
    if isinstance(node, exp.Case):
        return [*(b.args["true"] for b in node.args.get("ifs") or []),
                *([node.args["default"]] if node.args.get("default") is not None else [])]
    if isinstance(node, exp.If):
        return [v for v in (node.args.get("true"), node.args.get("false")) if v is not None]
    return []


def _typed_nulls(tree: exp.Expression, types: Mapping[str, str]) -> None:
    """Untyped NULL arguments of date functions become NULL TIMESTAMPs, and untyped NULLs
    beside a TIME value NULL TIMEs (rule 5)."""
    for node in _bottom_up(tree):
        slots, _ = SIGNATURES.get(type(node), ((), ""))
        for slot, allowed in slots:
            argument = node.args.get(slot)
            if allowed == DATES and isinstance(argument, exp.Expression) and \
                    _kind(argument, types) == "null":
                _replace(argument, exp.Cast(this=argument.copy(),
                                            to=exp.DataType.build("TIMESTAMP")))
        for values in (_operands(node), _results(node), *_fields(node)):
            kinds = [_kind(value, types) for value in values]
            if "time" in kinds:
                for value in (v for v, k in zip(values, kinds, strict=True) if k == "null"):
                    _replace(value, exp.Cast(this=value.copy(), to=exp.DataType.build("TIME")))


def _fields(node: exp.Expression) -> list[list[exp.Expression]]:
    """For a tuple ``IN``, the values compared at each position of the tuples."""
    if not (isinstance(node, exp.In) and isinstance(node.this, exp.Tuple)):
        return []
    rows = [node.this, *(r for r in node.expressions if isinstance(r, exp.Tuple))]
    return [list(position) for position in zip(*(r.expressions for r in rows), strict=False)]


def _typed_literals(tree: exp.Expression, types: Mapping[str, str]) -> None:
    """Text literals compared with temporal values become typed literals (rule 1)."""
    for node in _bottom_up(tree):
        operands = _operands(node)
        classes = [_kind(o, types) for o in operands]
        temporal = next((c for c in classes if c in TEMPORAL_TYPES), None)
        for operand, kind in zip(operands, classes, strict=True):
            if temporal and text_meets_temporal(temporal, kind, operand):
                _replace(operand, _temporal(operand.name, temporal))
        if isinstance(node, exp.Cast) and isinstance(node.this, exp.Literal) and \
                node.this.is_string:
            kind = sql_type(node.to.sql(dialect="duckdb"))
            if kind in TEMPORAL_TYPES:
                canonical = temporal_literal(node.this.name, kind)
                node.set("this", exp.Literal.string(canonical))


def _temporal(text: str, kind: str) -> exp.Expression:
    canonical = temporal_literal(text, kind)
    if canonical is None:
        raise InternalError(f"the text literal {text!r} reached the rewrite unchecked: the "
                            f"type checker refuses any that is not a valid {kind}")
    return exp.Cast(this=exp.Literal.string(canonical),
                    to=exp.DataType.build(TEMPORAL_TYPES[kind]))


def _dates_as_timestamps(tree: exp.Expression, types: Mapping[str, str]) -> None:
    """Dates that meet timestamps are TRY_CAST to TIMESTAMP (rule 3)."""
    for node in _bottom_up(tree):
        values = _operands(node) or _results(node)
        classes = [_kind(v, types) for v in values]
        if {"date", "timestamp"} <= set(classes):
            for value, kind in zip(values, classes, strict=True):
                if kind == "date":
                    _replace(value, _as_timestamp(value))
        if isinstance(node, exp.TimestampTrunc) and _kind(node.this, types) == "date":
            node.set("this", _as_timestamp(node.this))
        if isinstance(node, exp.Cast) and not isinstance(node, exp.TryCast) and \
                sql_type(node.to.sql(dialect="duckdb")) == "timestamp" and \
                _kind(node.this, types) == "date":
            _replace(node, exp.TryCast(this=node.this.copy(), to=node.to.copy()))


def _as_timestamp(node: exp.Expression) -> exp.Expression:
    return exp.TryCast(this=node.copy(), to=exp.DataType.build("TIMESTAMP"))


YEARS = (1, 9999)
"""The years whose dates and timestamps every engine converts and takes apart alike (rule
8): those of ISO 8601's four-digit years, which both engines print without a sign or era."""
LAST_TIME = "23:59:59.999999"
"""The last TIME of the day both engines print (DuckDB also stores 24:00:00)."""
CHOICES = (exp.Paren, exp.Coalesce, exp.Least, exp.Greatest, exp.Case, exp.If, exp.Nullif)


def _dates_within_years(tree: exp.Expression, types: Mapping[str, str]) -> None:
    """Dates and timestamps that are converted or taken apart are read within ``YEARS``,
    TIMEs printed as text up to ``LAST_TIME`` (rule 8).

    >>> import sqlglot
    >>> sql = error_free(sqlglot.parse_one("hour(COALESCE(d, e))"), {"d": "DATE", "e": "DATE"})
    >>> print(sql.sql("duckdb"))
    HOUR(COALESCE(CASE WHEN YEAR(d) BETWEEN 1 AND 9999 THEN d END, CASE WHEN YEAR(e) BETWEEN \
1 AND 9999 THEN e END))
    """
    for node in _bottom_up(tree):
        for value in _converted(node, types):
            _within_years(value, types)


def _converted(node: exp.Expression, types: Mapping[str, str]) -> list[exp.Expression]:
    """The date, timestamp or time values that ``node`` converts or takes apart: a date
    function's argument, a cast's operand (a TIME only to text), CONCAT's arguments."""
    if isinstance(node, exp.Concat):
        values = list(node.expressions)
    elif isinstance(node, exp.Cast):
        values = [node.this]
    else:
        slots, _ = SIGNATURES.get(type(node), ((), ""))
        values = [node.args.get(slot) for slot, allowed in slots if allowed == DATES]
    return [v for v in values if isinstance(v, exp.Expression) and
            _kind(v, types) in TEMPORAL_TYPES]


def _within_years(value: exp.Expression, types: Mapping[str, str]) -> None:
    """Replace ``value`` by itself where it lies within ``YEARS`` (``LAST_TIME`` for a TIME)
    and NULL elsewhere. A choice among values (COALESCE, CASE ...) has each of its values
    guarded instead, so that nested choices are not written twice; typed literals (checked
    at plan time), ``date_trunc`` and casts of guarded values lie within already."""
    if isinstance(value, exp.TimestampTrunc) or (isinstance(value, exp.Cast) and (
            value.this.is_string or _kind(value.this, types) in TEMPORAL_TYPES)):
        return
    if isinstance(value, CHOICES):
        for choice in value_arguments(value):
            if _kind(choice, types) in TEMPORAL_TYPES:
                _within_years(choice, types)
        return
    _replace(value, in_years(value, _kind(value, types)))


def in_years(value: exp.Expression, kind: str) -> exp.Expression:
    """``value`` (of type class ``kind``: date, timestamp or time) where it lies within
    ``YEARS`` (a TIME up to ``LAST_TIME``), else NULL: the same value in every engine.

    >>> print(in_years(exp.column("tm"), "time").sql("duckdb"))
    CASE WHEN tm <= CAST('23:59:59.999999' AS TIME) THEN tm END
    """
    if kind == "time":
        last = exp.Cast(this=exp.Literal.string(LAST_TIME), to=exp.DataType.build("TIME"))
        inside: exp.Expression = exp.LTE(this=value.copy(), expression=last)
    else:
        inside = exp.Between(this=exp.Year(this=value.copy()), low=number(YEARS[0]),
                             high=number(YEARS[1]))
    return exp.Case(ifs=[exp.If(this=inside, true=value.copy())])


def _numbers(tree: exp.Expression, types: Mapping[str, str]) -> None:
    """Wide numeric columns and literals as DOUBLE, arithmetic in DOUBLE (rule 2); ROUND to
    decimals in binary (rule 7)."""
    for node in _bottom_up(tree):
        if _wide_value(node, types):
            _replace(node, as_double(node.copy()))
        elif isinstance(node, ARITHMETIC) and not _literal_argument(node):
            for arg in ("this", "expression"):
                child = node.args.get(arg)
                if child is not None and not _is_double(child):
                    node.set(arg, as_double(child))
        elif isinstance(node, exp.Sum):
            _replace(node, as_double(_exact_total(node.this, types) or node.copy()))
        elif isinstance(node, exp.Avg) and (total := _exact_total(node.this, types)):
            count = exp.Nullif(this=exp.Count(this=node.this.copy()), expression=number(0))
            _replace(node, exp.Div(this=as_double(total), expression=as_double(count)))
        elif isinstance(node, exp.Round) and (places := _decimals(node)) and \
                not _integer_typed(node.this, types):
            _replace(node, _round_in_binary(node.this, places))


def _decimals(node: exp.Round) -> int:
    """ROUND's number of decimals (a literal, checked by the type checker); 0 if absent."""
    arg = node.args.get("decimals")
    if arg is None:
        return 0
    return -int(arg.this.this) if isinstance(arg, exp.Neg) else int(arg.this)


def _round_in_binary(value: exp.Expression, places: int) -> exp.Expression:
    """``ROUND(value, places)`` of a DOUBLE as ``ROUND(value · 10^places) / 10^places``, and
    ``value`` itself where ``|value · 10^places| ≥ 2⁵²`` (whole already), NaN or infinite.

    DuckDB rounds ``value · 10^places`` in binary; Spark rounds the decimal text of
    ``value`` half up, so ``ROUND(0.15, 1)`` was 0.1 in DuckDB and 0.2 in Spark. Rounding a
    DOUBLE to a whole number is the same in both (half away from zero: a double whose
    shortest text ends in .5 is exactly that half), so this form means one thing everywhere.

    >>> print(_round_in_binary(exp.column("x"), 1).sql("duckdb"))
    CASE WHEN ABS(x * CAST(10 AS DOUBLE)) < 4503599627370496 THEN ROUND(x * CAST(10 AS \
DOUBLE)) / CAST(10 AS DOUBLE) ELSE x END
    """
    scale = as_double(number(10.0**places))
    scaled = exp.Mul(this=value.copy(), expression=scale)
    rounded = exp.Div(this=exp.Round(this=scaled.copy()), expression=scale.copy())
    whole = exp.LT(this=exp.Abs(this=scaled), expression=number(2**52))
    return exp.Case(ifs=[exp.If(this=whole, true=rounded)], default=value.copy())


def _exact_total(value: exp.Expression, types: Mapping[str, str]) -> exp.Expression | None:
    """``SUM(CAST(value AS DECIMAL(38, 0)))`` for an integer-typed value, else None.

    >>> _exact_total(exp.column("n"), {"n": "BIGINT"}).sql("spark")
    'SUM(CAST(n AS DECIMAL(38, 0)))'
    >>> import sqlglot
    >>> _exact_total(sqlglot.parse_one("COALESCE(n, 0)"), {"n": "BIGINT"}).sql("spark")
    'SUM(CAST(COALESCE(n, 0) AS DECIMAL(38, 0)))'
    """
    if not _integer_typed(value, types):
        return None
    return exp.Sum(this=exp.Cast(this=value.copy(), to=exp.DataType.build("DECIMAL(38, 0)")))


def _integer_typed(node: exp.Expression, types: Mapping[str, str]) -> bool:
    """True when ``node`` is a 64-bit (or narrower) integer on every engine, so that casting
    it to DECIMAL(38, 0) is exact and cannot fail: an integer column, a BIGINT literal, a cast
    to an integer type, or a choice among such values (COALESCE, CASE, IF, NULLIF, LEAST,
    GREATEST). Arithmetic is DOUBLE by then (rule 2) and is not one of them.

    >>> import sqlglot
    >>> [_integer_typed(sqlglot.parse_one(sql), {"n": "INTEGER", "x": "DOUBLE"})
    ...  for sql in ("CASE WHEN x > 0 THEN n ELSE NULL END", "GREATEST(n, x)", "NULL")]
    [True, False, False]
    """
    if isinstance(node, exp.Column):
        return types.get(node.name.lower(), "").upper().startswith(INTEGER_TYPES)
    if isinstance(node, exp.Literal):
        return not node.is_string and _bigint(node.this)
    if isinstance(node, (exp.Cast, exp.TryCast)):
        return node.to.is_type(*SIGNED_INTEGERS)
    if isinstance(node, INTEGER_CHOICES):
        values = [v for v in value_arguments(node) if not isinstance(v, exp.Null)]
        return bool(values) and all(_integer_typed(v, types) for v in values)
    return False


def _replace(node: exp.Expression, new: exp.Expression) -> None:
    """Put ``new`` where ``node`` is (every node is below ``error_free``'s holder)."""
    node.replace(new)


def _wide_value(node: exp.Expression, types: Mapping[str, str]) -> bool:
    """A column of a wide numeric type, or a number literal that is not a BIGINT."""
    if isinstance(node, exp.Column):
        return wide_number(types.get(node.name.lower(), ""))
    return isinstance(node, exp.Literal) and not node.is_string and not _bigint(node.this) \
        and not isinstance(node.parent, exp.Cast)


def wide_number(sql_type_name: str) -> bool:
    """Numeric types other than 64-bit integers and floats (DECIMAL, HUGEINT, UBIGINT): every
    row expression reads them as DOUBLE (rule 2)."""
    name = sql_type_name.upper()
    if name.startswith(("UBIGINT", "INT128")):
        return True
    return column_class(name) == "numeric" and not name.startswith((*INTEGER_TYPES,
                                                                    *FLOAT_TYPES))


def _bigint(text: str) -> bool:
    return text.lstrip("-").isdigit() and BIGINT_RANGE[0] <= int(text) <= BIGINT_RANGE[1]


def guard_division(expr: exp.Expression, *, copy: bool = True,
                   floor: bool = True) -> exp.Expression:
    """Every ``x / y``, ``x // y`` and ``x % y`` as CASE WHEN y = 0 THEN NULL ELSE ... END.

    With ``floor``, ``x // y`` becomes FLOOR(x / y) (engines disagree on ``//`` of floats;
    row values are DOUBLE here). Innermost first, so nested divisions are all guarded.
    """
    root = expr.copy() if copy else expr
    for node in reversed(list(root.find_all(exp.Div, exp.IntDiv, exp.Mod))):
        divisor = node.expression
        if _nonzero_literal(divisor) and isinstance(node, exp.Div):
            continue
        value: exp.Expression = exp.Div(this=node.this, expression=divisor.copy())
        if isinstance(node, exp.IntDiv):
            value = exp.Floor(this=value) if floor else exp.IntDiv(
                this=node.this, expression=divisor.copy())
        elif isinstance(node, exp.Mod):
            value = exp.Mod(this=node.this, expression=divisor.copy())
        zero = exp.EQ(this=divisor.copy(), expression=exp.Literal.number(0))
        guarded = exp.Case(ifs=[exp.If(this=zero, true=exp.Null())], default=value)
        if node is root:
            root = guarded
        else:
            node.replace(guarded)
    return root


def _literal_argument(node: exp.Expression) -> bool:
    """A checked integer literal such as ROUND's decimals or SUBSTR's positions (e.g. -1)."""
    parent = node.parent
    return isinstance(parent, exp.Round | exp.Substring | exp.Left | exp.Right) and \
        node.arg_key != "this"


def _nonzero_literal(node: exp.Expression) -> bool:
    while isinstance(node, exp.Cast | exp.Paren):
        node = node.this
    return isinstance(node, exp.Literal) and not node.is_string and float(node.this) != 0


def _is_double(node: exp.Expression) -> bool:
    """A DOUBLE cast, or arithmetic (widened already: nodes are visited bottom-up)."""
    node = node.unnest()
    return isinstance(node, ARITHMETIC) or (
        isinstance(node, exp.Cast) and node.to.this == exp.DataType.Type.DOUBLE)

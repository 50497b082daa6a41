"""Types of row-level expressions, checked before any data is read.

An engine raises errors on rows it cannot convert (``'abc' = 1`` casts the
text to a number) — errors that depend on private data and would answer a
yes/no question about it for free. So every comparison, IN list and function
argument must have matching types, decided from the catalog alone. The types
are numeric, string, boolean, date, timestamp, time, interval, null and other
(``type_class``); the scalar functions and their signatures are listed in
``dpsql.expr.functions``.

>>> import sqlglot
>>> types = {"age": "INTEGER", "name": "VARCHAR", "seen": "DATE"}
>>> type_class(sqlglot.parse_one("age + 1 > 3 AND name LIKE 'a%'"), types)
'boolean'
>>> type_class(sqlglot.parse_one("date_trunc('month', seen)", dialect="duckdb"), types)
'timestamp'
>>> type_class(sqlglot.parse_one("name = 1"), types)
Traceback (most recent call last):
...
dpsql.errors.UnsupportedQueryError: `name = 1` compares string with numeric...
>>> type_class(sqlglot.parse_one("CAST(name AS INTEGER)"), types)
Traceback (most recent call last):
...
dpsql.errors.UnsupportedQueryError: `CAST(name AS INT)` can fail on some rows...
"""

from __future__ import annotations

import datetime
import decimal
import math
from collections.abc import Mapping

from sqlglot import exp

from dpsql.catalog import INTEGER_TYPES, column_class
from dpsql.errors import InvalidLiteral, UnsupportedQueryError
from dpsql.expr.functions import PART_NODES, SIGNATURES, check_literal_arguments

COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)
ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.IntDiv, exp.Mod)
DATES = ("date", "timestamp")


def sql_type(sql_type_name: str) -> str:
    """The type of values of an engine type name (temporal types told apart).

    >>> sql_type("TIMESTAMP WITH TIME ZONE"), sql_type("TIME"), sql_type("BIGINT")
    ('timestamp', 'time', 'numeric')
    """
    kind = column_class(sql_type_name)
    if kind != "temporal":
        return kind
    name = sql_type_name.upper()
    for prefix, fine in (("TIMESTAMP", "timestamp"), ("DATETIME", "timestamp"),
                         ("DATE", "date"), ("TIME", "time")):
        if name.startswith(prefix):
            return fine
    return "interval"


def _fail(node: exp.Expression, message: str) -> None:
    raise UnsupportedQueryError(f"`{node.sql(dialect='duckdb')}` {message}")


def _invalid(node: exp.Expression, text: str, kind: str, message: str) -> None:
    raise InvalidLiteral(f"`{node.sql(dialect='duckdb')}` {message}", text, kind)


TEMPORAL_EXAMPLES = {"date": "'2020-01-31'", "timestamp": "'2020-01-31 13:45:00'",
                     "time": "'13:45:00'"}
TEMPORAL_PARSERS = {"date": datetime.date.fromisoformat,
                    "timestamp": datetime.datetime.fromisoformat,
                    "time": datetime.time.fromisoformat}


def temporal_literal(text: str, kind: str) -> str | None:
    """``text`` as the canonical literal of a date, timestamp or time; None if it is not one.

    Engines convert a text literal compared with a date column lazily, row by row: a bad
    literal fails only when a row reaches the comparison, which would answer a question
    about the data for free. So dpsql parses the literal here, before any data is read, and
    the rewrite prints this canonical form as a typed literal (``total``). Time zones are
    not accepted (the columns have none).

    >>> temporal_literal("2020-02-01", "date"), temporal_literal("2020-02-30", "date")
    ('2020-02-01', None)
    >>> temporal_literal("2020-02-01T10:00", "timestamp"), temporal_literal("25:00", "time")
    ('2020-02-01 10:00:00', None)
    """
    try:
        value = TEMPORAL_PARSERS[kind](text)
    except (ValueError, KeyError):
        return None
    if isinstance(value, datetime.datetime | datetime.time) and value.tzinfo is not None:
        return None
    return value.isoformat(sep=" ") if isinstance(value, datetime.datetime) else \
        value.isoformat()


def text_meets_temporal(a: str, b: str, right: exp.Expression) -> bool:
    """A date, timestamp or time value (class ``a``) against a text literal ``right``."""
    return a in (*DATES, "time") and b == "string" and isinstance(right, exp.Literal)


def _comparable(a: str, b: str, right: exp.Expression) -> bool:
    if "null" in (a, b) or (a == b and a != "other") or {a, b} == set(DATES):
        return True
    if text_meets_temporal(a, b, right):
        if temporal_literal(right.name, a) is None:
            _invalid(right, right.name, a, f"is not a valid {a} literal (e.g. "
                     f"{TEMPORAL_EXAMPLES[a]}); the engine would fail on some rows only")
        return True
    return False


def _compare(node: exp.Expression, left: exp.Expression, rights: list[exp.Expression],
             types: Mapping[str, str]) -> str:
    if isinstance(left, exp.Tuple):
        for right in rights:
            if not isinstance(right, exp.Tuple) or len(right.expressions) != len(left.expressions):
                _fail(node, "compares a tuple with a value of another shape")
            for a, b in zip(left.expressions, right.expressions, strict=True):
                _compare(node, a, [b], types)
        return "boolean"
    a = type_class(left, types)
    for right in rights:
        b = type_class(right, types)
        if not _comparable(a, b, right):
            _fail(node, f"compares {a} with {b}; compare values of the same type "
                  "(e.g. quote text, leave numbers unquoted)")
    return "boolean"


def _expect(node: exp.Expression, args: list[exp.Expression], wanted: str | frozenset[str],
            types: Mapping[str, str]) -> None:
    allowed = {wanted} if isinstance(wanted, str) else set(wanted)
    for arg in args:
        got = type_class(arg, types)
        if got not in allowed | {"null"}:
            label = " or ".join(sorted(allowed))
            _fail(node, f"needs {label} arguments, but `{arg.sql(dialect='duckdb')}` is {got}")


def _check_pattern(node: exp.Like | exp.ILike) -> None:
    """A LIKE pattern is a text literal without a backslash.

    A pattern read from the rows could be one an engine rejects — Spark refuses a pattern
    ending in ``\\`` (its default escape), DuckDB does not — so whether the query fails
    would depend on the data (found by the Spark fuzzer). In a literal, a backslash is a
    character to DuckDB and an escape to Spark: the same query would match other rows.

    >>> _check_pattern(exp.Like(this=exp.column("s"), expression=exp.column("t")))
    Traceback (most recent call last):
    ...
    dpsql.errors.UnsupportedQueryError: `s LIKE t` needs a text literal as its pattern: ...
    """
    pattern = node.expression
    if isinstance(pattern, exp.Null):
        return
    if not (isinstance(pattern, exp.Literal) and pattern.is_string):
        _fail(node, "needs a text literal as its pattern: a pattern read from the rows could "
                    "be one an engine rejects (a trailing backslash, on Spark), so whether the "
                    "query fails would depend on the data. Write the pattern out, or compare "
                    "with =")
    if "\\" in pattern.this:
        _fail(node, "has a backslash in its pattern, which engines read differently (DuckDB "
                    "as a character, Spark as an escape): match it another way, e.g. with _ "
                    "for any one character")


def _same(node: exp.Expression, args: list[exp.Expression], types: Mapping[str, str]) -> str:
    classes = {type_class(a, types) for a in args} - {"null"}
    if classes == set(DATES):
        return "timestamp"
    if len(classes) > 1 or "other" in classes:
        _fail(node, f"mixes {', '.join(sorted(classes))}; give arguments of one type")
    return classes.pop() if classes else "null"


def _case(node: exp.Case, types: Mapping[str, str]) -> str:
    operand = node.this
    for branch in node.args.get("ifs") or []:
        if operand is not None:
            _compare(node, operand, [branch.this], types)
        else:
            _expect(node, [branch.this], "boolean", types)
    results = [b.args["true"] for b in node.args.get("ifs") or []]
    return _same(node, [*results, *([node.args["default"]] if node.args.get("default")
                                    else [])], types)


def _if(node: exp.If, types: Mapping[str, str]) -> str:
    _expect(node, [node.this], "boolean", types)
    return _same(node, [node.args["true"], *([node.args["false"]] if node.args.get("false")
                                              else [])], types)


def _cast(node: exp.Cast, types: Mapping[str, str]) -> str:
    """CAST only where it cannot fail on any row; TRY_CAST (NULL on failure) anywhere."""
    target = sql_type(node.to.sql(dialect="duckdb"))
    source = type_class(node.this, types)
    if target == "other" or source == "other" or node.args.get("format") is not None:
        _fail(node, "casts to or from a type dpsql cannot check; cast to a number, text, "
              "boolean, date or timestamp")
    if node.to.this in UNPORTABLE:
        _fail(node, f"casts to {node.to.sql(dialect='duckdb')}, which not every engine dpsql "
              "runs on has (Spark has no unsigned or 128-bit integers); cast to BIGINT, "
              "DECIMAL(38, 0) or DOUBLE")
    literal = _literal_text(node.this) is not None or isinstance(node.this, exp.Null)
    if target == "time" and not literal:
        _fail(node, "casts a value to TIME, which not every engine dpsql runs on can do (Spark "
              "has TIME literals and columns but no cast to TIME); compare the TIME column "
              "with a literal such as '13:45:00' instead")
    if source not in ("null", "string") and target not in (source, "string") and \
            {source, target} != set(DATES) and {source, target} != {"numeric", "boolean"}:
        _fail(node, f"converts {source} to {target}, which engines do differently (DuckDB "
              "gives NULL, Spark converts or refuses); compute the value you mean with "
              "EXTRACT, date_trunc or a CASE instead")
    if source == "numeric" and not _keeps_digits(node.this, node.to, types):
        _fail(node, f"may drop a fraction, which engines round differently (DuckDB to the "
              f"nearest, Spark towards zero); say which you mean: ROUND, FLOOR or CEIL of "
              f"`{node.this.sql(dialect='duckdb')}` first")
    if isinstance(node, exp.TryCast) and not (literal and target == "time"):
        return target
    if literal:
        _check_literal_cast(node, target)
        return target
    safe = (target == "string" or (target, source) in {("numeric", "boolean"),
                                                        ("boolean", "boolean")}
            or (target == source and target in DATES) or {target, source} == set(DATES)
            or (target == "numeric" and source == "numeric" and node.to.is_type(
                exp.DataType.Type.DOUBLE)))
    if not safe:
        _fail(node, f"can fail on some rows (a {source} value that is not a valid "
              f"{node.to.sql(dialect='duckdb')}), and the error would depend on the data; "
              f"use TRY_CAST({node.this.sql(dialect='duckdb')} AS "
              f"{node.to.sql(dialect='duckdb')}), which gives NULL instead")
    return target


def _keeps_digits(value: exp.Expression, to: exp.DataType,
                  types: Mapping[str, str]) -> bool:
    """Whether converting a number to ``to`` keeps every digit of ``value`` (a whole
    number to an integer, a DECIMAL(p, s) to at least s decimals): only then do DuckDB
    and Spark agree, since they round a dropped fraction differently.

    >>> import sqlglot
    >>> types = {"x": "DOUBLE", "m": "DECIMAL(10,2)", "n": "INTEGER"}
    >>> to = exp.DataType.build
    >>> _keeps_digits(sqlglot.parse_one("n * 2"), to("SMALLINT"), types)
    True
    >>> _keeps_digits(sqlglot.parse_one("x"), to("BIGINT"), types)
    False
    >>> _keeps_digits(sqlglot.parse_one("m"), to("DECIMAL(12, 3)"), types), \\
    ...     _keeps_digits(sqlglot.parse_one("m"), to("DECIMAL(12, 1)"), types)
    (True, False)
    """
    if to.this in INTEGER_RANGES:
        scale = 0
    elif to.this == _T.DECIMAL:
        scale = _decimal_shape(to)[1]
    else:
        return True
    text = _literal_text(value)
    if text is not None:  # exactly, from its digits (999999999999999.9995 is not whole)
        return "e" not in text.lower() and len(text.partition(".")[2].rstrip("0")) <= scale
    if integer_valued(value, types):
        return True
    if isinstance(value, exp.Column):
        declared = types.get(value.name.lower(), "")
        if declared.upper().startswith(("DECIMAL", "NUMERIC")):
            return _decimal_shape(exp.DataType.build(declared))[1] <= scale
    return False


def _decimal_shape(to: exp.DataType) -> tuple[int, int]:
    """(precision, scale) of a DECIMAL type, with DuckDB's defaults: DECIMAL is (18, 3),
    DECIMAL(p) is (p, 0).

    >>> build = exp.DataType.build
    >>> _decimal_shape(build("DECIMAL")), _decimal_shape(build("DECIMAL(9)"))
    ((18, 3), (9, 0))
    """
    sizes = [int(e.name) for e in to.expressions]
    if not sizes:
        return 18, 3
    return (sizes[0], 0) if len(sizes) == 1 else (sizes[0], sizes[1])


def _check_literal_cast(node: exp.Cast, target: str) -> None:
    """A literal is converted once, here, so a bad literal fails before any data is read."""
    text = _literal_text(node.this)
    if text is None or target == "string":
        return
    if target in TEMPORAL_PARSERS:
        valid = temporal_literal(text, target) is not None
    elif target == "numeric":
        valid = _finite_number(text) and _fits(decimal.Decimal(text), node.to)
    else:
        valid = target == "boolean" and text.lower() in ("true", "false")
    if not valid:
        _invalid(node, text, target, f"is not a valid {target} literal")


def _literal_text(node: exp.Expression) -> str | None:
    """The text of a literal, a negated number literal included (``-0.5``); else None."""
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and \
            not node.this.is_string:
        return "-" + node.this.name
    return node.name if isinstance(node, exp.Literal) else None


_T = exp.DataType.Type
INTEGER_RANGES = {
    _T.TINYINT: 8, _T.SMALLINT: 16, _T.INT: 32, _T.BIGINT: 64, _T.INT128: 128,
    _T.UTINYINT: -8, _T.USMALLINT: -16, _T.UINT: -32, _T.UBIGINT: -64, _T.UINT128: -128,
}
"""Integer types by bit width; negative for unsigned."""


def _fits(value: decimal.Decimal, to: exp.DataType) -> bool:
    """Whether a finite number converts to ``to`` without overflow (integers and decimals
    round half away from zero first, as DuckDB does).

    >>> _fits(decimal.Decimal("70000"), exp.DataType.build("SMALLINT"))
    False
    >>> _fits(decimal.Decimal("99.994"), exp.DataType.build("DECIMAL(4, 2)"))
    True
    """
    if to.this in INTEGER_RANGES:
        bits = INTEGER_RANGES[to.this]
        low, high = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if bits > 0 else (0, 2 ** -bits - 1)
        return low <= value.to_integral_value(decimal.ROUND_HALF_UP) <= high
    if to.this == _T.DECIMAL:
        precision, scale = _decimal_shape(to)
        rounded = value.quantize(decimal.Decimal(1).scaleb(-scale), decimal.ROUND_HALF_UP,
                                 context=decimal.Context(prec=80))
        return abs(rounded) < decimal.Decimal(10) ** (precision - scale)
    if to.this == _T.FLOAT:
        return abs(value) <= decimal.Decimal("3.4028234663852886e38")
    return to.this == _T.DOUBLE


UNPORTABLE = frozenset((_T.INT128, _T.UINT128, _T.UTINYINT, _T.USMALLINT, _T.UINT, _T.UBIGINT,
                        _T.UMEDIUMINT, _T.UDECIMAL, _T.UDOUBLE))
"""Cast targets that DuckDB has and Spark lacks: refused, so a plan runs on every engine."""
MAX_DIGITS = 38
"""The most digits a number literal may have: DuckDB and Spark read up to 38 as a DECIMAL;
beyond, DuckDB reads a 128-bit integer or a DOUBLE and Spark fails."""


def _digits(text: str) -> int:
    """The precision of the DECIMAL a number literal is read as: the digits of its integer
    part (leading zeros aside) and all of its fraction; 0 in scientific notation, which
    every engine reads as a DOUBLE.

    >>> _digits("0.00120"), _digits("-170141183460469231731687303715884105727"), _digits("1e400")
    (5, 39, 0)
    """
    if "e" in text.lower():
        return 0
    whole, _, fraction = text.lstrip("+-").partition(".")
    return len(whole.lstrip("0")) + len(fraction)


def _finite_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def _function(node: exp.Expression, types: Mapping[str, str]) -> str:
    slots, result = SIGNATURES[type(node)]
    check_literal_arguments(node)
    for slot, allowed in slots:
        value = node.args.get(slot)
        args = value if isinstance(value, list) else [value] if value is not None else []
        _expect(node, args, allowed, types)
    return result


def type_class(node: exp.Expression, types: Mapping[str, str]) -> str:
    """The type of a whitelisted row-level expression, or UnsupportedQueryError."""
    if isinstance(node, exp.Column):
        return sql_type(types.get(node.name.lower(), ""))
    if isinstance(node, exp.Literal):
        if not node.is_string and not _finite_number(node.this):
            _fail(node, "is not a finite number")
        if not node.is_string and _digits(node.this) > MAX_DIGITS:
            _fail(node, f"has more than {MAX_DIGITS} digits, which engines read differently "
                  "(DuckDB as a 128-bit integer or a DOUBLE, Spark not at all); write it in "
                  f"scientific notation, e.g. {float(node.this):.6e}")
        return "string" if node.is_string else "numeric"
    if isinstance(node, exp.Boolean):
        return "boolean"
    if isinstance(node, exp.Null):
        return "null"
    if isinstance(node, exp.Paren):
        return type_class(node.this, types)
    if isinstance(node, COMPARISONS):
        return _compare(node, node.this, [node.expression], types)
    if isinstance(node, exp.In):
        return _compare(node, node.this, node.expressions, types)
    if isinstance(node, exp.Between):
        return _compare(node, node.this, [node.args["low"], node.args["high"]], types)
    if isinstance(node, exp.Is):
        type_class(node.this, types)
        return "boolean"
    if isinstance(node, exp.Like | exp.ILike):
        _expect(node, [node.this, node.expression], "string", types)
        _check_pattern(node)
        return "boolean"
    if isinstance(node, exp.And | exp.Or):
        _expect(node, [node.this, node.expression], "boolean", types)
        return "boolean"
    if isinstance(node, exp.Not):
        _expect(node, [node.this], "boolean", types)
        return "boolean"
    if isinstance(node, (*ARITHMETIC, exp.Neg, exp.Abs)):
        _expect(node, [a for a in (node.this, node.args.get("expression")) if a], "numeric",
                types)
        return "numeric"
    if isinstance(node, exp.Least | exp.Greatest | exp.Coalesce):
        return _same(node, [node.this, *node.expressions], types)
    if isinstance(node, exp.Nullif):
        _compare(node, node.this, [node.expression], types)
        return type_class(node.this, types)
    if isinstance(node, exp.Case):
        return _case(node, types)
    if isinstance(node, exp.If):
        return _if(node, types)
    if isinstance(node, exp.Cast):  # TryCast is a Cast
        return _cast(node, types)
    if type(node) in SIGNATURES:
        return _function(node, types)
    _fail(node, "is not supported in a row-level expression")
    return "other"


INTEGER_RESULTS = (exp.Floor, exp.Ceil, exp.Sign, exp.IntDiv, exp.Length, exp.StrPosition,
                   exp.Extract, *PART_NODES)
INTEGER_PRESERVING = (exp.Paren, exp.Neg, exp.Abs, exp.Add, exp.Sub, exp.Mul, exp.Mod, exp.Least,
                      exp.Greatest, exp.Coalesce, exp.Case, exp.If, exp.Nullif)


def integer_valued(node: exp.Expression, types: Mapping[str, str]) -> bool:
    """True when every value of ``node`` is a whole number (so its sums are exact integers).

    >>> import sqlglot
    >>> integer_valued(sqlglot.parse_one("CASE WHEN x > 0.5 THEN n * 2 ELSE 0 END"),
    ...                {"x": "DOUBLE", "n": "INTEGER"})
    True
    >>> integer_valued(sqlglot.parse_one("n / 2"), {"n": "INTEGER"})
    False
    """
    if isinstance(node, exp.Column):
        return types.get(node.name.lower(), "").upper().startswith(INTEGER_TYPES)
    if isinstance(node, exp.Literal):
        return not node.is_string and float(node.this).is_integer()
    if isinstance(node, exp.Null):
        return True
    if isinstance(node, INTEGER_RESULTS) or (isinstance(node, exp.Round) and
                                             node.args.get("decimals") is None):
        return True
    if isinstance(node, exp.Cast):
        return node.to.is_type(*exp.DataType.INTEGER_TYPES) or (
            node.to.is_type(exp.DataType.Type.DOUBLE) and integer_valued(node.this, types))
    if isinstance(node, INTEGER_PRESERVING):
        return all(integer_valued(v, types) for v in value_arguments(node))
    return False


def value_arguments(node: exp.Expression) -> list[exp.Expression]:
    """The arguments whose values ``node`` may return or combine (not its conditions)."""
    if isinstance(node, exp.Case):
        return [b.args["true"] for b in node.args.get("ifs") or []] + (
            [node.args["default"]] if node.args.get("default") else [])
    if isinstance(node, exp.If):
        return [v for v in (node.args.get("true"), node.args.get("false")) if v is not None]
    if isinstance(node, exp.Nullif):
        return [node.this]
    return [v for v in (node.this, node.args.get("expression"), *node.expressions)
            if isinstance(v, exp.Expression)]

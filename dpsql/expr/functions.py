"""Scalar functions allowed in row-level expressions: argument types, result type, value range.

Every function here is *total* once the rewrite has run over it: it returns a value or NULL
on every row and never raises. Where an engine would raise for some arguments, the argument
must be a literal checked here, before any data is read (a ``date_trunc`` unit, a
``strftime`` format, a ``substr`` position), or the rewrite guards it (division by zero
becomes NULL, see ``dpsql.rewrite.expressions.total``).

Types are the classes of ``dpsql.expr.types``: numeric, string, boolean, date,
timestamp, time, interval, null.

>>> import sqlglot
>>> node = sqlglot.parse_one("EXTRACT(month FROM d)")
>>> part_interval(node)
(1.0, 12.0)
>>> check_literal_arguments(sqlglot.parse_one("date_trunc('fortnight', d)", dialect="duckdb"))
Traceback (most recent call last):
...
dpsql.errors.UnsupportedQueryError: `DATE_TRUNC('FORTNIGHT', d)` ...
"""

from __future__ import annotations

import math

from sqlglot import exp

from dpsql.errors import UnsupportedQueryError

DATES = frozenset({"date", "timestamp"})
TEXT = frozenset({"string"})
NUMBER = frozenset({"numeric"})
PRINTABLE = frozenset({"numeric", "string", "boolean", "date", "timestamp", "time", "interval"})

TRUNC_UNITS = ("year", "quarter", "month", "week", "day", "hour", "minute", "second")
"""DATE_TRUNC units every engine truncates alike (Spark answers NULL for decade, century
and millennium, which DuckDB truncates)."""
PART_RANGES: dict[str, tuple[float, float]] = {
    "year": (-math.inf, math.inf), "quarter": (1, 4), "month": (1, 12), "week": (1, 53),
    "day": (1, 31), "dayofweek": (0, 6), "dow": (0, 6), "isodow": (1, 7),
    "dayofyear": (1, 366), "doy": (1, 366), "hour": (0, 23), "minute": (0, 59),
    "second": (0, 59),
}
"""EXTRACT parts and the range of their values (year is unbounded)."""
PART_NODES: dict[type[exp.Expression], str] = {
    exp.Year: "year", exp.Quarter: "quarter", exp.Month: "month", exp.Week: "week",
    exp.Day: "day", exp.DayOfWeek: "dayofweek", exp.DayOfYear: "dayofyear",
    exp.Hour: "hour", exp.Minute: "minute", exp.Second: "second",
}
STRFTIME_CODES = set("aAbBdHIjmMpSyY")
"""strftime codes every engine formats alike (Spark's patterns have no week numbers,
weekday numbers, ISO years, padded days, zones or %% as DuckDB writes them)."""
MAX_POSITION = 2**31 - 1

SIGNATURES: dict[type[exp.Expression], tuple[tuple[tuple[str, frozenset[str]], ...], str]] = {
    exp.TimestampTrunc: ((("this", DATES),), "timestamp"),
    exp.Extract: ((("expression", DATES),), "numeric"),
    **{node: ((("this", DATES),), "numeric") for node in PART_NODES},
    exp.TimeToStr: ((("this", DATES),), "string"),
    exp.Lower: ((("this", TEXT),), "string"),
    exp.Upper: ((("this", TEXT),), "string"),
    exp.Length: ((("this", TEXT),), "numeric"),
    exp.Reverse: ((("this", TEXT),), "string"),
    exp.Trim: ((("this", TEXT), ("expression", TEXT)), "string"),
    exp.Substring: ((("this", TEXT),), "string"),
    exp.Left: ((("this", TEXT),), "string"),
    exp.Right: ((("this", TEXT),), "string"),
    exp.Replace: ((("this", TEXT), ("expression", TEXT), ("replacement", TEXT)), "string"),
    exp.StrPosition: ((("this", TEXT), ("substr", TEXT)), "numeric"),
    exp.StartsWith: ((("this", TEXT), ("expression", TEXT)), "boolean"),
    exp.EndsWith: ((("this", TEXT), ("expression", TEXT)), "boolean"),
    exp.DPipe: ((("this", TEXT), ("expression", TEXT)), "string"),
    exp.Concat: ((("expressions", PRINTABLE),), "string"),
    exp.Round: ((("this", NUMBER),), "numeric"),
    exp.Floor: ((("this", NUMBER),), "numeric"),
    exp.Ceil: ((("this", NUMBER),), "numeric"),
    exp.Sign: ((("this", NUMBER),), "numeric"),
}
"""Per function node: (argument slot, allowed types) pairs and the result type."""

FUNCTION_NAMES = ("date_trunc, EXTRACT, year/quarter/month/week/day/dayofweek/dayofyear/"
                  "hour/minute/second, strftime, lower, upper, length, reverse, trim, substr, "
                  "left, right, replace, strpos, starts_with, ends_with, concat, ||, ROUND, "
                  "FLOOR, CEIL, SIGN")


def _fail(node: exp.Expression, message: str) -> None:
    raise UnsupportedQueryError(f"`{node.sql(dialect='duckdb')}` {message}")


def _word(node: exp.Expression | None) -> str:
    """The lower-case text of a Var or string literal (a unit or part name)."""
    return node.name.lower() if isinstance(node, exp.Var | exp.Literal) else ""


LENGTHS = ("length", "expression")
"""The argument slots of SUBSTR, LEFT and RIGHT that are lengths, not positions."""


def _integer_literal(node: exp.Expression | None, limit: int) -> bool:
    value = node.this if isinstance(node, exp.Neg) else node
    return (isinstance(value, exp.Literal) and not value.is_string and value.this.isdigit()
            and int(value.this) <= limit)


def check_literal_arguments(node: exp.Expression) -> None:
    """Arguments that would make the engine raise must be valid literals, checked here."""
    if isinstance(node, exp.TimestampTrunc) and _word(node.args.get("unit")) not in TRUNC_UNITS:
        _fail(node, f"needs a unit among {', '.join(TRUNC_UNITS)} (for decades, write "
              "year(x) // 10 * 10)")
    if isinstance(node, exp.Extract) and _word(node.this) not in PART_RANGES:
        _fail(node, f"needs a part among {', '.join(PART_RANGES)}")
    if isinstance(node, exp.TimeToStr):
        _check_format(node, node.args.get("format"))
    positions = {exp.Substring: ("start", "length"), exp.Left: ("expression",),
                 exp.Right: ("expression",), exp.Round: ("decimals",)}.get(type(node), ())
    for slot in positions:
        arg = node.args.get(slot)
        limit = 20 if isinstance(node, exp.Round) else MAX_POSITION
        if arg is not None and not _integer_literal(arg, limit):
            _fail(node, f"needs an integer literal of at most {limit} as its {slot} "
                  "(an engine raises on positions out of range, which would depend on the data)")
        if slot in LENGTHS and isinstance(arg, exp.Neg):
            _fail(node, f"needs a length of 0 or more as its {slot} (a negative length counts "
                  "back in DuckDB and gives '' in Spark)")
    if isinstance(node, exp.Floor | exp.Ceil) and (node.args.get("decimals") or
                                                   node.args.get("to")):
        _fail(node, "takes one argument; use ROUND(x, n) to round to n decimals")


def _check_format(node: exp.Expression, fmt: exp.Expression | None) -> None:
    if not isinstance(fmt, exp.Literal) or not fmt.is_string:
        _fail(node, "needs a string literal format, e.g. strftime(visit_date, '%Y-%m')")
    text = fmt.this
    codes = [text[i + 1] if i + 1 < len(text) else "" for i, ch in enumerate(text)
             if ch == "%" and (i == 0 or text[i - 1] != "%")]
    bad = [c for c in codes if c not in STRFTIME_CODES]
    if bad:
        _fail(node, f"uses format code %{bad[0]}; allowed: "
              + " ".join(f"%{c}" for c in sorted(STRFTIME_CODES)))


def part_interval(node: exp.Expression) -> tuple[float, float] | None:
    """The range of an EXTRACT-like function's value, or None if it is not one."""
    if isinstance(node, exp.Extract):
        part = _word(node.this)
    elif type(node) in PART_NODES:
        part = PART_NODES[type(node)]
    else:
        return None
    lo, hi = PART_RANGES.get(part, (-math.inf, math.inf))
    return float(lo), float(hi)

"""Type classes of row-level expressions, checked before any data is read.

An engine raises errors on rows it cannot convert (``'abc' = 1`` casts the
text to a number) — errors that depend on private data and would answer a
yes/no question about it for free. So every comparison, IN list and function
argument must have matching type classes, decided from the catalog alone.

>>> import sqlglot
>>> types = {"age": "INTEGER", "name": "VARCHAR"}
>>> type_class(sqlglot.parse_one("age + 1 > 3 AND name LIKE 'a%'"), types)
'boolean'
>>> type_class(sqlglot.parse_one("name = 1"), types)
Traceback (most recent call last):
...
dpsql.errors.UnsupportedQueryError: `name = 1` compares string with numeric...
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlglot import exp

from dpsql.catalog import column_class
from dpsql.errors import UnsupportedQueryError

COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)
ARITHMETIC = (exp.Add, exp.Sub, exp.Mul)


def _fail(node: exp.Expression, message: str) -> None:
    raise UnsupportedQueryError(f"`{node.sql(dialect='duckdb')}` {message}")


def _comparable(a: str, b: str, right: exp.Expression) -> bool:
    if "null" in (a, b) or (a == b and a != "other"):
        return True
    # A date/time column against a text literal: the engine converts the literal once,
    # whatever the rows hold, so any failure does not depend on private data.
    return a == "temporal" and b == "string" and isinstance(right, exp.Literal)


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


def _expect(node: exp.Expression, args: list[exp.Expression], wanted: str,
            types: Mapping[str, str]) -> None:
    for arg in args:
        got = type_class(arg, types)
        if got not in (wanted, "null"):
            _fail(node, f"needs {wanted} arguments, but `{arg.sql(dialect='duckdb')}` is {got}")


def _same(node: exp.Expression, args: list[exp.Expression], types: Mapping[str, str]) -> str:
    classes = {type_class(a, types) for a in args} - {"null"}
    if len(classes) > 1 or "other" in classes:
        _fail(node, f"mixes {', '.join(sorted(classes))}; give arguments of one type")
    return classes.pop() if classes else "null"


def type_class(node: exp.Expression, types: Mapping[str, str]) -> str:
    """The type class of a whitelisted row-level expression, or UnsupportedQueryError."""
    if isinstance(node, exp.Column):
        return column_class(types.get(node.name.lower(), ""))
    if isinstance(node, exp.Literal):
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
    if isinstance(node, exp.Lower | exp.Upper):
        _expect(node, [node.this], "string", types)
        return "string"
    if isinstance(node, exp.Least | exp.Greatest | exp.Coalesce):
        return _same(node, [node.this, *node.expressions], types)
    _fail(node, "is not supported in a row-level expression")
    return "other"

"""``UNNEST([v1, v2, ...]) AS x`` in FROM: a public table of constants, one row per element.

BigQuery and ZetaSQL write a list of values as a table this way, most often cross joined to
a private table (``FROM t CROSS JOIN UNNEST([1, 2, 3]) AS x``, or ``FROM t, UNNEST(...)``),
which repeats each row of ``t`` once per element, and grouped by the element, which makes
the elements a public list of keys. dpsql reads the array as a public table whose rows are
the elements, so the join is the join of a private table with a public one
(``dpsql.analysis.relations``): the joined rows belong to their private row's person, and
the rewrite bounds each person's contribution on the *joined* rows, after the join. A
k-element array gives a person k times as many rows, but the limits (groups per person, rows
per group and in total) are enforced on those rows, so one person still moves each bounded
statistic by at most the planned sensitivity (docs/mechanisms.md, "UNNEST of a public
array"; ``tests/test_unnest.py`` checks it on neighbouring databases).

Only literal constants are accepted as elements: an array that reads a column (a person's
own array) would make the number of rows, and the keys, data; a function call could fail
or differ between engines. The array's table gets a name in dpsql's namespace; the element
column keeps the analyst's name, so nothing dpsql invents can be written in a query.

>>> from dpsql.dialect import parse_one
>>> node = parse_one("SELECT 1 FROM t CROSS JOIN UNNEST([3, 1, 3]) AS x", "bigquery")
>>> elements(node.args["joins"][0].this)
Elements(name='x', sql_type='BIGINT', values=(3, 1, 3))
>>> elements(parse_one("SELECT 1 FROM UNNEST(['a', 'bc']) AS t(k)").args["from_"].this)
Elements(name='k', sql_type='VARCHAR(2)', values=('a', 'bc'))
>>> elements(parse_one("SELECT 1 FROM UNNEST([x]) AS y").args["from_"].this)
Traceback (most recent call last):
...
dpsql.errors.UnsupportedQueryError: UNNEST: `x` is not supported; allowed: ...
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, NamedTuple

from sqlglot import exp

from dpsql.analysis.grammar import refuse

MAX_ELEMENTS = 1_000
"""The most elements an UNNEST array may list: each one repeats every joined row once more,
so the query's work grows with it."""
ALLOWED = ("UNNEST([<constant>, ...]) AS <name> with number, text or boolean literals of one "
           f"kind (at most {MAX_ELEMENTS})")


class Elements(NamedTuple):
    """An UNNEST array: the element column's name, its SQL type and the values in order."""

    name: str
    sql_type: str
    values: tuple[Any, ...]

    @property
    def domain(self) -> tuple[Any, ...]:
        """The distinct values, in the order first written: the public key domain."""
        return tuple(dict.fromkeys(self.values))

    def relation(self, table: str, alias: str) -> exp.Subquery:
        """``(SELECT x FROM (VALUES (v1), ...) AS table(x)) AS alias``, each value cast to the
        column's type so that every engine reads the same type."""
        column = exp.to_identifier(self.name, quoted=True)
        kind = exp.DataType.build(self.sql_type, dialect="duckdb")
        rows = [(exp.Cast(this=exp.convert(v), to=kind.copy()),) for v in self.values]
        values = exp.values(rows, alias=table, columns=[column])
        return exp.select(exp.column(self.name, quoted=True)).from_(values).subquery(alias)


def elements(node: exp.Unnest) -> Elements:
    """The checked array of ``UNNEST(...) AS name``; refused unless it is a list of literal
    constants of one kind, named, without ``WITH OFFSET``."""
    arrays = node.expressions
    if len(arrays) != 1 or not isinstance(arrays[0], exp.Array):
        what = arrays[0] if len(arrays) == 1 else node
        refuse(what, "UNNEST", ALLOWED, "UNNEST of a column is not supported: a person's "
               "array would give each person as many rows, and keys, as their data says. "
               "List the values as constants, or register them with con.register_public()")
    if node.args.get("offset"):
        refuse(node, "UNNEST ... WITH OFFSET", ALLOWED, "Drop WITH OFFSET")
    items = arrays[0].expressions
    if not 1 <= len(items) <= MAX_ELEMENTS:
        refuse(node, "UNNEST", ALLOWED, "List at least one value")
    values = [_constant(item) for item in items]
    kinds = {_kind(v) for v in values}
    if len(kinds) != 1:
        refuse(arrays[0], "UNNEST", ALLOWED, "Write every element as the same kind of value")
    return Elements(_name(node), _sql_type(kinds.pop(), values), tuple(values))


def _constant(item: exp.Expression) -> Any:
    """The value of a literal element: a number (maybe negative), a string or a boolean."""
    sign, core = (-1, item.this) if isinstance(item, exp.Neg) else (1, item)
    if isinstance(core, exp.Literal) and not core.is_string:
        number = Decimal(core.this)
        return sign * (int(number) if number == number.to_integral_value() and
                       "." not in core.this and "e" not in core.this.lower() else
                       float(number))
    if sign == 1 and isinstance(core, exp.Literal):
        return core.this
    if sign == 1 and isinstance(core, exp.Boolean):
        return bool(core.this)
    refuse(item, "UNNEST", ALLOWED, "Elements must be constants written in the query: no "
           "columns, NULL, function calls or subqueries")
    return None


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    return "string" if isinstance(value, str) else "numeric"


def _sql_type(kind: str, values: list[Any]) -> str:
    if kind == "boolean":
        return "BOOLEAN"
    if kind == "string":
        return f"VARCHAR({max(1, max(len(v) for v in values))})"
    if all(isinstance(v, int) and abs(v) < 2**63 for v in values):
        return "BIGINT"
    return "DOUBLE"


def _name(node: exp.Unnest) -> str:
    """The element column's name: the alias's column (``AS t(x)``), else the alias itself
    (BigQuery's ``AS x`` names the value)."""
    alias = node.args.get("alias")
    columns = alias.columns if isinstance(alias, exp.TableAlias) else []
    if len(columns) > 1:
        refuse(node, "UNNEST", ALLOWED, "An array of values has one column: name it once")
    name = columns[0].name if columns else (alias.name if alias is not None else "")
    if not name:
        refuse(node, "UNNEST", ALLOWED, "Name the element: UNNEST([1, 2, 3]) AS x")
    return name.lower()

"""Row-level value expressions that enforce declared and inferred bounds.

NULL stays NULL (LEAST/GREATEST skip NULLs in most engines, so clamps are
guarded), NaN becomes NULL, ±inf is clamped like any other value.

>>> import sqlglot
>>> clamp(sqlglot.parse_one("x"), 0, 10).sql()
'CASE WHEN x IS NULL THEN NULL ELSE LEAST(GREATEST(x, 0), 10) END'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlglot import exp

from dpsql.catalog import FLOAT_TYPES
from dpsql.expr.nodes import number
from dpsql.expr.totality import error_free
from dpsql.plan import PrivacyPlan


def clamp(node: exp.Expression, lo: float, hi: float, *,
          is_float: bool = False) -> exp.Expression:
    """``node`` limited to [lo, hi]; NULL stays NULL, and NaN becomes NULL if ``is_float``."""
    raised = exp.Greatest(this=node.copy(), expressions=[number(lo)], ignore_nulls=True)
    limited = exp.Least(this=raised, expressions=[number(hi)], ignore_nulls=True)
    return exp.Case(ifs=[exp.If(this=missing(node, is_float), true=exp.Null())],
                    default=limited)


def missing(node: exp.Expression, is_float: bool) -> exp.Expression:
    missing: exp.Expression = exp.Is(this=node.copy(), expression=exp.Null())
    if is_float:
        missing = exp.or_(missing, exp.IsNan(this=node.copy()))
    return missing


def same_keys(keys: Sequence[str], one: str, other: str) -> exp.Expression:
    """Table ``one``'s ``keys`` are table ``other``'s, NULL-safe (a NULL key is a group of
    its own); TRUE without keys.

    >>> same_keys(["k", "m"], "a", "b").sql()
    'a.k IS NOT DISTINCT FROM b.k AND a.m IS NOT DISTINCT FROM b.m'
    """
    return exp.and_(*_key_equalities(keys, one, other)) if keys else exp.true()


def same_pair(keys: Sequence[str], one: str, other: str) -> exp.Expression:
    """Table ``one``'s (unit, ``keys``) pair is table ``other``'s (keys NULL-safe).

    >>> same_pair(["k"], "a", "b").sql()
    'a.__dp_unit = b.__dp_unit AND a.k IS NOT DISTINCT FROM b.k'
    """
    return exp.and_(exp.EQ(this=exp.column("__dp_unit", table=one),
                           expression=exp.column("__dp_unit", table=other)),
                    *_key_equalities(keys, one, other))


def _key_equalities(keys: Sequence[str], one: str, other: str) -> list[exp.Expression]:
    return [exp.NullSafeEQ(this=exp.column(k, table=one), expression=exp.column(k, table=other))
            for k in keys]


def _clean_column(column: exp.Column, types: Mapping[str, str],
                  bounds: Mapping[str, tuple[float, float]]) -> exp.Expression:
    name = column.name.lower()
    node: exp.Expression = exp.column(name)
    is_float = types.get(name, "").upper().startswith(FLOAT_TYPES)
    if name in bounds:
        return clamp(node, *bounds[name], is_float=is_float)
    if is_float:
        return exp.Case(ifs=[exp.If(this=exp.IsNan(this=node.copy()), true=exp.Null())],
                        default=node)
    return node


VALUE_SLOTS: dict[type[exp.Expression], tuple[str, ...]] = {
    exp.Paren: ("this",), exp.Neg: ("this",), exp.Abs: ("this",),
    exp.Add: ("this", "expression"), exp.Sub: ("this", "expression"),
    exp.Mul: ("this", "expression"), exp.Div: ("this", "expression"),
    exp.IntDiv: ("this", "expression"), exp.Mod: ("this", "expression"),
    exp.Least: ("this", "expressions"), exp.Greatest: ("this", "expressions"),
    exp.Coalesce: ("this", "expressions"), exp.Nullif: ("this",),
    exp.Case: ("ifs", "default"), exp.If: ("true", "false"),
    exp.Round: ("this",), exp.Floor: ("this",), exp.Ceil: ("this",), exp.Sign: ("this",),
}
"""Where a node passes its arguments' values on (not conditions, not compared operands)."""


def value_columns(node: exp.Expression) -> list[exp.Column]:
    """Columns whose values flow into ``node``'s value (clamped to their catalog bounds).

    Columns in conditions (``CASE WHEN age > 65``, FILTER) or under functions that turn them
    into something else (``LENGTH(name)``, ``CAST(age AS VARCHAR)``) keep their raw value,
    as in WHERE: only the value that is summed is clamped.

    >>> import sqlglot
    >>> [c.name for c in value_columns(sqlglot.parse_one("CASE WHEN a > 1 THEN b ELSE c END"))]
    ['b', 'c']
    """
    if isinstance(node, exp.Column):
        return [node]
    slots = VALUE_SLOTS.get(type(node), ())
    if isinstance(node, exp.Cast) and node.to.is_type(*exp.DataType.NUMERIC_TYPES):
        slots = ("this",)
    found = []
    for slot in slots:
        value = node.args.get(slot)
        for child in value if isinstance(value, list) else [value]:
            if isinstance(child, exp.Expression):
                found += value_columns(child)
    return found


def bounded(expr: exp.Expression, types: Mapping[str, str],
            bounds: Mapping[str, tuple[float, float]]) -> exp.Expression:
    """``expr`` with its value columns cleaned (NaN → NULL) and clamped to catalog bounds."""
    tree = expr.copy()
    marked = {id(c) for c in value_columns(tree)}

    def swap(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Column) and id(node) in marked:
            return _clean_column(node, types, bounds)
        return node

    return error_free(tree.transform(swap, copy=False), types)


def source(plan: PrivacyPlan) -> exp.Expression:
    """A fresh copy of what the query reads: a table, or the source subquery of a join,
    CTE or derived table (``dpsql.analysis.relations``)."""
    if isinstance(plan.relation, str):
        return exp.to_table(plan.relation)
    return plan.relation.copy()

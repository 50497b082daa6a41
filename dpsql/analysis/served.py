"""What a query's aggregates ask of the columns whose bounds dpsql estimates, read from its
syntax before any analysis pass needs them: which columns each aggregate uses and how (a
sum, an average, a quantile and its level), and how many public groups the totals are split
over. The estimates of ``"auto"`` bounds and limits are chosen for these
(``dpsql.owner.estimate_first``); the quantile levels are also what the aggregate pass
releases (``quantile_parts``)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction

from sqlglot import exp

from dpsql.analysis.grammar import QUANTILES, is_quantile_array, refuse
from dpsql.catalog import TableInfo


def quantile_parts(node: exp.Expression) -> tuple[exp.Expression, Fraction]:
    """(argument, q) of a quantile aggregate; ORDER BY x DESC asks for quantile 1 − q."""
    if isinstance(node, exp.Median):
        return node.this, Fraction(1, 2)
    if isinstance(node, exp.Quantile):
        return node.this, _level(node, node.args.get("quantile"))
    if isinstance(node, exp.PercentileCont):
        return node.this, _level(node, node.expression)
    inner, order = node.this, node.expression
    if not isinstance(inner, exp.PercentileCont) or inner.expression is not None:
        refuse(node, "WITHIN GROUP", "PERCENTILE_CONT(q) WITHIN GROUP (ORDER BY expr)")
    if not isinstance(order, exp.Order) or len(order.expressions) != 1:
        refuse(node, "WITHIN GROUP", "ORDER BY exactly one expression")
    ordered = order.expressions[0]
    q = _level(node, inner.this)
    return ordered.this, 1 - q if ordered.args.get("desc") else q


def _level(node: exp.Expression, value: exp.Expression | None) -> Fraction:
    """q as the exact decimal written: a numeric literal in [0, 1]."""
    allowed = "q a numeric literal in [0, 1], e.g. QUANTILE_CONT(x, 0.9)"
    if not isinstance(value, exp.Literal) or value.is_string:
        refuse(node, "quantile", allowed, "Give one literal level per aggregate; lists, "
               "expressions and parameters are not supported")
    q = Fraction(value.this)
    if not 0 <= q <= 1:
        refuse(node, "quantile", allowed, f"q = {value.this} is outside [0, 1]")
    return q


def auto_columns(ast: exp.Expression, auto: Mapping[str, str], counted: tuple[str, ...] = ()
                 ) -> tuple[tuple[str, str, str | float], ...]:
    """(table, column, use) for each column of ``auto`` (column → table: the columns whose
    bounds dpsql estimates) that the query's aggregates other than COUNT read: ``use`` is
    "avg" under AVG, the level q under a quantile (0 and 1 for APPROX_QUANTILES, which spans
    them all), and "sum" under anything else. Each table of ``counted`` (those whose rows
    limit is estimated) also gets (table, "", "count") when an aggregate reads none of
    ``auto``: a COUNT, or a SUM of a column with declared bounds, loses the rows a limit
    drops as a count does. The estimates are chosen for what they serve
    (``dpsql.owner.estimate_first``).

    >>> import sqlglot
    >>> sql = "SELECT SUM(x), AVG(y) + AVG(x), MEDIAN(z), QUANTILE_CONT(z, 0.9), COUNT(w) FROM t"
    >>> auto_columns(sqlglot.parse_one(sql, read="duckdb"), dict.fromkeys("xyzw", "t"))
    (('t', 'x', 'avg'), ('t', 'x', 'sum'), ('t', 'y', 'avg'), ('t', 'z', 0.5), ('t', 'z', 0.9))
    >>> auto_columns(sqlglot.parse_one("SELECT COUNT(*), AVG(x), SUM(a) FROM t"), {"x": "t"},
    ...              counted=("t",))
    (('t', '', 'count'), ('t', 'x', 'avg'))
    """
    served: set[tuple[str, str, str | float]] = set()
    for node in ast.find_all(exp.AggFunc):
        if isinstance(node.parent, exp.WithinGroup):
            continue  # read at the WithinGroup
        if isinstance(node, exp.Count) or not any(
                c.name.lower() in auto for c in node.find_all(exp.Column)):
            served.update((table, "", "count") for table in counted)
            continue  # a count, or a column with declared bounds: no bounds to estimate
        uses: list[str | float] = ["avg" if isinstance(node, exp.Avg) else "sum"]
        if is_quantile_array(node):
            uses = [0.0, 1.0]
        elif isinstance(node, QUANTILES):
            uses = [float(quantile_parts(node)[1])]
        for column in node.find_all(exp.Column):
            if column.name.lower() in auto:
                served.update((auto[column.name.lower()], column.name.lower(), use)
                              for use in uses)
    for node in ast.find_all(exp.WithinGroup):
        level = float(quantile_parts(node)[1])
        for column in node.expression.find_all(exp.Column) if node.expression else ():
            if column.name.lower() in auto:
                served.add((auto[column.name.lower()], column.name.lower(), level))
    return tuple(sorted(served, key=lambda s: (s[0], s[1], str(s[2]))))


def noisy_columns(ast: exp.Expression) -> int:
    """How many aggregates the query releases, each once (at least 1): the shares its ε is
    split over, by column (docs/mechanisms.md §12), as the estimates model its noise.

    >>> import sqlglot
    >>> noisy_columns(sqlglot.parse_one("SELECT k, COUNT(*), SUM(x) / COUNT(*), AVG(y) FROM t"))
    3
    """
    calls = {node.sql() for node in ast.find_all(exp.AggFunc)
             if not isinstance(node.parent, exp.WithinGroup)}
    return max(1, len(calls | {node.sql() for node in ast.find_all(exp.WithinGroup)}))


def public_groups(ast: exp.Expression, tables: list[TableInfo]) -> int:
    """How many groups the query's GROUP BY makes when every key is a column with a list of
    public values (their product), else 1: the groups a total is split over, as the
    estimates of ``"auto"`` bounds and limits model it.

    >>> import sqlglot
    >>> info = TableInfo.private("t", columns={"pid": "INT", "k": "VARCHAR", "j": "VARCHAR"},
    ...                          privacy_unit="pid", public_keys={"k": ["a", "b", "c"]})
    >>> [public_groups(sqlglot.parse_one(q), [info]) for q in
    ...  ("SELECT k, COUNT(*) FROM t GROUP BY k", "SELECT COUNT(*) FROM t GROUP BY k, j")]
    [3, 1]
    """
    group = ast.args.get("group") if isinstance(ast, exp.Select) else None
    sizes = []
    for key in group.expressions if group else []:
        found = [info.public_keys.get(key.name.lower()) for info in tables
                 if isinstance(key, exp.Column)]
        listed = [v for v in found if isinstance(v, tuple | list)]
        if not listed:
            return 1
        sizes.append(len(listed[0]))
    return max(1, math.prod(sizes))

"""``WHERE key IN (SELECT column FROM public_table [WHERE ...])``: a semi-join with public data.

A condition ``k IN (SELECT c FROM p WHERE q)`` over a *public* table ``p`` keeps each private
row or drops it by its own value of ``k`` and public data alone, so it is a row-level
predicate like ``k IN ('a', 'b')``. ``split_lookups`` takes such conditions out of WHERE
(each must be one of the conjuncts joined by AND, not under OR or NOT) and returns them as
joins with a derived public table of the distinct values, ``JOIN (SELECT DISTINCT c FROM p
WHERE q) AS __dp_lookupN ON k = __dp_lookupN.__dp_value``: at most one match per row, so the
join keeps exactly the rows IN keeps (a NULL ``k`` matches nothing, as IN gives NULL), and
the existing join analysis types the comparison, makes it total and bounds each person after
it. ``check_lookup`` accepts the subquery only if it reads one registered public table.

>>> import sqlglot
>>> select, lookups = split_lookups(sqlglot.parse_one(
...     "SELECT COUNT(*) FROM v WHERE a > 1 AND k IN (SELECT c FROM p WHERE d = 'x')"))
>>> select.sql(), [(alias, on.sql()) for alias, _, on, _ in lookups]
('SELECT COUNT(*) FROM v WHERE a > 1', [('__dp_lookup0', 'k = __dp_lookup0.__dp_value')])
"""

from __future__ import annotations

from collections.abc import Collection

from sqlglot import exp

from dpsql.analysis.grammar import check_row_expression, fragment, refuse
from dpsql.catalog import Catalog, TableInfo
from dpsql.expr.types import type_class

LOOKUP = "__dp_lookup"
"""Alias prefix of a lookup's derived table (dpsql's namespace: no query can write it)."""
VALUE = "__dp_value"
"""The lookup's one column."""
SHAPE = "k IN (SELECT <column or expression> FROM <public table> [WHERE <condition>])"


Lookup = tuple[str, exp.Expression, exp.EQ, exp.In]


def split_lookups(select: exp.Select) -> tuple[exp.Select, list[Lookup]]:
    """``select`` without its WHERE's IN-subquery conjuncts, and for each one the alias of its
    derived table, the subquery, the join condition (``key = alias.__dp_value``) and the
    condition as written (for messages)."""
    where = select.args.get("where")
    conjuncts = _conjuncts(where.this) if where is not None else []
    found = [c for c in conjuncts if isinstance(c, exp.In) and c.args.get("query")]
    for node in where.find_all(exp.In) if where is not None else []:
        if node.args.get("query") and not any(node is c for c in found):
            refuse(node, "WHERE", SHAPE, "An IN-subquery must be a condition joined to the "
                   "others by AND, not under OR or NOT (NOT IN takes a literal list)")
    if not found:
        return select, []
    select = select.copy()
    rest = [c.copy() for c in conjuncts if not (isinstance(c, exp.In) and c.args.get("query"))]
    select.set("where", exp.Where(this=exp.and_(*rest)) if rest else None)
    lookups = []
    for number, condition in enumerate(found):
        alias = f"{LOOKUP}{number}"
        query = condition.args["query"]
        query = query.this if isinstance(query, exp.Subquery) else query
        on = exp.EQ(this=condition.this.copy(), expression=exp.column(VALUE, table=alias))
        lookups.append((alias, query.copy(), on, condition))
    return select, lookups


def _conjuncts(node: exp.Expression) -> list[exp.Expression]:
    node = node.unnest()
    if isinstance(node, exp.And):
        return [*_conjuncts(node.this), *_conjuncts(node.expression)]
    return [node]


def check_lookup(query: exp.Expression, catalog: Catalog, ctes: Collection[str]
                 ) -> tuple[TableInfo, exp.Expression, exp.Expression | None]:
    """The public table, value expression and WHERE of a lookup subquery; refuses anything
    but one column of one registered public table (``ctes``: the CTE names in scope, which
    are never public), before any data is read."""
    context = "IN (SELECT ...)"
    if not isinstance(query, exp.Select) or len(query.expressions) != 1:
        refuse(query, context, SHAPE, "Select exactly one column of a public table")
    table = query.args["from_"].this if query.args.get("from_") is not None else None
    name = table.name if isinstance(table, exp.Table) and not table.args.get("db") else ""
    info = catalog.get(name) if name and name.lower() not in ctes and name in catalog \
        else None
    if table is None:
        refuse(query, context, SHAPE, "A subquery without a table: list the values instead, "
               "k IN (1, 2)")
    if info is None or not info.public:
        refuse(query, context, SHAPE, f"{fragment(table)} is not a public table: which rows "
               "of others are kept would depend on private rows. Join private tables on their "
               "privacy units instead")
    for arg in ("joins", "with_", "group", "having", "order", "limit", "offset", "qualify",
                "laterals", "pivots", "windows", "distinct"):
        if query.args.get(arg):
            refuse(query, context, SHAPE, "Only a filter (WHERE) on the public table is allowed")
    item = query.expressions[0]
    value = item.this if isinstance(item, exp.Alias) else item
    where = query.args["where"].this if query.args.get("where") is not None else None
    qualifiers = {name.lower(), (table.alias or name).lower()}
    for part, label in ((value, "IN (SELECT ...) column"), (where, "IN (SELECT ... WHERE)")):
        if part is None:
            continue
        check_row_expression(part, label)
        for column in part.find_all(exp.Column):
            if column.name.lower() not in info.columns or (
                    column.table and column.table.lower() not in qualifiers):
                refuse(column, label, f"columns of {info.name}", "A lookup reads its public "
                       "table alone: it cannot refer to the outer query's rows")
    type_class(value, info.columns)
    if where is not None and type_class(where, info.columns) not in ("boolean", "null"):
        refuse(where, "IN (SELECT ... WHERE)", "a condition")
    return info, _unqualified(value), _unqualified(where)


def _unqualified(node: exp.Expression | None) -> exp.Expression | None:
    """The subquery's columns without their table qualifier (it reads one table)."""
    if node is None:
        return None
    return node.transform(lambda n: exp.column(n.name, quoted=n.this.quoted)
                          if isinstance(n, exp.Column) and n.table else n)

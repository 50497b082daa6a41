"""GROUP BY ROLLUP, CUBE and GROUPING SETS: the grouping sets of a query, and one query each.

A query with grouping sets releases, for each set, what the same query grouped by that set
alone would release, with the keys the set leaves out as NULL and ``GROUPING(k, ...)`` the
bit mask of the left-out keys (SQL:2003, as in PostgreSQL and DuckDB). dpsql plans it as
exactly that: one ordinary grouped query per set (:func:`set_query`), each analysed, bounded
and released on its own with a share of ε and δ (``dpsql.grouping``).

>>> import sqlglot
>>> sets = grouping_sets(sqlglot.parse_one("SELECT a, b, COUNT(*) FROM t GROUP BY ROLLUP (a, b)"))
>>> [str(s) for s in sets]
['(a, b)', '(a)', '()']
>>> set_query(sqlglot.parse_one("SELECT a, b, GROUPING(a, b) AS g, COUNT(*) AS n FROM t "
...                             "GROUP BY ROLLUP (a, b)"), sets[1]).sql()
'SELECT a, NULL AS b, 1 AS g, COUNT(*) AS n FROM t GROUP BY a'
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from sqlglot import exp

from dpsql.analysis.grammar import fragment, is_aggregate, refuse

MAX_GROUPING_SETS = 16
"""The most grouping sets one query may release (CUBE of four keys). Each set is a release
with its own share of ε, so each of k sets gets ε/k: past a handful the noise of every cell
grows faster than the report gains."""

ALLOWED = ("columns, ROLLUP (a, b, ...), CUBE (a, b, ...) or GROUPING SETS ((a, b), (a), ()) "
           "over columns")
NOT_WITH_SETS = {"order": "ORDER BY", "limit": "LIMIT", "offset": "OFFSET", "qualify": "QUALIFY",
                 "distinct": "SELECT DISTINCT"}
"""Clauses that act on all grouping sets' rows together: not yet (docs/sql.md)."""


@dataclass(frozen=True)
class GroupingSet:
    """One grouping set: the keys it groups by, and ``keys`` of the whole query it leaves out.

    >>> str(GroupingSet(("a",), ("a", "b")))
    '(a)'
    >>> GroupingSet(("a",), ("a", "b")).rolled_up
    ('b',)
    """

    grouped: tuple[str, ...]
    keys: tuple[str, ...]

    @property
    def rolled_up(self) -> tuple[str, ...]:
        """The query's keys this set does not group by (released as NULL)."""
        return tuple(k for k in self.keys if k not in self.grouped)

    def mask(self, names: list[str]) -> int:
        """``GROUPING(names...)``: bit i (from the right, the last name first) is 1 when the
        i-th name from the end is rolled up in this set (SQL:2003)."""
        bits = "".join("1" if n in self.rolled_up else "0" for n in names)
        return int(bits, 2) if bits else 0

    def __str__(self) -> str:
        return f"({', '.join(self.grouped)})"


WITH_CLAUSES = ("rollup", "cube", "totals")
"""``GROUP BY a, b WITH ROLLUP`` (MySQL), ``WITH CUBE`` (T-SQL), ``WITH TOTALS`` (ClickHouse)."""


def has_grouping_sets(select: exp.Expression) -> bool:
    """Whether the outermost SELECT groups by ROLLUP, CUBE or GROUPING SETS (or adds them
    with WITH ROLLUP, WITH CUBE or WITH TOTALS)."""
    group = select.args.get("group") if isinstance(select, exp.Select) else None
    return group is not None and (
        any(group.args.get(clause) for clause in WITH_CLAUSES)
        or any(isinstance(e, (exp.Rollup, exp.Cube, exp.GroupingSets))
               for e in group.expressions))


def grouping_sets(select: exp.Select) -> tuple[GroupingSet, ...]:
    """The grouping sets of ``select``'s GROUP BY, in PostgreSQL's order: the cross product
    of its items, each a column, ROLLUP (its prefixes, longest first), CUBE (its subsets,
    by decreasing binary mask) or GROUPING SETS (as listed).

    Refused (UnsupportedQueryError): items that are not columns, a set listed twice (it
    would be released, and paid, twice), more than MAX_GROUPING_SETS sets, and clauses that
    act on the rows of all sets together (ORDER BY, LIMIT, OFFSET, QUALIFY, DISTINCT).
    """
    group = select.args["group"]
    for clause, label in NOT_WITH_SETS.items():
        if select.args.get(clause):
            refuse(select.args[clause] if clause != "distinct" else None,
                   f"{label} with grouping sets", "WHERE, GROUP BY and HAVING",
                   "Each grouping set is released on its own and the sets' rows are "
                   "concatenated; sort or cut the result afterwards (e.g. res.df().sort_values)")
    window = select.find(exp.Window)
    if window is not None:
        refuse(window, "window function with grouping sets", "WHERE, GROUP BY and HAVING",
               "A window runs over the rows of all sets together; compute it on the result")
    items = _items(group)
    sets = [tuple(dict.fromkeys(k for part in combo for k in part))
            for combo in itertools.product(*items)]
    keys = tuple(dict.fromkeys(k for s in sets for k in s))
    for i, grouped in enumerate(sets):
        if grouped in sets[:i]:
            refuse(group, "GROUP BY", "each grouping set once",
                   f"The set ({', '.join(grouped)}) comes twice: it would be released, and "
                   "paid for, twice")
    if len(sets) > MAX_GROUPING_SETS:
        refuse(group, "GROUP BY", f"at most {MAX_GROUPING_SETS} grouping sets",
               f"These make {len(sets)}, each released with its share of epsilon; list the "
               "sets you need with GROUPING SETS ((a, b), (a), ())")
    return tuple(GroupingSet(grouped, keys) for grouped in sets)


def _items(group: exp.Group) -> list[list[tuple[str, ...]]]:
    """The grouping sets of each GROUP BY item; WITH ROLLUP (CUBE) is a ROLLUP (CUBE) of
    the listed columns, WITH TOTALS adds the empty set to them."""
    listed = [e.copy() for e in group.expressions]
    if group.args.get("rollup"):
        return [_item_sets(exp.Rollup(expressions=listed))]
    if group.args.get("cube"):
        return [_item_sets(exp.Cube(expressions=listed))]
    if group.args.get("totals"):
        return [[_columns(listed, group), ()]]
    return [_item_sets(e) for e in group.expressions]


def _item_sets(item: exp.Expression) -> list[tuple[str, ...]]:
    """The grouping sets of one GROUP BY item."""
    if isinstance(item, exp.Rollup):
        names = _columns(item.expressions, item)
        return [names[:n] for n in range(len(names), -1, -1)]
    if isinstance(item, exp.Cube):
        names = _columns(item.expressions, item)
        return [tuple(n for i, n in enumerate(names) if mask >> (len(names) - 1 - i) & 1)
                for mask in range(2 ** len(names) - 1, -1, -1)]
    if isinstance(item, exp.GroupingSets):
        return [_one_set(e, item) for e in item.expressions]
    return [_columns([item], item)]


def _one_set(node: exp.Expression, item: exp.Expression) -> tuple[str, ...]:
    """One set of GROUPING SETS: a column, (a), (a, b) or ()."""
    if isinstance(node, exp.Paren):
        node = node.this
    members = node.expressions if isinstance(node, exp.Tuple) else [node]
    return _columns(members, item)


def _columns(nodes: list[exp.Expression], item: exp.Expression) -> tuple[str, ...]:
    """The lower-case names of ``nodes``, which must be columns, each once."""
    for node in nodes:
        if not isinstance(node, exp.Column):
            refuse(node, "GROUP BY", ALLOWED, "Nested ROLLUP/CUBE, expressions and positions "
                   "are not supported yet")
    names = tuple(n.name.lower() for n in nodes)
    if len(set(names)) != len(names):
        refuse(item, "GROUP BY", "each column once")
    return names


def set_query(select: exp.Select, grouping_set: GroupingSet) -> exp.Select:
    """``select`` grouped by ``grouping_set`` alone: its GROUP BY lists the set's columns,
    and, outside aggregates, a rolled-up key reads NULL and ``GROUPING(...)`` its mask.

    Every SELECT item keeps the name it has in the query as written (an unnamed item other
    than a column is given that name as an alias: the analysis of a set may rewrite it, as
    ``COUNT('')`` becomes ``COUNT(n)`` where ``'' AS n`` is a key), so all sets' rows have
    the same columns.
    """
    query = select.copy()
    query.set("group", exp.Group(expressions=[exp.column(k) for k in grouping_set.grouped])
              if grouping_set.grouped else None)
    query.set("expressions", [_named(item, grouping_set) for item in query.expressions])
    having = query.args.get("having")
    if having is not None:
        having.set("this", _substituted(having.this, grouping_set))
    return query


def _named(item: exp.Expression, grouping_set: GroupingSet) -> exp.Expression:
    if isinstance(item, exp.Alias):
        item.set("this", _substituted(item.this, grouping_set))
        return item
    changed = _substituted(item.copy(), grouping_set)
    if isinstance(item, exp.Column) and changed == item:
        return item
    name = item.name if isinstance(item, exp.Column) else fragment(item)
    return exp.alias_(changed, name, quoted=not name.isidentifier())


def _substituted(node: exp.Expression, grouping_set: GroupingSet) -> exp.Expression:
    """``node`` with GROUPING(...) as its mask and rolled-up keys outside aggregates as NULL."""

    def swap(sub: exp.Expression) -> exp.Expression:
        if isinstance(sub, exp.Grouping):
            return exp.Literal.number(grouping_set.mask(_grouping_names(sub, grouping_set)))
        if isinstance(sub, exp.Column) and sub.name.lower() in grouping_set.rolled_up \
                and not _in_aggregate(sub):
            return exp.Null()
        return sub

    return node.transform(swap, copy=False)


def _grouping_names(node: exp.Grouping, grouping_set: GroupingSet) -> list[str]:
    names = []
    for arg in node.expressions:
        if not isinstance(arg, exp.Column) or arg.name.lower() not in grouping_set.keys:
            refuse(arg, "GROUPING()", "the query's GROUP BY columns",
                   f"GROUPING says which of its arguments a row's grouping set leaves out; "
                   f"the keys are {', '.join(grouping_set.keys) or 'none'}")
        names.append(arg.name.lower())
    return names


def _in_aggregate(node: exp.Expression) -> bool:
    parent = node.parent
    while parent is not None:
        if isinstance(parent, exp.Filter) or (is_aggregate(parent)
                                              and not isinstance(parent, exp.Grouping)):
            return True
        parent = parent.parent
    return False

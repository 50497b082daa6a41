"""Statements of several releases: the parts, and the post-processing around them.

``SELECT a.n, b.m FROM (SELECT COUNT(*) AS n FROM t) a CROSS JOIN (SELECT AVG(x) AS m FROM
t) b`` asks for two releases and then for a join of the released rows. A *part* is a
SELECT that aggregates private rows without grouping by a privacy unit (it would be a query
of its own): a subquery in FROM or JOIN, a CTE of the outermost WITH, a branch of a set
operation such as UNION ALL, or a scalar subquery. :func:`composition` finds the parts
and replaces each by ``SELECT * FROM __dp_part_<i>``, the part's released table; what is
left, the *outer* query, then reads released tables only, so whatever it computes — joins
on released columns included — is post-processing (docs/mechanisms.md §15). It must name
no other table: a release joined with private rows (a per-person subquery, a private
table) would be joined on private values and is refused.

A statement with one release that is the only item of its FROM is not composed: the
outer query over it is analysed with the release (``dpsql.analysis.outer``).

>>> from dpsql.catalog import Catalog, TableInfo
>>> import sqlglot
>>> cat = Catalog()
>>> _ = cat.add(TableInfo.private("t", columns={"pid": "INT", "x": "INT"}, privacy_unit="pid"))
>>> c = composition(sqlglot.parse_one("SELECT (SELECT COUNT(*) FROM t) - (SELECT COUNT(*) "
...                                   "FROM t WHERE x = 1) AS d"), cat)
>>> [p.sql() for p in c.parts], c.outer.sql()
(['SELECT COUNT(*) FROM t', 'SELECT COUNT(*) FROM t WHERE x = 1'], \
'SELECT (SELECT * FROM __dp_part_0) - (SELECT * FROM __dp_part_1) AS d')
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from dpsql.analysis.grammar import POST_NODES, WINDOW_FUNCTIONS, check_window, fragment, refuse
from dpsql.analysis.outer import OUTER_AGGREGATES, _releases
from dpsql.catalog import Catalog

PART = "__dp_part_"
"""The released table of part i, as the outer query reads it: ``__dp_part_<i>``."""
MAX_PARTS = 16
"""The most releases one statement may compose: each gets a share of ε."""
QUERY_NODES: tuple[type[exp.Expression], ...] = (
    exp.Select, exp.SetOperation, exp.Subquery, exp.From, exp.Join, exp.With, exp.CTE,
    exp.TableAlias, exp.Table, exp.Where, exp.Group, exp.Having, exp.Qualify, exp.Order,
    exp.Ordered, exp.Limit, exp.Offset, exp.Distinct, exp.Star, exp.Window, exp.Identifier,
    exp.Column, exp.Alias, exp.Paren, *POST_NODES, *OUTER_AGGREGATES, *WINDOW_FUNCTIONS,
)
"""Nodes the outer query may use: queries over the released tables and post-processing."""
FIX = ("Post-processing reads the released tables only: make every subquery, CTE or UNION "
       "branch that reads private rows an aggregate query of its own")


@dataclass(frozen=True)
class Composition:
    """The parts of a statement (each a query of its own, with the CTEs of private rows it
    reads), how the statement names them, and the outer query over their released tables."""

    parts: tuple[exp.Select, ...]
    labels: tuple[str, ...]
    outer: exp.Expression


def composition(ast: exp.Expression, catalog: Catalog) -> Composition | None:
    """The statement's parts and outer query, or None for a statement of one query."""
    private = {info.name.lower() for info in catalog if not info.public}
    outer = ast.copy()
    with_ = outer.args.get("with_")
    ctes = list(with_.expressions) if with_ is not None else []
    rows = {}  # CTEs of private rows that are no release (per-person summaries), by name
    for cte in ctes:
        if _reads(cte.this, private, rows) and not _is_release(cte.this, catalog):
            rows[cte.alias.lower()] = cte
    found: list[tuple[exp.Select, str]] = []

    def swap(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Select) and node is not outer and \
                _reads(node, private, rows) and _is_release(node, catalog):
            found.append((_with_rows(node, rows), _label(node)))
            return exp.select("*").from_(f"{PART}{len(found) - 1}")
        return node

    outer = outer.transform(swap, copy=False) if isinstance(outer, exp.SetOperation) else \
        _swap_below(outer, swap)
    if not found or _one_release_in_from(ast, outer, len(found)) or \
            (_is_release(outer, catalog) and _reads(_sources(outer), private, rows)):
        return None  # one query, or an aggregate over private rows: analysed as one query
    if len(found) > MAX_PARTS:
        refuse(None, f"{len(found)} releases in one statement", f"at most {MAX_PARTS}",
               "Each release gets a share of epsilon; ask fewer at once")
    _drop_ctes(outer, rows)
    check_outer(outer, private | set(rows))
    return Composition(parts=tuple(p for p, _ in found), labels=tuple(n for _, n in found),
                       outer=outer)


def _swap_below(select: exp.Select, swap) -> exp.Select:
    """``swap`` applied to every node under the outermost SELECT (never to itself)."""
    for key, value in list(select.args.items()):
        if isinstance(value, exp.Expression):
            select.set(key, value.transform(swap, copy=False))
        elif isinstance(value, list):
            select.set(key, [v.transform(swap, copy=False) if isinstance(v, exp.Expression)
                             else v for v in value])
    return select


def _is_release(select: exp.Expression, catalog: Catalog) -> bool:
    return isinstance(select, exp.Select) and _releases(select, catalog)


def _reads(node: exp.Expression, private: set[str], rows: dict[str, exp.CTE]) -> bool:
    """Whether ``node`` names a private table or a CTE of private rows anywhere in it."""
    return any(t.name.lower() in private or t.name.lower() in rows
               for t in node.find_all(exp.Table))


def _sources(select: exp.Select) -> exp.Expression:
    """The FROM and JOIN items of ``select`` (not its subqueries elsewhere), as one node."""
    items = [s.this.copy() for s in [select.args.get("from_"), *(select.args.get("joins") or [])]
             if s is not None]
    return exp.Tuple(expressions=items)


def _with_rows(part: exp.Select, rows: dict[str, exp.CTE]) -> exp.Select:
    """The part as a query of its own: with the CTEs of private rows it reads."""
    query = part.copy()
    named = {t.name.lower() for t in query.find_all(exp.Table)}
    used = [cte.copy() for name, cte in rows.items() if name in named]
    if used:
        own = query.args["with_"].expressions if query.args.get("with_") else []
        query.set("with_", exp.With(expressions=[*used, *own]))
    return query


def _label(part: exp.Select) -> str:
    """How the statement names a part: its CTE name or alias, else its SQL."""
    parent = part.parent
    if isinstance(parent, (exp.CTE, exp.Subquery)) and parent.alias:
        return parent.alias
    return fragment(part, limit=60)


def _one_release_in_from(ast: exp.Expression, outer: exp.Expression, found: int) -> bool:
    """One release that is the whole FROM of the outermost SELECT: ``dpsql.analysis.outer``
    analyses that statement as one query."""
    if found != 1 or not isinstance(ast, exp.Select) or ast.args.get("joins") or \
            ast.args.get("from_") is None:
        return False
    source = outer.args["from_"].this
    with_ = outer.args.get("with_")
    names = {c.alias.lower(): c.this for c in (with_.expressions if with_ else [])}
    body = source.this if isinstance(source, exp.Subquery) else \
        names.get(source.name.lower()) if isinstance(source, exp.Table) else None
    return body is not None and body.sql() == f"SELECT * FROM {PART}0"


def _drop_ctes(outer: exp.Expression, rows: dict[str, exp.CTE]) -> None:
    """The outer query without the CTEs of private rows (each part carries those it reads)."""
    with_ = outer.args.get("with_")
    if with_ is None or not rows:
        return
    kept = [c for c in with_.expressions if c.alias.lower() not in rows]
    outer.set("with_", exp.With(expressions=kept) if kept else None)


def check_outer(outer: exp.Expression, private: set[str]) -> None:
    """The outer query reads released tables and its own CTEs only, with post-processing
    nodes (no table functions, no private or public table)."""
    with_ = outer.args.get("with_")
    ctes = {c.alias.lower() for c in (with_.expressions if with_ else [])}
    for node in outer.walk():
        if isinstance(node, exp.Table):
            name = node.name.lower()
            if not (name.startswith(PART) or name in ctes) or node.args.get("db"):
                what = "private rows" if name in private else "a table"
                refuse(node, f"{what} beside releases", "released subqueries, CTEs and UNION "
                       "branches, each an aggregate query", FIX)
        elif isinstance(node, exp.Window):
            check_window(node, "outer query")
        elif not isinstance(node, QUERY_NODES):
            refuse(node, "query over releases", "post-processing of the released tables: "
                   "joins, arithmetic, filters, aggregates, sorting", FIX)


def projections(outer: exp.Expression, columns: list[list[str]], one_row: list[bool]
                ) -> tuple[tuple[int, int] | None, ...] | None:
    """For each column of the outer query, the (part, column) it repeats unchanged, where
    that part releases one row (its value is then that row's, whatever the joins and
    filters): the column keeps the part's interval. None for a column computed otherwise;
    None in all for a ``SELECT *`` or a query that groups or aggregates its rows. A UNION
    ALL of parts as they are repeats part i's column j in its own rows: (-1, j).

    ``columns``: each part's released column names; ``one_row``: whether it has no keys.
    """
    if isinstance(outer, exp.Union) and all(_part_of(b) is not None for b in _leaves(outer)) and \
            not any(outer.args.get(a) for a in ("order", "limit", "offset")):
        return tuple((-1, j) for j in range(len(columns[_part_of(_leaves(outer)[0])])))
    if not isinstance(outer, exp.Select) or outer.args.get("group") or \
            any(isinstance(e, exp.Star) for e in outer.expressions) or any(
                isinstance(n, (*OUTER_AGGREGATES, exp.Window)) for e in outer.expressions
                for n in e.walk(prune=lambda n: isinstance(n, exp.Subquery))):
        return None
    with_ = outer.args.get("with_")
    bodies = {c.alias.lower(): c.this for c in (with_.expressions if with_ else [])}
    sources = {}  # FROM and JOIN items by the name the query reads them by
    for item in [outer.args.get("from_"), *(outer.args.get("joins") or [])]:
        source = item.this if item is not None else None
        body = source.this if isinstance(source, exp.Subquery) else \
            bodies.get(source.name.lower()) if isinstance(source, exp.Table) else None
        if source is not None and (part := _part_of(body)) is not None:
            sources[source.alias_or_name.lower()] = part
    return tuple(_projected(e.unalias(), sources, columns, one_row) for e in outer.expressions)


def _projected(item: exp.Expression, sources: dict[str, int], columns: list[list[str]],
               one_row: list[bool]) -> tuple[int, int] | None:
    if isinstance(item, exp.Subquery) and (part := _part_of(item.this)) is not None and \
            one_row[part] and len(columns[part]) == 1:
        return part, 0
    if not isinstance(item, exp.Column):
        return None
    name = item.name.lower()
    if item.table:
        candidates = [sources.get(item.table.lower())]
    else:
        candidates = [p for p in sources.values() if name in map(str.lower, columns[p])]
    if len(candidates) != 1 or candidates[0] is None or not one_row[candidates[0]]:
        return None
    names = [c.lower() for c in columns[candidates[0]]]
    return (candidates[0], names.index(name)) if names.count(name) == 1 else None


def _leaves(node: exp.Expression) -> list[exp.Expression]:
    """The branches of a chain of UNION ALL."""
    if isinstance(node, exp.Union) and not node.args.get("distinct"):
        return [*_leaves(node.this), *_leaves(node.expression)]
    return [node]


def _part_of(body: exp.Expression | None) -> int | None:
    """i when ``body`` is the released table of part i as it is (``SELECT * FROM
    __dp_part_<i>``)."""
    if not isinstance(body, exp.Select) or len(body.expressions) != 1 or \
            not isinstance(body.expressions[0], exp.Star) or \
            any(v for k, v in body.args.items() if k not in ("expressions", "from_")):
        return None
    table = body.args["from_"].this
    if not isinstance(table, exp.Table) or not table.name.startswith(PART):
        return None
    return int(table.name.removeprefix(PART))

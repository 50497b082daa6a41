"""FROM clauses for generated queries, and the columns each makes visible.

A relation is a table (aliased, or with a column alias list ``t AS a(x, y)``, ``t a(x)``),
a row-level derived table (``SELECT *``, ``alias.*``, or columns and named expressions), a
per-unit aggregation (``GROUP BY pid``), a CTE (chained, with a column list or not), a
join (private ⋈ public, INNER or LEFT; private ⋈ private on the unit; a cross join with
``UNNEST([constants])``) or a UNION ALL, as in grammar_tests/relations.sql and unnest.sql.

Names are drawn to collide: aliases and alias lists reuse column names (``x``, ``pid``),
join renamings (``a_pid``, ``b_k``), registered table names (``FROM u AS t``), names that
read as SQL (``"a b"``, ``"x, pid"``) and dpsql's reserved namespace (``__dp_unit_of``,
``__DP_Unit_Of``, ``__dp_source``, ``__dp_q0``, ...), which must be refused, never bound.
A derived table that drops the unit names one of its columns ``__dp_unit_of`` one time in
three: the name dpsql gives the unit it adds back.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pyarrow as pa
from hypothesis import strategies as st

from tests.fuzz.expressions import Col, Scope, column, expressions, ident, summands
from tests.fuzz.tables import BOUNDS, SCHEMA, UNIT_TABLES

RESERVED = ("__dp_unit_of", "__dp_unit_of", "__DP_Unit_Of", "__dp_unit", "__dp_source",
            "__dp_q0", "__dp_s0", "__dp_noisy", "__dp_row", "__dp_j0_pid", "__dp_kept",
            "__dp_v0", "__dpx")


def _names(usual: tuple[str, ...], odds: int = 30) -> st.SearchStrategy[str]:
    """Ordinary names, one time in ``odds`` a reserved one."""
    return st.integers(1, odds).flatmap(
        lambda i: st.sampled_from(RESERVED if i == odds else usual))


USUAL = ("n", "v", "total", "k", "x", "pid", "a_pid", "b_k", "a_x", "t_k", "sx", "m", "dt",
         "cnt", "Mixed Case", "a b", "x, pid")
NAMES = _names(USUAL)
ROW_NAMES = _names(USUAL, 8)
"""Names of subquery columns: where a captured name could stand in for the privacy unit."""
TABLE_ALIASES = _names(("a", "b", "c", "d2", "p", "q", "t", "u", "pub"))
CTE_NAMES = _names(("c", "c", "w", "w", "t"))


@dataclass(frozen=True)
class Relation:
    """A FROM clause, the CTEs it needs, and the columns it makes visible."""

    sql: str
    scope: Scope
    ctes: tuple[str, ...] = ()


def _kind(table: str, name: str) -> str:
    col = next(c for c in SCHEMA[table] if c.name == name)
    if col.view is not None:
        return "numeric"
    for test, kind in ((pa.types.is_string, "string"), (pa.types.is_boolean, "boolean"),
                       (pa.types.is_date, "date"), (pa.types.is_timestamp, "timestamp"),
                       (pa.types.is_time, "time")):
        if test(col.arrow):
            return kind
    return "numeric"


def table_scope(table: str, qualifier: str | None) -> Scope:
    unit = "pid" if table in UNIT_TABLES else None
    return Scope(tuple(Col(c.name, _kind(table, c.name), qualifier, unit=c.name == unit,
                           bounded=c.name in BOUNDS.get(table, {})) for c in SCHEMA[table]))


def _qualified(scope: Scope, qualifier: str | None) -> Scope:
    return Scope(tuple(replace(c, qualifier=qualifier) for c in scope.columns))


def where_clause(draw: st.DrawFn, scope: Scope, chance: int = 2) -> str:
    """`` WHERE <condition>`` one time in ``chance + 1``, else nothing."""
    if draw(st.integers(0, chance)) < chance:
        return ""
    return f" WHERE {draw(expressions(scope, 'boolean', 2))}"


@st.composite
def tables(draw: st.DrawFn, choices: tuple[str, ...] = ("t", "t", "t", "u", "r")) -> Relation:
    """A table, maybe aliased, maybe with a column alias list renaming its first columns."""
    table = draw(st.sampled_from(choices))
    scope = table_scope(table, table)
    style = draw(st.integers(0, 7))
    if style < 3:
        return Relation(table, scope)
    alias = draw(TABLE_ALIASES)
    scope = _qualified(scope, alias)
    if style < 7:
        return Relation(f"{table} AS {ident(alias)}", scope)
    aliases, scope = draw(_alias_list(scope))
    written = draw(st.sampled_from(("AS ", "")))
    return Relation(f"{table} {written}{ident(alias)}{aliases}", scope)


@st.composite
def _alias_list(draw: st.DrawFn, scope: Scope) -> tuple[str, Scope]:
    """``(a, b)`` renaming the first columns (the unit among them), and the renamed scope."""
    renamed = draw(st.lists(ROW_NAMES, min_size=1, max_size=3))
    columns = tuple(replace(c, name=renamed[i].lower()) if i < len(renamed) else c
                    for i, c in enumerate(scope.columns))
    return f"({', '.join(map(ident, renamed))})", Scope(columns)


@st.composite
def _row_items(draw: st.DrawFn, scope: Scope) -> tuple[str, tuple[Col, ...]]:
    """A derived table's SELECT list: ``*`` or ``alias.*``, or columns and named expressions."""
    if draw(st.integers(0, 3)) == 3:
        qualifier = scope.columns[0].qualifier
        star = draw(st.sampled_from(("*", f"{ident(qualifier)}.*" if qualifier else "*")))
        return star, scope.columns
    items, columns = [], []
    if scope.unit is not None and draw(st.integers(0, 4)) < 4:
        items.append(draw(column(scope, scope.unit)))
        columns.append(scope.unit)
    elif scope.unit is not None and draw(st.integers(0, 2)) == 2:
        # The unit is dropped, so dpsql adds it back under its own name: take that name.
        name = draw(st.sampled_from(("__dp_unit_of", "__DP_Unit_Of", '"__dp_unit_of"')))
        col = draw(st.sampled_from([c for c in scope.columns if not c.unit]))
        items.append(f"{draw(column(scope, col))} AS {name}")
        columns.append(replace(col, name=name.strip('"').lower()))
    for _ in range(draw(st.integers(1, 4))):
        if draw(st.booleans()):
            col = draw(st.sampled_from([c for c in scope.columns if not c.unit]))
            if col.name not in {c.name for c in columns}:
                items.append(draw(column(scope, col)))
                columns.append(col)
            continue
        kind = draw(st.sampled_from(("numeric", "numeric", "string", "date", "boolean")))
        value = draw(summands(scope) if kind == "numeric" else expressions(scope, kind, 1))
        name = draw(ROW_NAMES)
        if name.lower() in {c.name for c in columns} and draw(st.integers(0, 4)) < 4:
            continue  # a duplicate name is refused: keep it rare
        items.append(f"{value} AS {ident(name)}")
        columns.append(Col(name.lower(), kind, bounded=kind == "numeric"))
    return ", ".join(items), tuple(columns)


@st.composite
def _derived_body(draw: st.DrawFn) -> tuple[str, Scope]:
    """SELECT ... FROM <table> [WHERE]: one output row per input row."""
    inner = draw(tables())
    items, columns = draw(_row_items(inner.scope))
    sql = f"SELECT {items} FROM {inner.sql}{where_clause(draw, inner.scope)}"
    return sql, _qualified(Scope(columns), None)


@st.composite
def _per_unit_aggregate(draw: st.DrawFn, scope: Scope) -> tuple[str, Col]:
    """``agg AS name`` in a per-unit subquery, and the column it becomes."""
    name = draw(ROW_NAMES)
    form = draw(st.integers(0, 4))
    if form == 0:
        value, col = "COUNT(*)", Col(name, "numeric")
    elif form == 1:
        value, col = f"SUM({draw(expressions(scope, 'numeric', 1))})", Col(name, "numeric")
    elif form == 2:
        value, col = f"AVG({draw(summands(scope))})", Col(name, "numeric", bounded=True)
    else:
        source = draw(st.sampled_from([c for c in scope.columns if not c.unit]))
        if form == 3:
            value, col = f"COUNT(DISTINCT {draw(column(scope, source))})", Col(name, "numeric")
        else:
            verb = draw(st.sampled_from(("MIN", "MAX")))
            value = f"{verb}({draw(column(scope, source))})"
            col = Col(name, source.kind, bounded=source.bounded)
    return f"{value} AS {ident(name)}", replace(col, name=name.lower())


@st.composite
def _per_unit_body(draw: st.DrawFn) -> tuple[str, Scope]:
    """SELECT pid[, k], aggregates FROM <unit table> GROUP BY pid[, k]: one row per person."""
    inner = draw(tables(UNIT_TABLES))
    scope = inner.scope
    keys = [scope.unit or scope.columns[0]]
    if draw(st.booleans()):
        keys += [c for c in scope.columns if c.name == "k"]
    key_sql = [draw(column(scope, c)) for c in keys]
    items, columns = list(key_sql), list(keys)
    for _ in range(draw(st.integers(1, 3))):
        item, col = draw(_per_unit_aggregate(scope))
        if col.name not in {c.name for c in columns} or draw(st.integers(0, 4)) == 4:
            items.append(item)
            columns.append(col)
    sql = (f"SELECT {', '.join(items)} FROM {inner.sql}{where_clause(draw, scope, 3)} "
           f"GROUP BY {', '.join(key_sql)}")
    return sql, _qualified(Scope(tuple(columns)), None)


def _bodies() -> st.SearchStrategy[tuple[str, Scope]]:
    return st.one_of(_derived_body(), _per_unit_body())


@st.composite
def _subquery(draw: st.DrawFn) -> Relation:
    body, scope = draw(_bodies())
    if draw(st.integers(0, 4)) == 4:
        return Relation(f"({body})", scope)
    alias = draw(TABLE_ALIASES)
    return Relation(f"({body}) AS {ident(alias)}", _qualified(scope, alias))


@st.composite
def _cte(draw: st.DrawFn) -> Relation:
    """WITH c AS (...) [, d AS (SELECT * FROM c WHERE ...)], read by name."""
    body, scope = draw(_bodies())
    name = draw(CTE_NAMES)
    aliases = ""
    if draw(st.integers(0, 3)) == 3:
        aliases, scope = draw(_alias_list(scope))
    ctes = [f"{ident(name)}{aliases} AS ({body})"]
    scope = _qualified(scope, name)
    if draw(st.integers(0, 2)) == 2:
        ctes.append(f"d AS (SELECT * FROM {ident(name)}{where_clause(draw, scope, 0)})")
        name = "d"
        scope = _qualified(scope, name)
    return Relation(ident(name), scope, tuple(ctes))


@st.composite
def _join(draw: st.DrawFn) -> Relation:
    """<unit table> a [LEFT] JOIN pub b ON a.k = b.k, or JOIN the other one ON a.pid = b.pid."""
    left, first = draw(st.sampled_from(UNIT_TABLES)), draw(TABLE_ALIASES)
    scope = table_scope(left, first).columns
    sql = f"{left} AS {ident(first)}"
    taken = [first]
    for _ in range(draw(st.integers(1, 2))):
        second = draw(TABLE_ALIASES.filter(lambda a: a not in taken)
                      if draw(st.integers(0, 9)) < 9 else TABLE_ALIASES)
        taken.append(second)
        right = draw(st.sampled_from(("pub", "pub", "t", "u", "unnest")))
        if right == "unnest":  # every row once per element, a name drawn to collide
            name = draw(ROW_NAMES)
            values = draw(st.lists(st.integers(-3, 5), min_size=1, max_size=4))
            sql += (f"{draw(st.sampled_from((' CROSS JOIN', ',')))} UNNEST("
                    f"[{', '.join(map(str, values))}]) AS {ident(second)}({ident(name)})")
            scope += (Col(name.lower(), "numeric", second, bounded=True),)
            continue
        if right == "pub":
            side = draw(st.sampled_from(("", "LEFT ", "INNER ")))
            on = f"{ident(first)}.k = {ident(second)}.k"
        else:
            side = ""
            key = draw(st.sampled_from(("pid",) * 5 + ("k",)))
            on = f"{ident(first)}.pid = {ident(second)}.{key}"
        added = table_scope(right, second).columns
        if draw(st.integers(0, 3)) == 3:
            on += f" AND {draw(expressions(Scope(scope + added), 'boolean', 1))}"
        sql += f" {side}JOIN {right} AS {ident(second)} ON {on}"
        scope += tuple(replace(c, unit=False) for c in added)
    return Relation(sql, Scope(scope))


@st.composite
def _union(draw: st.DrawFn) -> Relation:
    """(SELECT [pid,] <value> AS v, k FROM t UNION ALL SELECT [pid,] ... FROM u) AS w."""
    kind = draw(st.sampled_from(("numeric", "string", "date")))
    pools = {"numeric": (("x", "i", "m", "h"), ("y", "a_pid")), "string": (("k", "s"), ("k",)),
             "date": (("dt",), ("dt",))}[kind]
    units = draw(st.sampled_from(("both",) * 6 + ("none",) * 3 + ("first",)))
    branches = []
    for index, (table, values) in enumerate(zip(UNIT_TABLES, pools, strict=True)):
        unit = "pid, " if units == "both" or (units == "first" and index == 0) else ""
        value = draw(st.sampled_from(values))
        branches.append(f"SELECT {unit}{value} AS v, k FROM {table}"
                        f"{where_clause(draw, table_scope(table, None), 3)}")
    unit = (Col("pid", "numeric", "w", unit=True),) if units != "none" else ()
    scope = Scope((*unit, Col("v", kind, "w", bounded=kind == "numeric"),
                   Col("k", "string", "w")))
    return Relation(f"({' UNION ALL '.join(branches)}) AS w", scope)


def relations() -> st.SearchStrategy[Relation]:
    return st.one_of(tables(), tables(), _subquery(), _cte(), _join(), _union())

"""Whole queries from dpsql's accepted grammar (grammar_tests/*.sql), and its edges.

A query is ``[WITH ...] SELECT [WITH DIFFERENTIAL_PRIVACY OPTIONS (...)] keys, aggregates
FROM <relation> [WHERE] [GROUP BY] [HAVING] [ORDER BY] [LIMIT]``, where the relation is a
table (aliased, or with a column alias list ``t AS a(x, y)``), a row-level derived table
(``SELECT *`` or expressions), a per-unit aggregation (``GROUP BY pid``), a CTE (chained,
read under its name), a join (private ⋈ public, INNER or LEFT; private ⋈ private on the
unit) or a UNION ALL. Aggregates are every one the grammar lists, with FILTER and
BigQuery's contribution bounds; group keys are columns, expressions, SELECT aliases and
positions, public (``t.k``, ``t.g``) or private.

Names are drawn to collide: aliases and alias lists reuse column names (``x``, ``pid``),
join renamings (``a_pid``, ``b_k``), registered table names (``FROM u AS t``) and, now
and then, dpsql's reserved namespace (``__dp_unit_of``, ``__DP_Unit_Of``, ``__dp_source``,
``__dp_q0``, ...), which must be refused, never bound.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pyarrow as pa
from hypothesis import strategies as st

from tests.fuzz.expressions import (
    Col,
    Scope,
    clamp_ends,
    column,
    expressions,
    ident,
    pool,
    summands,
)
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
QUANTILE_LEVELS = pool(("0", "0.5", "0.9", "1", "0.25", "1e-9"), ("1.5",))
SPREADS = ("SUM", "SUM", "AVG", "AVG", "VAR_POP", "VAR_SAMP", "VARIANCE", "STDDEV",
           "STDDEV_POP", "STDDEV_SAMP")
OPTIONS = {"epsilon": ("0.5", "1e-9", "1e9"), "delta": ("0", "1e-300", "0.5"),
           "max_groups_contributed": ("1", "5"), "max_rows_contributed": ("1", "7"),
           "privacy_unit_column": ("pid",)}


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


def _where(draw: st.DrawFn, scope: Scope, chance: int = 2) -> str:
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
    renamed = draw(st.lists(ROW_NAMES, min_size=1, max_size=3))
    columns = tuple(replace(c, name=renamed[i].lower()) if i < len(renamed) else c
                    for i, c in enumerate(scope.columns))
    aliases = ", ".join(map(ident, renamed))
    return Relation(f"{table} AS {ident(alias)}({aliases})", Scope(columns))


@st.composite
def _row_items(draw: st.DrawFn, scope: Scope) -> tuple[str, tuple[Col, ...]]:
    """A derived table's SELECT list: ``*``, or columns and named expressions."""
    if draw(st.integers(0, 3)) == 3:
        return "*", scope.columns
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
    sql = f"SELECT {items} FROM {inner.sql}{_where(draw, inner.scope)}"
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
    sql = (f"SELECT {', '.join(items)} FROM {inner.sql}{_where(draw, scope, 3)} "
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
    ctes = [f"{ident(name)} AS ({body})"]
    scope = _qualified(scope, name)
    if draw(st.integers(0, 2)) == 2:
        ctes.append(f"d AS (SELECT * FROM {ident(name)}{_where(draw, scope, 0)})")
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
        right = draw(st.sampled_from(("pub", "pub", "t", "u")))
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
                        f"{_where(draw, table_scope(table, None), 3)}")
    unit = (Col("pid", "numeric", "w", unit=True),) if units != "none" else ()
    scope = Scope((*unit, Col("v", kind, "w", bounded=kind == "numeric"),
                   Col("k", "string", "w")))
    return Relation(f"({' UNION ALL '.join(branches)}) AS w", scope)


def relations() -> st.SearchStrategy[Relation]:
    return st.one_of(tables(), tables(), _subquery(), _cte(), _join(), _union())


@st.composite
def _quantile(draw: st.DrawFn, scope: Scope) -> str:
    value, q = draw(summands(scope)), draw(QUANTILE_LEVELS)
    form = draw(st.integers(0, 3))
    if form == 0:
        return f"MEDIAN({value})"
    if form == 3:
        order = draw(st.sampled_from(("", " DESC")))
        return f"PERCENTILE_CONT({q}) WITHIN GROUP (ORDER BY {value}{order})"
    return f"{draw(st.sampled_from(('QUANTILE_CONT', 'APPROX_QUANTILE')))}({value}, {q})"


@st.composite
def aggregates(draw: st.DrawFn, scope: Scope) -> str:
    """One aggregate call, maybe with FILTER."""
    form = draw(st.integers(0, 9))
    if form == 0:
        call = "COUNT(*)"
    elif form == 1:
        kind = draw(st.sampled_from(("numeric", "string", "date", "boolean", "time")))
        call = f"COUNT({draw(expressions(scope, kind, 1))})"
    elif form == 2:
        target = scope.unit if scope.unit is not None and draw(st.booleans()) else None
        value = draw(column(scope, target)) if target else draw(expressions(scope, "string", 1))
        call = f"COUNT(DISTINCT {value})"
    elif form < 6:
        call = f"{draw(st.sampled_from(SPREADS))}({draw(summands(scope))})"
    elif form < 8:
        call = draw(_quantile(scope))
    else:
        lo, hi = draw(clamp_ends())
        which = draw(st.sampled_from(("SUM", "SUM", "AVG")))
        per = draw(st.sampled_from(("group", "row")))
        call = (f"{which}({draw(expressions(scope, 'numeric', 1))}, "
                f"contribution_bounds_per_{per} => ({lo}, {hi}))")
    if draw(st.integers(0, 4)) == 4:
        call += f" FILTER (WHERE {draw(expressions(scope, 'boolean', 1))})"
    return call


@st.composite
def _outputs(draw: st.DrawFn, scope: Scope) -> str:
    """An aggregate, sometimes inside post-processing, maybe with an alias."""
    call = draw(aggregates(scope))
    wrapped = draw(st.sampled_from((call,) * 8 + (f"ROUND({call}, 1)", f"{call} * 2 + 1",
                                                  f"CASE WHEN {call} > 5 THEN 'big' END")))
    return f"{wrapped} AS {ident(draw(NAMES))}" if draw(st.integers(0, 2)) == 2 else wrapped


@st.composite
def _keys(draw: st.DrawFn, scope: Scope) -> list[tuple[str | None, str]]:
    """GROUP BY keys as (SELECT item or None, GROUP BY item); ``#`` marks a position."""
    keys: list[tuple[str | None, str]] = []
    others = [c for c in scope.columns if not c.unit]
    for _ in range(draw(st.sampled_from((0, 0, 1, 1, 1, 2)))):
        choice = draw(st.integers(0, 39))
        if choice == 39 and scope.unit is not None:
            ref = draw(column(scope, scope.unit))
            key = (ref, ref)
        elif choice < 27 and others:
            ref = draw(column(scope, draw(st.sampled_from(others))))
            key = draw(st.sampled_from(((ref, ref), (ref, ref), (None, ref),
                                        (f"{ref} AS {ident(draw(NAMES))}", ref))))
        else:
            kind = draw(st.sampled_from(("string", "numeric", "timestamp", "boolean")))
            value = draw(expressions(scope, kind, 1))
            alias = ident(draw(NAMES))
            key = draw(st.sampled_from(((f"{value} AS {alias}", alias), (value, value),
                                        (value, "#"))))
        if key[1] not in {g for _, g in keys}:
            keys.append(key)
    return keys


@st.composite
def _options(draw: st.DrawFn) -> str:
    """BigQuery's ``WITH DIFFERENTIAL_PRIVACY OPTIONS (...)`` one time in seven."""
    if draw(st.integers(0, 6)) < 6:
        return ""
    chosen = draw(st.lists(st.sampled_from(sorted(OPTIONS)), max_size=2, unique=True))
    values = [f"{name} = {draw(st.sampled_from(OPTIONS[name]))}" for name in chosen]
    return f"WITH DIFFERENTIAL_PRIVACY OPTIONS ({', '.join(values)}) "


@st.composite
def queries(draw: st.DrawFn) -> str:
    """A whole query over the fuzz catalog (``tests.fuzz.tables``)."""
    relation = draw(relations())
    scope = relation.scope
    keys = draw(_keys(scope))
    shown = [s for s, _ in keys if s is not None]
    alone = shown and draw(st.integers(0, 3)) == 3  # keys alone: private ones are released
    calls = draw(st.lists(_outputs(scope), min_size=0 if alone else 1, max_size=3))
    items = shown + calls if draw(st.integers(0, 4)) < 4 else calls + shown
    groups = [str(items.index(s) + 1) if g == "#" else g for s, g in keys]
    sql = (f"SELECT {draw(_options())}{', '.join(items)} FROM {relation.sql}"
           f"{_where(draw, scope, 1)}")
    if groups:
        sql += f" GROUP BY {', '.join(groups)}"
    sql += draw(st.sampled_from(("",) * 4 + (" HAVING COUNT(*) > 1", " ORDER BY 1 DESC",
                                             " LIMIT 2")))
    return (f"WITH {', '.join(relation.ctes)} " if relation.ctes else "") + sql

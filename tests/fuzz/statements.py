"""Statements of several releases (``dpsql.composed``), from parts the other generators write.

A part is an aggregate query of its own over a relation of ``tests.fuzz.relations`` (its
CTEs inside it), with the aggregates of ``tests.fuzz.queries``, sometimes keyed by a column
and sometimes with its own ``WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = ...)``; or a whole
generated query (``queries``). The statement around the parts, as in
grammar_tests/composed.sql:

- scalar subqueries in post-processing: ``SELECT (p) * 1.0 / (q) AS r, (p) AS n``;
- one-row releases joined: ``SELECT a.v0, b.v0 FROM (p) AS a CROSS JOIN (q) AS b``;
- keyed releases as subqueries or CTEs joined on their released key: ``WITH a AS (p), b AS
  (q) SELECT a.key, a.v0, b.v0 FROM a [LEFT] JOIN b ON a.key = b.key``;
- UNION ALL (or UNION) of whole queries, each a release;
- a per-person CTE of the outer WITH read by two parts.

Keys of parts over different relations may differ in type, and a part may release a key
and no aggregate: the statement must then be refused, or run.
"""

from __future__ import annotations

from hypothesis import assume
from hypothesis import strategies as st

from tests.fuzz.expressions import column
from tests.fuzz.queries import aggregates, queries
from tests.fuzz.relations import relations, where_clause

PART_EPSILONS = ("0.25", "0.5", "1e-9", "2")
"""A part's own ε: less than the statement's, all of it (refused with other parts) or more."""


@st.composite
def _part(draw: st.DrawFn, keyed: bool, values: int = 2) -> str:
    """``SELECT [key,] agg AS v0[, agg AS v1] FROM <relation> [WHERE] [GROUP BY key]``."""
    relation = draw(relations())
    scope = relation.scope
    items, group = [], ""
    if keyed:
        keys = [c for c in scope.columns if not c.unit]
        assume(keys)  # a relation of the unit column alone has nothing to group by
        ref = draw(column(scope, draw(st.sampled_from(keys))))
        items.append(f"{ref} AS key")
        group = f" GROUP BY {ref}"
    for i in range(draw(st.integers(1, values))):
        items.append(f"{draw(aggregates(scope))} AS v{i}")
    own = ""
    if draw(st.integers(0, 4)) == 4:
        own = ("WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = "
               f"{draw(st.sampled_from(PART_EPSILONS))}) ")
    sql = (f"SELECT {own}{', '.join(items)} FROM {relation.sql}"
           f"{where_clause(draw, scope, 2)}{group}")
    return (f"WITH {', '.join(relation.ctes)} " if relation.ctes else "") + sql


@st.composite
def _scalars(draw: st.DrawFn) -> str:
    """Scalar subqueries, each a one-value release, in post-processing."""
    first, second = (draw(_part(False, 1)) for _ in range(2))
    op = draw(st.sampled_from((" * 1.0 / ", " - ", " + ")))
    items = [f"({first}){op}({second}) AS r"]
    if draw(st.booleans()):
        items.append(f"({draw(_part(False, 1))}) AS n")
    return f"SELECT {', '.join(items)}"


@st.composite
def _joined(draw: st.DrawFn) -> str:
    """Two or three releases as subqueries or CTEs, joined on their keys or crossed."""
    keyed = draw(st.booleans())
    count = draw(st.sampled_from((2, 2, 3)))
    parts = [draw(_part(keyed)) for _ in range(count)]
    names = ["a", "b", "c"][:count]
    ctes = draw(st.booleans())
    sources = names if ctes else [f"({p}) AS {n}" for p, n in zip(parts, names, strict=False)]
    sql = sources[0]
    for name, source in zip(names[1:], sources[1:], strict=True):
        if keyed:
            side = draw(st.sampled_from(("", "LEFT ", "FULL OUTER ")))
            sql += f" {side}JOIN {source} ON a.key = {name}.key"
        else:
            sql += draw(st.sampled_from((f" CROSS JOIN {source}", f", {source}")))
    shown = draw(st.sampled_from(("*", ", ".join(
        [*(["a.key"] if keyed else []), *(f"{n}.v0" for n in names)]),
        " + ".join(f"{n}.v0" for n in names) + " AS total")))
    where = " WHERE a.v0 > 0" if draw(st.integers(0, 4)) == 4 else ""
    with_ = "WITH " + ", ".join(f"{n} AS ({p})" for n, p in zip(names, parts, strict=True)) \
        + " " if ctes else ""
    return f"{with_}SELECT {shown} FROM {sql}{where}"


@st.composite
def _union(draw: st.DrawFn) -> str:
    """UNION ALL (or UNION) of two or three whole queries, each a release."""
    branches = draw(st.lists(st.one_of(queries(), _part(draw(st.booleans()), 1)),
                             min_size=2, max_size=3))
    glue = draw(st.sampled_from((" UNION ALL ", " UNION ALL ", " UNION ")))
    return glue.join(f"({b})" if b.startswith("WITH") or " LIMIT " in b or " ORDER " in b
                     else b for b in branches)


@st.composite
def _shared_rows(draw: st.DrawFn) -> str:
    """A per-person CTE of the outer WITH, read by two releases crossed."""
    table, value = draw(st.sampled_from((("t", "x"), ("u", "y"))))
    first = draw(st.sampled_from(("COUNT(*)", f"SUM({value})", f"MAX({value})")))
    reads = [draw(st.sampled_from(("AVG(LEAST(GREATEST(m, 0), 3))", "COUNT(*)",
                                   "SUM(LEAST(GREATEST(m, -1), 2))", "MEDIAN(LEAST(m, 5))")))
             for _ in range(2)]
    where = draw(st.sampled_from(("", "", " WHERE m > 1")))
    return (f"WITH per AS (SELECT pid, {first} AS m FROM {table} GROUP BY pid), "
            f"a AS (SELECT {reads[0]} AS v0 FROM per), "
            f"b AS (SELECT {reads[1]} AS v0 FROM per{where}) "
            "SELECT a.v0, b.v0 AS w0 FROM a CROSS JOIN b")


def composed() -> st.SearchStrategy[str]:
    """A statement of several releases, in one of the forms of the module docstring."""
    return st.one_of(_scalars(), _joined(), _joined(), _union(), _shared_rows())


def statements() -> st.SearchStrategy[str]:
    """A query (``queries``) or, one time in five, a statement of several releases."""
    return st.integers(0, 4).flatmap(lambda i: composed() if i == 4 else queries())


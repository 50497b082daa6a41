"""Whole queries from dpsql's accepted grammar (grammar_tests/*.sql), and its edges.

A query is ``[WITH ...] SELECT [WITH DIFFERENTIAL_PRIVACY OPTIONS (...)] keys, outputs
FROM <relation> [WHERE] [GROUP BY] [HAVING] [ORDER BY] [LIMIT]`` over a relation of
``tests.fuzz.relations``. Aggregates are every one the grammar lists (COUNT(*), COUNT,
COUNT(DISTINCT), APPROX_COUNT_DISTINCT, SUM, AVG, the variances and standard deviations,
CORR, COVAR_* and REGR_*, MEDIAN, QUANTILE_CONT, APPROX_QUANTILE, PERCENTILE_CONT WITHIN
GROUP, BigQuery's APPROX_QUANTILES(x, n) (whole, indexed or its length) and ZetaSQL's
ANON_QUANTILES), with FILTER and BigQuery's contribution bounds, sometimes inside
post-processing; group keys are columns, expressions, SELECT aliases and positions, public
(``t.k``, ``t.g``) or private, and rarely the unit itself, sometimes under ROLLUP, CUBE or
GROUPING SETS (alone, beside plain keys, or listed set by set) with ``GROUPING(...)`` among
the outputs. The clause ``WITH DIFFERENTIAL_PRIVACY OPTIONS`` (or ZetaSQL's older ``WITH
ANONYMIZATION OPTIONS``) sets ε, δ, contribution limits, ``min_privacy_units_per_group``
(``k_threshold``: on a global aggregate too) and ``consistent_totals``.
"""

from __future__ import annotations

from hypothesis import strategies as st

from tests.fuzz.expressions import Scope, clamp_ends, column, expressions, ident, pool, summands
from tests.fuzz.relations import NAMES, relations, where_clause

QUANTILE_LEVELS = pool(("0", "0.5", "0.9", "1", "0.25", "1e-9"), ("1.5",))
SPREADS = ("SUM", "SUM", "AVG", "AVG", "VAR_POP", "VAR_SAMP", "VARIANCE", "STDDEV",
           "STDDEV_POP", "STDDEV_SAMP")
PAIRS = ("CORR", "COVAR_POP", "COVAR_SAMP", "REGR_SLOPE", "REGR_INTERCEPT", "REGR_R2",
         "REGR_COUNT", "REGR_AVGX", "REGR_AVGY", "REGR_SXX", "REGR_SYY", "REGR_SXY")
OPTIONS = {"epsilon": ("0.5", "1e-9", "1e9", "1e308", "5e-324"),
           "delta": ("0", "1e-300", "0.5", "5e-324"),
           "max_groups_contributed": ("1", "5", "2147483647"),
           "max_rows_contributed": ("1", "7", "9223372036854775807"),
           "privacy_unit_column": ("pid",),
           "min_privacy_units_per_group": ("1", "3", "2147483647", "0")}
"""Options at ordinary and extreme values (planning must refuse or calibrate, never crash)."""
OLD_OPTIONS = {"k_threshold": ("1", "3", "0"), "kappa": ("1", "2"), "epsilon": ("0.5",),
               "delta": ("1e-6", "0")}
"""ZetaSQL's ``WITH ANONYMIZATION OPTIONS`` (k_threshold is min_privacy_units_per_group)."""
GROUPING_SETS = ("ROLLUP ({all})", "CUBE ({all})", "GROUPING SETS (({all}), ())",
                 "{all} WITH ROLLUP", "{first}, ROLLUP ({rest})", "{first}, CUBE ({rest})",
                 "GROUPING SETS ({each})", "GROUPING SETS (({all}), ({first}), ())")
"""GROUP BY keys as grouping sets (refused with positions, expressions, ORDER BY or LIMIT):
``{all}`` the keys, ``{first}`` the first, ``{rest}`` the others, ``{each}`` one set each."""
QUANTILE_COUNTS = pool(("1", "2", "4", "10"), ("0", "101", "2.5"))
"""n of APPROX_QUANTILES(x, n): 1 to 100, or refused."""


@st.composite
def _quantile(draw: st.DrawFn, scope: Scope) -> str:
    value, q = draw(summands(scope)), draw(QUANTILE_LEVELS)
    form = draw(st.integers(0, 5))
    if form == 0:
        return f"MEDIAN({value})"
    if form == 3:
        order = draw(st.sampled_from(("", " DESC")))
        return f"PERCENTILE_CONT({q}) WITHIN GROUP (ORDER BY {value}{order})"
    if form > 3:
        return draw(_quantiles(scope))
    return f"{draw(st.sampled_from(('QUANTILE_CONT', 'APPROX_QUANTILE')))}({value}, {q})"


@st.composite
def _quantiles(draw: st.DrawFn, scope: Scope) -> str:
    """APPROX_QUANTILES(x, n) as the array, one element (DuckDB indexes from 1; sometimes
    beyond the end) or its length; or ZetaSQL's ANON_QUANTILES(x, n CLAMPED BETWEEN lo AND
    hi)."""
    n = draw(QUANTILE_COUNTS)
    if draw(st.integers(0, 3)) == 3:
        lo, hi = draw(clamp_ends())
        value = draw(expressions(scope, "numeric", 1))
        return f"ANON_QUANTILES({value}, {n} CLAMPED BETWEEN {lo} AND {hi})"
    call = f"APPROX_QUANTILES({draw(summands(scope))}, {n})"
    form = draw(st.integers(0, 3))
    if form == 1 and n.isdigit():
        return f"{call}[{draw(st.integers(1, int(n) + 1 + draw(st.integers(0, 1))))}]"
    if form == 2:
        return f"{draw(st.sampled_from(('ARRAY_LENGTH', 'len')))}({call})"
    return call


@st.composite
def aggregates(draw: st.DrawFn, scope: Scope) -> str:
    """One aggregate call, maybe with FILTER."""
    form = draw(st.integers(0, 10))
    if form == 0:
        call = "COUNT(*)"
    elif form == 1:
        kind = draw(st.sampled_from(("numeric", "string", "date", "boolean", "time")))
        call = f"COUNT({draw(expressions(scope, kind, 1))})"
    elif form == 2:
        target = scope.unit if scope.unit is not None and draw(st.booleans()) else None
        value = draw(column(scope, target)) if target else draw(expressions(scope, "string", 1))
        call = draw(st.sampled_from((f"COUNT(DISTINCT {value})", f"COUNT(DISTINCT {value})",
                                     f"APPROX_COUNT_DISTINCT({value})")))
    elif form < 6:
        call = f"{draw(st.sampled_from(SPREADS))}({draw(summands(scope))})"
    elif form < 8:
        call = draw(_quantile(scope))
    elif form == 10:
        y, x = draw(summands(scope)), draw(summands(scope))
        call = f"{draw(st.sampled_from(PAIRS))}({y}, {x})"
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
def _keys(draw: st.DrawFn, scope: Scope, plain: bool) -> list[tuple[str | None, str]]:
    """GROUP BY keys as (SELECT item or None, GROUP BY item); ``#`` marks a position.
    ``plain``: columns only (the keys of grouping sets), sometimes renamed in the SELECT."""
    keys: list[tuple[str | None, str]] = []
    others = [c for c in scope.columns if not c.unit]
    for _ in range(draw(st.sampled_from((1, 1, 2, 2, 3) if plain else (0, 0, 1, 1, 1, 2)))):
        choice = draw(st.integers(0, 39))
        if choice == 39 and scope.unit is not None:
            ref = draw(column(scope, scope.unit))
            key = (ref, ref)
        elif (choice < 27 or plain) and others:
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
def _options(draw: st.DrawFn, sets: bool = False) -> str:
    """An options clause one time in seven: three times in four BigQuery's ``WITH
    DIFFERENTIAL_PRIVACY OPTIONS (...)`` (with grouping sets, sometimes ``consistent_totals``),
    else ZetaSQL's ``WITH ANONYMIZATION OPTIONS (...)``."""
    form = draw(st.integers(0, 27))
    if form < 24:
        return ""
    if form == 27:
        chosen = draw(st.lists(st.sampled_from(sorted(OLD_OPTIONS)), min_size=1, max_size=3,
                               unique=True))
        values = [f"{name} = {draw(st.sampled_from(OLD_OPTIONS[name]))}" for name in chosen]
        return f"WITH ANONYMIZATION OPTIONS ({', '.join(values)}) "
    chosen = draw(st.lists(st.sampled_from(sorted(OPTIONS)), max_size=2, unique=True))
    values = [f"{name} = {draw(st.sampled_from(OPTIONS[name]))}" for name in chosen]
    if sets and draw(st.booleans()):
        values.append(f"consistent_totals = {draw(st.sampled_from(('TRUE', 'FALSE')))}")
    return f"WITH DIFFERENTIAL_PRIVACY OPTIONS ({', '.join(values)}) "


def _grouping_sets(draw: st.DrawFn, groups: list[str]) -> str:
    """The keys under ROLLUP, CUBE or GROUPING SETS (``GROUPING_SETS``)."""
    forms = [f for f in GROUPING_SETS if len(groups) > 1 or "{rest}" not in f]
    return draw(st.sampled_from(forms)).format(
        all=", ".join(groups), first=groups[0], rest=", ".join(groups[1:]),
        each=", ".join(f"({g})" for g in groups))


@st.composite
def queries(draw: st.DrawFn, sets: bool | None = None) -> str:
    """A whole query over the fuzz catalog (``tests.fuzz.tables``); ``sets``: grouped by
    grouping sets (None: one time in five)."""
    relation = draw(relations())
    scope = relation.scope
    sets = draw(st.integers(0, 4)) == 4 if sets is None else sets
    keys = draw(_keys(scope, sets))
    shown = [s for s, _ in keys if s is not None]
    alone = shown and draw(st.integers(0, 3)) == 3  # keys alone: private ones are released
    calls = draw(st.lists(_outputs(scope), min_size=0 if alone else 1, max_size=3))
    if sets and draw(st.booleans()):
        named = draw(st.lists(st.sampled_from([g for _, g in keys]), min_size=1, max_size=2))
        calls.append(f"GROUPING({', '.join(named)})")
    items = shown + calls if draw(st.integers(0, 4)) < 4 else calls + shown
    groups = [str(items.index(s) + 1) if g == "#" else g for s, g in keys]
    sql = (f"SELECT {draw(_options(sets))}{', '.join(items)} FROM {relation.sql}"
           f"{where_clause(draw, scope, 1)}")
    if sets:
        sql += f" GROUP BY {_grouping_sets(draw, groups)}"
    elif groups:
        sql += f" GROUP BY {', '.join(groups)}"
    sql += draw(st.sampled_from(("",) * 4 + (" HAVING COUNT(*) > 1", " ORDER BY 1 DESC",
                                             " LIMIT 2") + ((" HAVING COUNT(*) > 1",) * 3
                                                            if sets else ())))
    return (f"WITH {', '.join(relation.ctes)} " if relation.ctes else "") + sql

"""Pass that finds every aggregate, bounds it, and builds the post-processing query.

Each aggregate is computed from bounded *statistics* (``StatSpec``): counts of
rows, of non-NULL values, of distinct units, and clamped (centred) sums. The
SELECT list, HAVING and ORDER BY are then rewritten to read noisy statistics
from a table named ``__dp_noisy``: everything after the noise is post-processing.

>>> import sqlglot
>>> from dpsql.catalog import Catalog, TableInfo
>>> cat = Catalog()
>>> _ = cat.add(TableInfo.private("t", columns={"pid": "INT", "k": "INT", "x": "DOUBLE"},
...                               privacy_unit="pid", bounds={"x": (0, 10)}))
>>> from dpsql.analysis.shape import resolve_table, resolve_keys
>>> d = Draft(sql="", ast=sqlglot.parse_one("SELECT k, AVG(x) AS m FROM t GROUP BY k"),
...           epsilon=1, delta=1e-6)
>>> d = collect_aggregates(resolve_keys(resolve_table(d, Context(cat, None)), None), None)
>>> [str(s) for s in d.stats]
['__dp_s0=count(x)', '__dp_s1=centered_sum(x in [0, 10])']
>>> d.output.sql()
'SELECT k, __dp_a0 AS m, __dp_row FROM __dp_noisy'
"""

from __future__ import annotations

import re
from dataclasses import replace

from sqlglot import exp

from dpsql.analysis.bounds import infer_interval
from dpsql.analysis.draft import Context, Draft
from dpsql.analysis.grammar import (
    AGGREGATES,
    check_post_expression,
    check_row_expression,
    fragment,
    refuse,
)
from dpsql.analysis.types import type_class
from dpsql.catalog import INTEGER_TYPES
from dpsql.errors import UnsupportedQueryError
from dpsql.plan import NOISY_TABLE, ROW_ID, Aggregate, OutputColumn, StatSpec, value_quantum

_PLAIN_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")


class _Collector:
    """Accumulates statistics and aggregates, sharing identical ones."""

    def __init__(self, draft: Draft):
        self.draft = draft
        self.stats: dict[tuple, StatSpec] = {}
        self.aggregates: dict[str, Aggregate] = {}

    def stat(self, kind: str, expr: exp.Expression | None = None, **bounds: float) -> str:
        quantum = value_quantum(bounds["lo"], bounds["hi"]) if bounds else 1.0
        if bounds and self._integral(expr, bounds["lo"], bounds["hi"]):
            quantum = 1.0  # integer values with integer bounds are already exact
        if kind == "centered_sum":
            quantum /= 2
        spec = StatSpec(name=f"__dp_s{len(self.stats)}", kind=kind, expr=expr, quantum=quantum,
                        **bounds)
        return self.stats.setdefault(spec.key, spec).name

    def _integral(self, expr: exp.Expression, lo: float, hi: float) -> bool:
        """A bare integer column with integer bounds (small enough for exact BIGINT sums)."""
        if not isinstance(expr, exp.Column) or not (float(lo).is_integer() and
                                                     float(hi).is_integer()):
            return False
        sql_type = self.draft.table.columns.get(expr.name.lower(), "").upper()
        return sql_type in INTEGER_TYPES and max(abs(lo), abs(hi)) <= 2**31

    def aggregate(self, node: exp.AggFunc) -> str:
        sql = node.sql(dialect="duckdb")
        if sql not in self.aggregates:
            kind, stats, interval = self._classify(node)
            self.aggregates[sql] = Aggregate(
                name=f"__dp_a{len(self.aggregates)}", kind=kind, sql=sql, stats=stats,
                lo=interval[0] if interval else None, hi=interval[1] if interval else None)
        return self.aggregates[sql].name

    def _classify(self, node: exp.AggFunc):
        arg = node.this
        if isinstance(node, exp.Count):
            return self._count(node, arg)
        if isinstance(node, exp.Sum | exp.Avg):
            if isinstance(arg, exp.Distinct):
                refuse(node, "aggregate", AGGREGATES, "DISTINCT is allowed only in "
                       "COUNT(DISTINCT <privacy unit>)")
            check_row_expression(arg, f"{node.key.upper()} argument")
            if type_class(arg, self.draft.table.columns) != "numeric":
                refuse(node, f"{node.key.upper()}", "a numeric argument")
            lo, hi = self._bounds(node, arg)
            if isinstance(node, exp.Sum):
                return "sum", (self.stat("sum", arg, lo=lo, hi=hi),), (lo, hi)
            if lo == hi:
                refuse(node, "AVG", "bounds with lo < hi", f"AVG is the constant {lo:g} here")
            stats = (self.stat("count", arg), self.stat("centered_sum", arg, lo=lo, hi=hi))
            return "avg", stats, (lo, hi)
        refuse(node, "aggregate", AGGREGATES)

    def _count(self, node: exp.Count, arg: exp.Expression):
        unit = self.draft.table.privacy_unit
        if isinstance(arg, exp.Star):
            return "count_star", (self.stat("rows"),), None
        if isinstance(arg, exp.Distinct):
            inner = [e.unnest() for e in arg.expressions]
            if len(inner) == 1 and isinstance(inner[0], exp.Column) and unit \
                    and inner[0].name.lower() == unit:
                return "count_units", (self.stat("units"),), None
            refuse(node, "COUNT(DISTINCT ...)", "COUNT(DISTINCT <privacy unit>)" +
                   (f", i.e. COUNT(DISTINCT {unit})" if unit else ""),
                   "Distinct counts of other columns are not supported yet")
        check_row_expression(arg, "COUNT argument")
        type_class(arg, self.draft.table.columns)
        return "count", (self.stat("count", arg),), None

    def _bounds(self, node: exp.AggFunc, arg: exp.Expression) -> tuple[float, float]:
        interval = infer_interval(arg, self.draft.table.bounds)
        if not interval.finite:
            col = next(arg.find_all(exp.Column), None)
            name = col.name if col is not None else "x"
            func = node.key.upper()
            raise UnsupportedQueryError(
                f"{fragment(node)} needs bounds: declare bounds={{\"{name}\": (lo, hi)}} when "
                f"registering the table, or write {func}(LEAST(GREATEST({name}, lo), hi))")
        if interval.lo == interval.hi == 0 and isinstance(node, exp.Sum):
            refuse(node, "SUM", "bounds other than [0, 0]", "This sum is always 0")
        return interval.lo, interval.hi


def collect_aggregates(draft: Draft, ctx: Context) -> Draft:
    """Replace aggregates by statistic references and build the output query."""
    select = draft.select
    collector = _Collector(draft)
    keys = {k.name for k in draft.keys}
    aliases = {e.alias.lower() for e in select.expressions if e.alias}

    def to_noisy(node: exp.Expression, context: str, allow_aliases: bool) -> exp.Expression:
        check_post_expression(node, context)

        def swap(n: exp.Expression) -> exp.Expression:
            if isinstance(n, exp.AggFunc):
                return exp.column(collector.aggregate(n))
            if isinstance(n, exp.Column):
                name = n.name.lower()
                if name not in keys and not (allow_aliases and name in aliases):
                    _refuse_raw_column(n, context, draft.table.privacy_unit)
            return n

        return node.transform(swap, copy=True)

    items, columns = [], []
    for item in select.expressions:
        inner = item.this if isinstance(item, exp.Alias) else item
        name = item.alias or (inner.name if isinstance(inner, exp.Column) else fragment(inner))
        noisy = to_noisy(inner, "SELECT", allow_aliases=False)
        bare = collector.aggregate(inner) if isinstance(inner, exp.AggFunc) else None
        items.append(exp.alias_(noisy, name, quoted=not _PLAIN_NAME.match(name))
                     if name != getattr(noisy, "name", None) else noisy)
        columns.append(OutputColumn(name=name, aggregate=bare))
    output = exp.select(*items, ROW_ID).from_(NOISY_TABLE)
    having = select.args.get("having")
    if having is not None:
        output = output.where(to_noisy(having.this, "HAVING", allow_aliases=True))
    order = select.args.get("order")
    if order is not None:
        output.set("order", to_noisy(order, "ORDER BY", allow_aliases=True))
    for clause in ("limit", "offset"):
        if select.args.get(clause) is not None:
            _check_literal_count(select.args[clause], clause.upper())
            output.set(clause, select.args[clause].copy())
    if not collector.aggregates:
        refuse(select, "SELECT", "at least one aggregate",
               "Private rows cannot be listed; aggregate them, e.g. COUNT(*)")
    return replace(draft, stats=tuple(collector.stats.values()),
                   aggregates=tuple(collector.aggregates.values()),
                   output=output, columns=tuple(columns))


def _refuse_raw_column(column: exp.Column, context: str, unit: str | None) -> None:
    fix = ("Only GROUP BY columns may appear outside aggregates; aggregate it "
           f"(e.g. AVG({column.name})) or add it to GROUP BY")
    if unit and column.name.lower() == unit:
        fix = f"Use COUNT(DISTINCT {column.name}) to count people"
    refuse(column, context, "group keys and aggregates", fix)


def _check_literal_count(node: exp.Expression, clause: str) -> None:
    value = node.expression
    if not (isinstance(value, exp.Literal) and not value.is_string and value.this.isdigit()):
        refuse(node, clause, "a non-negative integer literal")

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
>>> ctx = Context(cat, None)
>>> d = collect_aggregates(resolve_keys(resolve_table(d, ctx), None), ctx)
>>> [str(s) for s in d.stats]
['__dp_s0=count(x)', '__dp_s1=centered_sum(x in [0, 10])']
>>> d.output.sql()
'SELECT k, __dp_a0 AS m, __dp_row FROM __dp_noisy'
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import NamedTuple

from sqlglot import exp

from dpsql.analysis.bounds import infer_interval, refine
from dpsql.analysis.draft import Context, Draft
from dpsql.analysis.equivalents import (
    PAIRS,
    SPREADS,
    deviation_product,
    only_column,
    present_with,
    squared_deviation,
    without_filter,
)
from dpsql.analysis.grammar import (
    AGGREGATES,
    QUANTILES,
    check_post_expression,
    check_row_expression,
    dotted_base,
    fragment,
    is_aggregate,
    is_quantile_array,
    refuse,
    sums_as_double,
)
from dpsql.analysis.named_bounds import (
    PER_GROUP,
    PER_ROW,
    NamedBounds,
    bound_syntax,
    clamp_interval,
    named_bounds,
)
from dpsql.analysis.reports import (
    QUANTILES_FIELDS,
    VALUE_FIELDS,
    access,
    check_path,
    quantiles_report,
    report_format,
    report_path,
    value_report,
)
from dpsql.analysis.served import auto_columns, public_groups, quantile_parts
from dpsql.catalog import TableInfo, column_class
from dpsql.dialect import is_anonymization
from dpsql.errors import BoundsNeeded, UnsupportedQueryError
from dpsql.expr.types import integer_valued, type_class
from dpsql.names import written_name
from dpsql.plan import (
    NOISY_TABLE,
    PAIR_ROLES,
    ROW_ID,
    Aggregate,
    HistogramSpec,
    OutputColumn,
    QuantileSpec,
    StatSpec,
    check_value_bounds,
    value_quantum,
)

_PLAIN_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")


class _PendingSum(NamedTuple):
    """A SUM over rows whose statistics wait for the whole query (``_Collector.finish``)."""

    arg: exp.Expression
    lo: float
    hi: float
    rows: int | None


class _Collector:
    """Accumulates statistics and aggregates, sharing identical ones."""

    def __init__(self, draft: Draft, registered: frozenset[str] = frozenset(),
                 auto: Mapping[str, str] | None = None):
        self.draft = draft
        self.registered = registered  # columns of the registered private tables (lower case)
        self.auto = auto or {}  # column -> table, for columns declared bounds="auto"
        self.stats: dict[tuple, StatSpec] = {}
        self.histograms: dict[tuple, HistogramSpec] = {}
        self.aggregates: dict[str, Aggregate] = {}
        self.sums: dict[str, _PendingSum] = {}  # by the SUM's SQL
        self.reported: set[str] = set()  # aggregates whose report reads their interval
        self.rows: int | None = None  # the own rows of the aggregate being read (``own_rows``)

    def stat(self, kind: str, expr: exp.Expression | None = None, *, per_group: bool = False,
             values_per_unit: int | None = None, **bounds: float) -> str:
        rows = self.rows if kind in ("count", "sum", "centered_sum") and not per_group else None
        if kind == "count" and not per_group and self._never_null(expr):
            kind, expr = "rows", None  # COUNT(x) of a column declared NOT NULL is COUNT(*)
        valued = kind in ("sum", "centered_sum")
        quantum = value_quantum(bounds["lo"], bounds["hi"]) if valued else 1.0
        # Integer values with integer bounds are already exact (a unit's mean is not).
        if valued and self._integral(expr, bounds["lo"], bounds["hi"]) and not (
                per_group and kind == "centered_sum"):
            quantum = 1.0
        if kind == "centered_sum":
            quantum /= 2
        spec = StatSpec(name=f"__dp_s{len(self.stats)}", kind=kind, expr=expr, quantum=quantum,
                        per_group=per_group, values_per_unit=values_per_unit, rows=rows,
                        **bounds)
        return self.stats.setdefault(spec.key, spec).name

    def finish(self) -> tuple[Aggregate, ...]:
        """The aggregates, each once, with every SUM's statistics chosen.

        A SUM(x) whose argument's count is already drawn (COUNT(x), AVG(x)'s count, or
        COUNT(*) when x is declared NOT NULL) is released as centre × that noisy count +
        a noisy centred sum Σ(x − centre) (post-processing of the two, free), instead of a
        direct sum: the centred sum takes the direct sum's place (or is AVG(x)'s own, one
        statistic fewer), one row moves it by at most half the range, and the SUM's noise
        std u·c·√(centre² + half-range²) = u·c·√((lo² + hi²)/2) is never above the direct
        sum's u·c·max(|lo|, |hi|) (docs/mechanisms.md §12).
        """
        for sql, (arg, lo, hi, rows) in self.sums.items():
            agg, self.rows = self.aggregates[sql], rows
            count = self._count_of(arg)
            stats = (count.name, self.stat("centered_sum", arg, lo=lo, hi=hi)) if count \
                else (self.stat("sum", arg, lo=lo, hi=hi),)
            self.aggregates[sql] = replace(agg, stats=stats)
        self.rows = None
        return tuple({a.name: replace(a, reported=a.name in self.reported)
                      for a in self.aggregates.values()}.values())

    def report(self, node: exp.Expression, dot: exp.Expression | None) -> exp.Expression:
        """The report of an aggregate call with ``report_format``, or of the field ``dot``
        names in it (``dpsql.analysis.reports``)."""
        fmt = report_format(_call(node))
        if is_quantile_array(node):
            quantiles = [self._by_name(n) for n in self.quantiles(node)]
            report, fields = quantiles_report(quantiles, fmt), QUANTILES_FIELDS[fmt]
        else:
            agg = self._by_name(self.aggregate(node))
            quantiles, report, fields = [agg], value_report(agg, fmt), VALUE_FIELDS[fmt]
        self.reported.update(q.name for q in quantiles)
        if dot is None:
            return report
        path = report_path(dot)
        check_path(dot, path, fields)
        return access(report, fmt, path, fields)

    def _by_name(self, name: str) -> Aggregate:
        return next(a for a in self.aggregates.values() if a.name == name)

    def _count_of(self, arg: exp.Expression) -> StatSpec | None:
        """The statistic counting ``arg``'s non-NULL rows, over the same rows, if the query
        already draws it."""
        if self._never_null(arg):
            return self.stats.get(("rows", "", 0.0, 0.0, False, self.rows))
        return self.stats.get(("count", arg.sql(), 0.0, 0.0, False, self.rows))

    def _own_rows(self, node: exp.Expression) -> int | None:
        """The fewest rows per unit and group that a column the aggregate reads keeps of its
        own (``TableInfo.rows_for``), or None: its statistics then keep the query's."""
        own = self.draft.table.rows_for
        limits = [own[c.name.lower()] for c in node.find_all(exp.Column) if c.name.lower() in own]
        return min(limits, default=None)

    def _never_null(self, expr: exp.Expression | None) -> bool:
        """A bare column of the table that its owner declared NOT NULL (``TableInfo.not_null``;
        joins and subqueries declare none, ``relations.Source.info``)."""
        return isinstance(expr, exp.Column) and expr.name.lower() in self.draft.table.not_null

    def _integral(self, expr: exp.Expression, lo: float, hi: float) -> bool:
        """Whole-number values with integer bounds (small enough for exact BIGINT sums)."""
        if not (float(lo).is_integer() and float(hi).is_integer()):
            return False
        return integer_valued(expr, self.draft.table.columns) and max(abs(lo), abs(hi)) <= 2**31

    def aggregate(self, node: exp.Expression) -> str:
        sql = fragment(node, limit=None)
        if sql not in self.aggregates:
            name = f"__dp_a{len({a.name for a in self.aggregates.values()})}"
            node = without_filter(node, self.draft.table.columns)
            if isinstance(node, (exp.WithinGroup, *QUANTILES)):
                self.aggregates[sql] = self._quantile(node, name, sql)
                return self.aggregates[sql].name
            self.rows = self._own_rows(node)
            try:
                kind, stats, interval = self._classify(node)
            finally:
                self.rows = None
            if isinstance(stats, _PendingSum):  # its statistics are chosen by ``finish``
                self.sums[sql], stats = stats, ()
            self.aggregates[sql] = Aggregate(
                name=name, kind=kind, sql=sql, stats=stats,
                lo=interval[0] if interval else None, hi=interval[1] if interval else None)
        return self.aggregates[sql].name

    def quantiles(self, node: exp.Expression) -> list[str]:
        """BigQuery's ``APPROX_QUANTILES(x, n)`` (ZetaSQL's ``ANON_QUANTILES``): the names of
        its n + 1 quantiles, at 0, 1/n, ..., 1 of x, in that order.

        Each is a quantile aggregate of its own, ``APPROX_QUANTILES(x, n)[OFFSET(i)]``, all
        of one histogram: n + 1 exponential mechanisms, each with its own share of ε (basic
        composition; ``sensitivity._share``). The array the query reads is sorted after the
        release (``quantile_array``), which is post-processing.
        """
        sql = fragment(node, limit=None)
        inner = without_filter(node, self.draft.table.columns)
        n = _quantile_count(node.this if isinstance(node, exp.Filter) else node)
        names = []
        for i in range(n + 1):
            key = f"{sql}[OFFSET({i})]"
            if key not in self.aggregates:
                name = f"__dp_a{len({a.name for a in self.aggregates.values()})}"
                self.aggregates[key] = self._quantile(inner, name, key,
                                                      (inner.this, Fraction(i, n)))
            names.append(self.aggregates[key].name)
        return names

    def _quantile(self, node: exp.Expression, name: str, sql: str,
                  parts: tuple[exp.Expression, Fraction] | None = None) -> Aggregate:
        """MEDIAN, QUANTILE_CONT/QUANTILE/APPROX_QUANTILE, PERCENTILE_CONT WITHIN GROUP, and
        (with ``parts``, its argument and q) one quantile of APPROX_QUANTILES."""
        arg, q = parts or quantile_parts(node)
        label = sql.split("(")[0]
        if isinstance(node, exp.WithinGroup) and named_bounds(node.this) != NamedBounds():
            refuse(node, label, f"PERCENTILE_CONT(expr, q, {PER_ROW} => (lo, hi))",
                   "Named bounds go in the two-argument form of PERCENTILE_CONT")
        if named_bounds(node).per_group is not None:
            refuse(node, label, f"{PER_ROW} => (lo, hi)", "A quantile ranks rows: bound "
                   "each row's value, as BigQuery's PERCENTILE_CONT does")
        if isinstance(arg, exp.Distinct):
            refuse(node, "aggregate", AGGREGATES, "DISTINCT is allowed only in "
                   "COUNT(DISTINCT <privacy unit>)")
        check_row_expression(arg, f"{label} argument")
        columns = self.draft.table.columns
        for column in arg.find_all(exp.Column):
            if column.name.lower() not in columns:
                refuse(column, f"{label} argument", f"columns of {self.draft.table.name}")
        if type_class(arg, columns) != "numeric":
            refuse(node, label, "a numeric argument")
        lo, hi = self._bounds(node, arg)
        if lo == hi:
            refuse(node, label, "bounds with lo < hi", f"{label} is the constant {lo:g} here")
        spec = HistogramSpec(name=f"__dp_h{len(self.histograms)}", expr=arg, lo=lo, hi=hi)
        histogram = self.histograms.setdefault(spec.key, spec)
        for other in self.aggregates.values():  # MEDIAN(x) and QUANTILE_CONT(x, 0.5): one release
            if other.quantile is not None and (other.quantile.histogram, other.quantile.q) == (
                    histogram, q):
                return other
        return Aggregate(name=name, kind="quantile", sql=sql, stats=(histogram.name,), lo=lo,
                         hi=hi, quantile=QuantileSpec(q=q, histogram=histogram))

    def _classify(self, node: exp.AggFunc):
        arg = node.this
        if isinstance(node, exp.ApproxDistinct):
            return self._approx_distinct(node)
        if isinstance(node, exp.Count):
            return self._count(node, arg)
        if isinstance(node, tuple(PAIRS)):
            return self._pair(node)
        if isinstance(node, (exp.Sum, exp.Avg, *SPREADS)):
            label = fragment(node).split("(")[0]
            self._numeric_argument(node, label, arg, "a numeric argument")
            group = self._group_bounds(node)
            if group is not None and not isinstance(node, exp.Sum | exp.Avg):
                refuse(node, label, f"{PER_ROW} => (lo, hi) or bounds on the argument",
                       f"{PER_GROUP} bounds a unit's partial sum, not the spread of values")
            lo, hi = group or self._bounds(node, arg)
            if group == (0, 0):
                refuse(node, label, f"{PER_GROUP} other than (0, 0)", "This is always 0")
            if not isinstance(node, exp.Sum) and lo == hi:
                refuse(node, label, "bounds with lo < hi", f"{label} is the constant {lo:g} here")
            if isinstance(node, exp.Sum) and group:
                return "sum", (self.stat("sum", arg, per_group=True, lo=lo, hi=hi),), (lo, hi)
            if isinstance(node, exp.Sum):
                return "sum", _PendingSum(arg, lo, hi, self.rows), (lo, hi)
            # Per-group bounds: the mean of each unit's mean over the units with a value.
            count = self.stat("count", arg, per_group=True, lo=0, hi=1) if group else \
                self.stat("count", arg)
            stats = (count, self.stat("centered_sum", arg, per_group=bool(group), lo=lo, hi=hi))
            if isinstance(node, exp.Avg):
                return "avg", stats, (lo, hi)
            half = (hi - lo) / 2
            squares = self.stat("centered_sum", squared_deviation(arg, lo, hi), lo=0.0,
                                hi=half * half)
            kind = next(k for cls, k in SPREADS.items() if isinstance(node, cls))
            return kind, (*stats, squares), (lo, hi)
        refuse(node, "aggregate", AGGREGATES)

    def _numeric_argument(self, node: exp.AggFunc, label: str, arg: exp.Expression,
                          wanted: str) -> None:
        """Refuse an argument of ``node`` that is DISTINCT, not a row expression, or not
        numeric (``wanted`` says what the aggregate takes)."""
        if isinstance(arg, exp.Distinct):
            refuse(node, "aggregate", AGGREGATES, "DISTINCT is allowed only in "
                   "COUNT(DISTINCT expr)")
        check_row_expression(arg, f"{label} argument")
        if type_class(arg, self.draft.table.columns) != "numeric":
            refuse(node, label, wanted)

    def _pair(self, node: exp.AggFunc):
        """CORR, COVAR_*, REGR_* of (y, x): the statistics of ``PAIR_ROLES`` over the rows
        where both arguments are present. Each argument needs bounds if a sum reads it.

        The two arguments are taken in the order of their SQL, so that AGG(y, x) and
        AGG(x, y) read the same statistics. An argument declared NOT NULL is present on
        every row (``_never_null``; a NULL read anyway counts as the middle of its bounds),
        so the other argument's count, centred sum and sum of squares are its own: the very
        statistics COUNT, SUM, AVG and VAR of it read, drawn once (docs/mechanisms.md §13)."""
        kind = next(k for cls, k in PAIRS.items() if isinstance(node, cls))
        label = fragment(node).split("(")[0]
        y, x = node.this, node.expression
        for arg in (y, x):
            self._numeric_argument(node, label, arg, "numeric arguments")
        roles = PAIR_ROLES[kind]
        bounds = {id(arg): self._pair_bounds(node, label, arg)
                  for arg, own in ((y, ("sy", "syy")), (x, ("sx", "sxx")))
                  if any(role in roles for role in (*own, "sxy"))}
        a, b = sorted((y, x), key=lambda e: e.sql())
        made = {"n": lambda: self._pair_count(a, b),
                "sx": lambda: self._pair_sum(x, y, bounds[id(x)]),
                "sy": lambda: self._pair_sum(y, x, bounds[id(y)]),
                "sxx": lambda: self._pair_square(x, y, bounds[id(x)]),
                "syy": lambda: self._pair_square(y, x, bounds[id(y)]),
                "sxy": lambda: self._pair_product(a, b, bounds[id(a)], bounds[id(b)])}
        stats = tuple(made[role]() for role in roles)
        own = {"regr_avgx": x, "regr_avgy": y}.get(kind)
        return kind, stats, None if own is None else bounds[id(own)]

    def _pair_bounds(self, node: exp.AggFunc, label: str,
                     arg: exp.Expression) -> tuple[float, float]:
        lo, hi = self._bounds(node, arg)
        if lo == hi:
            refuse(node, label, "arguments with bounds lo < hi",
                   f"{fragment(arg)} is the constant {lo:g} here")
        return lo, hi

    def _pair_count(self, a: exp.Expression, b: exp.Expression) -> str:
        """The count of the rows where both are present: COUNT(*) when both are declared
        NOT NULL (``stat``), COUNT(b) when only a is, COUNT(a + 0 * b) when neither is."""
        if self._never_null(a):
            return self.stat("count", b)
        return self.stat("count", a if self._never_null(b) else present_with(a, b))

    def _pair_sum(self, arg: exp.Expression, other: exp.Expression,
                  bounds: tuple[float, float]) -> str:
        """Σ (arg − centre) over the rows where other is present too: AVG(arg)'s own centred
        sum when other is declared NOT NULL."""
        lo, hi = bounds
        value = arg if self._never_null(other) else present_with(arg, other)
        return self.stat("centered_sum", value, lo=lo, hi=hi)

    def _pair_square(self, arg: exp.Expression, other: exp.Expression,
                     bounds: tuple[float, float]) -> str:
        """Σ (arg − m)², m the middle of its bounds, over the rows where other is present:
        VAR(arg)'s own sum of squares when other is declared NOT NULL."""
        half = (bounds[1] - bounds[0]) / 2
        if self._never_null(other):
            return self.stat("centered_sum", squared_deviation(arg, *bounds), lo=0.0,
                             hi=half * half)
        value = present_with(arg, other)
        return self.stat("centered_sum", deviation_product(value, value, bounds, bounds),
                         lo=0.0, hi=half * half)

    def _pair_product(self, a: exp.Expression, b: exp.Expression,
                      a_bounds: tuple[float, float], b_bounds: tuple[float, float]) -> str:
        """Σ (a − ma)(b − mb): one row adds at most ha·hb in absolute value."""
        most = (a_bounds[1] - a_bounds[0]) / 2 * ((b_bounds[1] - b_bounds[0]) / 2)
        return self.stat("centered_sum", deviation_product(a, b, a_bounds, b_bounds),
                         lo=-most, hi=most)

    def _group_bounds(self, node: exp.AggFunc) -> tuple[float, float] | None:
        """SUM/AVG per-group bounds, or None: then the rows are bounded (by _bounds)."""
        named = named_bounds(node)
        if named.per_row is not None and named.per_group is not None:
            refuse(node, node.key.upper(), f"one of {PER_ROW} and {PER_GROUP}",
                   f"To bound rows as well, clamp the argument: {node.key.upper()}"
                   f"(LEAST(GREATEST(x, lo), hi), {PER_GROUP} => (lo, hi))")
        # With row-level privacy each row is its own unit: per group means per row.
        if self.draft.table.row_level or named.per_group is None:
            return None
        return check_value_bounds(*named.per_group, f"the bounds of {fragment(node)}")

    def _count(self, node: exp.Count, arg: exp.Expression):
        unit = self.draft.table.privacy_unit
        if node.expressions:
            refuse(node, "COUNT", AGGREGATES, "COUNT takes one argument (and optionally "
                   f"{PER_GROUP} => (lo, hi))")
        named = named_bounds(node)
        if named.per_row is not None:
            refuse(node, "COUNT", f"{PER_GROUP} => (lo, hi)", "A row adds 1 to a count "
                   "whatever its value, so per-row bounds do not apply")
        if named.per_group is not None:  # (COUNT(DISTINCT x, ...) does not parse)
            return self._group_count(node, arg, *named.per_group)
        if isinstance(arg, exp.Star):
            return "count_star", (self.stat("rows"),), None
        if isinstance(arg, exp.Distinct):
            inner = [e.unnest() for e in arg.expressions]
            if len(inner) == 1 and isinstance(inner[0], exp.Column) and unit \
                    and inner[0].name.lower() == unit:
                return "count_units", (self.stat("units"),), None
            if len(inner) != 1:
                refuse(node, "COUNT(DISTINCT ...)", "COUNT(DISTINCT expr) of one expression",
                       "Count distinct combinations with COUNT(DISTINCT a || '/' || b)")
            check_row_expression(inner[0], "COUNT(DISTINCT) argument")
            if type_class(inner[0], self.draft.table.columns) in ("other", "null"):
                refuse(node, "COUNT(DISTINCT ...)", "a number, text, boolean or date")
            single = 1 if unit and only_column(inner[0], unit) else None
            spec = self.stat("distinct", inner[0], values_per_unit=single)
            return "count_distinct", (spec,), None
        check_row_expression(arg, "COUNT argument")
        type_class(arg, self.draft.table.columns)
        return "count", (self.stat("count", arg),), None

    def _approx_distinct(self, node: exp.ApproxDistinct):
        """BigQuery's ``APPROX_COUNT_DISTINCT(x)`` is answered as ``COUNT(DISTINCT x)``: the
        distinct count is exact before the noise, so the answer is no worse than a sketch's,
        and ``Result.notes`` says so (``approximate_as_exact``)."""
        if named_bounds(node) != NamedBounds() or node.args.get("accuracy") is not None:
            refuse(node, "APPROX_COUNT_DISTINCT", "APPROX_COUNT_DISTINCT(expr)",
                   "It is answered as COUNT(DISTINCT expr), which takes no other argument")
        arg = node.this
        if isinstance(arg, exp.Distinct):
            refuse(node, "APPROX_COUNT_DISTINCT", "APPROX_COUNT_DISTINCT(expr)")
        return self._count(exp.Count(this=exp.Distinct(expressions=[arg.copy()])),
                           exp.Distinct(expressions=[arg.copy()]))

    def _group_count(self, node: exp.Count, arg: exp.Expression, lo: float, hi: float):
        """COUNT with per-group bounds: each unit's count in a group is clamped to [lo, hi]."""
        if self.draft.table.row_level:
            refuse(node, "COUNT", "COUNT without named bounds on a row-level table",
                   f"Each row is its own unit and adds at most 1: drop {PER_GROUP}")
        if lo < 0 or hi == 0 or not (float(lo).is_integer() and float(hi).is_integer()):
            refuse(node, "COUNT", f"{bound_syntax(node, PER_GROUP)} with integers "
                   "0 <= lo <= hi, hi > 0")
        if isinstance(arg, exp.Star):
            return "count_star", (self.stat("rows", per_group=True, lo=lo, hi=hi),), None
        check_row_expression(arg, "COUNT argument")
        type_class(arg, self.draft.table.columns)
        return "count", (self.stat("count", arg, per_group=True, lo=lo, hi=hi),), None

    def _bounds(self, node: exp.Expression, arg: exp.Expression) -> tuple[float, float]:
        interval = infer_interval(arg, refine(self.draft.table.bounds, self.draft.where))
        named = named_bounds(node)
        row = named.per_row or (named.per_group if self.draft.table.row_level else None)
        if row is not None:
            interval = clamp_interval(interval, row)
        if not interval.finite:
            self._estimate_first(node, arg)
            raise UnsupportedQueryError(self._bounds_hint(node, arg))
        if interval.lo == interval.hi == 0 and isinstance(node, exp.Sum):
            refuse(node, "SUM", "bounds other than [0, 0]", "This sum is always 0")
        return check_value_bounds(interval.lo, interval.hi, f"the bounds of {fragment(node)}")


    def _estimate_first(self, node: exp.Expression, arg: exp.Expression) -> None:
        """Columns declared ``bounds="auto"`` get their bounds estimated (by the connection,
        as a private release) before the query can be planned: BoundsNeeded says which."""
        auto = sorted({(self.auto[c.name.lower()], c.name.lower())
                       for c in arg.find_all(exp.Column) if c.name.lower() in self.auto})
        if auto:
            names = ", ".join(f"{t}.{c}" for t, c in auto)
            raise BoundsNeeded(
                f"{fragment(node)} needs the bounds of {names}, which dpsql estimates "
                "(declared \"auto\", or left to dpsql by the BigQuery DP syntax): a query "
                "spends a quarter of its epsilon (and half its delta) estimating them the "
                "first time (Connection.estimate_bounds), or declare bounds=(lo, hi)",
                tuple(auto), self.draft.epsilon, self.draft.delta,
                served=auto_columns(self.draft.ast, self.auto),
                groups=public_groups(self.draft.ast, [self.draft.table]))

    def _bounds_hint(self, node: exp.Expression, arg: exp.Expression) -> str:
        """Say which numeric column lacks bounds, and show the argument clamped."""
        table = self.draft.table
        unbounded = [c.name for c in arg.find_all(exp.Column)
                     if c.name.lower() not in table.bounds
                     and type_class(c, table.columns) == "numeric"]
        registered = [name for name in unbounded if name.lower() in self.registered]
        declare = (f"declare bounds={{\"{registered[0]}\": (lo, hi)}} when registering the "
                   "table, or " if registered else "")
        example = node.copy()
        if is_anonymization(node):
            example.set("bounds", [exp.Kwarg(this=exp.var(type(node).clamp), expression=exp.Tuple(
                expressions=[exp.var("lo"), exp.var("hi")]))])
            return f"{fragment(node)} needs bounds: {declare}write {fragment(example)}"
        clamp = exp.Anonymous(this="LEAST", expressions=[
            exp.Anonymous(this="GREATEST", expressions=[arg.copy(), exp.var("lo")]),
            exp.var("hi")])
        next(n for n in example.walk() if n == arg).replace(clamp)
        named = "" if isinstance(node, tuple(PAIRS)) else \
            f" (or, in BigQuery style, add the argument {PER_ROW} => (lo, hi))"
        return (f"{fragment(node)} needs bounds: {declare}write {fragment(example, limit=None)}"
                + named)


def _estimable(info: TableInfo, draft: Draft) -> tuple[str, ...]:
    """Columns whose bounds dpsql may estimate for this query: those declared ``"auto"``,
    and, in the BigQuery DP syntax, every numeric column without declared bounds (ZetaSQL
    chooses the bounds of ``SUM(x)`` itself when none are given)."""
    if not draft.options.written:
        return info.auto_bounds
    return info.auto_bounds + tuple(
        c for c, t in info.columns.items() if column_class(t) == "numeric"
        and c not in info.bounds and c not in info.auto_bounds and c != info.privacy_unit)


def collect_aggregates(draft: Draft, ctx: Context) -> Draft:
    """Replace aggregates by statistic references and build the output query.

    The clauses are read in a fixed order — SELECT, HAVING, QUALIFY, ORDER BY, then
    LIMIT/OFFSET — which numbers the statistics and aggregates: the same query always gets
    the same names."""
    select = draft.select
    collector = _collector(draft, ctx)
    to_noisy = _ToNoisy.of(collector, draft)
    items, columns = _output_items(select, collector, to_noisy)
    output = _post_clauses(exp.select(*items, ROW_ID).from_(NOISY_TABLE), select, to_noisy)
    _check_releases_aggregates(select, collector, draft)
    aggregates = collector.finish()
    return replace(draft, stats=tuple(collector.stats.values()), aggregates=aggregates,
                   output=output, columns=tuple(columns))


def _collector(draft: Draft, ctx: Context) -> _Collector:
    """A collector that knows the registered private tables' columns (for its hints) and
    which of them dpsql may estimate bounds for (``_estimable``)."""
    tables = draft.private_tables or ((draft.table.name,) if draft.table else ())
    return _Collector(draft, frozenset(
        column for name in tables if name in ctx.catalog
        for column in ctx.catalog.get(name).columns), {
        column: ctx.catalog.get(name).name for name in tables if name in ctx.catalog
        for column in _estimable(ctx.catalog.get(name), draft)})


@dataclass(frozen=True)
class _ToNoisy:
    """Rewrites a post-noise expression to read the noisy statistics: each aggregate becomes
    its aggregate's column of ``__dp_noisy``; a column must be a group key (or, where
    ``allow_aliases``, a SELECT alias), as the private rows are gone after the noise."""

    collector: _Collector
    draft: Draft
    keys: frozenset[str]
    aliases: frozenset[str]
    windowed: frozenset[str]  # SELECT aliases of window functions' results

    @classmethod
    def of(cls, collector: _Collector, draft: Draft) -> _ToNoisy:
        expressions = draft.select.expressions
        return cls(collector, draft, frozenset(k.name for k in draft.keys),
                   frozenset(e.alias.lower() for e in expressions if e.alias),
                   frozenset(e.alias.lower() for e in expressions
                             if e.alias and e.find(exp.Window)))

    def __call__(self, node: exp.Expression, context: str, *, allow_aliases: bool,
                 windows: bool = True) -> exp.Expression:
        check_post_expression(node, context, windows=windows)
        return sums_as_double(node.transform(
            lambda n: self._swap(n, context, allow_aliases, windows), copy=True))

    def _swap(self, n: exp.Expression, context: str, allow_aliases: bool,
              windows: bool) -> exp.Expression:
        if isinstance(n.parent, exp.Window) and n.arg_key == "this":
            return n  # a window's own function runs after the noise; its arguments swap
        base = dotted_base(n)
        if is_aggregate(base) and report_format(_call(base)) is not None:
            self._check_report_place(n, context, report_format(_call(base)))
            return self.collector.report(base, n if isinstance(n, exp.Dot) else None)
        if isinstance(n, exp.Dot):
            refuse(n, context, "fields of an aggregate's report (report_format => 'JSON' "
                   "or 'PROTO')", "Other values have no fields after the noise")
        if is_quantile_array(n):
            return quantile_array(self.collector.quantiles(n))
        if is_aggregate(n):
            return exp.column(self.collector.aggregate(n))
        if isinstance(n, exp.Column):
            self._check_column(n, context, allow_aliases, windows)
        return n

    @staticmethod
    def _check_report_place(n: exp.Expression, context: str, fmt: str) -> None:
        """A report (or a field of it) is a SELECT item of its own, maybe aliased, or, as
        JSON, the argument of JSON_QUERY_ARRAY: a JSON text or a STRUCT is no number to
        compute with."""
        parent = n.parent
        if context == "SELECT" and (parent is None or isinstance(parent, exp.Alias | exp.Select)
                                    or (fmt == "JSON" and n.arg_key == "this"
                                        and isinstance(parent, exp.JSONExtractArray))):
            return
        refuse(n, context, "a report as a SELECT item of its own (maybe with a field path, "
               "or in JSON_QUERY_ARRAY)", "Compute with the aggregate without report_format")

    def _check_column(self, n: exp.Column, context: str, allow_aliases: bool,
                      windows: bool) -> None:
        """A column after the noise: a group key, an allowed alias, never a private value."""
        name = n.name.lower()
        if name not in self.keys and not (allow_aliases and name in self.aliases):
            if n.find_ancestor(exp.Window) is not None:
                refuse(n.find_ancestor(exp.Window), "window function",
                       "windows over aggregates and group keys", "A window function "
                       "runs after the noise, on released values only: aggregate "
                       f"first, e.g. SUM(SUM({n.name})) OVER (...) with GROUP BY")
            _refuse_raw_column(n, context, self.draft.table.privacy_unit)
        if not windows and name in self.windowed and name not in self.keys:
            refuse(n, context, "group keys and aggregates", f"{n.name} is a window "
                   "function's result, computed after this clause: filter on it "
                   "with QUALIFY")


def _output_items(select: exp.Select, collector: _Collector, to_noisy: _ToNoisy
                  ) -> tuple[list[exp.Expression], list[OutputColumn]]:
    """The SELECT list over the noisy statistics, and its output columns: each one's name
    and, when it is an aggregate alone (or a numeric cast of one), that aggregate."""
    items, columns = [], []
    for item in select.expressions:
        inner = item.this if isinstance(item, exp.Alias) else item
        name = item.alias or (inner.name if isinstance(inner, exp.Column) else fragment(inner))
        noisy = to_noisy(inner, "SELECT", allow_aliases=False)
        core = _uncast(inner)
        bare = collector.aggregate(core) if is_aggregate(core) and not \
            is_quantile_array(core) and report_format(_call(core)) is None else None
        items.append(exp.alias_(noisy, name, quoted=not _PLAIN_NAME.match(name))
                     if name != getattr(noisy, "name", None) else noisy)
        columns.append(OutputColumn(name=name, aggregate=bare))
    return items, columns


def _post_clauses(output: exp.Select, select: exp.Select, to_noisy: _ToNoisy) -> exp.Select:
    """HAVING, QUALIFY, ORDER BY, LIMIT and OFFSET, moved onto the query after the noise."""
    having = select.args.get("having")
    if having is not None:
        output = output.where(to_noisy(having.this, "HAVING", allow_aliases=True,
                                       windows=False))
    qualify = select.args.get("qualify")
    if qualify is not None and not any(e.find(exp.Window) for e in [*select.expressions,
                                                                     qualify]):
        refuse(qualify, "QUALIFY", "a filter on window functions",
               "Without a window function, filter with HAVING")
    if qualify is not None:
        output.set("qualify", exp.Qualify(this=to_noisy(qualify.this, "QUALIFY",
                                                        allow_aliases=True)))
    order = select.args.get("order")
    if order is not None:
        output.set("order", to_noisy(order, "ORDER BY", allow_aliases=True))
    for clause in ("limit", "offset"):
        if select.args.get(clause) is not None:
            _check_literal_count(select.args[clause], clause.upper())
            output.set(clause, select.args[clause].copy())
    return output


def _check_releases_aggregates(select: exp.Select, collector: _Collector,
                               draft: Draft) -> None:
    """A query must release aggregates, or private group keys alone: never private rows."""
    if not collector.aggregates and not any(not k.public for k in draft.keys):
        refuse(select, "SELECT", "at least one aggregate, or private GROUP BY keys alone",
               "Private rows cannot be listed; aggregate them, e.g. COUNT(*)" + (
                   ". Window functions run after the noise, over released aggregates: e.g. "
                   "SUM(COUNT(*)) OVER () with GROUP BY" if select.find(exp.Window) else ""))


def _call(node: exp.Expression) -> exp.Expression:
    """The aggregate function under ``FILTER (WHERE ...)`` or ``WITHIN GROUP (...)``."""
    while isinstance(node, exp.Filter | exp.WithinGroup):
        node = node.this
    return node


def _uncast(node: exp.Expression) -> exp.Expression:
    """The aggregate under a numeric cast of it (``COUNT(*)::INT``), which keeps its interval;
    ``node`` itself otherwise.

    >>> import sqlglot
    >>> _uncast(sqlglot.parse_one("CAST(COUNT(*) AS BIGINT)")).sql()
    'COUNT(*)'
    >>> _uncast(sqlglot.parse_one("CAST(COUNT(*) AS TEXT)")).sql()
    'CAST(COUNT(*) AS TEXT)'
    """
    core = node
    while isinstance(core, exp.Paren | exp.Cast):
        if isinstance(core, exp.Cast) and not core.to.is_type(*exp.DataType.NUMERIC_TYPES):
            return node
        core = core.this
    return core


def _refuse_raw_column(column: exp.Column, context: str, unit: str | None) -> None:
    name = written_name(column.name)
    fix = ("Only GROUP BY columns may appear outside aggregates; aggregate it "
           f"(e.g. AVG({name})) or add it to GROUP BY")
    if unit and column.name.lower() == unit:
        fix = f"Use COUNT(DISTINCT {name}) to count people"
    refuse(exp.column(name) if name != column.name else column, context,
           "group keys and aggregates", fix)


def _check_literal_count(node: exp.Expression, clause: str) -> None:
    """LIMIT/OFFSET/TOP n: a literal count, or a percentage of the released rows (PERCENT)."""
    value = node.expression
    label = "TOP" if node.meta.get("top") else clause
    if not (isinstance(value, exp.Literal) and not value.is_string and value.this.isdigit()):
        refuse(node, label, "a non-negative integer literal")
    options = node.args.get("limit_options")
    if options is not None and options.args.get("with_ties"):
        refuse(node, label, f"{label} n [PERCENT]", "WITH TIES is not supported; drop it "
               "(rows tied at the n-th place are then cut by the ORDER BY)")


MAX_QUANTILES = 100
"""The most quantiles APPROX_QUANTILES may ask for: each one is an exponential mechanism
per released group with its own share of ε, so the work and the noise grow with n."""


def quantile_array(names: list[str]) -> exp.Expression:
    """The released quantiles as BigQuery's array, sorted: each quantile is drawn by its own
    mechanism, so two neighbours may come out of order; sorting them is post-processing.

    >>> quantile_array(["a", "b"]).sql(dialect="duckdb")
    'LIST_SORT([a, b])'
    """
    return exp.ArraySort(this=exp.Array(expressions=[exp.column(n) for n in names]))


def _quantile_count(node: exp.Expression) -> int:
    """n of APPROX_QUANTILES(x, n): an integer literal from 1 to ``MAX_QUANTILES``."""
    value = node.expression
    label = fragment(node).split("(")[0]
    if not (isinstance(value, exp.Literal) and not value.is_string and value.this.isdigit()
            and 1 <= int(value.this) <= MAX_QUANTILES):
        refuse(node, label, f"{label}(expr, n) with n an integer literal from 1 to "
               f"{MAX_QUANTILES}", "It returns the n + 1 quantiles at 0, 1/n, ..., 1, each "
               "with its own share of epsilon")
    return int(value.this)


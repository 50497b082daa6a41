"""The noisy answer to one query, with error bars that cost no budget.

Intervals cover the *bounded* value (after clamping and contribution limits),
not the raw value: they account for the noise only, and depend only on the
noise scale (public) and the released noisy values.

AVG, VAR and STDDEV are ratios of noisy sums: their interval is the range of the estimator
over a box holding each noisy sum's own interval (Bonferroni over the sums); it is valid but
conservative, and it still reads only noisy values and public parameters.

Quantiles get no interval (NULL bounds): the exponential mechanism's error is a
number of *ranks* (``explain()`` gives it, ``rank_error95``), and turning ranks
into values would need the private data. See docs/mechanisms.md §8.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from dpsql.accounting.values import Cost, Left
from dpsql.arrays import from_numpy, to_numpy
from dpsql.compile import CompiledQuery
from dpsql.composed import ComposedQuery
from dpsql.engines import DUCKDB, EngineTraits
from dpsql.errors import InternalError, ProgrammingError
from dpsql.estimators import NoisyGroups, estimator
from dpsql.grouping import GroupedQuery
from dpsql.mechanisms.selection import units_for_release
from dpsql.plan import OutputColumn, PrivacyPlan
from dpsql.render import html_table, text_table

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from dpsql.explain import Explanation

DECLARE_IN_PYTHON = ("declare them in register(), or measure what they cut with "
                     "con.bounding_report(sql, epsilon=...)")
"""The remedy for default limits in Python's words (other front ends pass their own)."""
SHOWN_LEVELS = (0.5, 0.95)
"""The release chances a note on private keys quotes group sizes for."""


@dataclass(frozen=True)
class Result:
    """A released table: ``.df() .arrow() .pl() .fetchall() .ci(level) .explain() .plot()``.

    ``private`` is False when noise came from a fixed ``seed`` (tests only); ``engine`` is
    the engine whose bounded query it released (``explain()`` shows that query). ``cost``
    is what this answer charged (zero when it came from the answer cache), ``left`` what
    the budget had left once it was charged (set by ``Connection.sql``); both are read from
    the ledger, never from the data, and the shown table ends with them.
    """

    table: pa.Table
    plan: PrivacyPlan
    groups: NoisyGroups
    rows: np.ndarray
    cost: Cost
    private: bool = True
    engine: EngineTraits = DUCKDB
    left: Left | None = None
    parts: tuple[Result, ...] = ()
    """With grouping sets, each set's own Result (``table`` is their rows one after another;
    ``plan``, ``groups`` and ``rows`` are the first set's); with several releases, each
    part's (``composed_result``)."""
    query: GroupedQuery | ComposedQuery | None = None
    """With grouping sets or several releases, the statement released (``explain()``)."""

    @property
    def columns(self) -> list[str]:
        return self.table.column_names

    def arrow(self) -> pa.Table:
        return self.table

    @property
    def default_limits(self) -> dict[str, int]:
        """The contribution limits that bounded this answer without anyone declaring them
        (dpsql's defaults, one group and one row per person) and that can cut rows the
        declared limits keep (``binding_defaults``): the shown result says so. Free: it
        reads the plan and the catalog's declarations, not the data; how much they cut is
        a paid estimate, ``Connection.bounding_report`` (docs/catalog.md).

        >>> import dpsql, pyarrow as pa
        >>> con = dpsql.connect()
        >>> con.register("t", pa.table({"pid": [1, 1, 2]}), privacy_unit="pid")
        >>> con.sql("SELECT COUNT(*) AS n FROM t", epsilon=0.1).default_limits
        {'max_rows_per_group': 1}
        """
        return binding_defaults(self.plan)

    @property
    def groups_shown(self) -> GroupsShown | None:
        """How many people a group from private keys needs to be shown, from the plan's
        release curve (``explain()`` prints it); None when the keys are public. Free."""
        return groups_shown(self.plan)

    def notes(self, declare: str = DECLARE_IN_PYTHON) -> tuple[str, ...]:
        """What this answer may have cut, said for free (plan and declarations only): the
        default limits that can bind (then ``declare``, the remedy in the front end's
        words) and the size below which private-key groups are likely missing."""
        if self.parts:
            own = [] if not isinstance(self.query, ComposedQuery) else _bare(self)
            return tuple(dict.fromkeys([*(n for part in self.parts for n in part.notes(declare)),
                                        *own]))
        said = []
        if defaults := self.default_limits:
            said.append(f"{by_default_limits(defaults)}: {declare}")
        if shown := self.groups_shown:
            said.append(str(shown))
        said.extend(approximate_as_exact(self.plan))
        return tuple(said)

    def df(self):
        """The result as a pandas DataFrame (needs pandas); ``df.attrs["dpsql_notes"]``
        holds ``notes()``, what the answer may have cut."""
        frame = self.table.to_pandas()
        frame.attrs["dpsql_notes"] = list(self.notes())
        return frame

    def pl(self):
        """The result as a polars DataFrame (needs polars)."""
        import polars as pl

        return pl.from_arrow(self.table)

    def fetchall(self) -> list[tuple[Any, ...]]:
        names = self.table.column_names
        return [tuple(row[n] for n in names) for row in self.table.to_pylist()]

    def explain(self) -> Explanation:
        from dpsql.explain import Explanation  # imported when used: docs/benchmarks.md, Start-up

        return Explanation.of(self.query or CompiledQuery.of(self.plan, self.engine))

    def ci(self, level: float = 0.95) -> pa.Table:
        """Per-cell ``level`` confidence intervals: ``<col>_lower``/``<col>_upper``.

        Columns that are not a bare aggregate (keys, arithmetic on aggregates)
        get no interval. A quantile has an interval only if the query asked for one
        (``quantile_ci=``, released by two more exponential mechanisms) at a level ≥
        ``level``; otherwise its bounds are NULL (its error is in ranks, see explain()).
        """
        if not 0 < level < 1:
            raise ProgrammingError(f"level={level!r}: need 0 < level < 1, e.g. 0.95")
        if isinstance(self.query, ComposedQuery):
            return composed_ci(self, level)
        if self.parts:
            return concatenated([part.ci(level) for part in self.parts])
        by_name = {a.name: a for a in self.plan.aggregates}
        table = self.table
        for index, col in enumerate(self.plan.columns):
            if col.aggregate is None:
                continue
            values = to_numpy(table.column(index)).astype(np.float64)
            agg = by_name[col.aggregate]
            lower, upper = estimator(agg).interval(self.plan, agg, self.groups, self.rows,
                                                   values, level)
            for side, bound in (("lower", lower), ("upper", upper)):
                bound = bound if isinstance(bound, pa.Array) else from_numpy(np.asarray(bound))
                table = table.append_column(f"{col.name}_{side}", bound)
        return table

    def plot(self, y: str | None = None, *, x: str | None = None, level: float = 0.95,
             ax: Axes | None = None, **bar_options: Any) -> Axes:
        """Bars with ``level`` CIs as error bars (needs matplotlib); returns the Axes.

        One bar per group for column ``y`` (default: the first numeric aggregate column),
        or, for a global query, one bar per numeric aggregate column. See dpsql/plot.py.
        """
        from dpsql import plot as charts  # imported when used: docs/benchmarks.md, Start-up

        return charts.plot(self, y, x=x, level=level, ax=ax, **bar_options)

    def __len__(self) -> int:
        return self.table.num_rows

    def __repr__(self) -> str:
        return shown_text(self)

    def _repr_html_(self) -> str:
        """The same table for notebooks."""
        return html_table(*_cells(self, DECLARE_IN_PYTHON))


def composed_result(composed: ComposedQuery, table: pa.Table, parts: tuple[Result, ...],
                    cost: Cost) -> Result:
    """The Result of a statement of several releases: ``table`` (the statement over the
    parts' released tables), whose columns keep an interval where ``composed.projected``
    says so; ``plan`` is the first part's with the statement's columns."""
    first = parts[0]
    aggregates = {a.name: a for p in parts for a in p.plan.aggregates}
    projected = composed.projected or (None,) * table.num_columns
    columns = tuple(OutputColumn(name=name, aggregate=None if where is None else
                                 parts[max(where[0], 0)].plan.columns[where[1]].aggregate)
                    for name, where in zip(table.column_names, projected, strict=True))
    plan = dataclasses.replace(first.plan, columns=columns,
                               aggregates=tuple(aggregates.values()))
    return dataclasses.replace(first, table=table, plan=plan, parts=parts, query=composed,
                               cost=cost, private=all(p.private for p in parts))


def composed_ci(result: Result, level: float) -> pa.Table:
    """Intervals of a statement of several releases: a column that repeats a one-row part's
    aggregate keeps its interval on every row; a UNION ALL of the parts as they are keeps
    each part's on its rows; any other column has none (NULL bounds)."""
    table = result.table
    projected = result.query.projected or (None,) * table.num_columns
    if projected and projected[0] is not None and projected[0][0] == -1:
        bounds = [p.ci(level) for p in result.parts]
    else:
        bounds = [p.ci(level) if p.table.num_rows == 1 else None for p in result.parts]
    for j, (name, where) in enumerate(zip(table.column_names, projected, strict=True)):
        if where is None:
            continue
        for side in ("lower", "upper"):
            if where[0] == -1:
                values = pa.chunked_array([b.column(f"{p.table.column_names[j]}_{side}")
                                           for p, b in zip(result.parts, bounds, strict=True)])
            elif bounds[where[0]] is None:
                values = pa.nulls(table.num_rows, pa.float64())
            else:
                part = result.parts[where[0]]
                value = bounds[where[0]].column(f"{part.table.column_names[where[1]]}_{side}")
                values = pa.repeat(value[0], table.num_rows)
            table = table.append_column(f"{name}_{side}", values)
    return table


def _bare(result: Result) -> list[str]:
    """The note of a statement of several releases on its columns without an interval."""
    bare = [c.name for c in result.plan.columns if c.aggregate is None]
    if not bare:
        return []
    return [f"no interval for {', '.join(bare)}: computed from the released parts "
            "(post-processing); each part's own intervals are in result.parts[i].ci()"]


def concatenated(tables: list[pa.Table]) -> pa.Table:
    """Grouping sets' tables, one after another. Every set has the same columns; a key a set
    rolls up is NULL there (Arrow's null type), so types are promoted to the other sets'.

    Columns are matched by position: a query may name two columns alike (``COUNT(*),
    COUNT(*)``), which Arrow cannot match by name.

    >>> concatenated([pa.table({"k": ["a"], "n": [1]}), pa.table({"k": [None], "n": [3]})]
    ...              ).to_pydict()
    {'k': ['a', None], 'n': [1, 3]}
    """
    names = tables[0].column_names
    if any(t.column_names != names for t in tables):
        raise InternalError("grouping sets released different columns: "
                            + "; ".join(map(str, (t.column_names for t in tables))))
    places = [str(i) for i in range(len(names))]
    joined = pa.concat_tables([t.rename_columns(places) for t in tables],
                              promote_options="permissive")
    return joined.rename_columns(names)


def shown_text(result: Result, declare: str = DECLARE_IN_PYTHON) -> str:
    """The result as a text table with its note; ``declare`` is the remedy for default
    limits in the words of the front end that shows it (``Result.notes``)."""
    return text_table(*_cells(result, declare))


def _cells(result: Result, declare: str, max_rows: int = 20
           ) -> tuple[list[str], list[list[str]], str]:
    """Header, cells (each aggregate with its 95% interval as [lo, hi]) and the note."""
    bounds = result.ci(0.95)
    rows = []
    for i in range(min(result.table.num_rows, max_rows)):
        cells = []
        for col in result.plan.columns:
            text = format_value(bounds.column(col.name)[i].as_py())
            lo = bounds.column(f"{col.name}_lower")[i].as_py() if col.aggregate else None
            hi = bounds.column(f"{col.name}_upper")[i].as_py() if col.aggregate else None
            if lo is not None:
                text += f" [{format_value(lo)}, {format_value(hi)}]"
            cells.append(text)
        rows.append(cells)
    count = result.table.num_rows
    more = f"... {count - len(rows)} more rows\n" if count > len(rows) else ""
    by_name = {a.name: a for a in result.plan.aggregates}
    bare = [c.name for c in result.plan.columns if c.aggregate and by_name[c.aggregate].quantile
            and (by_name[c.aggregate].quantile.level or 0) < 0.95]
    asked = f"; no CI for {', '.join(bare)}: ask with quantile_ci=0.95" if bare else ""
    note = f"{more}({count} {'row' if count == 1 else 'rows'}; 95% CIs{asked}; " \
        f"{spending(result)}" + ("" if result.private else "; SEEDED, NOT PRIVATE") + ")"
    note += "".join(f"\n{line}" for line in result.notes(declare))
    return [c.name for c in result.plan.columns], rows, note


def spending(result: Result) -> str:
    """What every front end says under an answer: what it cost, and what is left.

    >>> import dataclasses, dpsql, pyarrow as pa
    >>> con = dpsql.connect(budget=dpsql.Budget(epsilon=1, delta=1e-6))
    >>> con.register("t", pa.table({"pid": [1, 2]}), privacy_unit="pid")
    >>> spending(con.sql("SELECT COUNT(*) AS n FROM t", epsilon=0.25))
    'cost ε=0.25, δ=0; budget left ε=0.75, δ=1e-06'
    """
    left = "" if result.left is None else f"; budget left {result.left}"
    return f"cost {result.cost}{left}"


def binding_defaults(plan: PrivacyPlan) -> dict[str, int]:
    """The default contribution limits of ``plan`` that can cut what the declared ones keep.

    From the plan alone: a default rows-per-group limit cannot bind below a declared
    ``max_rows_per_unit`` (it then equals it: a table declared with one row per person,
    ``max_rows_per_unit=1``, is cut by no per-group row limit), nor when every statistic
    counts people; a default groups limit cannot bind below a declared total either, nor
    when the public keys have no more groups than it allows. Declared limits are enforced
    by the rewrite, so a wrong declaration cuts rows, but never leaks.

    >>> import dpsql, pyarrow as pa
    >>> con = dpsql.connect()
    >>> con.register("once", pa.table({"pid": [1, 2], "k": ["a", "b"]}), privacy_unit="pid",
    ...              max_rows_per_unit=1)
    >>> binding_defaults(con.compile("SELECT k, COUNT(*) FROM once GROUP BY k").plan)
    {}
    """
    limits = plan.contribution
    sources = dict(limits.sources)
    total = limits.max_rows_per_unit
    found = {}
    counts_rows = plan.quantiles or any(s.kind != "units" for s in plan.stats)
    if sources.get("max_rows_per_group") == "default" and counts_rows and (
            total is None or limits.max_rows_per_group < total):
        found["max_rows_per_group"] = limits.max_rows_per_group
    groups = limits.max_groups_per_unit
    if plan.keys and sources.get("max_groups_per_unit") == "default" and (
            total is None or groups < total) and _more_groups_than(plan, groups):
        found["max_groups_per_unit"] = groups
    return found


def _more_groups_than(plan: PrivacyPlan, limit: int) -> bool:
    """Whether the query can have more than ``limit`` groups (private keys always can)."""
    if not all(k.public for k in plan.keys):
        return True
    return math.prod(len(k.domain) for k in plan.keys) > limit


@dataclass(frozen=True)
class GroupsShown:
    """How many people a group from private keys needs to be shown: ``likely`` people for
    a 50% chance, ``surely`` for 95%, read off the release curve of partition selection
    (``Selection.chance``, which ``explain()`` prints). Free: the plan's ε, δ and limits.

    >>> print(GroupsShown(likely=12, surely=19))
    groups come from the data (private keys): a group of fewer than 12 people is more \
often hidden than shown; one of 19 or more is shown 95% of the time (explain() has the curve)
    """

    likely: int
    surely: int

    def __str__(self) -> str:
        return (f"groups come from the data (private keys): a group of fewer than "
                f"{self.likely} people is more often hidden than shown; one of {self.surely} "
                "or more is shown 95% of the time (explain() has the curve)")


def groups_shown(plan: PrivacyPlan) -> GroupsShown | None:
    """The group sizes at which ``plan``'s partition selection releases a group with the
    chances of SHOWN_LEVELS; None when the keys are public."""
    selection = plan.selection
    if selection is None:
        return None
    noise = plan.selection_noise()

    def chance(n: int) -> float:
        return float(selection.chance(np.array([n]), noise)[0])

    return GroupsShown(*(units_for_release(chance, level) for level in SHOWN_LEVELS))


def by_default_limits(defaults: Mapping[str, int]) -> str:
    """The sentence every front end shows for ``Result.default_limits``, before its remedy.

    >>> by_default_limits({"max_rows_per_group": 1})
    'bounded by default limits (max_rows_per_group=1)'
    """
    shown = ", ".join(f"{name}={value}" for name, value in defaults.items())
    return f"bounded by default limits ({shown})"


def format_value(value: Any) -> str:
    """A cell as text: 6 significant digits (scientific from 1e6), NULL for None.

    >>> format_value(1234.56789), format_value(12345678.0), format_value(None)
    ('1234.57', '1.2346e+07', 'NULL')
    """
    if isinstance(value, float):
        return f"{value:.6g}" if abs(value) < 1e6 else f"{value:.4e}"
    return "NULL" if value is None else str(value)


def approximate_as_exact(plan: PrivacyPlan) -> list[str]:
    """A note for each ``APPROX_COUNT_DISTINCT`` of the plan: dpsql answers it as the exact
    ``COUNT(DISTINCT ...)`` before the noise (``analysis.aggregates``).

    >>> from types import SimpleNamespace as S
    >>> approximate_as_exact(S(aggregates=[S(sql="APPROX_COUNT_DISTINCT(x)")]))
    ['APPROX_COUNT_DISTINCT(x) is answered as COUNT(DISTINCT x): counted exactly, then noised']
    """
    return [f"{a.sql} is answered as COUNT(DISTINCT {a.sql[len('APPROX_COUNT_DISTINCT('):-1]})"
            ": counted exactly, then noised" for a in plan.aggregates
            if a.sql.upper().startswith("APPROX_COUNT_DISTINCT(")]

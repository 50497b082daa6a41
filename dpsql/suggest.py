"""Bounds and contribution limits proposed from the data, privately: ``con.suggest_bounds``.

A data owner registering a table has to declare value bounds and contribution limits, and a
wrong guess fails silently: too narrow biases every answer, too wide drowns it in noise.
``suggest_bounds`` proposes them with a budget the owner chooses, split evenly (in exact
arithmetic) over these private queries, each an ordinary dpsql query with its usual
guarantee (contribution limits, noise, partition selection), charged like any query:

- **value bounds** of each numeric column: the power-of-two magnitude histogram of
  ``dpsql.autobounds`` (the bins enough people share give the range);
- **rows per person** (``max_rows_per_unit``): a histogram of people by their number of
  rows, in bins 1, 2, 4, … 2^20; the limit is the smallest bin edge that covers
  ``coverage`` (95 %) of the people in the released bins (their noisy counts);
- with ``group_by=column``, **groups per person** (``max_groups_per_unit``, from the number
  of distinct values of the column a person has) and **rows per person and group**
  (``max_rows_per_group``, from one of each person's groups, drawn as dpsql draws rows), the
  same way.

Choosing a contribution limit as a DP quantile of per-person contributions is the approach
of Amin, Kulesza, Muñoz Medina and Vassilvitskii, "Bounding user contributions: a
bias-variance trade-off in differential privacy" (ICML 2019), who show that a quantile of
the contributions balances the bias of dropping rows against the noise a larger limit
adds; 95 % keeps the bias small for counts and sums while the noise grows only with the
limit itself. The suggestion is a release like any other: its bins and counts are noisy,
and whether it runs never depends on the data (no released bin gives no suggestion).

A query on a table declared ``max_rows_per_unit="auto"`` knows what the limit serves, so it
chooses differently (``limit_for_error``): the limit and clamps that together minimise the
expected error of its own statistics, from the same kind of histograms.

>>> limit_from_bins([(1, 410.0), (2, 300.0), (4, 260.0), (8, 5.0)], coverage=0.95)
4
>>> limit_from_bins([], coverage=0.95) is None
True
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction

from sqlglot import exp

from dpsql import autobounds
from dpsql.accounting.values import Cost
from dpsql.autobounds import free_name
from dpsql.catalog import TableInfo, column_class
from dpsql.errors import PrivacyError
from dpsql.exact import float_at_most

EDGES = tuple(2**k for k in range(21))
"""Bin edges for contributions: 1, 2, 4, … 2^20 rows (beyond: the top bin, 2^21)."""
COVERAGE = 0.95
"""The share of people whose contribution a suggested limit keeps whole."""
AVG_ROW_BIAS = 0.5
"""How far an average is assumed to move when a rows limit drops rows, as a share of the
mean times the share of rows dropped (``limit_for_error``), where no released (rows,
value) cells tell (``row_bias``), and for quantiles: a prior. Measured: on PUMS_dup
(people with 4 rows earn twice what people with 1 do) 0.23 at a limit of 1, 0.30 at 2; on
bench_utility's visits 0.02 at 3. A half errs towards keeping rows."""
RANK_ERROR = math.log(20 * 1024) / math.sqrt(2)
"""A quantile's 95 % error in ranks per row of limit, in units of ``noise_per_row``
(√2·2/ε_q): t₉₅ = 2m·ln(20B)/ε_q with B = 1024 buckets (docs/mechanisms.md §8)."""
WARN_SHARE = 0.05
"""A bounding report warns when a limit or clamp surely cuts this share or more."""


def limit_from_bins(rows: Iterable[tuple[float, float]], *, coverage: float) -> int | None:
    """The smallest released bin edge whose bins (up to it) hold ``coverage`` of the
    noisy count of people; None when no bin is released. Noisy counts below 0 count 0."""
    bins = sorted((int(edge), max(float(n), 0.0)) for edge, n in rows if edge is not None)
    total = sum(n for _, n in bins)
    if not bins or total <= 0:
        return None
    running = 0.0
    for edge, n in bins:
        running += n
        if running >= coverage * total:
            return edge
    return bins[-1][0]


def limit_for_error(rows: Iterable[tuple[float, float]],
                    values: Mapping[str, Iterable[tuple[float, float]]] | None = None, *,
                    noise_per_row: float, groups: int = 1,
                    served: Iterable[tuple[str, str | float]] | None = None,
                    cells: Mapping[str, Iterable[tuple[float, float, float]]] | None = None,
                    counted: Iterable[str] = ()
                    ) -> tuple[int, dict[str, tuple[float, float]], dict[str, int]]:
    """The rows limit m, the clamps, and the columns' own limits below m that together
    minimise the expected squared error of the statistics they serve (Amin, Kulesza, Muñoz
    Medina & Vassilvitskii, ICML 2019; the model in docs/mechanisms.md §11), from the
    released histogram of people by their rows (``rows``) and, for each column the query
    reads, its magnitude histogram drawn with one value per person (``values``) and its
    people by (rows, value) bin (``cells``, ``row_bias``); ``served`` lists (column, "sum",
    "avg" or a quantile's level), each column summed by default, and ("", "count") for a
    count; ``counted``, the columns whose average shares a count the query draws anyway.
    ``noise_per_row`` is a statistic's noise std per row of limit and unit of bound.
    Candidates: 1, the released edges e and 3e/4 between them, the smaller on ties; with
    no released bin, m = 1. One m for every statistic is compared with each column the
    query only sums or averages apart (``_apart``). Post-processing of released bins only.

    >>> people = [(1, 500.0), (2, 300.0), (4, 150.0), (64, 50.0)]
    >>> limit_for_error(people, noise_per_row=0.01)[0], limit_for_error(people, noise_per_row=50)[0]
    (64, 4)
    >>> costs = {"cost": [(256.0, 700.0), (512.0, 250.0), (1024.0, 50.0)]}
    >>> limit_for_error(people, costs, noise_per_row=30.0)
    (48, {'cost': (0.0, 256.0)}, {})
    >>> limit_for_error(people, costs, noise_per_row=30.0, served=[("cost", "avg")])
    (4, {'cost': (0.0, 512.0)}, {})
    >>> limit_for_error(people, costs, noise_per_row=30.0, served=[("", "count"), ("cost", "avg")])
    (48, {'cost': (0.0, 512.0)}, {'cost': 4})
    """
    released = [(int(edge), float(n)) for edge, n in rows
                if edge is not None and n is not None and float(n) > 0]
    model = _Model(people=[(*_bin_range(edge), n) for edge, n in released],
                   columns={name: list(hist) for name, hist in (values or {}).items()},
                   cells={name: list(c) for name, c in (cells or {}).items()},
                   noise_per_row=noise_per_row, groups=groups,
                   candidates=tuple(sorted({1, *(edge for edge, _ in released), *(
                       3 * edge // 4 for edge, _ in released if 4 <= edge <= EDGES[-1])})))
    statistics = list(served) if served is not None else [(c, "sum") for c in model.columns]
    one = model.best(statistics, math.inf, set(counted))
    apart = _apart(model, statistics)
    if apart is None or one.error <= apart[0]:
        return one.limit, one.bounds, {}
    return apart[1:]


def _apart(model: _Model, statistics: list[tuple[str, str | float]]
           ) -> tuple[float, int, dict[str, tuple[float, float]], dict[str, int]] | None:
    """The design with each column the query only sums or averages apart: the rest (counts,
    ranked columns) at their best m, each such column at its own best limit up to that m,
    its average drawing its own count. (Summed error, m, bounds, own limits below m); None
    with no such column. With nothing else, m is the largest of their limits."""
    ranked = {name for name, use in statistics if not isinstance(use, str)}
    apart = sorted({name for name, use in statistics if name and use in ("sum", "avg")}
                   - ranked)
    if not apart:
        return None
    rest = [(name, use) for name, use in statistics if name not in apart]
    shared = model.best(rest, math.inf, set()) if rest else None
    own = {name: model.best([s for s in statistics if s[0] == name],
                            shared.limit if shared else math.inf, set()) for name in apart}
    limit = max([shared.limit if shared else 1, *(c.limit for c in own.values())])
    bounds = dict(shared.bounds) if shared else {}
    for choice in own.values():
        bounds.update(choice.bounds)
    error = sum(c.error for c in own.values()) + (shared.error if shared else 0.0)
    return error, limit, bounds, {name: c.limit for name, c in own.items() if c.limit < limit}


@dataclass(frozen=True)
class _Choice:
    """A limit, its modelled error and the clamps chosen with it (``limit_for_error``)."""

    limit: int
    error: float
    bounds: dict[str, tuple[float, float]]


@dataclass(frozen=True)
class _Model:
    """What ``limit_for_error`` knows: people by rows (fewest, most, count per bin), each
    column's value histogram and (rows, value) cells, the noise per row of limit and unit of
    bound, the public groups, and the candidate limits.

    A statistic's error at m (``choice``; docs/mechanisms.md §11): a count's, the rows m
    drops and noise per row; a sum's or average's, its clamp's bias² + noise² (§10) at noise
    ``noise_per_row``·m·f (f = 1 for a sum, √2 for an average, 1/√2 for one whose count is
    ``counted``), plus the bias of the dropped rows (``row_bias``, or the prior without
    cells); a quantile's, its rank error. Relative to the statistic's size, per group."""

    people: list[tuple[int, float, float]]
    columns: dict[str, list]
    cells: dict[str, list]
    noise_per_row: float
    groups: int
    candidates: tuple[int, ...]

    def best(self, statistics: list[tuple[str, str | float]], most: float,
             counted: set[str]) -> _Choice:
        """The candidate limit up to ``most`` of least error for ``statistics``."""
        choices = [self.choice(m, statistics, counted) for m in self.candidates if m <= most]
        return min(choices, key=lambda c: (c.error, c.limit))

    def choice(self, m: int, statistics: list[tuple[str, str | float]],
               counted: set[str]) -> _Choice:
        """The error of ``statistics`` at limit m, and the bounds of each column at m.
        With no person released nothing is dropped."""
        people, groups, noise = self.people, self.groups, self.noise_per_row
        total = sum(_kept(lo, hi, 2**62) * n for lo, hi, n in people)
        kept = sum(_kept(lo, hi, m) * n for lo, hi, n in people) if people else 1.0
        dropped = total - kept if people else 0.0
        whole = max(total, kept)
        error, bounds = 0.0, {}
        count = ((dropped / groups) ** 2 + (noise * m) ** 2) / (whole / groups) ** 2
        if not statistics:
            error = count
        quantiles: dict[str, list[float]] = {}
        for name, use in statistics:
            if use == "count":
                error += count
                continue
            if not isinstance(use, str):  # a quantile: its error in ranks, out of K(m)
                quantiles.setdefault(name, []).append(use)
                ranks = groups * m * RANK_ERROR * noise / kept
                error += (AVG_ROW_BIAS * dropped / whole) ** 2 + ranks ** 2
                continue
            hist = self.columns[name]
            seen = sum(max(float(n or 0), 0.0) for label, n in hist if label is not None)
            spread = 1.0 if use == "sum" else math.sqrt(0.5 if name in counted else 2.0)
            choice = autobounds.clamp_for_error(hist, noise_per_unit=noise * m * spread,
                                                groups=groups,
                                                weight=kept / seen if seen else 1.0)
            bounds.setdefault(name, choice.bounds)
            if choice.mass > 0:
                mean = choice.mass / kept
                shift = row_bias(self.cells.get(name, []), m, choice.bounds, use)
                if shift is None:
                    shift = dropped / whole * (AVG_ROW_BIAS if use == "avg" else 1.0)
                bias = shift * mean * whole
                error += (choice.error + (bias / groups) ** 2) / (mean * whole / groups) ** 2
        for name, levels in quantiles.items():
            bounds.setdefault(name, autobounds.bounds_for_quantile(
                self.columns[name], min(levels), max(levels)))
        return _Choice(m, error, bounds)


def row_bias(cells: Iterable[tuple[float, float, float]], m: int,
             bounds: tuple[float, float], use: str) -> float | None:
    """How far a rows limit m moves a sum or an average, as a share of it, from the
    released people by (rows bin, value bin) (``cells_sql``): each person of a cell adds
    the rows m keeps of its bin's (``_kept``) at the cell's value (¾ of its label, clamped
    to ``bounds``, as ``autobounds`` models a bin); the statistic at m against the same
    with every row kept. None when no cell holds anyone. Post-processing of released cells.

    People with many rows who have the values of people with few move an average by
    nothing, and a sum by the rows dropped; if they have larger values, both move more.

    >>> flat = [(1, 256.0, 100.0), (16, 256.0, 100.0)]
    >>> row_bias(flat, 4, (0.0, 1000.0), "avg"), round(row_bias(flat, 4, (0.0, 1000.0), "sum"), 3)
    (0.0, -0.63)
    >>> round(row_bias([(1, 256.0, 100.0), (16, 1024.0, 100.0)], 4, (0.0, 1000.0), "avg"), 3)
    -0.1
    """
    lo, hi = bounds
    rows = [(*_bin_range(int(edge)), min(max(0.75 * float(label), lo), hi), max(float(n), 0.0))
            for edge, label, n in cells if edge is not None and label is not None]
    people = sum(n for *_, n in rows)
    if people <= 0:
        return None

    def at(limit: float) -> tuple[float, float]:
        return (sum(_kept(first, last, limit) * n * v for first, last, v, n in rows),
                sum(_kept(first, last, limit) * n for first, last, _, n in rows))

    (full, all_rows), (part, kept) = at(2**62), at(m)
    if use == "sum":
        return (part - full) / full if full else 0.0
    mean = full / all_rows
    return (part / kept - mean) / mean if mean else 0.0


def _kept(lo: int, hi: float, m: float) -> float:
    """The mean of min(x, m) over x = lo … hi (the rows a limit m keeps of a person of a
    bin, its people spread evenly over the bin; the open top bin: all at lo).

    >>> _kept(17, 32, 24), _kept(17, 32, 32), _kept(17, 32, 8), _kept(2**20 + 1, math.inf, 9)
    (22.25, 24.5, 8, 9)
    """
    if math.isinf(hi):
        return min(lo, m)
    if m >= hi or m <= lo:
        return (lo + hi) / 2 if m >= hi else m
    return ((lo + m) * (m - lo + 1) / 2 + (hi - m) * m) / (hi - lo + 1)


def share_above(rows: Iterable[tuple[float, float]], limit: int) -> tuple[float, float] | None:
    """The share of people (noisy) whose contribution is surely above ``limit`` and the
    share that may be: bin ``e`` holds contributions in (e/2, e], so it is surely above
    when e/2 ≥ limit and may be when e > limit. None when no bin is released.

    >>> share_above([(1, 50.0), (2, 30.0), (4, 15.0), (8, 5.0)], 3)
    (0.05, 0.2)
    """
    bins = [(int(edge), max(float(n), 0.0)) for edge, n in rows if edge is not None]
    total = sum(n for _, n in bins)
    if total <= 0:
        return None
    surely = sum(n for edge, n in bins if edge / 2 >= limit)
    maybe = sum(n for edge, n in bins if edge > limit)
    return surely / total, maybe / total


def _bin_range(edge: int) -> tuple[int, float]:
    """The contributions bin ``edge`` holds: 1 alone, (e/2, e] above it, beyond 2^20 for
    the top bin (unbounded)."""
    if edge <= 1:
        return 1, 1
    return edge // 2 + 1, math.inf if edge > EDGES[-1] else edge


def units_beyond(rows: Iterable[tuple[float, float]], limit: int) -> tuple[float, float] | None:
    """The share of rows (or, for ``max_groups_per_unit``, of (person, group) pairs) that
    ``limit`` drops, as (at least, at most), from a released histogram of contributions:
    each person of bin e has between its range's ends, of which min(x, limit) are kept
    and max(0, x − limit) dropped; the share is smallest with every drop at its least and
    every kept count at its most, and largest the other way round. None when no bin is
    released. Noisy counts below 0 count 0; unreleased bins are not seen.

    >>> units_beyond([(1, 960.0), (16, 40.0)], 1)
    (0.24242424242424243, 0.375)
    """
    bins = [(*_bin_range(int(edge)), float(n)) for edge, n in rows
            if edge is not None and n and float(n) > 0]
    if not bins:
        return None
    cut_lo = sum(n * max(0, lo - limit) for lo, _, n in bins)
    cut_hi = sum(n * max(0.0, hi - limit) for _, hi, n in bins)
    kept_lo = sum(n * min(lo, limit) for lo, _, n in bins)
    kept_hi = sum(n * min(hi, limit) for _, hi, n in bins)
    high = 1.0 if math.isinf(cut_hi) else cut_hi / (cut_hi + kept_lo)
    return cut_lo / (cut_lo + kept_hi), high


def values_unreleased(rows: Iterable[tuple[float, float]], people: float | None
                      ) -> float | None:
    """The share of people whose value (one each, as the magnitude histogram draws them) lies
    in no released bin, hence outside the bounds drawn from the released ones: 1 − the
    released bins' noisy count (NULLs included) over ``people``, the noisy count of people
    of another released histogram; clipped to [0, 1]. None without ``people``.

    >>> round(values_unreleased([(64.0, 930.0), (None, 20.0)], 1000.0), 6)
    0.05
    """
    if not people or people <= 0:
        return None
    seen = sum(max(float(n), 0.0) for _, n in rows)
    return min(max(1.0 - seen / people, 0.0), 1.0)


def people_in(rows: Iterable[tuple[float, float]]) -> float:
    """The noisy count of people in a released histogram of contributions (one bin each)."""
    return sum(max(float(n), 0.0) for edge, n in rows if edge is not None)


@dataclass(frozen=True)
class SuggestedCut:
    """What one suggested limit or bound cuts, from the histograms ``suggest_bounds`` paid
    for (so free): ``people``, the share of people (or, for ``max_rows_per_group``, of the
    one (person, group) each histogram draws) it cuts; ``units``, the share of rows (pairs
    for ``max_groups_per_unit``) it drops, as (at least, at most); for a bound, ``people``
    is the share of values it clamps, from bins too small to release."""

    name: str
    people: float | None
    units: tuple[float, float] | None = None
    what: str = "rows"

    def __str__(self) -> str:
        if self.people is None:
            return f"{self.name}: too few people to tell what it cuts"
        if self.units is None:
            return f"{self.name}: clamps about {_share(self.people)} of values (in bins too " \
                "small to release)"
        low, high = map(_share, self.units)
        span = low if low == high else f"{low}–{high}"
        return f"{self.name}: cuts {_share(self.people)} of people, {span} of {self.what}"


def _share(value: float) -> str:
    """A share as a percentage, with a decimal below 10%.

    >>> _share(0.005), _share(0.375)
    ('0.5%', '38%')
    """
    return f"{value:.1%}" if value < 0.1 else f"{value:.0%}"


UNITS_CUT = {"max_rows_per_unit": "rows", "max_groups_per_unit": "(person, group) pairs",
             "max_rows_per_group": "rows in a group"}
"""What each contribution limit drops, as ``SuggestedCut`` names it."""


def limit_cut(name: str, limit: int, rows: list[tuple[float, float]]) -> SuggestedCut:
    """What limit ``name`` = ``limit`` cuts, read off its own released histogram.

    >>> print(limit_cut("max_rows_per_unit", 1, [(1, 960.0), (16, 40.0)]))
    max_rows_per_unit = 1: cuts 4.0% of people, 24%–38% of rows
    """
    above = share_above(rows, limit)
    return SuggestedCut(f"{name} = {limit}", None if above is None else above[0],
                        units_beyond(rows, limit), UNITS_CUT[name])


def bounds_cut(column: str, bounds: tuple[float, float], rows: list[tuple[float, float]],
               people: float | None) -> SuggestedCut:
    """What the suggested bounds of ``column`` clamp: the values of no released bin."""
    lo, hi = bounds
    return SuggestedCut(f"{column} in [{lo:g}, {hi:g}]", values_unreleased(rows, people))


def contribution_sql(info: TableInfo, limit: str, keys: list[str] = (),
                     where: exp.Expression | None = None) -> str:
    """People (or one (person, group) each) counted by their binned contribution to
    ``limit`` for groups of ``keys``: rows (``max_rows_per_unit``), distinct groups
    (``max_groups_per_unit``) or rows in one group (``max_rows_per_group``):
    ``SELECT b, COUNT(*) FROM (SELECT unit, CASE WHEN m <= 1 THEN 1 ... END AS b FROM
    (SELECT unit, <measure> AS m FROM t GROUP BY unit[, keys]))`` GROUP BY b."""
    keys = list(keys)
    if limit == "max_groups_per_unit":
        per, measure = [], exp.Count(this=exp.Distinct(
            expressions=[exp.column(k) for k in keys]))
    else:
        per = keys if limit == "max_rows_per_group" else []
        measure = exp.Count(this=exp.Star())
    name, value_name = free_name(info, "m_bin"), free_name(info, "m")
    unit = exp.column(info.privacy_unit)
    value = exp.column(value_name)
    binned = exp.Case(ifs=[exp.If(this=exp.LTE(this=value.copy(),
                                               expression=exp.Literal.number(edge)),
                                  true=exp.Literal.number(edge)) for edge in EDGES],
                      default=exp.Literal.number(2 * EDGES[-1]))
    inner = (exp.select(unit.copy(), *(exp.column(c) for c in per), exp.alias_(measure, value_name))
             .from_(exp.to_identifier(info.name))
             .group_by(unit.copy(), *(exp.column(c) for c in per)))
    if where is not None:
        inner = inner.where(where.copy())
    middle = exp.select(unit.copy(), exp.alias_(binned, name)).from_(inner.subquery("per_unit"))
    return (exp.select(exp.column(name), exp.alias_(exp.Count(this=exp.Star()), "n"))
            .from_(middle.subquery("binned")).group_by(exp.column(name)).sql("duckdb"))


def cells_sql(info: TableInfo, column: str, edges: Iterable[int],
              labels: Iterable[float]) -> str:
    """People by (rows bin, value bin) of ``column`` (``row_bias``): one row per person,
    their rows binned as ``contribution_sql`` bins them beside the ``autobounds`` bin of
    their mean value, so each person is in one cell, and a person's many rows do not make
    their rare values likelier to be the one drawn. The cells are public keys (UNNEST
    lists), so every one is released, with noise, and none is selected away: the released
    rows ``edges`` (more rows count in the largest) and value ``labels``, each mean in the
    first released bin at or above its own, and ``autobounds.TOP`` above them all: the tail
    partition selection hid, where people with many rows may differ. Empty bins between the
    released ones would only add noise.

    >>> info = TableInfo.private("v", columns={"pid": "INT", "x": "DOUBLE"}, privacy_unit="pid")
    >>> sql = cells_sql(info, "x", [1, 4], [-2.0, 256.0])
    >>> print(sql.split(" AS x_bin")[0].split("THEN NULL ")[1])
    WHEN x_ <= -1.0 THEN -2.0 WHEN x_ < 256.0 THEN 256.0 ELSE 1e+100 END
    >>> print(sql.split(" AS m_bin")[0].split("AS x_bin, ")[1])
    CASE WHEN m <= 1 THEN 1 ELSE 4 END
    """
    edges, labels = sorted(edges), sorted(labels)
    taken = {info.name.lower(), *info.columns}
    per_unit, rows_alias, values_alias, cells = (_fresh(taken, a) for a in ("p", "r", "v", "s"))
    unit, count, mean = info.privacy_unit, free_name(info, "m"), free_name(info, f"{column}_")
    row_name, value_name = free_name(info, "m_bin"), free_name(info, f"{column}_bin")
    per_person = (exp.select(exp.column(unit), exp.alias_(exp.Count(this=exp.Star()), count),
                             exp.alias_(exp.Avg(this=exp.column(column)), mean))
                  .from_(exp.to_identifier(info.name)).group_by(exp.column(unit)))
    binned = exp.select(exp.column(unit),
                        exp.alias_(_value_onto(exp.column(mean), labels), value_name),
                        exp.alias_(_rows_onto(exp.column(count), edges), row_name)).from_(
        per_person.subquery(per_unit))
    edge_list = ", ".join(str(int(e)) for e in edges)
    label_list = ", ".join(autobounds.label_literal(v).sql("duckdb")
                           for v in dict.fromkeys([*labels, autobounds.TOP]))
    q = '"{}"'.format
    return (f"SELECT {rows_alias}.e AS {q(row_name)}, {values_alias}.l AS {q(value_name)}, "
            f"COUNT(*) AS n FROM ({binned.sql('duckdb')}) AS {cells} CROSS JOIN "
            f"UNNEST([{edge_list}]) AS {rows_alias}(e) CROSS JOIN UNNEST([{label_list}]) AS "
            f"{values_alias}(l) WHERE {cells}.{q(row_name)} = {rows_alias}.e AND "
            f"{cells}.{q(value_name)} = {values_alias}.l "
            f"GROUP BY {rows_alias}.e, {values_alias}.l")


def _value_onto(value: exp.Expression, labels: list[float]) -> exp.Case:
    """The first of ``labels`` (ascending) at or above the ``autobounds`` bin of
    ``value``, else ``autobounds.TOP``; NULL for NULL. A bin labelled L > 0 holds values
    below L, one labelled −L values up to −L/2."""
    def below(label: float) -> exp.Expression:
        edge = autobounds.label_literal(label if label > 0 else label / 2)
        return exp.LT(this=value.copy(), expression=edge) if label > 0 else \
            exp.LTE(this=value.copy(), expression=edge)
    return exp.Case(ifs=[exp.If(this=exp.Is(this=value.copy(), expression=exp.Null()),
                                true=exp.Null()),
                         *(exp.If(this=below(v), true=autobounds.label_literal(v))
                           for v in labels)],
                    default=autobounds.label_literal(autobounds.TOP))


def _rows_onto(rows: exp.Expression, edges: list[int]) -> exp.Expression:
    """The first of ``edges`` (ascending) at or above ``rows``, else the last."""
    if len(edges) == 1:
        return exp.Literal.number(edges[0])
    return exp.Case(ifs=[exp.If(this=exp.LTE(this=rows.copy(), expression=exp.Literal.number(e)),
                                true=exp.Literal.number(e)) for e in edges[:-1]],
                    default=exp.Literal.number(edges[-1]))


def _fresh(taken: set[str], name: str) -> str:
    """``name``, with underscores added until it is not in ``taken`` (which it joins)."""
    while name in taken:
        name += "_"
    taken.add(name)
    return name


def numeric_columns(info: TableInfo, group_by: str | None) -> list[str]:
    """The columns that get value bounds: numeric, not the unit, not the grouping column."""
    return [c for c, t in info.columns.items() if column_class(t) == "numeric"
            and c not in (info.privacy_unit, group_by) and not c.startswith("__dp_")]


def shares(epsilon: float, delta: float, parts: int) -> tuple[float, float]:
    """(ε, δ) for each of ``parts`` queries, never adding up to more than given.

    >>> shares(1.0, 1e-6, 3)
    (0.3333333333333333, 3.333333333333333e-07)
    """
    if delta <= 0:
        raise PrivacyError("suggest_bounds releases histograms with private bins, which "
                           "needs delta > 0 (e.g. delta=1e-6)")
    return (float_at_most(Fraction(epsilon) / parts), float_at_most(Fraction(delta) / parts))


@dataclass(frozen=True)
class BoundsSuggestion:
    """What ``suggest_bounds`` proposes for one table, and what it cost.

    ``toml()`` gives the lines to put in the table's ``[tables.NAME]`` entry;
    ``options()`` the same as keyword arguments of ``register``.
    """

    table: str
    bounds: Mapping[str, tuple[float, float]]
    max_rows_per_unit: int | None
    group_by: str | None = None
    max_groups_per_unit: int | None = None
    max_rows_per_group: int | None = None
    cost: Cost = field(default_factory=lambda: Cost(0.0, 0.0))
    cuts: tuple[SuggestedCut, ...] = ()
    """What each suggestion cuts, estimated from the same histograms (no further spend)."""

    def options(self) -> dict[str, object]:
        """The suggestion as ``register`` options (limits with no suggestion left out)."""
        limits = {"max_rows_per_unit": self.max_rows_per_unit,
                  "max_groups_per_unit": self.max_groups_per_unit,
                  "max_rows_per_group": self.max_rows_per_group}
        return {"bounds": dict(self.bounds)} | {k: v for k, v in limits.items() if v}

    def toml(self) -> str:
        """TOML lines for the table's catalog entry.

        >>> print(BoundsSuggestion("t", {"age": (0.0, 128.0)}, 4).toml())
        # suggested by dpsql suggest-bounds for t (spent ε=0, δ=0)
        bounds = { age = [0, 128] }
        max_rows_per_unit = 4
        """
        head = f"# suggested by dpsql suggest-bounds for {self.table} (spent {self.cost})"
        if self.group_by:
            head += f"; group limits for GROUP BY {self.group_by}"
        return "\n".join([head, *(f"# {cut}" for cut in self.cuts),
                          *(f"{k} = {toml_value(v)}" for k, v in self.options().items())])


def toml_value(value: object) -> str:
    """A TOML value: numbers, strings, booleans, lists and inline tables.

    >>> toml_value({"age": (0, 100.5), "s": ["a", 'b"']})
    '{ age = [0, 100.5], s = ["a", "b\\\\""] }'
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 2**53 else repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{_key(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise TypeError(f"no TOML form for {value!r}")


def _key(name: str) -> str:
    bare = name.replace("_", "").replace("-", "").isalnum() and name.isascii()
    return name if bare else toml_value(name)


def catalog_toml(doc: Mapping[str, Mapping[str, object]]) -> str:
    """A whole TOML catalog (``[budget]``, ``[tables.*]``, ``[public.*]``) from its parsed
    form, as ``dpsql suggest-bounds --output`` writes it."""
    lines: list[str] = []
    for section, entries in doc.items():
        if section == "budget":
            lines += ["[budget]", *(f"{_key(k)} = {toml_value(v)}" for k, v in entries.items()),
                      ""]
            continue
        for name, entry in entries.items():
            lines.append(f"[{section}.{_key(name)}]")
            lines += [f"{_key(k)} = {toml_value(v)}" for k, v in entry.items()]
            lines.append("")
    return "\n".join(lines)


def share_outside(rows: Iterable[tuple[float, float]], lo: float, hi: float
                  ) -> tuple[float, float] | None:
    """From a released magnitude histogram (``dpsql.autobounds``: a bin labelled L holds
    values in [L/2, L) for L > 0, (L, L/2] for L < 0), the share of values surely outside
    [lo, hi] and the share that may be. None when no bin is released.

    >>> share_outside([(64.0, 80.0), (128.0, 15.0), (1024.0, 5.0)], 0.0, 100.0)
    (0.05, 0.2)
    """
    bins = [(float(label), max(float(n), 0.0)) for label, n in rows if label is not None]
    total = sum(n for _, n in bins)
    if total <= 0:
        return None
    surely = sum(n for label, n in bins if (label > 0 and label / 2 > hi) or
                 (label < 0 and label / 2 < lo))
    maybe = sum(n for label, n in bins if (label > 0 and label > hi) or
                (label < 0 and label < lo) or (label > 0 and lo > 0 and label / 2 < lo))
    return surely / total, maybe / total


@dataclass(frozen=True)
class ClampCheck:
    """A column's declared bounds against the data: the noisy share of its values (one row
    per person, as the histogram draws them) outside [lo, hi], (surely, at most), and the
    bounds the released bins suggest."""

    column: str
    bounds: tuple[float, float]
    outside: tuple[float, float] | None
    suggested: tuple[float, float]

    def __str__(self) -> str:
        lo, hi = self.bounds
        if self.outside is None:
            return f"  {self.column} in [{lo:g}, {hi:g}]: too few people to tell"
        low, high = self.outside
        line = f"  {self.column} in [{lo:g}, {hi:g}]: clamps {low:.0%}–{high:.0%} of values"
        if low >= WARN_SHARE:
            s_lo, s_hi = self.suggested
            line += f"  (warning: the data suggest [{s_lo:g}, {s_hi:g}])"
        return line


@dataclass(frozen=True)
class LimitCheck:
    """One contribution limit of a query against the data: the noisy share of people (or,
    for rows per group, of one group drawn per person) it cuts, as (surely, at most), and
    the limit that would keep ``COVERAGE`` of them whole."""

    name: str
    limit: int
    cut: tuple[float, float] | None
    suggested: int | None

    def __str__(self) -> str:
        if self.cut is None:
            return f"  {self.name}={self.limit}: too few people to tell"
        low, high = self.cut
        line = f"  {self.name}={self.limit}: cuts {low:.0%}–{high:.0%} of people"
        if low >= WARN_SHARE and self.suggested and self.suggested > self.limit:
            line += f"  (warning: set {self.name}={self.suggested} to keep 95% whole)"
        return line


@dataclass(frozen=True)
class BoundingReport:
    """What a query's contribution limits and clamps cut, estimated privately
    (``Connection.bounding_report``)."""

    sql: str
    checks: tuple[LimitCheck | ClampCheck, ...]
    cost: Cost

    def __str__(self) -> str:
        return "\n".join([f"bounding report (spent {self.cost}): the query's limits and "
                          "clamps against the data",
                          *map(str, self.checks)])

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
mean times the share of rows dropped (``limit_for_error``): a prior, since counts cannot
tell whether people with many rows have other values. Measured: on PUMS_dup (people with
4 rows earn twice what people with 1 do) 0.23 at a limit of 1, 0.30 at 2; on
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
                    served: Iterable[tuple[str, str | float]] | None = None
                    ) -> tuple[int, dict[str, tuple[float, float]]]:
    """The rows limit m and the clamps that together minimise the expected squared error of
    the statistics they serve (Amin, Kulesza, Muñoz Medina & Vassilvitskii, ICML 2019), from
    the released histogram of people by their rows (``rows``) and, for each column the
    query reads, its magnitude histogram drawn with one value per person (``values``);
    ``served`` lists (column, "sum" or "avg"), each column summed by default.

    The people of a bin spread evenly over its range of rows (the top bin: all at its lower
    end), so m keeps K(m) = Σ n·E[min(rows, m)] of the T rows. A column's counts, scaled by
    K(m) over the people counted, stand for the kept rows; at each m its clamp is
    ``autobounds.clamp_for_error`` at noise ``noise_per_row``·m per unit of bound (an
    average's too: its sum is centred in the bounds, but its count's noise then weighs
    with the distance from the middle to the mean), and the rows m drops add |μ|·(T − K(m))
    to a sum's bias (μ the mean magnitude) and ``AVG_ROW_BIAS`` of that to an average's.
    A quantile (``use`` its level q) loses ranks instead: the rows m drops as an average
    does, and the exponential mechanism's 95 % error, m·ln(20·1024)/ε_q ranks per group
    (``RANK_ERROR``), out of the K(m) kept; its column's bounds are
    ``autobounds.bounds_for_quantile`` unless the query also sums or averages it.
    With no column, and for each ("", "count") served (a COUNT, or a SUM of a column with
    declared bounds), the statistic is a count: bias T − K(m), noise ``noise_per_row``·m.
    Errors are per group (bias over ``groups``), relative to the statistic's full size and
    added over statistics; the least is taken, the smaller m on ties, and each column
    keeps the clamp of its first statistic. Candidates: 1, the released edges e and 3e/4
    between them. With no released bin: m = 1. Post-processing of released bins only.

    >>> people = [(1, 500.0), (2, 300.0), (4, 150.0), (64, 50.0)]
    >>> limit_for_error(people, noise_per_row=0.01)[0], limit_for_error(people, noise_per_row=50)[0]
    (64, 4)
    >>> costs = {"cost": [(256.0, 700.0), (512.0, 250.0), (1024.0, 50.0)]}
    >>> limit_for_error(people, costs, noise_per_row=30.0)
    (48, {'cost': (0.0, 256.0)})
    >>> limit_for_error(people, costs, noise_per_row=30.0, served=[("cost", "avg")])
    (4, {'cost': (0.0, 512.0)})
    >>> limit_for_error(people, costs, noise_per_row=30.0, served=[("", "count"), ("cost", "avg")])
    (48, {'cost': (0.0, 256.0)})
    """
    released = [(int(edge), float(n)) for edge, n in rows
                if edge is not None and n is not None and float(n) > 0]
    people = [(*_bin_range(edge), n) for edge, n in released]
    columns = {name: list(hist) for name, hist in (values or {}).items()}
    statistics = list(served) if served is not None else [(c, "sum") for c in columns]
    candidates = {1, *(edge for edge, _ in released),
                  *(3 * edge // 4 for edge, _ in released if 4 <= edge <= EDGES[-1])}
    choices = {m: _error_at(m, people, columns, statistics, noise_per_row, groups)
               for m in sorted(candidates)}
    best = min(choices, key=lambda m: (choices[m][0], m))
    return best, choices[best][1]


def _kept(lo: int, hi: float, m: int) -> float:
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


def _error_at(m: int, people: list[tuple[int, float, float]], columns: dict[str, list],
              statistics: list[tuple[str, str | float]], noise_per_row: float, groups: int
              ) -> tuple[float, dict[str, tuple[float, float]]]:
    """``limit_for_error``'s error at limit m (people as (fewest rows, most rows, count)
    per bin), and the bounds of each column at m. With no person released nothing is
    dropped."""
    total = sum(_kept(lo, hi, 2**62) * n for lo, hi, n in people)
    kept = sum(_kept(lo, hi, m) * n for lo, hi, n in people) if people else 1.0
    dropped = total - kept if people else 0.0
    whole = max(total, kept)
    error, bounds = 0.0, {}
    count = ((dropped / groups) ** 2 + (noise_per_row * m) ** 2) / (whole / groups) ** 2
    if not statistics:
        error = count
    quantiles: dict[str, list[float]] = {}
    for name, use in statistics:
        if use == "count":
            error += count
            continue
        if not isinstance(use, str):  # a quantile: its error in ranks, out of K(m)
            quantiles.setdefault(name, []).append(use)
            ranks = groups * m * RANK_ERROR * noise_per_row / kept
            error += (AVG_ROW_BIAS * dropped / whole) ** 2 + ranks ** 2
            continue
        hist = columns[name]
        seen = sum(max(float(n or 0), 0.0) for label, n in hist if label is not None)
        choice = autobounds.clamp_for_error(hist, noise_per_unit=noise_per_row * m,
                                            groups=groups, weight=kept / seen if seen else 1.0)
        bounds.setdefault(name, choice.bounds)
        if choice.mass > 0:
            mean = choice.mass / kept
            bias = mean * dropped * (AVG_ROW_BIAS if use == "avg" else 1.0)
            error += (choice.error + (bias / groups) ** 2) / (mean * whole / groups) ** 2
    for name, levels in quantiles.items():
        bounds.setdefault(name, autobounds.bounds_for_quantile(columns[name], min(levels),
                                                               max(levels)))
    return error, bounds


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

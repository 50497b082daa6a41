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

>>> limit_from_bins([(1, 410.0), (2, 300.0), (4, 260.0), (8, 5.0)], coverage=0.95)
4
>>> limit_from_bins([], coverage=0.95) is None
True
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction

from sqlglot import exp

from dpsql.accounting.values import Cost
from dpsql.autobounds import free_name
from dpsql.catalog import TableInfo, column_class
from dpsql.errors import PrivacyError
from dpsql.exact import float_at_most

EDGES = tuple(2**k for k in range(21))
"""Bin edges for contributions: 1, 2, 4, … 2^20 rows (beyond: the top bin, 2^21)."""
COVERAGE = 0.95
"""The share of people whose contribution a suggested limit keeps whole."""
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
        return "\n".join([head, *(f"{k} = {toml_value(v)}" for k, v in self.options().items())])


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

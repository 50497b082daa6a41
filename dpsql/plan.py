"""Frozen objects passed between the pipeline stages.

``analyze`` turns SQL into a :class:`PrivacyPlan`; ``rewrite`` chooses its
:class:`Bounding` and builds the bounded query that enforces it; ``release`` reads both.
Every object is frozen and prints as readable text, usable as golden output in tests.

>>> print(Contribution(max_groups_per_unit=4, max_rows_per_group=3, max_rows_per_unit=None))
groups/unit=4 rows/group=3 rows/unit=unlimited
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Literal

import numpy as np
from sqlglot import exp

from dpsql.accounting.values import Cost
from dpsql.errors import Error, InternalError, PrivacyError
from dpsql.exact import as_fraction, float_at_most
from dpsql.mechanisms import Noise, NoisePlan, Sensitivity
from dpsql.mechanisms.calibration import finite_scale
from dpsql.mechanisms.exponential import ExponentialQuantile
from dpsql.mechanisms.selection import release_probability, truncated_geometric_probability

NOISY_TABLE = "__dp_noisy"
"""The table of noisy group values that post-processing (SELECT/HAVING/ORDER BY) reads."""
ROW_ID = "__dp_row"
"""Column carrying each noisy group's index through post-processing (for CIs)."""

StatKind = Literal["units", "rows", "count", "sum", "centered_sum", "distinct"]
AggKind = Literal["count_star", "count", "count_units", "count_distinct", "sum", "avg", "quantile",
                  "var_pop", "var_samp", "stddev_pop", "stddev_samp", "corr", "covar_pop",
                  "covar_samp", "regr_slope", "regr_intercept", "regr_r2", "regr_count",
                  "regr_avgx", "regr_avgy", "regr_sxx", "regr_syy", "regr_sxy"]

PAIR_ROLES: dict[str, tuple[str, ...]] = {
    "covar_pop": ("n", "sx", "sy", "sxy"), "covar_samp": ("n", "sx", "sy", "sxy"),
    "corr": ("n", "sx", "sy", "sxx", "syy", "sxy"),
    "regr_slope": ("n", "sx", "sy", "sxx", "sxy"),
    "regr_intercept": ("n", "sx", "sy", "sxx", "sxy"),
    "regr_r2": ("n", "sx", "sy", "sxx", "syy", "sxy"),
    "regr_count": ("n",), "regr_avgx": ("n", "sx"), "regr_avgy": ("n", "sy"),
    "regr_sxx": ("n", "sx", "sxx"), "regr_syy": ("n", "sy", "syy"),
    "regr_sxy": ("n", "sx", "sy", "sxy"),
}
"""The statistics of each two-argument aggregate ``AGG(y, x)``, in the order of its
``Aggregate.stats``: n, the count of rows where both are present; sx and sy, centred sums of
x and y over those rows; sxx and syy, centred sums of their squared deviations from the
middle of their bounds; sxy, the centred sum of the products of the two deviations
(``dpsql.covariance``)."""

QUANTILE_BUCKETS = 1024
"""Quantiles pick one of this many equal buckets of [lo, hi] (the answer is its midpoint).

2¹⁰ buckets keep the discretisation error (half a bucket, 0.05 % of the range) below the
exponential mechanism's own error on all but very large groups, while the per-group work in
Python (exact exponents for every bucket) stays around a millisecond."""
WEIGHT_SCALE = 2**20
"""Histogram weights are integers in units of 1/WEIGHT_SCALE row: a unit with n > c values in a
group gives each ⌊c·WEIGHT_SCALE/n⌋ (its total stays ≤ c rows, exactly, in integers)."""


@dataclass(frozen=True)
class Contribution:
    """Per-unit contribution limits that the rewrite enforces.

    ``sources`` says, per limit, whether it was ``declared`` or a ``default``.
    """

    max_groups_per_unit: int
    max_rows_per_group: int
    max_rows_per_unit: int | None
    sources: tuple[tuple[str, str], ...] = ()

    @property
    def rows_per_group(self) -> int:
        """Rows one unit can add to one group once the total cap is applied."""
        cap = self.max_rows_per_unit
        return self.max_rows_per_group if cap is None else min(self.max_rows_per_group, cap)

    @property
    def groups_per_unit(self) -> int:
        """Groups one unit can touch once the total cap is applied."""
        cap = self.max_rows_per_unit
        return self.max_groups_per_unit if cap is None else min(self.max_groups_per_unit, cap)

    @property
    def caps_total(self) -> bool:
        """True when the total-rows cap binds below groups × rows per group."""
        cap = self.max_rows_per_unit
        return cap is not None and cap < self.groups_per_unit * self.rows_per_group

    def __str__(self) -> str:
        total = "unlimited" if self.max_rows_per_unit is None else self.max_rows_per_unit
        return (
            f"groups/unit={self.max_groups_per_unit} rows/group={self.max_rows_per_group} "
            f"rows/unit={total}"
        )


@dataclass(frozen=True)
class GroupKey:
    """One GROUP BY column. ``domain`` holds the public values, or None if private."""

    name: str
    column: str
    domain: tuple[Any, ...] | None

    @property
    def public(self) -> bool:
        return self.domain is not None


@dataclass(frozen=True)
class StatSpec:
    """One bounded statistic computed per group by the rewritten SQL.

    ``expr`` is the row-level value for sums, the counted expression for
    ``count``, and None for ``rows``/``units``. Sums are computed exactly, in
    integers: each value is clamped to [lo, hi] and rounded to a multiple of
    ``quantum`` (a power of two), so the SQL result does not depend on the order
    in which the engine adds numbers. A ``centered_sum`` adds 2k − (lo_k + hi_k)
    per value k (in quanta of twice ``quantum``): AVG's centred trick in integers.

    With ``per_group`` (BigQuery's ``contribution_bounds_per_group``), [lo, hi] bounds each
    unit's partial in each group instead of each row: its row count (``rows``), its count of
    values (``count``), its sum (``sum``), or its mean (``centered_sum``, which then adds
    2m − (lo_m + hi_m) once per unit, m the unit's mean in the group in quanta). Rows per
    group do not scale such a bound.

    A ``distinct`` count's ``values_per_unit`` is set when the expression can take at most
    that many non-NULL values for one unit whatever the data (e.g. the unit itself).

    ``rows`` is the statistic's own limit on a unit's rows per group, below the query's
    (``kept_rows``): the statistics of an aggregate whose column's automatic rows limit was
    chosen apart from the rest of the query (``TableInfo.rows_for``, docs/mechanisms.md §11).
    """

    name: str
    kind: StatKind
    expr: exp.Expression | None
    lo: float = 0.0
    hi: float = 0.0
    quantum: float = 1.0
    per_group: bool = False
    values_per_unit: int | None = None
    rows: int | None = None

    @property
    def key(self) -> tuple[Any, ...]:
        sql = self.expr.sql() if self.expr is not None else ""
        return (self.kind, sql, self.lo, self.hi, self.per_group, self.rows)

    def kept_rows(self, c: int) -> int:
        """The rows per unit and group this statistic keeps when the query keeps ``c``.

        >>> own, query = StatSpec("s", "sum", None, rows=3), StatSpec("n", "rows", None)
        >>> own.kept_rows(24), query.kept_rows(24)
        (3, 24)
        """
        return c if self.rows is None else min(c, self.rows)

    @property
    def value_quantum(self) -> float:
        """The grid each value is rounded to (``quantum`` for sums, twice it when centred)."""
        return 2 * self.quantum if self.kind == "centered_sum" else self.quantum

    @property
    def lo_units(self) -> int:
        return round(self.lo / self.value_quantum)

    @property
    def hi_units(self) -> int:
        return round(self.hi / self.value_quantum)

    @property
    def row_bound(self) -> int:
        """Largest |value| one row adds, in quanta."""
        if self.kind == "sum":
            return max(abs(self.lo_units), abs(self.hi_units))
        if self.kind == "centered_sum":
            return self.hi_units - self.lo_units
        return self.per_row

    @property
    def per_row(self) -> int:
        """What one row adds to a count, in its quanta (1, or 2²⁰ under ``COUNT_QUANTUM``)."""
        return round(1 / self.quantum)

    @property
    def group_bound(self) -> int:
        """Largest |partial| one unit adds to one group, in quanta (``per_group`` statistics)."""
        if self.kind == "centered_sum":
            return self.hi_units - self.lo_units
        return max(abs(self.lo_units), abs(self.hi_units))

    @property
    def center(self) -> float:
        """The centre that a centred sum is taken around (on the value grid)."""
        return (self.lo_units + self.hi_units) * self.quantum

    def __str__(self) -> str:
        inner = self.expr.sql() if self.expr is not None else "*"
        own = "" if self.rows is None else f" over {self.rows} rows per unit and group"
        if self.per_group:
            return f"{self.name}={self.kind}({inner}) per group in [{self.lo:g}, {self.hi:g}]"
        if self.kind in ("sum", "centered_sum"):
            return f"{self.name}={self.kind}({inner} in [{self.lo:g}, {self.hi:g}]){own}"
        return f"{self.name}={self.kind}({inner}){own}"


MIN_BOUND = 1e-100
"""Smallest non-zero |bound| dpsql computes with (see :func:`check_value_bounds`)."""
MAX_BOUND = 1e100
"""Largest |bound| dpsql computes with (see :func:`check_value_bounds`)."""
MIN_QUANTUM = 2.0**-960
"""Smallest quantum: its noise grids (≥ 2⁻¹³ quanta) and scales (≥ 2⁻³⁰ grid steps) are
still normal floats, so no scale or grid underflows or loses digits."""


def check_value_bounds(lo: float, hi: float, where: str, *,
                       error: type[Error] = PrivacyError) -> tuple[float, float]:
    """(lo, hi) if dpsql can compute with them, else ``error`` naming the bounds that work.

    The rule: lo ≤ hi, both finite, and each is 0 or has |bound| in [1e-100, 1e100]. Why:

    - sums are exact integers in quanta of 2⁻³⁰ × the largest |bound| (:func:`value_quantum`),
      and each value's noise is a multiple of that quantum: at 1e-100 the quantum is 2⁻³⁶³,
      and the variance's squared half-range (≥ 1e-232 for such bounds) keeps its own quantum
      and noise grid normal floats, so nothing underflows to 0 (at 1e-320 the quantum
      was 0 and the plan divided by it);
    - a variance sums squared deviations up to (hi − lo)²/4 ≤ 1e200, and every released value
      is below 2⁵³ noise-grid steps: 1e100 leaves some 1e100 of headroom for the number of
      rows and for the noise of a small ε before a sensitivity, a noise scale or a noisy
      answer overflows (at ±1e308 the noise scale was inf). A query whose noise still
      overflows at its ε is refused when it is planned (``calibrate``).

    >>> check_value_bounds(0, 1e6, "bounds['x']")
    (0.0, 1000000.0)
    >>> check_value_bounds(-1e308, 1e308, "bounds['x']")
    Traceback (most recent call last):
    ...
    dpsql.errors.PrivacyError: bounds['x'] = (-1e+308, 1e+308) are too wide: dpsql computes with \
bounds that are 0 or between 1e-100 and 1e+100 in absolute value (beyond them a sensitivity, the \
rounding quantum or a noise draw over- or underflows). Fix: narrow the bounds to at most 1e+100, \
or rescale the column (e.g. store it in thousands)
    """
    lo, hi = float(lo), float(hi)
    shown = f"{where} = ({lo:g}, {hi:g})"
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi:
        raise error(f"{shown}: need finite lo <= hi")
    rule = (f"dpsql computes with bounds that are 0 or between {MIN_BOUND:g} and {MAX_BOUND:g} "
            "in absolute value (beyond them a sensitivity, the rounding quantum or a noise draw "
            "over- or underflows)")
    if max(abs(lo), abs(hi)) > MAX_BOUND:
        raise error(f"{shown} are too wide: {rule}. Fix: narrow the bounds to at most "
                    f"{MAX_BOUND:g}, or rescale the column (e.g. store it in thousands)")
    if any(0 < abs(b) < MIN_BOUND for b in (lo, hi)):
        raise error(f"{shown} are too small: {rule}. Fix: use 0 or a bound of at least "
                    f"{MIN_BOUND:g}, or rescale the column (e.g. store it in millionths)")
    return lo, hi


COUNT_QUANTUM = 2.0**-20
"""The quantum of counts when ``max_rows_per_unit`` binds: each person's partials are then
scaled by min(1, r / their rows) and truncated to whole quanta, and in whole rows that
truncation dropped up to a row per group (a person with 8 rows in one group and 1 in each
of 7 others, r = c = 8, counted 4 rows instead of 8); in 2⁻²⁰ rows it loses nothing visible.
"""


def value_quantum(lo: float, hi: float) -> float:
    """A power of two about 2^-30 of the largest |bound|: values keep ~9 significant digits.

    Bounds whose quantum would fall below MIN_QUANTUM (a largest |bound| under ~1e-280) are
    refused with PrivacyError; :func:`check_value_bounds` refuses far earlier.

    >>> value_quantum(0, 1000) == 2.0 ** (9 - 30)
    True
    """
    largest = max(abs(lo), abs(hi))
    if largest == 0:
        return 1.0
    quantum = math.ldexp(1.0, math.frexp(largest)[1] - 31)  # 2^(⌊log₂ largest⌋ − 30)
    if quantum < MIN_QUANTUM:
        raise PrivacyError(f"bounds ({lo:g}, {hi:g}) are too small to compute with: use 0 or "
                           f"bounds of at least {MIN_BOUND:g} in absolute value")
    return quantum


def in_output_units(noise: Noise, quantum: float) -> Noise:
    """The noise of a statistic computed in ``quantum`` units, in the units of the answer.

    Raises PrivacyError if its scale overflows (a query far too noisy for a float).

    >>> str(in_output_units(Noise("laplace", 2.0, 2.0**-10), 2.0**-4))
    'discrete laplace(t=0.125, grid=2^-14)'
    """
    scale = finite_scale(noise.scale * quantum, "the noise scale in the units of the answer")
    return replace(noise, scale=scale, granularity=noise.granularity * quantum)


@dataclass(frozen=True)
class HistogramSpec:
    """Per-group bucket weights of one bounded expression, computed by the rewritten SQL.

    Each value is clamped to [lo, hi] and falls in bucket ⌊(v − lo)·B/(hi − lo)⌋ (the last
    bucket includes hi). The bounded query returns, per group, a list of (bucket, weight) with
    integer weights in 1/WEIGHT_SCALE rows, at most c rows per unit and group in total.

    >>> h = HistogramSpec("__dp_h0", exp.column("age"), 0, 100, buckets=4)
    >>> str(h), h.midpoints(np.array([0, 3])).tolist()
    ('__dp_h0=histogram(age in [0, 100], 4 buckets)', [12.5, 87.5])
    """

    name: str
    expr: exp.Expression
    lo: float
    hi: float
    buckets: int = QUANTILE_BUCKETS

    @property
    def key(self) -> tuple[Any, ...]:
        return ("histogram", self.expr.sql(), self.lo, self.hi, self.buckets)

    @property
    def width(self) -> float:
        return (self.hi - self.lo) / self.buckets

    def midpoints(self, index: np.ndarray) -> np.ndarray:
        """The released value of bucket ``index``: its midpoint (post-processing)."""
        return self.lo + (2 * np.asarray(index, dtype=np.float64) + 1) * (
            (self.hi - self.lo) / (2 * self.buckets))

    def __str__(self) -> str:
        return (f"{self.name}=histogram({self.expr.sql()} in [{self.lo:g}, {self.hi:g}], "
                f"{self.buckets} buckets)")


@dataclass(frozen=True)
class QuantileSpec:
    """A quantile aggregate: q, its histogram, and (once calibrated) its mechanism; with
    ``level``, two more exponential mechanisms release a ``level`` interval's ends."""

    q: Fraction
    histogram: HistogramSpec
    mechanism: ExponentialQuantile | None = None
    lower: ExponentialQuantile | None = None
    upper: ExponentialQuantile | None = None
    level: float | None = None

    @property
    def mechanisms(self) -> tuple[ExponentialQuantile, ...]:
        """The releases of this quantile: the value, then the interval's ends if asked for."""
        return tuple(m for m in (self.mechanism, self.lower, self.upper) if m is not None)


@dataclass(frozen=True)
class Aggregate:
    """One aggregate call of the query and the statistics it is computed from.

    A quantile reads no noisy statistic: ``stats`` names its histogram, and ``quantile``
    holds q and the exponential mechanism that releases it.
    """

    name: str
    kind: AggKind
    sql: str
    stats: tuple[str, ...]
    lo: float | None = None
    hi: float | None = None
    quantile: QuantileSpec | None = None
    reported: bool = False
    """Its interval is read by a report (``dpsql.analysis.reports``): the release puts it in
    the noisy table."""

    def __str__(self) -> str:
        bounds = "" if self.lo is None else f" in [{self.lo:g}, {self.hi:g}]"
        q = "" if self.quantile is None else f" q={self.quantile.q}"
        return f"{self.name}={self.sql}{bounds}{q} <- {', '.join(self.stats)}"


SEPARATE_SELECTIONS = ("truncated_geometric", "gaussian_selection")


@dataclass(frozen=True)
class Selection:
    """DP partition selection.

    Threshold methods keep a group iff its noisy unit count ≥ ``threshold`` (the
    count's noise is part of the query's noise: they spend only δ) — or, with
    ``statistic``, iff that released count of rows does (its threshold allows for the c
    rows one person may add to a group), and, with a floor
    ``min_units``, its exact unit count ≥ min_units. The *separate* methods spend their own
    ``epsilon`` (all of the query's when only keys are released, else the share the unit
    count would have taken of the noise's ε; it is then not a released statistic): the
    truncated geometric keeps a group of n units with probability p(n) (Desfontaines et al.
    2022); ``gaussian_selection`` keeps it iff n plus its own discrete Gaussian noise of std
    ``sigma`` (never released) is ≥ ``threshold``, that noise taking ``noise_delta`` of
    ``delta`` (docs/mechanisms.md §6).
    """

    method: str
    threshold: float
    delta: float
    max_groups_per_unit: int
    epsilon: float = 0.0
    min_units: int = 1
    """``min_privacy_units_per_group`` = m, a floor: a group whose exact count of people
    (after the contribution limits) is below m is never released, and one of n ≥ m people is
    selected as a group of n − (m − 1) would be without the floor (a threshold raised by
    m − 1, the truncated geometric's curve shifted right). The guarantee is the unshifted
    one's (docs/mechanisms.md §6, "A floor of m people"): a group with m people in D and
    m − 1 in D′ is released in D exactly as a new group of one person would be, and never
    in D′."""
    sigma: float = 0.0
    noise_delta: float = 0.0
    statistic: str | None = None
    """The released statistic a threshold compares, when it is not the count of people: a
    count of rows the query releases anyway (docs/mechanisms.md §6, "A threshold on the
    released count")."""

    @property
    def truncated_geometric(self) -> bool:
        return self.method == "truncated_geometric"

    @property
    def separate(self) -> bool:
        """Whether the selection draws its own randomness from the exact unit count (and
        spends its own ε) instead of thresholding the query's noisy count."""
        return self.method in SEPARATE_SELECTIONS

    @property
    def own_noise(self) -> Noise | None:
        """The noise Gaussian thresholding adds to the exact unit count (None otherwise)."""
        return Noise("gaussian", self.sigma) if self.method == "gaussian_selection" else None

    def floor(self, counts: np.ndarray) -> np.ndarray:
        """Which groups may be released at all: those of at least ``min_units`` people,
        counted exactly (the bounded query's distinct-unit count)."""
        return np.asarray(counts) >= self.min_units

    def shifted(self, counts: np.ndarray) -> np.ndarray:
        """Unit counts as the selection sees them (``min_units``)."""
        return np.maximum(np.asarray(counts) - (self.min_units - 1), 0)

    def chance(self, counts: np.ndarray, noise: Noise | None = None) -> np.ndarray:
        """P(a group is released) given its exact count of people, for each count: 0 below
        the floor, else the unshifted selection's chance at n − (min_units − 1). ``noise`` is
        the unit count's in the query's noise (thresholds on it only).

        >>> s = Selection("laplace_threshold", 15.0, 1e-6, 1, min_units=5)
        >>> [f"{p:.2g}" for p in s.chance([4, 5, 19], Noise("laplace", 1.0))]
        ['0', '6.1e-07', '0.73']
        """
        counts = np.asarray(counts, dtype=np.int64)
        if self.truncated_geometric:
            chances = truncated_geometric_probability(
                self.shifted(counts), self.epsilon, self.delta, self.max_groups_per_unit)
        else:
            chances = [release_probability(self.own_noise or noise, self.threshold, int(n))
                       for n in self.shifted(counts)]
        return np.where(self.floor(counts), chances, 0.0)

    def __str__(self) -> str:
        least = f" min_units={self.min_units}" if self.min_units > 1 else ""
        if self.truncated_geometric:
            return f"{self.method} ε={self.epsilon:g} δ={self.delta:g}{least}"
        if self.own_noise is not None:
            return (f"{self.method} sigma={self.sigma:.6g} threshold={self.threshold:g} "
                    f"ε={self.epsilon:g} δ={self.delta:g}{least}")
        on = "" if self.statistic is None else f" on {self.statistic}"
        return f"{self.method}{on} threshold={self.threshold:g} δ={self.delta:g}{least}"


@dataclass(frozen=True)
class Spend:
    """One mechanism's part of a query's cost."""

    mechanism: str
    epsilon: float
    delta: float

    def __str__(self) -> str:
        return f"{self.mechanism}: ε={self.epsilon!r} δ={self.delta!r}"


def exact_share(total: float, parts: int) -> Fraction:
    """The exact ε each of ``parts`` ε-spending mechanisms may use: the decimal written / parts.

    >>> exact_share(0.9, 3)
    Fraction(3, 10)
    """
    if parts < 1:
        raise InternalError(f"cannot split ε into {parts} parts")
    return as_fraction(total) / parts


def epsilon_share(total: float, parts: int) -> float:
    """Each of ``parts`` ε-spending mechanisms gets float_at_most(total / parts).

    The shares are equal and their exact sum never exceeds the exact (decimal) total.

    >>> epsilon_share(1.0, 1), epsilon_share(1.0, 3) * 3 <= 1.0
    (1.0, True)
    """
    return float_at_most(exact_share(total, parts))


@dataclass(frozen=True)
class OutputColumn:
    """A column of the released table; ``aggregate`` names it when it is a bare aggregate."""

    name: str
    aggregate: str | None


@dataclass(frozen=True)
class TableRead:
    """How the bounded query reads a registered table: every column, in order, with each
    text column but the privacy unit cut to its width (``dpsql.expr.size``), so that the
    widths the plan's bounds assume hold whatever the data holds."""

    table: str
    columns: tuple[str, ...]
    widths: tuple[tuple[str, int], ...]

    def __str__(self) -> str:
        return f"{self.table}: " + ", ".join(f"{c} ≤ {w} characters" for c, w in self.widths)


@dataclass(frozen=True)
class PrivacyPlan:
    """Everything needed to rewrite, run and release one query, and what it costs."""

    sql: str
    table: str
    relation: str | exp.Expression
    privacy_unit: str | None
    where: exp.Expression | None
    keys: tuple[GroupKey, ...]
    stats: tuple[StatSpec, ...]
    sensitivities: tuple[Sensitivity, ...]
    aggregates: tuple[Aggregate, ...]
    contribution: Contribution
    noise: NoisePlan | None
    selection: Selection | None
    output: exp.Select
    columns: tuple[OutputColumn, ...]
    cost: Cost
    column_types: Mapping[str, str] = field(default_factory=dict)
    column_bounds: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    tables: tuple[str, ...] = ()
    private_tables: tuple[str, ...] = ()
    row_work: int = 0
    """The most steps one row takes over the query's row expressions (``dpsql.expr.size``)."""
    reads: tuple[TableRead, ...] = ()
    """The tables whose text columns are cut to their widths when read."""

    @property
    def row_level(self) -> bool:
        return self.privacy_unit is None

    @property
    def key_names(self) -> list[str]:
        """The output names of the GROUP BY keys, in order (the bounded query's key columns)."""
        return [k.name for k in self.keys]

    @property
    def statistics_per_unit(self) -> int:
        """How many released cells one unit can change ((statistics + quantiles) × groups)."""
        return (len(self.sensitivities) + len(self.quantiles)) * self.contribution.groups_per_unit

    @property
    def quantiles(self) -> tuple[Aggregate, ...]:
        """The quantile aggregates, each released by its own exponential mechanism."""
        return tuple(a for a in self.aggregates if a.quantile is not None)

    @property
    def histograms(self) -> tuple[HistogramSpec, ...]:
        """The distinct histograms the bounded query computes (shared by quantiles of one x)."""
        found = {a.quantile.histogram.name: a.quantile.histogram for a in self.quantiles}
        return tuple(found.values())

    @property
    def mechanism(self) -> str:
        """The mechanisms the query releases with, e.g. ``laplace`` or ``laplace+exponential``."""
        kinds = [self.noise.kind] if self.noise is not None else []
        if self.selection is not None and self.selection.separate:
            kinds.append(self.selection.method)
        return "+".join(kinds + (["exponential"] if self.quantiles else []))

    @property
    def spend(self) -> tuple[Spend, ...]:
        """What each mechanism uses: noise, partition selection, one part per quantile.

        The query's ε is split equally between the noise (when there are noisy statistics)
        and each quantile (``epsilon_share``); δ goes to the noise and selection as before.
        """
        parts = []
        if self.noise is not None:
            noise_delta = self.noise.delta if self.noise.kind == "gaussian" else 0.0
            parts.append(Spend(f"{self.noise.kind} noise", self.noise.epsilon, noise_delta))
        if self.selection is not None:
            parts.append(Spend("partition selection", self.selection.epsilon,
                               self.selection.delta))
        for agg in self.quantiles:
            if agg.quantile.mechanism is None:
                raise InternalError(f"quantile {agg.sql} was never calibrated")
            for mechanism in agg.quantile.mechanisms:
                end = "" if mechanism.side == "point" else f" ({mechanism.side} end)"
                parts.append(Spend(f"exponential {agg.sql}{end}", mechanism.epsilon, 0.0))
        return tuple(parts)

    def verify_cost(self) -> None:
        """The charge covers every part, and each mechanism spends exactly its share.

        In exact rationals: the cost is the decimal the user wrote (``as_fraction``), each
        part is the binary value of the float its mechanism was calibrated with
        (``Fraction``). The shares are the noise (with a truncated geometric that took part
        of the noise's ε, the two together) and each quantile release, each ε/shares:

        - every part's ε sums to at most the cost's ε, and every δ to at most its δ;
        - a lone mechanism uses float_at_most(its share), the largest float not above it;
        - the noise and a truncated geometric together use at most their share.

        Raises InternalError otherwise (Tumult-style: the plan checks it spends what it says).
        The check is exact, so rounding cannot trip it, and it catches any over-spend.
        """
        parts = self.spend
        used_eps = sum((Fraction(p.epsilon) for p in parts), Fraction(0))
        used_delta = sum((Fraction(p.delta) for p in parts), Fraction(0))
        quantiles = [Fraction(p.epsilon) for p in parts if p.mechanism.startswith("exponential")]
        paired = [Fraction(p.epsilon) for p in parts
                  if not p.mechanism.startswith("exponential") and p.epsilon > 0]
        shares = len(quantiles) + bool(paired)
        share = exact_share(self.cost.epsilon, shares) if shares else Fraction(0)
        full = Fraction(float_at_most(share))
        noise_ok = not paired or sum(paired) == full or (len(paired) == 2
                                                         and sum(paired) <= share)
        if used_eps > as_fraction(self.cost.epsilon) or used_delta > as_fraction(
                self.cost.delta) or not noise_ok or any(q != full for q in quantiles):
            raise InternalError(f"plan cost {self.cost} differs from what its mechanisms use: "
                                + "; ".join(map(str, parts)))

    def stat(self, name: str) -> StatSpec:
        return next(s for s in self.stats if s.name == name)

    def sensitivity(self, name: str) -> Sensitivity:
        return next(s for s in self.sensitivities if s.name == name)

    def noise_for(self, name: str) -> Noise:
        """The noise of statistic ``name`` in output units (sums are computed in quanta)."""
        noise = self.noise.noise_for(self.sensitivity(name))
        return in_output_units(noise, self.stat(name).quantum)

    @property
    def thresholded(self) -> str:
        """The statistic a threshold selection compares: its ``statistic``, or the unit count."""
        if self.selection is not None and self.selection.statistic is not None:
            return self.selection.statistic
        return next(s.name for s in self.stats if s.kind == "units")

    def selection_noise(self) -> Noise | None:
        """The noise of the statistic a threshold selection compares, in output units (None
        for the separate selections, which draw their own)."""
        if self.selection is None or self.selection.separate:
            return None
        return self.noise_for(self.thresholded)

    def __str__(self) -> str:
        lines = [
            f"table {self.table} unit={self.privacy_unit or 'row'} {self.contribution}",
            "keys " + (", ".join(f"{k.name}{'(public)' if k.public else ''}" for k in self.keys)
                       or "none"),
            *(f"stat {s}" for s in self.stats),
            *(f"agg {a}" for a in self.aggregates),
            *(f"quantile {a.name} {a.quantile.mechanism}" for a in self.quantiles),
            f"noise {self.noise.kind if self.noise else 'none'} "
            f"statistics/unit={self.statistics_per_unit}",
            f"selection {self.selection or 'public'}",
            f"cost {self.cost}",
        ]
        return "\n".join(lines)


Strategy = Literal["row_level", "all_pairs", "first_pair", "first_pairs_by_window",
                   "heavy_units_by_hash", "kept_rows_ranked", "first_group_of_rows"]
"""How the bounded query keeps each unit's contribution within the plan's limits: the
closed set that ``dpsql.rewrite.choose`` picks from, one builder each (docs/architecture.md)."""

STRATEGIES: tuple[Strategy, ...] = Strategy.__args__  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Bounding:
    """The strategy of a bounded query, the options it was built with, and why it was chosen.

    Chosen from the plan and the engine's traits alone (``dpsql.rewrite.choose``), never from
    the data: which rows a unit keeps is decided by the same rule whatever the rows hold.

    - ``groups_per_unit``: the g of a strategy that chooses groups per unit (else None).
    - ``in_rows``: what a small CTE of groups would give each row (the group-choice codes,
      a unit's count of values) is computed in the row, and pairs carry their keys — for
      an engine that computes a CTE again at each reference.
    - ``packed``: the first pair's bounded partials travel as the digits of few BIGINTs.
    - ``compute_once``: the kept pairs, or the kept rows' cells (``kept_rows_ranked``),
      read by several parts of the query, are computed once (for an engine that reuses
      only a non-deterministic CTE).

    >>> print(Bounding("first_pair", "one group per unit", groups_per_unit=1, packed=True))
    first_pair (g=1, packed): one group per unit
    """

    strategy: Strategy
    why: str
    groups_per_unit: int | None = None
    in_rows: bool = False
    packed: bool = False
    compute_once: bool = False

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise InternalError(f"unknown bounding strategy {self.strategy!r}")

    @property
    def options(self) -> tuple[str, ...]:
        """The options that are set, as explain() prints them."""
        g = () if self.groups_per_unit is None else (f"g={self.groups_per_unit}",)
        flags = ("in_rows", "packed", "compute_once")
        return (*g, *(flag for flag in flags if getattr(self, flag)))

    def __str__(self) -> str:
        options = f" ({', '.join(self.options)})" if self.options else ""
        return f"{self.strategy}{options}: {self.why}"

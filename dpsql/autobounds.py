"""Bounds dpsql chooses itself: ``bounds={"income": "auto"}`` in the catalog.

A SUM, AVG, variance or quantile needs the range its values are clamped to, and a guess that
is too narrow biases the answer while one too wide drowns it in noise. For a column declared
``"auto"``, the first query that needs its bounds spends a share of its own budget
(``AUTO_SHARE``: a quarter of ε and half of δ, split evenly over the columns it estimates)
on a private histogram of the values' magnitudes, the approach of ZetaSQL's approximate bounds
and Tumult's ``get_bounds`` (values binned by powers of two, bins released only when
enough people are in them):

1. each value falls in a bin by sign and power of two, ``[2^(k-1), 2^k)`` for
   k = -19 … 63, ``[0, 2^-20)``, ``[2^63, ∞)`` (NaN, too) and their mirror images;
2. the histogram is an ordinary dpsql query over a subquery (contribution limits, noise
   and partition selection as for any query with private keys, so its guarantee is the
   one every query has), charged to the ledger like any query;
3. the bounds are chosen for the answer (``bounds_for_error``): on each side, the power of
   two that minimises the expected squared error of a clamped sum — clamping bias² from
   the released counts above it, plus the noise² a sum clamped there gets at the query's
   ε (Amin, Kulesza, Muñoz Medina & Vassilvitskii, "Bounding User Contributions: A
   Bias-Variance Trade-off in Differential Privacy", ICML 2019) —, the mass beyond the last
   released bin extrapolated from the released ones' fall beyond their mode (partition
   selection hides a thin tail, which a sum still feels); 0 when a side has no bin;
   ``FALLBACK`` when no bin is released. A column a query only ranks (quantiles) gets
   the tightest released range that holds its levels (``bounds_for_quantile``); with
   ``max_rows_per_unit="auto"`` the clamp is chosen with the limit
   (``suggest.limit_for_error``). ``bounds_from_bins``, the outer edges of the released
   bins, is what the data owner's tools report (coverage).

The bounds are then a released statistic: they replace ``"auto"`` in the connection's
catalog and later queries use them for free (post-processing). Whatever the data, step 3
gives valid bounds, so whether the query runs never depends on the data.

>>> bounds_from_bins([(4.0, 120), (64.0, 31), (-2.0, 15)])
(-2.0, 64.0)
>>> bounds_from_bins([])
(0.0, 1.0)
>>> rows = [(2.0**10, 400), (2.0**11, 200), (2.0**12, 100)]
>>> bounds_for_error(rows, noise_per_unit=1.0), bounds_for_error(rows, noise_per_unit=100.0)
((0.0, 16384.0), (0.0, 2048.0))
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

from sqlglot import exp

from dpsql.catalog import TableInfo
from dpsql.errors import PrivacyError
from dpsql.exact import float_at_most

AUTO_SHARE = (Fraction(1, 4), Fraction(1, 2))
"""The share of a query's (ε, δ) spent estimating the bounds it needs."""
POWERS = range(-19, 64)
"""Bin edges 2^k: values from about 1e-6 to 9.2e18 get a bin of their own size."""
TOP = 1e100
"""The edge of the outermost bins (values beyond 2^63, ±inf and NaN): the largest bound
dpsql computes with (``plan.check_value_bounds``)."""
NOISE_STATISTICS = 2
"""How many statistics the query's ε is assumed shared over when the bounds are chosen (a
count and a sum: an AVG's, or a SUM beside a COUNT)."""
TAIL_SPREAD = 1.5
"""The widest tail ``_tail`` assumes beyond the released bins, in bins (doublings): a
log-normal's standard deviation. Wider tails drive the clamp far out on the noise of a few
counts (measured on PUMS_dup: docs/benchmarks.md)."""
TAIL_FALL = 0.25
"""The slowest fall per bin ``_tail`` continues beyond the released bins: a Pareto tail of
index 2, whose rows quarter and whose mass halves with each doubling, so a sum's bias from
it stays finite. A heavy tail that falls faster is continued at its own last fall (bench_utility's
costs, log-normal with a Pareto top: 856 → 206 rows, and 46, 14, 1 in the hidden bins);
one capped like PUMS_dup's top-coded incomes keeps the half-normal's faster fall."""
TAIL_FLOOR = 0.5
"""Bins beyond the last released one are extrapolated while the fit puts at least this many
rows in them."""
FALLBACK = (0.0, 1.0)
"""Bounds when no bin is released (too few people for the budget): valid, and as narrow as
a count's."""


def histogram_sql(info: TableInfo, column: str, where: exp.Expression | None = None) -> str:
    """The private query that counts values of ``info.column`` per bin (see the module).

    >>> info = TableInfo.private("t", columns={"pid": "INT", "x": "DOUBLE"}, privacy_unit="pid")
    >>> print(histogram_sql(info, "x")[:96])
    SELECT x_bin, COUNT(*) AS n FROM (SELECT pid, CASE WHEN x IS NULL THEN NULL WHEN x >= 0 THEN...
    """
    value = exp.column(column)
    name = free_name(info, f"{column}_bin")
    positive = _ladder(value, [(exp.LT, 2.0**k, 2.0**k) for k in [-20, *POWERS]], TOP)
    negative = _ladder(value, [(exp.GT, -(2.0**k), -(2.0**k)) for k in [-20, *POWERS]], -TOP)
    binned = exp.Case(ifs=[
        exp.If(this=exp.Is(this=value.copy(), expression=exp.Null()), true=exp.Null()),
        exp.If(this=exp.GTE(this=value.copy(), expression=exp.Literal.number(0)),
               true=positive)], default=negative)
    unit = [exp.column(info.privacy_unit)] if info.privacy_unit else []
    inner = exp.select(*unit, exp.alias_(binned, name)).from_(exp.to_identifier(info.name))
    if where is not None:  # the rows a query keeps (``bounding_report``)
        inner = inner.where(where.copy())
    query = (exp.select(exp.column(name), exp.alias_(exp.Count(this=exp.Star()), "n"))
             .from_(inner.subquery("binned")).group_by(exp.column(name)))
    return query.sql("duckdb")


def label_literal(label: float) -> exp.Expression:
    """A bin's label as the SQL literal ``histogram_sql`` writes it."""
    return _number(label)


def _ladder(value: exp.Expression, steps: list[tuple[type, float, float]],
            beyond: float) -> exp.Case:
    """CASE WHEN value OP edge THEN label ... ELSE beyond END."""
    return exp.Case(ifs=[exp.If(this=op(this=value.copy(), expression=_number(edge)),
                                true=_number(label)) for op, edge, label in steps],
                    default=_number(beyond))


def _number(value: float) -> exp.Expression:
    literal = exp.Literal.number(repr(abs(value)))
    return exp.Neg(this=literal) if value < 0 else literal


def free_name(info: TableInfo, name: str) -> str:
    """``name``, with underscores added until it is not a column of ``info``: an output name
    of a generated subquery that none of the table's columns can shadow.

    >>> info = TableInfo.private("t", columns={"pid": "INT", "m": "INT", "m_": "INT"},
    ...                          privacy_unit="pid")
    >>> free_name(info, "m"), free_name(info, "n")
    ('m__', 'n')
    """
    while name in info.columns:
        name += "_"
    return name


def bounds_from_bins(rows: Iterable[tuple[float, float]]) -> tuple[float, float]:
    """(lo, hi) from the released bins' labels: each label is the bin's outer edge."""
    labels = [float(label) for label, _ in rows if label is not None]
    lo = min((v for v in labels if v < 0), default=0.0)
    hi = max((v for v in labels if v > 0), default=0.0)
    return FALLBACK if lo == hi == 0.0 else (lo, hi)


def split(epsilon: float, delta: float, columns: int) -> tuple[float, float, float, float]:
    """(ε, δ) per estimated column and (ε, δ) left for the query, in exact arithmetic: the
    parts never add up to more than the query's own (ε, δ).

    >>> split(1.0, 1e-6, 2)
    (0.125, 2.5e-07, 0.75, 5e-07)
    """
    if delta <= 0:
        raise PrivacyError(
            'bounds="auto" are estimated with partition selection over the bins, which needs '
            "delta > 0: give the query a delta (e.g. 1e-6), or declare the bounds")
    share_e, share_d = AUTO_SHARE
    each_e = float_at_most(Fraction(epsilon) * share_e / columns)
    each_d = float_at_most(Fraction(delta) * share_d / columns)
    rest_e = float_at_most(Fraction(epsilon) - columns * Fraction(each_e))
    rest_d = float_at_most(Fraction(delta) - columns * Fraction(each_d))
    if each_e == 0 or each_d == 0:
        raise PrivacyError(f"epsilon={epsilon:g}, delta={delta:g}: too small to share with "
                           'the estimate of bounds="auto"; declare the bounds instead')
    return each_e, each_d, rest_e, rest_d


def bounds_for_error(rows: Iterable[tuple[float, float]], *, noise_per_unit: float,
                     groups: int = 1) -> tuple[float, float]:
    """(lo, hi) minimising, side by side, the expected squared error of a sum clamped there:
    (bias / groups)² + (noise_per_unit × |bound|)², ``noise_per_unit`` the std of the sum's
    noise per unit of bound (``noise_per_unit``), the bias the released counts beyond the
    bound times their distance to it (each bin's values at ¾ of its outer edge), the bins
    beyond the last released one extrapolated (``_tail``). Post-processing of the released
    bins only: nothing here reads data."""
    return clamp_for_error(rows, noise_per_unit=noise_per_unit, groups=groups).bounds


@dataclass(frozen=True)
class ClampChoice:
    """What ``clamp_for_error`` chose: the ``bounds``, the expected squared ``error`` of a
    sum clamped to them (bias² + noise², both sides) and the ``mass`` Σ n·|value| of the
    sum it models (released bins and extrapolated tail, values at ¾ of their outer edge):
    the scale against which ``estimate_limits`` weighs the rows a limit drops."""

    bounds: tuple[float, float]
    error: float
    mass: float


def clamp_for_error(rows: Iterable[tuple[float, float]], *, noise_per_unit: float,
                    groups: int = 1, weight: float = 1.0) -> ClampChoice:
    """``bounds_for_error`` with its error and mass, each released count standing for
    ``weight`` rows (a histogram that draws one value per person, scaled to the rows a
    person keeps: ``suggest.limit_for_error``).

    >>> rows = [(2.0**10, 400), (2.0**11, 200), (2.0**12, 100)]
    >>> [clamp_for_error(rows, noise_per_unit=100.0, weight=w).bounds[1] for w in (1, 2)]
    [2048.0, 4096.0]
    >>> round(clamp_for_error(rows, noise_per_unit=100.0).mass)  # tail included
    1190400
    """
    counts: dict[float, float] = {}
    for label, n in rows:
        if label is not None:
            counts[float(label)] = counts.get(float(label), 0.0) + max(float(n or 0), 0.0)
    hi, hi_error, hi_mass = _side({k: n for k, n in counts.items() if k > 0},
                                  noise_per_unit, groups, weight)
    lo, lo_error, lo_mass = _side({-k: n for k, n in counts.items() if k < 0},
                                  noise_per_unit, groups, weight)
    bounds = FALLBACK if lo == hi == 0.0 else (-lo + 0.0, hi)
    return ClampChoice(bounds, hi_error + lo_error, hi_mass + lo_mass)


def bounds_for_quantile(rows: Iterable[tuple[float, float]], low: float, high: float
                        ) -> tuple[float, float]:
    """(lo, hi) for quantiles at levels ``low`` … ``high``: the tightest released bin edges
    with the levels inside and a margin. The exponential mechanism's error in ranks does not
    depend on the range, but its buckets are (hi − lo)/1024 wide and a quantile outside the
    range comes out at its end (docs/mechanisms.md §8), so a tighter range that still holds
    the quantile is better, and the tail a sum must see (``bounds_for_error``) only widens
    the buckets. In value order, lo is the lower edge of the bin where the released bins'
    noisy count (negatives as 0) first passes ``low``/2 of their total, hi the upper edge
    of the bin where it reaches 1 − (1 − ``high``)/2: the quantile stays inside while the
    noisy counts are off by less than half its distance (in ranks) to either end.
    ``FALLBACK`` when no bin is released. Post-processing of the released bins only.

    >>> incomes = [(2.0**13, 50), (2.0**14, 100), (2.0**15, 200), (2.0**16, 100), (2.0**19, 50)]
    >>> bounds_for_quantile(incomes, 0.5, 0.5), bounds_for_quantile(incomes, 0.0, 1.0)
    ((8192.0, 65536.0), (4096.0, 524288.0))
    """
    bins = sorted((_interval(float(label)), max(float(n or 0), 0.0)) for label, n in rows
                  if label is not None)
    total = sum(n for _, n in bins)
    if total <= 0:
        return FALLBACK
    below, above = low / 2 * total, (1 - (1 - high) / 2) * total
    lo = hi = None
    running = 0.0
    for (start, end), n in bins:
        running += n
        if lo is None and running > below:
            lo = start
        if hi is None and running >= above:
            hi = end
    return lo, hi if hi is not None else bins[-1][0][1]


def _interval(label: float) -> tuple[float, float]:
    """The values of the bin a label names: [L/2, L) for L > 0 ([0, 2^-20) for the smallest,
    up to ``TOP`` for the open top bin), their mirror images for L < 0."""
    if label < 0:
        start, end = _interval(-label)
        return -end, -start
    if label == TOP:
        return 2.0 ** POWERS[-1], TOP
    return (0.0 if label <= 2.0 ** -20 else label / 2), label


def noise_per_unit(epsilon: float, rows_per_unit: int,
                   statistics: float = NOISE_STATISTICS) -> float:
    """The std of a clamped sum's Laplace noise per unit of bound: √2·m/ε_s, with m rows
    per person and ε_s the query's ε over ``statistics`` shares (a model of the query the
    bounds serve; the query is calibrated exactly when it runs).

    >>> round(noise_per_unit(0.75, 1), 3), round(noise_per_unit(0.75, 1, 3), 3)
    (3.771, 5.657)
    """
    return math.sqrt(2) * rows_per_unit * statistics / epsilon


def _side(counts: dict[float, float], noise: float, groups: int, weight: float
          ) -> tuple[float, float, float]:
    """One side (labels as magnitudes): the candidate edge of least error, that error and
    the side's mass (see ``ClampChoice``); (0, 0, 0) with no bin."""
    if not counts:
        return 0.0, 0.0, 0.0
    bins = {edge: n * weight for edge, n in {**_tail(counts), **counts}.items()}

    def error(bound: float) -> float:
        bias = sum(n * (0.75 * min(edge, 2.0 ** 63) - bound)
                   for edge, n in bins.items() if edge > bound)
        return (bias / groups) ** 2 + (noise * bound) ** 2

    bound = min(sorted(bins), key=lambda b: (error(b), b))
    mass = sum(n * 0.75 * min(edge, 2.0 ** 63) for edge, n in bins.items())
    return bound, error(bound), mass


def _tail(counts: dict[float, float]) -> dict[float, float]:
    """Rows in the bins beyond the last released one: partition selection drops thin bins,
    and the tail it hides is where a sum's clamping bias is. On log2 of the values the
    released bins fall from their mode (n_mode at bin m) to the last one (n_top at t) as a
    half-normal: n_k = n_mode·exp(-(k - m)² / 2σ²), σ = (t - m) / √(2 ln(n_mode / n_top)),
    at most ``TAIL_SPREAD`` bins (and that when the last bin is the mode); or, where that
    falls faster, as a Pareto tail: n_k = n_top·f^(k - t), f the fall from the next-to-last
    released bin to the last, at most ``TAIL_FALL``. Extrapolated while a bin holds
    ``TAIL_FLOOR`` rows, up to 2^63; the bin of zeros and the open top bin are left out of
    the fit.

    >>> {round(math.log2(k)): round(n, 1) for k, n in _tail({2.0**10: 100, 2.0**11: 50}).items()}
    {12: 12.5, 13: 3.1, 14: 0.8}
    >>> heavy = {2.0**k: n for k, n in zip(range(8, 13), (4872, 4217, 2468, 856, 206))}
    >>> {round(math.log2(k)): round(n) for k, n in _tail(heavy).items()}
    {13: 50, 14: 12, 15: 3, 16: 1}
    """
    logs = {round(math.log2(edge)): n for edge, n in counts.items()
            if 2.0 ** POWERS[0] <= edge <= 2.0 ** POWERS[-1] and n > 0}
    if not logs:
        return {}
    mode, top = max(logs, key=lambda k: (logs[k], k)), max(logs)
    ratio = logs[mode] / logs[top]
    spread = TAIL_SPREAD if top == mode or ratio <= 1 else min(
        (top - mode) / math.sqrt(2 * math.log(ratio)), TAIL_SPREAD)
    fall = TAIL_FALL
    if top - 1 in logs and logs[top - 1] > logs[top]:
        fall = min(logs[top] / logs[top - 1], TAIL_FALL)
    tail = {}
    for k in range(top + 1, POWERS[-1] + 1):
        n = max(logs[mode] * math.exp(-((k - mode) ** 2) / (2 * spread ** 2)),
                logs[top] * fall ** (k - top))
        if n < TAIL_FLOOR:
            break
        tail[2.0 ** k] = n
    return tail

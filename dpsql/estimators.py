"""One estimator per aggregate kind: its released value, its interval, its description.

An aggregate is released from noisy statistics (``NoisyGroups``): a count or a sum is one
noisy statistic; AVG is a centre plus a noisy centred sum over a noisy count; VAR and
STDDEV come from three noisy sums (``dpsql.variance``); a quantile is a bucket midpoint
drawn by the exponential mechanism. Each ``Estimator`` knows, for its kinds, how to turn the
noisy statistics into the value (``value``), how wide the noise makes it (``interval``,
which reads only noisy values and public noise parameters, so it costs nothing), and what to
say about it in ``explain()`` (``describe``). Release, Result and Explanation ask
``estimator(agg)`` instead of switching on the aggregate's kind.

>>> estimator_of("avg").__class__.__name__, estimator_of("count_star").__class__.__name__
('Average', 'Count')
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa

from dpsql.analysis.sensitivity import normalised_norms
from dpsql.covariance import COVARIANCE_KINDS, pair_of, role_values
from dpsql.errors import InternalError
from dpsql.mechanisms import Noise
from dpsql.plan import PAIR_ROLES, WEIGHT_SCALE, Aggregate, PrivacyPlan
from dpsql.variance import SPREAD_KINDS, spread_of

AVG_COUNT_FLOOR = 1.0
"""AVG divides by max(noisy count, 1) so that an empty or tiny group stays finite."""


@dataclass(frozen=True)
class NoisyGroups:
    """Released groups: public key values, noisy statistics and quantiles, row-aligned.

    ``quantiles`` maps a quantile aggregate's name to its released values (bucket midpoints),
    and ``interval_name(name, side)`` to the released ends of its interval, if asked for.
    ``scales`` maps a statistic made consistent over grouping sets (``dpsql.consistency``)
    to its std per row over its plan's noise std: its intervals scale by it, and it is
    released as fitted (not rounded, not moved to 0), so that the levels add up.
    """

    keys: pa.Table
    stats: dict[str, np.ndarray]
    quantiles: dict[str, np.ndarray] = field(default_factory=dict)
    scales: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def num_rows(self) -> int:
        return self.keys.num_rows

    def halfwidth(self, plan: PrivacyPlan, name: str, level: float,
                  rows: np.ndarray) -> np.ndarray | float:
        """The ``level`` half-width of statistic ``name`` in each of ``rows``: its noise's,
        times its scale if it was made consistent."""
        half = plan.noise_for(name).ci_halfwidth(level)
        return half * self.scales[name][rows] if name in self.scales else half


def interval_name(aggregate: str, side: str) -> str:
    """Where a quantile's released interval end is kept in ``NoisyGroups.quantiles``."""
    return f"{aggregate}__{side}"


Bounds = tuple[np.ndarray | pa.Array, np.ndarray | pa.Array]


class Estimator:
    """A count or a sum: one noisy statistic is the value (the base case)."""

    kinds: ClassVar[tuple[str, ...]] = ("sum",)

    def value(self, plan: PrivacyPlan, agg: Aggregate, groups: NoisyGroups) -> np.ndarray:
        values = groups.stats[agg.stats[0]]
        return values if agg.stats[0] in groups.scales else self.signed(agg, values)

    def interval(self, plan: PrivacyPlan, agg: Aggregate, groups: NoisyGroups,
                 rows: np.ndarray, values: np.ndarray, level: float) -> Bounds:
        """``level`` bounds per released row (``rows``: each row's group; ``values``: the
        released column), covering the bounded value."""
        half = groups.halfwidth(plan, agg.stats[-1], level, rows)
        return self.signed(agg, values - half), self.signed(agg, values + half)

    def signed(self, agg: Aggregate, values: np.ndarray) -> np.ndarray:
        """A sum of values that are never negative is never negative (nor positive, of
        values never positive): noisy values past 0 are moved to 0. Post-processing, so
        free; it only lowers the error, and an interval so moved still covers the bounded
        value whenever the unmoved one did (the bounded value is on the same side of 0).

        >>> Estimator().signed(Aggregate("s", "sum", "SUM(x)", ("s0",), 0, 5), np.array([-2., 3.]))
        array([0., 3.])
        """
        if agg.lo is not None and agg.lo >= 0:
            return np.maximum(values, 0)
        if agg.hi is not None and agg.hi <= 0:
            return np.minimum(values, 0)
        return values

    def noise(self, plan: PrivacyPlan, agg: Aggregate) -> Noise:
        """The noise of the statistic that carries the value (a ratio: its last sum)."""
        return plan.noise_for(agg.stats[-1])

    def describe(self, plan: PrivacyPlan, agg: Aggregate) -> dict[str, Any]:
        """``explain()``'s entry: mechanism, sensitivities in output units, noise."""
        noise = self.noise(plan, agg)
        return {**_sensitivity(plan, agg.stats[-1]), "aggregate": agg.sql,
                "mechanism": plan.noise.kind, "noise_std": noise.std,
                "ci95_halfwidth": noise.ci_halfwidth(0.95),
                "bounds": None if agg.lo is None else [agg.lo, agg.hi],
                "statistics": [statistic_entry(plan, name) for name in agg.stats],
                "note": None}


class Count(Estimator):
    """Counts are released as whole numbers (the nearest: they may be kept in quanta), never
    below 0."""

    kinds = ("count_star", "count", "count_units", "count_distinct", "regr_count")

    def value(self, plan: PrivacyPlan, agg: Aggregate, groups: NoisyGroups) -> np.ndarray:
        if agg.stats[0] in groups.scales:
            return groups.stats[agg.stats[0]]
        return np.rint(self.signed(agg, groups.stats[agg.stats[0]])).astype(np.int64)

    def signed(self, agg: Aggregate, values: np.ndarray) -> np.ndarray:
        """Counts are never negative."""
        return np.maximum(values, 0)


class SumOfMean(Estimator):
    """SUM(x) asked beside a count of x (AVG(x)'s, COUNT(x), or COUNT(*) for a column
    declared NOT NULL): centre × that noisy count + a noisy centred sum
    (``_Collector.finish``; post-processing of the two, so free)."""

    kinds = ()

    def value(self, plan: PrivacyPlan, agg: Aggregate, groups: NoisyGroups) -> np.ndarray:
        count, centered = (groups.stats[s] for s in agg.stats)
        total = plan.stat(agg.stats[1]).center * count + centered
        return total if set(agg.stats) <= groups.scales.keys() else self.signed(agg, total)

    def interval(self, plan: PrivacyPlan, agg: Aggregate, groups: NoisyGroups,
                 rows: np.ndarray, values: np.ndarray, level: float) -> Bounds:
        """Bonferroni over the two noises: each covers at 1 − (1 − level)/2."""
        count, centered = agg.stats
        each = 1 - (1 - level) / 2
        half = (abs(plan.stat(centered).center) * groups.halfwidth(plan, count, each, rows)
                + groups.halfwidth(plan, centered, each, rows))
        return self.signed(agg, values - half), self.signed(agg, values + half)

    def halfwidth(self, plan: PrivacyPlan, agg: Aggregate, level: float) -> float:
        count, centered = agg.stats
        each = 1 - (1 - level) / 2
        center = abs(plan.stat(centered).center)
        return (center * plan.noise_for(count).ci_halfwidth(each)
                + plan.noise_for(centered).ci_halfwidth(each))

    def describe(self, plan: PrivacyPlan, agg: Aggregate) -> dict[str, Any]:
        """The two noises are independent: std = √(std_S² + centre² · std_N²)."""
        count, centered = agg.stats
        center = plan.stat(centered).center
        std = math.hypot(plan.noise_for(centered).std, center * plan.noise_for(count).std)
        n, s = _sensitivity(plan, count), _sensitivity(plan, centered)
        return {**super().describe(plan, agg), **{k: abs(center) * n[k] + s[k] for k in s},
                "noise_std": std,
                "ci95_halfwidth": self.halfwidth(plan, agg, 0.95),
                "note": f"SUM = {center:g} × COUNT + centred sum, from the count of its "
                "argument the query draws anyway (free); the centred sum moves by at most "
                "half the range"}


class Ratio(Estimator):
    """An aggregate computed from several noisy sums: its error depends on the count."""

    note: ClassVar[str] = ""

    def describe(self, plan: PrivacyPlan, agg: Aggregate) -> dict[str, Any]:
        entry = super().describe(plan, agg)
        std = entry["noise_std"]
        return {**entry, "noise_std": None, "ci95_halfwidth": None,
                "note": f"{self.note}; noise on the last sum has std {std:.6g}"}


class Average(Ratio):
    """AVG = centre + noisy centred sum / max(noisy count, 1), clipped to the bounds
    (REGR_AVGX and REGR_AVGY are AVGs over the rows where both arguments are present)."""

    kinds = ("avg", "regr_avgx", "regr_avgy")
    note = "AVG = centre + noisy centred sum / noisy count: its error depends on the count"

    def value(self, plan: PrivacyPlan, agg: Aggregate, groups: NoisyGroups) -> np.ndarray:
        count, centered = (groups.stats[s] for s in agg.stats)
        center = plan.stat(agg.stats[1]).center
        return np.clip(center + centered / np.maximum(count, AVG_COUNT_FLOOR), agg.lo, agg.hi)

    def interval(self, plan: PrivacyPlan, agg: Aggregate, groups: NoisyGroups,
                 rows: np.ndarray, values: np.ndarray, level: float) -> Bounds:
        """Bonferroni over the two noisy statistics, then the extreme corners of
        centre + S/N over the box (S/N is monotone in each for N > 0)."""
        count_stat, sum_stat = agg.stats
        each = 1 - (1 - level) / 2
        count, total = groups.stats[count_stat][rows], groups.stats[sum_stat][rows]
        h_n = groups.halfwidth(plan, count_stat, each, rows)
        h_s = groups.halfwidth(plan, sum_stat, each, rows)
        n_lo = np.maximum(count - h_n, AVG_COUNT_FLOOR)
        n_hi = np.maximum(count + h_n, AVG_COUNT_FLOOR)
        corners = np.stack([(total + ds) / n for ds in (-h_s, h_s) for n in (n_lo, n_hi)])
        center = plan.stat(sum_stat).center
        return (np.clip(center + corners.min(axis=0), agg.lo, agg.hi),
                np.clip(center + corners.max(axis=0), agg.lo, agg.hi))


class Spread(Ratio):
    """VAR_POP, VAR_SAMP, STDDEV_POP, STDDEV_SAMP from N, S₁, S₂ (``dpsql.variance``)."""

    kinds = SPREAD_KINDS
    note = ("VAR/STDDEV from a noisy count, a noisy centred sum and a noisy centred sum of "
            "squared deviations (see statistics): the error depends on the count")

    def value(self, plan: PrivacyPlan, agg: Aggregate, groups: NoisyGroups) -> np.ndarray:
        count, centered, squares = (groups.stats[s] for s in agg.stats)
        return spread_of(plan, agg).value(agg.kind, count, centered, squares)

    def interval(self, plan: PrivacyPlan, agg: Aggregate, groups: NoisyGroups,
                 rows: np.ndarray, values: np.ndarray, level: float) -> Bounds:
        """Bonferroni over N, S₁, S₂ (each at 1 − (1 − level)/3), then the extremes of the
        estimator over that box (``dpsql.variance.Spread.interval``)."""
        each = 1 - (1 - level) / 3
        boxes = []
        for stat in agg.stats:
            noisy = groups.stats[stat][rows]
            half = plan.noise_for(stat).ci_halfwidth(each)
            boxes.append((noisy - half, noisy + half))
        return spread_of(plan, agg).interval(agg.kind, *boxes)


class Covariance(Ratio):
    """CORR, COVAR_POP/SAMP, REGR_SLOPE/INTERCEPT/R2/SXX/SYY/SXY from up to six noisy sums
    (``dpsql.covariance``); NaN where the value is NULL (an estimated variance of 0)."""

    kinds = COVARIANCE_KINDS
    note = ("from a noisy count and noisy centred sums of x, y, their squared deviations and "
            "the products of their deviations (see statistics): the error depends on the count")

    def value(self, plan: PrivacyPlan, agg: Aggregate, groups: NoisyGroups) -> np.ndarray:
        return pair_of(plan, agg).value(agg.kind, role_values(agg, groups.stats))

    def interval(self, plan: PrivacyPlan, agg: Aggregate, groups: NoisyGroups,
                 rows: np.ndarray, values: np.ndarray, level: float) -> Bounds:
        """A parametric bootstrap over the noise (``dpsql.covariance.Pair.interval``), also
        where the released value is NULL: it still bounds the bounded value."""
        noisy = {role: v[rows] for role, v in role_values(agg, groups.stats).items()}
        stds = {role: plan.noise_for(name).std
                for role, name in zip(PAIR_ROLES[agg.kind], agg.stats, strict=True)}
        return pair_of(plan, agg).interval(agg.kind, noisy, stds, plan.noise.kind, level)


class Quantile(Estimator):
    """A bucket midpoint drawn by the exponential mechanism; its interval is released only
    when the query asked for one (``quantile_ci=``: two more exponential mechanisms)."""

    kinds = ("quantile",)

    def value(self, plan: PrivacyPlan, agg: Aggregate, groups: NoisyGroups) -> np.ndarray:
        return groups.quantiles[agg.name]

    def interval(self, plan: PrivacyPlan, agg: Aggregate, groups: NoisyGroups,
                 rows: np.ndarray, values: np.ndarray, level: float) -> Bounds:
        spec = agg.quantile
        if spec.level is None or level > spec.level:
            missing = pa.nulls(len(values), pa.float64())
            return missing, missing
        return tuple(groups.quantiles[interval_name(agg.name, side)][rows]
                     for side in ("lower", "upper"))

    def describe(self, plan: PrivacyPlan, agg: Aggregate) -> dict[str, Any]:
        """Its ε share, buckets and rank sensitivity (in rows, like a COUNT's)."""
        mechanism, histogram = agg.quantile.mechanism, agg.quantile.histogram
        limits = plan.contribution
        c = limits.rows_per_group
        l1, l2 = normalised_norms(limits.groups_per_unit, c, limits.max_rows_per_unit)
        rows = mechanism.max_weight / WEIGHT_SCALE
        return {
            "aggregate": agg.sql,
            "mechanism": "exponential",
            "quantile": float(agg.quantile.q),
            "epsilon": mechanism.epsilon,
            "epsilon_per_group": mechanism.epsilon * c / rows,
            "buckets": histogram.buckets,
            "bucket_width": histogram.width,
            "l1_sensitivity": c * l1,
            "l2_sensitivity": c * l2,
            "linf_sensitivity": c,
            "noise_std": None,
            "ci95_halfwidth": None,
            "rank_error95": mechanism.rank_error(0.95, histogram.buckets) / WEIGHT_SCALE,
            "interval_level": agg.quantile.level,
            "bounds": [agg.lo, agg.hi],
            "note": "exponential mechanism over equal buckets of the bounds; releases a "
            "bucket's midpoint. Sensitivities are in ranks (rows); with 95% probability the "
            "released bucket is within rank_error95 rows of the true quantile's rank; a value "
            "interval needs quantile_ci= (two more releases, see Result.ci)",
        }


ESTIMATORS: dict[str, Estimator] = {
    kind: cls() for cls in (Estimator, Count, Average, Spread, Covariance, Quantile)
    for kind in cls.kinds}


def estimator_of(kind: str) -> Estimator:
    """The estimator of an aggregate kind (``Aggregate.kind``)."""
    try:
        return ESTIMATORS[kind]
    except KeyError:
        raise InternalError(f"no estimator for aggregate kind {kind!r}") from None


SUM_OF_MEAN = SumOfMean()


def estimator(agg: Aggregate) -> Estimator:
    if agg.kind == "sum" and len(agg.stats) == 2:
        return SUM_OF_MEAN
    return estimator_of(agg.kind)


def aggregate_values(plan: PrivacyPlan, groups: NoisyGroups) -> dict[str, np.ndarray]:
    """Each aggregate's released value per group."""
    return {agg.name: estimator(agg).value(plan, agg, groups) for agg in plan.aggregates}


def _sensitivity(plan: PrivacyPlan, name: str) -> dict[str, float]:
    """A statistic's sensitivities in output units (sums are computed in quanta)."""
    statistic, quantum = plan.sensitivity(name), plan.stat(name).quantum
    return {"l1_sensitivity": statistic.bound * statistic.l1 * quantum,
            "l2_sensitivity": statistic.bound * statistic.l2 * quantum,
            "linf_sensitivity": statistic.bound * quantum}


def statistic_entry(plan: PrivacyPlan, name: str) -> dict[str, Any]:
    """One noisy statistic: its kind and sensitivities in output units, its noise std, and
    the rows per unit and group it keeps when they are its own (``StatSpec.rows``)."""
    spec = plan.stat(name)
    own = {} if spec.rows is None else {"rows_per_unit_and_group": spec.rows}
    return {"name": name, "kind": spec.kind, "expression": None if spec.expr is None
            else spec.expr.sql(dialect="duckdb"), **_sensitivity(plan, name),
            "noise_std": plan.noise_for(name).std, **own}

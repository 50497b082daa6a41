"""CORR, COVAR_POP/COVAR_SAMP and REGR_* from noisy bounded sums (post-processing).

``AGG(y, x)`` reads the rows where both arguments are present, x clamped to [lo_x, hi_x] and
y to [lo_y, hi_y], with middles m and half-widths h. The bounded query computes per group
(``dpsql.plan.PAIR_ROLES`` says which an aggregate needs; each is noised like any sum):

- N, the count of those rows (per row 1),
- Sx = Σ (x − cx), Sy = Σ (y − cy), centred sums (per row at most hx, hy; c ≈ m),
- Sxx = Σ ((x − mx)² − cxx), Syy likewise, centred sums of squared deviations (per row at
  most hx²/2; cxx ≈ hx²/2), as for VAR (``dpsql.variance``),
- Sxy = Σ ((x − mx)(y − my) − cxy), the centred sum of products of deviations: each product
  lies in [−hx·hy, hx·hy], so one row adds at most hx·hy (cxy = 0, the middle).

From the noisy values, with n̂ = max(N, 1), the population moments about the means are

    u   = clip(cx − mx + Sx/n̂, −hx, hx)                  (mean of x − mx; v likewise)
    Cxx = clip(cxx + Sxx/n̂ − u², 0, hx²)                  (Cyy likewise)
    Cxy = clip(cxy + Sxy/n̂ − u·v, −hx·hy, hx·hy), and |Cxy| ≤ √(Cxx·Cyy) when both are read

and the aggregates are PostgreSQL's functions of them ("Aggregate Functions for Statistics",
PostgreSQL 16 manual §9.21, Table 9.62; Sxx there is N·Cxx):

    COVAR_POP = Cxy          COVAR_SAMP = Cxy·ñ/(ñ − 1), ñ = max(N, 2)
    CORR      = Cxy/√(Cxx·Cyy)                  NULL if Cxx = 0 or Cyy = 0
    REGR_SLOPE = Cxy/Cxx     REGR_INTERCEPT = (my + v) − slope·(mx + u)     NULL if Cxx = 0
    REGR_R2   = CORR²        NULL if Cxx = 0, 1 if Cyy = 0
    REGR_SXX  = n̂·Cxx        REGR_SYY = n̂·Cyy       REGR_SXY = n̂·Cxy

(REGR_COUNT is N, REGR_AVGX and REGR_AVGY are AVGs: ``dpsql.estimators``.) A NaN here is
released as NULL. Everything reads only noisy values and public constants.

>>> import numpy as np
>>> pair = Pair(x=(0.0, 10.0), y=(0.0, 10.0), centers={"sx": 5.0, "sy": 5.0, "sxx": 12.5,
...             "syy": 12.5, "sxy": 0.0})
>>> # pairs (0, 0), (10, 10): N = 2, Sx = Sy = 0, Sxx = Syy = 2·25 − 2·12.5 = 25, Sxy = 50
>>> stats = {k: np.array([v]) for k, v in
...          {"n": 2.0, "sx": 0.0, "sy": 0.0, "sxx": 25.0, "syy": 25.0, "sxy": 50.0}.items()}
>>> [float(pair.value(kind, stats)[0]) for kind in ("corr", "covar_pop", "regr_slope")]
[1.0, 25.0, 1.0]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from dpsql.plan import PAIR_ROLES, Aggregate, PrivacyPlan

COUNT_FLOOR = 1.0
SAMPLE_FLOOR = 2.0
DRAWS = 2000
"""Parametric bootstrap draws per group for an interval (``Pair.interval``)."""
CHUNK = 256
"""Groups per bootstrap batch: DRAWS × CHUNK values per statistic at a time."""

COVARIANCE_KINDS = ("corr", "covar_pop", "covar_samp", "regr_slope", "regr_intercept",
                    "regr_r2", "regr_sxx", "regr_syy", "regr_sxy")
"""The aggregates computed here (REGR_COUNT is a count, REGR_AVGX/AVGY are averages)."""

RANGES = {"corr": (-1.0, 1.0), "regr_r2": (0.0, 1.0)}
"""The aggregates whose every value lies in a fixed range (an interval is clipped to it)."""

Stats = Mapping[str, np.ndarray]


@dataclass(frozen=True)
class Pair:
    """Public constants of one aggregate of (y, x): the bounds each sum reads (None when
    none does) and the centres of its centred sums, by role (``PAIR_ROLES``)."""

    x: tuple[float, float] | None
    y: tuple[float, float] | None
    centers: Mapping[str, float]

    def _mean(self, stats: Stats, role: str, bounds: tuple[float, float]) -> np.ndarray:
        """The noisy mean of the deviations from the middle of ``bounds``, clipped."""
        middle, half = (bounds[0] + bounds[1]) / 2, (bounds[1] - bounds[0]) / 2
        n = np.maximum(stats["n"], COUNT_FLOOR)
        return np.clip(self.centers[role] - middle + stats[role] / n, -half, half)

    def _spread(self, stats: Stats, role: str, mean: np.ndarray,
                bounds: tuple[float, float]) -> np.ndarray:
        """Cxx (or Cyy): the mean squared deviation less the squared mean, clipped."""
        n = np.maximum(stats["n"], COUNT_FLOOR)
        most = ((bounds[1] - bounds[0]) / 2) ** 2
        return np.clip(self.centers[role] + stats[role] / n - mean**2, 0.0, most)

    def moments(self, stats: Stats, *, clip: bool = True) -> dict[str, np.ndarray]:
        """u, v, Cxx, Cyy, Cxy: those the statistics in ``stats`` give (with ``clip=False``,
        Cxy is not held to √(Cxx·Cyy))."""
        out = {}
        if "sx" in stats:
            out["u"] = self._mean(stats, "sx", self.x)
        if "sy" in stats:
            out["v"] = self._mean(stats, "sy", self.y)
        if "sxx" in stats:
            out["cxx"] = self._spread(stats, "sxx", out["u"], self.x)
        if "syy" in stats:
            out["cyy"] = self._spread(stats, "syy", out["v"], self.y)
        if "sxy" in stats:
            out["cxy"] = self._product(stats, out, clip)
        return out

    def _product(self, stats: Stats, moments: Mapping[str, np.ndarray],
                 clip: bool) -> np.ndarray:
        n = np.maximum(stats["n"], COUNT_FLOOR)
        most = (self.x[1] - self.x[0]) / 2 * ((self.y[1] - self.y[0]) / 2)
        cxy = self.centers["sxy"] + stats["sxy"] / n - moments["u"] * moments["v"]
        if clip and "cxx" in moments and "cyy" in moments:
            most = np.minimum(most, np.sqrt(moments["cxx"] * moments["cyy"]))
        return np.clip(cxy, -most, most)

    def value(self, kind: str, stats: Stats, *, clip: bool = True) -> np.ndarray:
        """The released value of ``kind`` (``COVARIANCE_KINDS``); NaN where it is NULL.
        ``clip=False`` leaves CORR and REGR_R2 unclipped (for the bootstrap)."""
        m = self.moments(stats, clip=clip)
        low, high = RANGES.get(kind, (-np.inf, np.inf)) if clip else (-np.inf, np.inf)
        n = np.maximum(stats["n"], COUNT_FLOOR)
        with np.errstate(divide="ignore", invalid="ignore"):
            if kind == "covar_pop":
                return m["cxy"]
            if kind == "covar_samp":
                sample = np.maximum(stats["n"], SAMPLE_FLOOR)
                return m["cxy"] * sample / (sample - 1)
            if kind in ("regr_sxx", "regr_syy", "regr_sxy"):
                return n * m[{"regr_sxx": "cxx", "regr_syy": "cyy"}.get(kind, "cxy")]
            if kind == "corr":
                return np.where(m["cxx"] * m["cyy"] > 0, np.clip(
                    m["cxy"] / np.sqrt(m["cxx"] * m["cyy"]), low, high), np.nan)
            if kind == "regr_r2":
                r2 = np.clip(m["cxy"] ** 2 / (m["cxx"] * m["cyy"]), low, high)
                return np.where(m["cxx"] > 0, np.where(m["cyy"] > 0, r2, 1.0), np.nan)
            slope = np.where(m["cxx"] > 0, m["cxy"] / m["cxx"], np.nan)
            if kind == "regr_slope":
                return slope
            mx, my = (sum(self.x) / 2, sum(self.y) / 2)
            return (my + m["v"]) - slope * (mx + m["u"])

    def interval(self, kind: str, stats: Stats, stds: Mapping[str, float], noise: str,
                 level: float) -> tuple[np.ndarray, np.ndarray]:
        """A ``level`` interval per group by a parametric bootstrap over the noise.

        Each statistic's noise is known (its kind and std, public): draw it ``DRAWS`` times
        around the noisy statistics (continuous Laplace or Gaussian of the same std as the
        discrete noise), compute the estimator on each draw, and take the (1 ∓ level)/2
        quantiles q₋, q₊ (the draws nearest outside them). The interval is the union of the
        percentile interval [q₋, q₊] and the basic one [2θ̂ − q₊, 2θ̂ − q₋], θ̂ the released
        value (Davison & Hinkley, "Bootstrap Methods and their Application", 1997, §5.2–5.3):
        the percentile one alone under-covered CORR when the noise is large against the
        spread (90 % at 95 %), as the estimator's bias then leans one way; and the draws
        are not clipped to [−1, 1] (clipping flattens them into a point at ±1), only the
        interval is. A NULL released value still gets its interval (the percentile one). A
        draw where the estimator is NULL counts as −∞ for the lower end and +∞ for the upper
        one, so an undefined draw only widens the interval (to at most the range of CORR or
        REGR_R2, ``RANGES``).
        Coverage is approximate (the estimator is not linear): ``tests/test_covariance.py``
        measures it by simulation. Deterministic (a fixed seed): post-processing of released
        values, so any randomness is free, and ``ci()`` gives the same answer each time.
        """
        rng = np.random.default_rng(0)
        groups = len(stats["n"])
        lower, upper = np.empty(groups), np.empty(groups)
        for start in range(0, groups, CHUNK):
            part = slice(start, min(start + CHUNK, groups))
            drawn = {role: stats[role][part] + _noise(rng, noise, stds[role],
                                                      (DRAWS, part.stop - part.start))
                     for role in stats}
            values = self.value(kind, drawn, clip=False)
            alpha = (1 - level) / 2
            low = np.quantile(np.where(np.isnan(values), -np.inf, values), alpha, axis=0,
                              method="lower")
            high = np.quantile(np.where(np.isnan(values), np.inf, values), 1 - alpha, axis=0,
                               method="higher")
            released = self.value(kind, {role: stats[role][part] for role in stats})
            lower[part] = np.fmin(low, 2 * released - high)  # fmin: a NULL value adds nothing
            upper[part] = np.fmax(high, 2 * released - low)
        return np.clip(lower, *RANGES.get(kind, (-np.inf, np.inf))), \
            np.clip(upper, *RANGES.get(kind, (-np.inf, np.inf)))


def _noise(rng: np.random.Generator, kind: str, std: float, shape: tuple[int, int]
           ) -> np.ndarray:
    """Continuous noise of the given std: Laplace (scale std/√2) or Gaussian."""
    if kind == "laplace":
        return rng.laplace(0.0, std / np.sqrt(2), shape)
    return rng.normal(0.0, std, shape)


def pair_of(plan: PrivacyPlan, agg: Aggregate) -> Pair:
    """The public constants of an aggregate of (y, x) (its stats follow ``PAIR_ROLES``)."""
    names = dict(zip(PAIR_ROLES[agg.kind], agg.stats, strict=True))
    specs = {role: plan.stat(name) for role, name in names.items()}
    x = (specs["sx"].lo, specs["sx"].hi) if "sx" in specs else None
    y = (specs["sy"].lo, specs["sy"].hi) if "sy" in specs else None
    return Pair(x=x, y=y, centers={role: spec.center for role, spec in specs.items()})


def role_values(agg: Aggregate, values: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The noisy statistics of ``agg`` by role."""
    return {role: values[name] for role, name in zip(PAIR_ROLES[agg.kind], agg.stats,
                                                        strict=True)}

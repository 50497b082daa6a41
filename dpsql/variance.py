"""VAR_POP/VAR_SAMP/STDDEV_POP/STDDEV_SAMP from three noisy bounded sums (post-processing).

For values x clamped to [lo, hi], with m = (lo + hi)/2 and h = (hi − lo)/2, the bounded query
computes three statistics per group, each with its own sensitivity:

- N, the count of non-NULL values (per row 1),
- S₁ = Σ (x − c₁), a centred sum of x (per row at most h; c₁ ≈ m on the sum's grid),
- S₂ = Σ ((x − m)² − c₂), a centred sum of squared deviations, which lie in [0, h²]
  (per row at most h²/2; c₂ ≈ h²/2).

Centring both sums makes their noise independent of where [lo, hi] sits (AVG's trick), and
squaring deviations from m rather than x keeps S₂'s bound at h²/2 instead of max(lo², hi²).
From the noisy N, S₁, S₂ (n̂ = max(N, 1)):

    mean − m = c₁ − m + S₁/n̂        E(x − m)² = c₂ + S₂/n̂
    VAR_POP  = clip(E(x − m)² − (mean − m)², 0, h²)      (h² = (hi − lo)²/4, the largest
                                                          variance of values in [lo, hi])
    VAR_SAMP = VAR_POP · ñ/(ñ − 1) with ñ = max(N, 2);   STDDEV_* = √VAR_*

Everything here reads only noisy values and public bounds.

>>> import numpy as np
>>> spread = Spread(lo=0.0, hi=10.0, mean_center=5.0, square_center=12.5)
>>> # 4 values 0, 0, 10, 10: N = 4, S₁ = 0, S₂ = 4·25 − 4·12.5 = 50 → variance 25
>>> float(spread.var_pop(np.array([4.0]), np.array([0.0]), np.array([50.0]))[0])
25.0
>>> float(spread.value("var_samp", np.array([4.0]), np.array([0.0]), np.array([50.0]))[0])
33.333333333333336
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpsql.plan import Aggregate, PrivacyPlan

COUNT_FLOOR = 1.0
SAMPLE_FLOOR = 2.0


@dataclass(frozen=True)
class Spread:
    """Public constants of one variance: the bounds and the two sums' centres."""

    lo: float
    hi: float
    mean_center: float
    square_center: float

    @property
    def max_variance(self) -> float:
        return ((self.hi - self.lo) / 2) ** 2

    def _raw(self, n: np.ndarray, s1: np.ndarray, s2: np.ndarray) -> np.ndarray:
        n = np.maximum(n, COUNT_FLOOR)
        shift = self.mean_center - (self.lo + self.hi) / 2 + s1 / n
        return self.square_center + s2 / n - shift**2

    def var_pop(self, n: np.ndarray, s1: np.ndarray, s2: np.ndarray) -> np.ndarray:
        return np.clip(self._raw(n, s1, s2), 0.0, self.max_variance)

    def value(self, kind: str, n: np.ndarray, s1: np.ndarray, s2: np.ndarray) -> np.ndarray:
        """The released value of ``kind`` (var_pop, var_samp, stddev_pop, stddev_samp)."""
        var = self.var_pop(n, s1, s2)
        if kind.endswith("samp"):
            m = np.maximum(n, SAMPLE_FLOOR)
            var = var * m / (m - 1)
        return np.sqrt(var) if kind.startswith("stddev") else var

    def interval(self, kind: str, n: tuple[np.ndarray, np.ndarray],
                 s1: tuple[np.ndarray, np.ndarray], s2: tuple[np.ndarray, np.ndarray]
                 ) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper ends of ``kind`` over the box n × S₁ × S₂ ((low, high) pairs).

        Before clipping, VAR_POP = c₂ + S₂/n − r² with r = c₁ − m + S₁/n. By interval
        arithmetic over the box (n ≥ 1): S₂/n lies between its corner values, and r in
        R = c₁ − m + [min, max of S₁/n at the corners], so r² lies in [dist(0, R)², max|R|²].
        If the true statistics lie in the box, the true bounded value lies in the interval
        (clipping, the sample factor ñ/(ñ − 1) and the square root are monotone).
        """
        n_lo, n_hi = np.maximum(n[0], COUNT_FLOOR), np.maximum(n[1], COUNT_FLOOR)
        offset = self.mean_center - (self.lo + self.hi) / 2
        means = [offset + a / b for a in s1 for b in (n_lo, n_hi)]
        r_lo, r_hi = np.minimum.reduce(means), np.maximum.reduce(means)
        near = np.where((r_lo <= 0) & (r_hi >= 0), 0.0, np.minimum(np.abs(r_lo), np.abs(r_hi)))
        far = np.maximum(np.abs(r_lo), np.abs(r_hi))
        squares = [b / c for b in s2 for c in (n_lo, n_hi)]
        lower = self.square_center + np.minimum.reduce(squares) - far**2
        upper = self.square_center + np.maximum.reduce(squares) - near**2
        lower, upper = (np.clip(v, 0.0, self.max_variance) for v in (lower, upper))
        if kind.endswith("samp"):
            m_lo, m_hi = np.maximum(n_lo, SAMPLE_FLOOR), np.maximum(n_hi, SAMPLE_FLOOR)
            lower, upper = lower * m_hi / (m_hi - 1), upper * m_lo / (m_lo - 1)
        if kind.startswith("stddev"):
            return np.sqrt(lower), np.sqrt(upper)
        return lower, upper


SPREAD_KINDS = ("var_pop", "var_samp", "stddev_pop", "stddev_samp")


def spread_of(plan: PrivacyPlan, agg: Aggregate) -> Spread:
    """The public constants of a variance aggregate (its stats: N, S₁, S₂)."""
    _, mean, square = agg.stats
    return Spread(lo=agg.lo, hi=agg.hi, mean_center=plan.stat(mean).center,
                  square_center=plan.stat(square).center)

"""Per-cell noise: discrete Laplace or discrete Gaussian on the integers or a power-of-two grid.

A real value v is released as g·(round(v/g) + X) with X integer noise of parameter scale/g
(Google, "Secure noise generation", differential-privacy/common_docs).  Because g is a power
of two, v/g and the result are exact in binary floating point, and the output reveals nothing
beyond the noisy grid point.  Error summaries (std, intervals, tails) come from the exact
discrete pmf, or from a bound that never under-states the noise.

>>> n = Noise("laplace", 2.5, 2.0**-10)
>>> str(n)
'discrete laplace(t=2.5, grid=2^-10)'
>>> n.add_to(np.array([1.0]), Sampler(seed=1))[0] % 2.0**-10
np.float64(0.0)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import numpy as np

from dpsql.errors import InternalError
from dpsql.mechanisms.samplers import MAX_SCALE, MAX_SIGMA, Sampler
from dpsql.mechanisms.special import log_ndtr

GRID_STEPS = 2**20
MIN_GRID = 2.0**-13
MIN_GRID_SCALE = 2.0**-30
"""Smallest noise parameter in grid steps. The samplers draw 0 below it anyway (discrete
Laplace raises its scale to 2^-30; the discrete Gaussian rounds σ² up to ≥ 2^-26), so a
scale raised to it adds no noise, and keeps a huge ε's scale from underflowing to 0."""
EXACT_SUM_LIMIT = 2.0**12
SAFETY = 1e-12


def grid_granularity(scale: float) -> float:
    """Largest power of two ≤ scale·2⁻²⁰, but at least 2⁻¹³.

    2⁻²⁰ of the noise scale keeps the rounding error (≤ g/2) and the grid's effect on privacy
    (sensitivity inflated by g/bound, see :mod:`chooser`) below a millionth of the noise.  The
    floor 2⁻¹³ keeps every |v| ≤ 10¹² exactly representable: v/g < 10¹²·2¹³ < 2⁵³.

    >>> grid_granularity(1.0)
    0.0001220703125
    >>> grid_granularity(2.0**30)
    1024.0
    """
    if not math.isfinite(scale) or scale <= 0:
        raise InternalError(f"noise scale {scale!r} must be finite and > 0")
    _mantissa, exponent = math.frexp(scale)  # the power of two ≤ scale, then / 2²⁰ (exact)
    return max(MIN_GRID, math.ldexp(1.0, exponent - 1) / GRID_STEPS)


@dataclass(frozen=True)
class Noise:
    """Noise for one statistic: ``scale`` is t (Laplace) or σ (Gaussian) in output units."""

    kind: Literal["laplace", "gaussian"]
    scale: float
    granularity: float = 1.0

    def __post_init__(self) -> None:
        mantissa, _ = math.frexp(self.granularity)
        if self.kind not in ("laplace", "gaussian") or mantissa != 0.5:
            raise InternalError(f"invalid noise {self.kind!r} with grid {self.granularity!r}")
        if not math.isfinite(self.scale) or self.scale <= 0:
            raise InternalError(f"noise scale {self.scale!r} must be finite and > 0")

    def __str__(self) -> str:
        name = "t" if self.kind == "laplace" else "sigma"
        exponent = math.frexp(self.granularity)[1] - 1
        grid = "1" if exponent == 0 else f"2^{exponent}"
        return f"discrete {self.kind}({name}={self.scale:g}, grid={grid})"

    @property
    def grid_scale(self) -> float:
        """The integer noise's parameter: scale / granularity."""
        return self.scale / self.granularity

    @property
    def samplable(self) -> bool:
        """Whether the exact samplers accept this noise (≤ 2⁴⁰ steps, 2³⁰ for a Gaussian).

        >>> Noise("laplace", 2.0**41).samplable, Noise("laplace", 2.0**41, 2.0**20).samplable
        (False, True)
        """
        return self.grid_scale <= (MAX_SCALE if self.kind == "laplace" else MAX_SIGMA)

    @property
    def std(self) -> float:
        """Standard deviation in output units (exact; for σ/g > 2¹² the upper bound σ).

        Discrete Laplace(t): Var = 2p/(1 − p)², p = e^{−1/t}.  Discrete Gaussian: the pmf sum,
        and Var ≤ σ² always (Canonne, Kamath & Steinke 2020, §2: the discrete Gaussian is
        σ²-subgaussian).

        >>> round(Noise("laplace", 1.0).std, 4)
        1.357
        """
        t = self.grid_scale
        if self.kind == "laplace":
            p = math.exp(-1.0 / t)
            return self.granularity * math.sqrt(2.0 * p) / -math.expm1(-1.0 / t)
        if t > EXACT_SUM_LIMIT:
            return self.scale
        return self.granularity * math.sqrt(_dg_table(t)[1])

    def grid_tail(self, m: int) -> float:
        """P(X ≥ m) for the integer noise X, exact or an upper bound.

        Laplace: p^m/(1 + p) for m ≥ 1 (and 1 − p^{1−m}/(1 + p) below).  Gaussian with σ/g > 2¹²:
        P(X ≥ m) ≤ Q((m − 1)/σ) for m ≥ 1, since the normaliser is ≥ √(2π)σ (Poisson summation)
        and the terms decrease past m − 1.
        """
        t = self.grid_scale
        if self.kind == "laplace":
            log_p = -1.0 / t
            if m >= 1:
                return math.exp(m * log_p - math.log1p(math.exp(log_p)))
            return 1.0 - math.exp((1 - m) * log_p - math.log1p(math.exp(log_p)))
        if t <= EXACT_SUM_LIMIT:
            tails = _dg_table(t)[0]
            return 1.0 - float(tails[min(1 - m, tails.size - 1)]) if m <= 0 else float(
                tails[min(m, tails.size - 1)])
        if m >= 1:
            return math.exp(log_ndtr(-(m - 1) / t))
        return 1.0 - math.exp(log_ndtr(-(1 - m) / t))

    def tail(self, threshold: float) -> float:
        """P(noise ≥ threshold) in output units (exact or an upper bound).

        >>> round(Noise("laplace", 1.0).tail(1.0), 6)  # e^-1 / (1 + e^-1)
        0.268941
        """
        return self.grid_tail(math.ceil(threshold / self.granularity))

    def ci_halfwidth(self, level: float) -> float:
        """Smallest h (a multiple of the grid) with P(|noise| > h) ≤ 1 − level.

        P(|X| > m) = 2·P(X ≥ m + 1) by symmetry; the search uses the exact or upper-bounded
        tail, so the interval never under-covers.

        >>> Noise("laplace", 1.0).ci_halfwidth(0.95)
        3.0
        """
        if not 0 < level < 1:
            raise InternalError(f"confidence level {level!r} must be in (0, 1)")
        target = (1.0 - level) * (1.0 - SAFETY)
        m = least_integer(lambda k: 2.0 * self.grid_tail(k + 1) <= target, 0)
        return max(m, 0) * self.granularity

    def add_to(self, values: np.ndarray, sampler: Sampler) -> np.ndarray:
        """Round each value to the grid and add grid × integer noise; float64 result.

        Values are first limited to ±2⁵² grid steps and the noisy result to ±(2⁵³ − 1), so
        that every released value is exactly a multiple of the grid. Both are clamps of a
        number to a fixed range — 1-Lipschitz before the noise (the sensitivity is
        unchanged), post-processing after it — so a sum too large for its grid (a float sum
        of millions of rows at a huge ε) is released clamped rather than failing: an error
        there would depend on the data after the query was charged.

        >>> Noise("gaussian", 1e-9).add_to(np.array([2.4, -1.6]), Sampler(seed=0))
        array([ 2., -2.])
        """
        values = np.asarray(values, dtype=np.float64)
        if not np.all(np.isfinite(values)):
            raise InternalError("a statistic to be noised is NaN or infinite")
        steps = np.clip(np.rint(values / self.granularity), -2.0**52, 2.0**52)
        size = steps.size
        draw = sampler.discrete_laplace if self.kind == "laplace" else sampler.discrete_gaussian
        noisy = steps.ravel() + draw(self.grid_scale, size).astype(np.float64)
        noisy = np.clip(noisy, -(2.0**53 - 1), 2.0**53 - 1)
        return (noisy * self.granularity).reshape(steps.shape)


def least_integer(ok: Callable[[int], bool], guess: int) -> int:
    """Smallest integer m with ``ok(m)``, for ``ok`` monotone (False below, True above).

    >>> least_integer(lambda m: m * m >= 50 and m > 0, 1)
    8
    """
    step = 1
    if ok(guess):
        hi, lo = guess, guess - 1
        while ok(lo):
            hi, lo, step = lo, lo - step, step * 2
    else:
        lo, hi = guess, guess + 1
        while not ok(hi):
            lo, hi, step = hi, hi + step, step * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


@lru_cache(maxsize=64)
def _dg_table(sigma: float) -> tuple[np.ndarray, float]:
    """(tails, variance) of N_Z(0, σ²): tails[k] = P(X ≥ k) for 0 ≤ k ≤ ⌈39σ⌉ + 2 (then 0)."""
    y = np.arange(math.ceil(39.0 * sigma) + 3, dtype=np.float64)
    with np.errstate(over="ignore", divide="ignore"):  # a tiny σ: z² = inf, weight 0
        z = y / sigma  # not y²/σ²: σ² underflows for a tiny σ
        w = np.exp(-0.5 * z * z)
    w[-1] = 0.0
    total = w[0] + 2.0 * w[1:].sum()
    tails = np.cumsum(w[::-1])[::-1] / total
    return tails, float(2.0 * (y * y * w).sum() / total)

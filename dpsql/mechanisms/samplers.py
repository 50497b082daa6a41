"""Exact discrete Laplace and discrete Gaussian samplers over the integers.

Algorithms of Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy"
(NeurIPS 2020): Alg. 1 (Bernoulli(exp(−γ)) from uniform integers), Alg. 2 (discrete
Laplace), Alg. 3 (discrete Gaussian by rejection from discrete Laplace).  Only integer
arithmetic touches the random bits — no floating-point inverse CDF (Mironov, CCS 2012).
Every step is vectorised: each loop works on the array of still-undecided draws.

Randomness comes from ``os.urandom`` unless a ``seed`` is given (tests only).

>>> s = Sampler(seed=7)
>>> s.private
False
>>> s.discrete_laplace(2.0, 5).dtype
dtype('int64')
"""

from __future__ import annotations

import math
import os
from fractions import Fraction

import numpy as np

from dpsql.errors import InternalError

_MIN_LAPLACE_SCALE = 2.0**-30
MAX_SCALE = 2.0**40
"""Largest noise parameter (in integer steps) the exact samplers accept."""
_LAPLACE_BITS = 56
MAX_SIGMA = 2.0**30
"""Largest discrete Gaussian σ (in integer steps): larger ones go on a grid."""
_WORD = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


class Sampler:
    """Source of exact integer noise; ``seed=None`` (the default) is the only private mode."""

    def __init__(self, seed: int | None = None) -> None:
        self._rng = None if seed is None else np.random.Generator(np.random.PCG64(seed))

    @property
    def private(self) -> bool:
        """True iff bits come from the OS CSPRNG (no seed)."""
        return self._rng is None

    def __repr__(self) -> str:
        return "Sampler(os.urandom)" if self.private else "Sampler(seeded, NOT private)"

    def _words(self, n: int, width: int = 64) -> np.ndarray:
        """``n`` uniform unsigned integers of ``width`` bits (8, 16, 32 or 64)."""
        nbytes = n * width // 8
        if self._rng is None:
            raw = os.urandom(nbytes)
        else:
            raw = self._rng.bit_generator.random_raw(-(-nbytes // 8)).tobytes()[:nbytes]
        return np.frombuffer(raw, dtype=_WORD[width])

    def _bits(self, n: int) -> np.ndarray:
        """``n`` fair coin flips as a bool array."""
        return np.unpackbits(self._words(-(-n // 8), 8))[:n].astype(bool)

    def below(self, n: int, size: int) -> np.ndarray:
        """``size`` exactly uniform integers in [0, n) (uint64), by rejection (no modulo bias).

        >>> Sampler(seed=1).below(6, 10_000).max()
        np.uint64(5)
        """
        if not 1 <= n <= 2**64:
            raise InternalError(f"uniform range {n} out of [1, 2^64]")
        bits = (n - 1).bit_length()
        if n & (n - 1) == 0:
            width = next(w for w in (8, 16, 32, 64) if bits <= w)
            return (self._words(size, width) & _WORD[width](n - 1)).astype(np.uint64)
        # Draw words 8+ bits wider than n, keep those below the largest multiple of n, and
        # reduce mod n: exactly uniform, with acceptance ≥ 1 − 2⁻⁸.
        width = next((w for w in (16, 32, 64) if bits + 8 <= w), 64)
        limit = _WORD[width]((2**width // n) * n - 1)
        out = np.empty(size, dtype=np.uint64)
        todo = np.arange(size)
        while todo.size:
            draw = self._words(todo.size, width)
            ok = draw <= limit
            out[todo[ok]] = draw[ok] % _WORD[width](n)
            todo = todo[~ok]
        return out

    def _bern_exp_frac(self, num: np.ndarray, den: int) -> np.ndarray:
        """Bernoulli(exp(−num/den)) for 0 ≤ num ≤ den (CKS Alg. 1, γ ≤ 1).

        K = 1; while Bernoulli(γ/K): K += 1; return K odd.  Bernoulli(γ/K) is drawn as
        Bernoulli(num/den) AND Bernoulli(1/K), which keeps every uniform below 2^64.
        """
        out = np.empty(num.size, dtype=bool)
        alive = np.arange(num.size)
        k = 1
        while alive.size:
            hit = self.below(den, alive.size) < num[alive]
            if k > 1:
                hit &= self.below(k, alive.size) == 0
            out[alive[~hit]] = k % 2 == 1
            alive = alive[hit]
            k += 1
        return out

    def _bern_exp_minus_one(self, size: int) -> np.ndarray:
        """Bernoulli(exp(−1)) (CKS Alg. 1 with γ = 1)."""
        return self._bern_exp_frac(np.ones(size, dtype=np.uint64), 1)

    def bernoulli_exp(self, whole: np.ndarray, num: np.ndarray, den: int) -> np.ndarray:
        """Bernoulli(exp(−(whole + num/den))): ``whole`` Bernoulli(e⁻¹) and one fraction."""
        out = self._bern_exp_frac(num, den)
        rounds = 0
        alive = np.flatnonzero(out & (whole > 0))
        while alive.size:
            rounds += 1
            keep = self._bern_exp_minus_one(alive.size)
            out[alive[~keep]] = False
            alive = alive[keep & (whole[alive] > rounds)]
        return out

    def _geometric(self, size: int) -> np.ndarray:
        """V with P(V = v) = (1 − e⁻¹)e^{−v}: count Bernoulli(e⁻¹) successes before a failure."""
        out = np.zeros(size, dtype=np.uint64)
        alive = np.arange(size)
        while alive.size:
            hit = self._bern_exp_minus_one(alive.size)
            alive = alive[hit]
            out[alive] += np.uint64(1)
        return out

    def _dlap(self, n: int, s: int, size: int) -> np.ndarray:
        """Discrete Laplace with scale n/s (CKS Alg. 2): P(y) ∝ exp(−|y|·s/n)."""
        out = np.empty(size, dtype=np.int64)
        filled = 0
        while filled < size:
            want = size - filled
            u = self.below(n, want)
            u = u[self._bern_exp_frac(u, n)]
            y = _shifted_quotient(u, self._geometric(u.size), n, s)
            negative = self._bits(y.size)
            keep = ~(negative & (y == 0))
            y = np.where(negative, -y, y)[keep][:want]
            out[filled:filled + y.size] = y
            filled += y.size
        return out

    def discrete_laplace(self, scale: float, size: int) -> np.ndarray:
        """``size`` exact draws with P(x) ∝ exp(−|x|/scale) on the integers.

        The scale is represented as 2^K/m with K ≤ 56 and m = ⌊2^K/scale⌋, i.e. rounded
        *up* by a relative 1/m ≤ 2⁻¹⁶ (≤ 2⁻³² for scale ≤ 2²⁴).  Scales below 2⁻³⁰ are raised
        to 2⁻³⁰ (the noise is then 0 except with probability < e^{−2³⁰}).

        >>> x = Sampler(seed=3).discrete_laplace(1.5, 100_000)
        >>> bool(abs(x.mean()) < 0.05)
        True
        """
        scale = max(_check_scale(scale), _MIN_LAPLACE_SCALE)
        bits = min(_LAPLACE_BITS, max(1, math.ceil(math.log2(scale)) + 32))
        m = math.floor(Fraction(2**bits) / Fraction(scale))
        return self._dlap(2**bits, m, size)

    def discrete_gaussian(self, sigma: float, size: int) -> np.ndarray:
        """``size`` exact draws with P(x) ∝ exp(−x²/(2σ²)) on the integers (CKS Alg. 3).

        With t = ⌊σ⌋ + 1, draw Y from discrete Laplace(t) and accept with probability
        exp(−(|Y| − σ²/t)²/(2σ²)).  σ² is rounded *up* to t·U/2^j with 2^j ≈ 2²⁶/t (relative
        error ≤ 2⁻²⁴ for σ ≥ 1, ≤ 2⁻²⁶/σ² below),
        which makes the exponent M²/D with M = 2^j|Y| − U and D = 2^{j+1}tU both below 2⁶³.

        >>> x = Sampler(seed=5).discrete_gaussian(3.0, 100_000)
        >>> bool(abs(x.var() - 9.0) < 0.2)
        True
        """
        sigma = _check_scale(sigma)
        if sigma > MAX_SIGMA:
            raise InternalError(f"sigma {sigma!r} exceeds 2^30; put the statistic on a grid")
        t = math.floor(sigma) + 1
        j = max(0, 26 - (t - 1).bit_length())
        big_u = math.ceil(Fraction(sigma) ** 2 * 2**j / t)
        den = 2 ** (j + 1) * t * big_u
        out = np.empty(size, dtype=np.int64)
        filled = 0
        while filled < size:
            want = size - filled
            y = self._dlap(t, 1, want)
            whole, rest = _exponent_parts(np.abs(y), j, big_u, den)
            y = y[self.bernoulli_exp(whole, rest, den)]
            out[filled:filled + y.size] = y
            filled += y.size
        return out


def _check_scale(scale: float) -> float:
    scale = float(scale)
    if not math.isfinite(scale) or scale <= 0 or scale > MAX_SCALE:
        raise InternalError(f"noise scale {scale!r} must be in (0, 2^40] for exact sampling")
    return scale


def _shifted_quotient(u: np.ndarray, v: np.ndarray, n: int, s: int) -> np.ndarray:
    """⌊(u + n·v)/s⌋ as int64, exactly (Python integers for the astronomically rare big v)."""
    limit = (2**63 - 1) // n - 1
    out = np.empty(u.size, dtype=np.int64)
    small = v <= np.uint64(limit)
    out[small] = ((u[small] + np.uint64(n) * v[small]) // np.uint64(s)).astype(np.int64)
    for i in np.flatnonzero(~small):
        value = (int(u[i]) + n * int(v[i])) // s
        if value >= 2**62:
            raise InternalError("discrete Laplace draw overflowed int64")
        out[i] = value
    return out


def _exponent_parts(ay: np.ndarray, j: int, big_u: int, den: int
                    ) -> tuple[np.ndarray, np.ndarray]:
    """(⌊M²/D⌋, M² mod D) with M = 2^j·|y| − U, exactly (Python ints for |M| ≥ 2³¹)."""
    whole = np.empty(ay.size, dtype=np.int64)
    rest = np.empty(ay.size, dtype=np.uint64)
    fast = (ay <= (2**31 + big_u) >> j) & (ay >= max(0, big_u - 2**31) >> j)
    m = (ay[fast] << j) - big_u
    sq = (m * m).astype(np.uint64)
    whole[fast] = (sq // np.uint64(den)).astype(np.int64)
    rest[fast] = sq % np.uint64(den)
    for i in np.flatnonzero(~fast):
        q, r = divmod(((int(ay[i]) << j) - big_u) ** 2, den)
        # 2^62 consecutive Bernoulli(1/e) successes never happen, so the cap is unobservable.
        whole[i], rest[i] = min(q, 2**62), r
    return whole, rest

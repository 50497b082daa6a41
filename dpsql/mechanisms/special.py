"""The scaled complementary error function and log Φ, in plain Python floats.

Gaussian calibration (:func:`~dpsql.mechanisms.calibration.gaussian_log_delta`, called some
fifty times per bisection) and the discrete Gaussian's tail (:mod:`dpsql.mechanisms.noise`)
need erfcx(x) = e^{x²}·erfc(x) and log Φ(x) far into both tails.  ``scipy.special`` has both
but costs 0.2–0.3 s to import, more than a plain DuckDB process takes to answer a query, so the
two are written here on :func:`math.erfc` and :func:`math.exp` (libm: within ~1.4 ulp of the
true erfc over [0, 26], checked against mpmath).  Both stay within 1e-15 relative of the true
value (mpmath at 60 digits) wherever the result is a normal float: tests/test_special.py.
In plain Python an analytic Gaussian calibration takes 0.43 ms instead of 0.18 ms, and gives
the same σ, bit for bit, on 108 (ε, δ) pairs (docs/benchmarks.md, "Start-up without SciPy").

Where the rest of dpsql still uses SciPy, and why — each is off the one-query path:

- :func:`~dpsql.mechanisms.calibration.gaussian_log_deltas` (log Φ over arrays) and
  :func:`~dpsql.mechanisms.discrete_calibration.discrete_gaussian_delta` (``logsumexp``)
  import SciPy inside the function: the first feeds privacy profiles to the PLD accountant,
  which imports SciPy anyway, the second is the exact one-cell yardstick of the tests;
- :mod:`dpsql.accounting.gdp` (ndtr, ndtri) and :mod:`dpsql.accounting.pld` (FFT, isotonic
  regression, lfilter) keep module-level imports: only the accounting report imports them,
  inside the functions that need them.

>>> erfcx(0.0), round(erfcx(30.0) * 30.0 * math.sqrt(math.pi), 6)
(1.0, 0.999445)
>>> round(log_ndtr(-40.0), 6), log_ndtr(0.0) == math.log(0.5)
(-804.608442, True)
"""

from __future__ import annotations

import math
import sys

# Veltkamp's splitting constant 2^27 + 1 (Dekker 1971, §5): splits a double into two halves
# of 26 bits, whose pairwise products are exact.
_SPLIT = 134217729.0
# erfcx by continued fraction from x = start on, with ``terms`` levels: enough that the
# truncation error is below 1e-18 relative at ``start`` (measured against mpmath) and smaller
# beyond, since every approximant converges faster as x grows.
_CONTINUED_FRACTION = ((10.0, 11), (6.0, 16), (4.0, 25), (2.0, 69))
_RECIPROCAL_SQRT_PI = 1.0 / math.sqrt(math.pi)
_SQRT_HALF = math.sqrt(0.5)
# Below this x, 2e^{x²} overflows: erfcx(x) > 2e^{x²} − 1 is then +inf (and math.exp, which
# raises on overflow, is never called past it).
_OVERFLOW = -math.sqrt(math.log(sys.float_info.max / 2.0))
# Above this x, Φ(−x) < e^{−800} underflows to 0 (below the smallest subnormal, 2^−1074).
_UNDERFLOW = 40.0


def two_product(a: float, b: float) -> tuple[float, float]:
    """(p, e) with p = fl(a·b) and p + e = a·b exactly, for |a|, |b| below ~1e150.

    Dekker, "A floating-point technique for extending the available precision",
    Numer. Math. 18 (1971), mul12 with Veltkamp's split.

    >>> two_product(1.0 + 2.0**-30, 1.0 + 2.0**-30) == (1.0 + 2.0**-29, 2.0**-60)
    True
    """
    product = a * b
    a_high, a_low = _split(a)
    b_high, b_low = _split(b)
    error = ((a_high * b_high - product) + a_high * b_low + a_low * b_high) + a_low * b_low
    return product, error


def _split(a: float) -> tuple[float, float]:
    scaled = _SPLIT * a
    high = scaled - (scaled - a)
    return high, a - high


def exp_square(x: float, sign: float = 1.0) -> float:
    """e^{sign·x²} for sign = ±1 or ±½, without the rounding of x² (|x| ≤ 40).

    Rounding x² first would cost a relative error of up to x²·2⁻⁵³ (7e-14 at x = 26); with
    x² = p + e exact (:func:`two_product`), e^{sign·x²} = e^{sign·p}·(1 + sign·e) to within
    e² ≤ 1e-26.

    >>> exp_square(26.0) == math.exp(676.0), exp_square(2.0, -0.5) == math.exp(-2.0)
    (True, True)
    """
    square, error = two_product(x, x)
    return math.exp(sign * square) * (1.0 + sign * error)


def erfcx(x: float) -> float:
    """The scaled complementary error function e^{x²}·erfc(x), relative error ≤ 1e-15.

    - x ≥ 2: Laplace's continued fraction, evaluated bottom-up to a depth fixed per range,
      √π·e^{x²}·erfc(x) = 1/(x + ½/(x + 1/(x + (3/2)/(x + 2/(x + …))))) (NIST DLMF 7.9.2;
      Abramowitz & Stegun 7.1.14);
    - 0 ≤ x < 2: e^{x²}·erfc(x) with e^{x²} from the exact square (:func:`exp_square`);
    - x < 0: erfcx(x) = 2e^{x²} − erfcx(−x) (erfc(−x) = 2 − erfc(x), DLMF 7.4.2), +inf
      once e^{x²} overflows.

    >>> erfcx(math.inf), erfcx(-math.inf), math.isnan(erfcx(math.nan))
    (0.0, inf, True)
    >>> round(erfcx(1.0), 15)
    0.427583576155807
    """
    if math.isnan(x):
        return x
    if x < 0:
        return math.inf if x < _OVERFLOW else 2.0 * exp_square(x) - erfcx(-x)
    for start, terms in _CONTINUED_FRACTION:
        if x >= start:
            return _laplace_fraction(x, terms)
    return exp_square(x) * math.erfc(x)


def _laplace_fraction(x: float, terms: int) -> float:
    """1/(√π·(x + ½/(x + 1/(x + …)))) with ``terms`` levels (DLMF 7.9.2), for x ≥ 2."""
    if math.isinf(x):
        return 0.0
    denominator = x
    for k in range(terms, 0, -1):
        denominator = x + 0.5 * k / denominator
    return _RECIPROCAL_SQRT_PI / denominator


def log_ndtr(x: float) -> float:
    """log Φ(x), Φ the standard normal distribution function, relative error ≤ 1e-15.

    Both tails go through :func:`erfcx`, so nothing underflows before the answer does:

    - x < 0: Φ(x) = ½·erfc(−x/√2) = ½·erfcx(−x/√2)·e^{−x²/2} (DLMF 7.2.2, 7.18.2 with the
      normal distribution of DLMF 7.18.ii), so log Φ(x) = log(½·erfcx(−x/√2)) − x²/2: two
      negative terms, no cancellation, and −inf only once x²/2 overflows;
    - x ≥ 0: log Φ(x) = log1p(−Φ(−x)) with Φ(−x) = ½·erfcx(x/√2)·e^{−x²/2}, e^{−x²/2} from
      the exact square (:func:`exp_square`); a relative error in x/√2 moves erfcx by at most
      as much, never x² times as much as it would move erfc; past x = 40, Φ(−x) < 2^−1074
      and log Φ(x) is 0.

    >>> log_ndtr(math.inf), log_ndtr(-math.inf), math.isnan(log_ndtr(math.nan))
    (0.0, -inf, True)
    >>> f"{log_ndtr(10.0):.6e}"  # −Φ(−10)
    '-7.619853e-24'
    """
    if math.isnan(x) or x == -math.inf:
        return x
    if x < 0:
        return math.log(0.5 * erfcx(-x * _SQRT_HALF)) - x * (0.5 * x)
    if x > _UNDERFLOW:
        return 0.0
    return math.log1p(-0.5 * erfcx(x * _SQRT_HALF) * exp_square(x, -0.5))

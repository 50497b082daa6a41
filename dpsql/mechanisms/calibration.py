"""Noise calibration: validate (ε, δ), then turn a sensitivity into a noise scale.

Everything here is public-parameter arithmetic: no data, no randomness.  Scales are
rounded *up* (more noise is always safe), following OpenDP's convention.

>>> round(analytic_gaussian_sigma(1.0, 1.0, 1e-5), 4)
3.7306
>>> laplace_scale(2.0, 0.5)
4.0
"""

from __future__ import annotations

import math
import reprlib
from collections.abc import Callable
from fractions import Fraction

import numpy as np

from dpsql.errors import PrivacyError
from dpsql.exact import real_number
from dpsql.mechanisms.special import erfcx, log_ndtr

REL_TOL = 1e-10


def validate_privacy(epsilon: float, delta: float) -> tuple[float, float]:
    """(ε, δ) as floats; :class:`PrivacyError` unless 0 < ε < ∞ and 0 ≤ δ < 1.

    ε and δ may be ints, floats, numpy numbers, Fractions or Decimals; a bool (``True`` is
    not 1 here), a string, None, NaN or ±inf is refused. Every ε up to the largest float is
    accepted (a huge ε is the usual way of asking for essentially no noise).

    >>> validate_privacy(1, Fraction(1, 10**6))
    (1.0, 1e-06)
    >>> validate_privacy(0.0, 0.0)
    Traceback (most recent call last):
    ...
    dpsql.errors.PrivacyError: epsilon=0.0 is not allowed: epsilon must be a finite number > 0 \
(typical values 0.1-5; smaller is more private). Fix: pass e.g. epsilon=1.0
    """
    eps_fix = "Fix: pass e.g. epsilon=1.0"
    eps = real_number("epsilon", epsilon, eps_fix)
    if not math.isfinite(eps) or eps <= 0:
        raise PrivacyError(
            f"epsilon={reprlib.repr(epsilon)} is not allowed: epsilon must be a finite number > 0 "
            f"(typical values 0.1-5; smaller is more private). {eps_fix}"
        )
    dlt_fix = "Fix: pass e.g. delta=1e-7, or delta=0 for pure epsilon-DP (Laplace noise only)"
    dlt = real_number("delta", delta, dlt_fix)
    if not 0 <= dlt < 1:
        raise PrivacyError(
            f"delta={reprlib.repr(delta)} is not allowed: delta must be in [0, 1) and should be "
            f"well below 1/(number of privacy units). {dlt_fix}"
        )
    return eps, dlt


def _check_sensitivity(name: str, value: float) -> None:
    if not value > 0:
        raise PrivacyError(f"{name}={value!r} must be a finite sensitivity > 0")
    finite_scale(value, f"the sensitivity {name}")


def laplace_scale(l1: float, epsilon: float) -> float:
    """Laplace scale b = Δ₁/ε (Dwork, McSherry, Nissim & Smith, TCC 2006), rounded up.

    >>> laplace_scale(3.0, 1.5), laplace_scale(1.0, 3.0) > 1 / 3
    (2.0, True)
    """
    epsilon, _ = validate_privacy(epsilon, 0.0)
    _check_sensitivity("l1", l1)
    scale = finite_scale(l1 / epsilon, f"the Laplace scale l1/epsilon = {l1:g}/{epsilon:g}")
    if Fraction(scale) < Fraction(l1) / Fraction(epsilon):
        scale = finite_scale(math.nextafter(scale, math.inf), "the Laplace scale")
    return scale


def finite_scale(scale: float, what: str) -> float:
    """``scale`` if it is a finite float, else a PrivacyError that says how to get one.

    >>> finite_scale(math.inf, "sigma")
    Traceback (most recent call last):
    ...
    dpsql.errors.PrivacyError: sigma overflows a float: use a larger epsilon (or delta), or \
smaller bounds or contribution limits
    """
    if not math.isfinite(scale):
        raise PrivacyError(f"{what} overflows a float: use a larger epsilon (or delta), or "
                           "smaller bounds or contribution limits")
    return scale


def classic_gaussian_sigma(l2: float, epsilon: float, delta: float) -> float:
    """Classic σ = Δ₂·√(2 ln(1.25/δ))/ε (Dwork & Roth 2014, Thm A.1; valid for ε < 1 only).

    For comparison with :func:`analytic_gaussian_sigma`; do not calibrate with it.

    >>> round(classic_gaussian_sigma(1.0, 1.0, 1e-5), 3)
    4.845
    """
    epsilon, delta = validate_privacy(epsilon, delta)
    _need_delta(delta)
    _check_sensitivity("l2", l2)
    sigma = l2 * math.sqrt(2.0 * (math.log(1.25) - math.log(delta))) / epsilon
    return finite_scale(sigma, "the classic Gaussian sigma")


def gaussian_zcdp_rho(l2: float, sigma: float) -> float:
    """ρ = Δ₂²/(2σ²): the (discrete or continuous) Gaussian is ρ-zCDP.

    Bun & Steinke (TCC 2016) Prop. 1.6; Canonne, Kamath & Steinke (NeurIPS 2020) Thm 14 for
    the multivariate discrete Gaussian.

    >>> gaussian_zcdp_rho(1.0, 2.0)
    0.125
    """
    _check_sensitivity("l2", l2)
    _check_sensitivity("sigma", sigma)
    ratio = l2 / sigma  # not l2²/σ²: σ² underflows for σ below 1e-154
    return 0.5 * ratio * ratio


def _need_delta(delta: float) -> None:
    if delta == 0:
        raise PrivacyError(
            "Gaussian noise needs delta > 0; with delta=0 only Laplace noise is possible. "
            "Fix: pass a small delta such as 1e-7, or use Laplace noise"
        )


def gaussian_log_delta(mu: float, epsilon: float) -> float:
    """log δ(ε) of a Gaussian mechanism with μ = Δ₂/σ (Balle & Wang, ICML 2018, Thm 8).

    δ = Φ(a) − e^ε·Φ(b) with a = μ/2 − ε/μ and b = −μ/2 − ε/μ, in log space and without
    cancellation, so that any ε up to the largest float gives a true answer:

    - a is computed exactly (Fractions) when μ/2 and ε/μ are close: at a huge ε the two are
      ~1e150 and a is their difference of ~40;
    - e^ε·Φ(b) is written φ-free as exp(ε − b²/2)·½erfcx(−b/√2), and ε − b²/2 = −a²/2
      exactly (b² − a² = 2ε), so neither e^ε nor b² is ever formed;
    - for a < 0, Φ(a) = exp(−a²/2)·½erfcx(−a/√2) too, and the ratio of the two terms is a
      ratio of erfcx values.

    Returns −inf when δ underflows to 0.

    >>> round(math.exp(gaussian_log_delta(1 / 3.7306316, 1.0)) * 1e5, 4)
    1.0
    >>> sigma = analytic_gaussian_sigma(1.0, 1e300, 1e-5)  # ≈ 1/√(2ε), a hair above
    >>> at = lambda s: gaussian_log_delta(1 / s, 1e300)
    >>> at(sigma) < math.log(1e-5) < at(sigma / 1.1)
    True
    """
    if mu <= 0:
        return -math.inf
    a = _gaussian_a(mu, epsilon)
    log_tail_b = _log_half_erfcx(mu / 2 + epsilon / mu)
    if a < 0:
        log_tail_a = _log_half_erfcx(-a)
        log_a = log_tail_a - a * a / 2
        ratio = log_tail_b - log_tail_a
    else:
        log_a = log_ndtr(a)
        ratio = log_tail_b - a * a / 2 - log_a
    if ratio >= 0 or math.isnan(ratio):
        return -math.inf
    return log_a + math.log(-math.expm1(ratio))


def gaussian_log_deltas(mu: float, epsilons: np.ndarray) -> np.ndarray:
    """:func:`gaussian_log_delta` for many ε at once (Balle & Wang, ICML 2018, Thm 8).

    log δ = log Φ(a) + log(1 − exp(ε + log Φ(b) − log Φ(a))), a = μ/2 − ε/μ, b = −μ/2 − ε/μ,
    with scipy's log Φ accurate far into both tails.  Meant for moderate ε/μ (privacy
    profiles to be turned into PLDs); the scalar function handles the extremes.  SciPy is
    imported here, not at the top: only the PLD accountant comes here, and it imports SciPy
    anyway (:mod:`dpsql.mechanisms.special` says why).

    >>> vector = gaussian_log_deltas(0.5, np.array([0.0, 1.0, 3.0]))
    >>> scalar = [gaussian_log_delta(0.5, e) for e in (0.0, 1.0, 3.0)]
    >>> bool(np.allclose(vector, scalar, rtol=1e-9))
    True
    """
    from scipy.special import log_ndtr as log_ndtr_array

    epsilons = np.asarray(epsilons, dtype=float)
    log_a = log_ndtr_array(mu / 2 - epsilons / mu)
    ratio = epsilons + log_ndtr_array(-mu / 2 - epsilons / mu) - log_a
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(ratio < 0, log_a + np.log(-np.expm1(np.minimum(ratio, 0.0))), -np.inf)


def _gaussian_a(mu: float, epsilon: float) -> float:
    """a = μ/2 − ε/μ, exactly rounded when the two terms nearly cancel."""
    half, ratio = mu / 2, epsilon / mu
    if not (0.5 * ratio <= half <= 2 * ratio) or math.isinf(ratio):
        return half - ratio
    exact = (Fraction(mu) ** 2 - 2 * Fraction(epsilon)) / (2 * Fraction(mu))
    return float(exact)


def _log_half_erfcx(x: float) -> float:
    """log(½·erfcx(x/√2)) for x ≥ 0, i.e. log Φ(−x) + x²/2 (−inf at x = inf)."""
    value = erfcx(x / math.sqrt(2.0))
    return math.log(0.5 * value) if value > 0 else -math.inf


def smallest_passing(ok: Callable[[float], bool], start: float) -> float:
    """Smallest x > 0 with ``ok(x)``, for ``ok`` monotone (False below, True above).

    Brackets geometrically from ``start``, then bisects to relative width ≤ 1e-10 and
    returns the upper (passing) end, so the answer is never rounded down.

    >>> 2.0 <= smallest_passing(lambda x: x * x >= 4.0, 1.0) <= 2.0 * (1 + 1e-9)
    True
    """
    lo = hi = start
    while not ok(hi):
        lo, hi = hi, hi * 2.0
        if hi > 1e300:
            raise PrivacyError("no noise scale below 1e300 satisfies the requested privacy "
                               "parameters: use a larger epsilon or delta")
    while lo == hi or ok(lo):
        lo /= 2.0
        if lo < 1e-300:
            return hi
    while hi - lo > REL_TOL * hi:
        mid = 0.5 * (lo + hi)
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def inverse_at_least(x: float) -> float:
    """The smallest float ≥ 1/x (x > 0): a μ = 1/σ that never understates the privacy loss.

    >>> inverse_at_least(3.0) > 1 / 3, inverse_at_least(0.5)
    (True, 2.0)
    """
    inverse = 1.0 / x
    return inverse if Fraction(inverse) * Fraction(x) >= 1 else math.nextafter(inverse, math.inf)


def analytic_gaussian_sigma(l2: float, epsilon: float, delta: float) -> float:
    """Smallest σ with Φ(Δ/(2σ) − εσ/Δ) − e^ε·Φ(−Δ/(2σ) − εσ/Δ) ≤ δ.

    The analytic Gaussian mechanism (Balle & Wang, ICML 2018, Thm 8) for the *continuous*
    Gaussian.  The condition is monotone in σ; bisection returns the upper end.  σ is
    proportional to Δ₂, so σ is found for Δ₂ = 1 and scaled (then nudged one ulp up).

    >>> round(analytic_gaussian_sigma(2.0, 1.0, 1e-5), 4)
    7.4613
    """
    epsilon, delta = validate_privacy(epsilon, delta)
    _need_delta(delta)
    _check_sensitivity("l2", l2)
    log_delta = math.log(delta)
    unit = smallest_passing(lambda s: gaussian_log_delta(inverse_at_least(s), epsilon)
                            <= log_delta, 1.0)
    return finite_scale(math.nextafter(unit * l2, math.inf), "the Gaussian sigma")

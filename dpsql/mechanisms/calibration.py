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
from collections.abc import Callable
from numbers import Real

from scipy.special import log_ndtr

from dpsql.errors import PrivacyError

REL_TOL = 1e-10


def validate_privacy(epsilon: float, delta: float) -> None:
    """Raise :class:`PrivacyError` unless 0 < ε < ∞ and 0 ≤ δ < 1.

    >>> validate_privacy(1.0, 1e-6)
    >>> validate_privacy(0.0, 0.0)
    Traceback (most recent call last):
    ...
    dpsql.errors.PrivacyError: epsilon=0.0 is not allowed: epsilon must be a finite number > 0 \
(typical values 0.1-5; smaller is more private). Fix: pass e.g. epsilon=1.0
    """
    if not isinstance(epsilon, Real) or not math.isfinite(epsilon) or epsilon <= 0:
        raise PrivacyError(
            f"epsilon={epsilon!r} is not allowed: epsilon must be a finite number > 0 "
            "(typical values 0.1-5; smaller is more private). Fix: pass e.g. epsilon=1.0"
        )
    if not isinstance(delta, Real) or math.isnan(delta) or not 0 <= delta < 1:
        raise PrivacyError(
            f"delta={delta!r} is not allowed: delta must be in [0, 1) and should be well "
            "below 1/(number of privacy units). Fix: pass e.g. delta=1e-7, or delta=0 for "
            "pure epsilon-DP (Laplace noise only)"
        )


def _check_sensitivity(name: str, value: float) -> None:
    if not math.isfinite(value) or value <= 0:
        raise PrivacyError(f"{name}={value!r} must be a finite sensitivity > 0")


def laplace_scale(l1: float, epsilon: float) -> float:
    """Laplace scale b = Δ₁/ε (Dwork, McSherry, Nissim & Smith, TCC 2006).

    >>> laplace_scale(3.0, 1.5)
    2.0
    """
    validate_privacy(epsilon, 0.0)
    _check_sensitivity("l1", l1)
    return l1 / epsilon


def classic_gaussian_sigma(l2: float, epsilon: float, delta: float) -> float:
    """Classic σ = Δ₂·√(2 ln(1.25/δ))/ε (Dwork & Roth 2014, Thm A.1; valid for ε < 1 only).

    For comparison with :func:`analytic_gaussian_sigma`; do not calibrate with it.

    >>> round(classic_gaussian_sigma(1.0, 1.0, 1e-5), 3)
    4.845
    """
    validate_privacy(epsilon, delta)
    _need_delta(delta)
    _check_sensitivity("l2", l2)
    return l2 * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def gaussian_zcdp_rho(l2: float, sigma: float) -> float:
    """ρ = Δ₂²/(2σ²): the (discrete or continuous) Gaussian is ρ-zCDP.

    Bun & Steinke (TCC 2016) Prop. 1.6; Canonne, Kamath & Steinke (NeurIPS 2020) Thm 14 for
    the multivariate discrete Gaussian.

    >>> gaussian_zcdp_rho(1.0, 2.0)
    0.125
    """
    _check_sensitivity("l2", l2)
    _check_sensitivity("sigma", sigma)
    return l2 * l2 / (2.0 * sigma * sigma)


def _need_delta(delta: float) -> None:
    if delta == 0:
        raise PrivacyError(
            "Gaussian noise needs delta > 0; with delta=0 only Laplace noise is possible. "
            "Fix: pass a small delta such as 1e-7, or use Laplace noise"
        )


def gaussian_log_delta(mu: float, epsilon: float) -> float:
    """log δ(ε) of a Gaussian mechanism with μ = Δ₂/σ (Balle & Wang, ICML 2018, Thm 8).

    δ = Φ(μ/2 − ε/μ) − e^ε·Φ(−μ/2 − ε/μ), evaluated in log space with ``log_ndtr`` so a
    huge ε neither overflows e^ε nor cancels catastrophically.  Returns −inf when δ = 0.

    >>> round(math.exp(gaussian_log_delta(1 / 3.7306316, 1.0)) * 1e5, 4)
    1.0
    """
    log_a = float(log_ndtr(mu / 2 - epsilon / mu))
    log_b = epsilon + float(log_ndtr(-mu / 2 - epsilon / mu))
    if log_b >= log_a:
        return -math.inf
    return log_a + math.log(-math.expm1(log_b - log_a))


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
            raise PrivacyError("no noise scale satisfies the requested privacy parameters")
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


def analytic_gaussian_sigma(l2: float, epsilon: float, delta: float) -> float:
    """Smallest σ with Φ(Δ/(2σ) − εσ/Δ) − e^ε·Φ(−Δ/(2σ) − εσ/Δ) ≤ δ.

    The analytic Gaussian mechanism (Balle & Wang, ICML 2018, Thm 8) for the *continuous*
    Gaussian.  The condition is monotone in σ; bisection returns the upper end.  σ is
    proportional to Δ₂, so σ is found for Δ₂ = 1 and scaled (then nudged one ulp up).

    >>> round(analytic_gaussian_sigma(2.0, 1.0, 1e-5), 4)
    7.4613
    """
    validate_privacy(epsilon, delta)
    _need_delta(delta)
    _check_sensitivity("l2", l2)
    log_delta = math.log(delta)
    unit = smallest_passing(lambda s: gaussian_log_delta(1.0 / s, epsilon) <= log_delta, 1.0)
    return math.nextafter(unit * l2, math.inf)

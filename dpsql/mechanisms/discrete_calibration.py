"""(ε, δ) calibration of the *multivariate discrete* Gaussian, conservatively.

Setting: each released cell j gets independent discrete Gaussian noise N_Z(0, σ_j²) in its
own grid units, and neighbouring inputs differ by an integer vector Δ with
μ² = Σ_j Δ_j²/σ_j² ≤ (L2/σ)² where σ is the unit-normalised scale (σ_j = σ·bound_j/grid_j).
The analytic Gaussian formula (Balle & Wang 2018) is proved for the *continuous* Gaussian
only, so we return the smaller of two σ, each of which is proved sufficient:

(a) zCDP route.  Canonne, Kamath & Steinke (NeurIPS 2020), Thm 14: the multivariate discrete
    Gaussian is ρ-zCDP with ρ = μ²/2; their Cor. 13 (§2.3) converts ρ-zCDP to (ε, δ) with
    δ = inf_{α>1} exp((α−1)(αρ−ε)) / (α−1) · (1 − 1/α)^α.  About 8 % more σ than (b).

(b) Post-processing route (derived here; write-up belongs in docs/).  For s > 0 let
    θ_s(u) = Σ_n exp(−(u+n)²/2s²) and κ(u) = exp(−u²/2s²)/θ_s(u); Σ_n κ(u+n) = 1, so "output
    the integer y with probability κ(z − y)" is a translation-equivariant randomised map from
    z = x + N(0, σ'²) to Z.  Its output Q(m) (m = y − x) equals
    ∫ φ_σ'(w) e^{−(w−m)²/2s²} / θ_s(w) dw, and since θ_s ∈ √(2π)s·[1 − 2η, 1 + 2η] with
    η = Σ_{k≥1} e^{−2π²s²k²} (Poisson summation), Q/N_Z(0, σ'²+s²) ∈ [1/r, r] pointwise with
    r = (1+2η)/(1−2η).  Restricted to the d changed cells (unchanged cells are identical,
    independent noise), the discrete mechanism P and the post-processed continuous Gaussian Q
    satisfy P ≤ e^λ Q and Q ≤ e^λ P with λ = Σ_j log r_j ≤ Σ_j Δ_j² log r_j ≤ μ²·B, where
    B = max_j σ_j² log r_j (|Δ_j| ≥ 1 on changed cells).  Q is (ε₀, δ₀)-DP by Balle–Wang with
    μ' = ‖Δ/σ'‖ ≤ μ / √(1 − max_j s_j²/σ_j²), hence P is (ε₀ + 2λ, e^λ δ₀)-DP.  We take
    s_j² = (ln σ_j² + 40)/(2π²), which makes σ_j² log r_j ≤ B_MAX = 1e-16 for every σ_j ≥ 1
    and makes s_j/σ_j largest at the coarsest cell (smallest σ_j in grid steps).

>>> a = discrete_gaussian_sigma(1.0, 1.0, 1e-5)
>>> b = analytic_gaussian_sigma(1.0, 1.0, 1e-5)
>>> bool(b < a < 1.09 * b)
True
"""

from __future__ import annotations

import math

from dpsql.errors import PrivacyError
from dpsql.mechanisms.calibration import (
    _check_sensitivity,
    _need_delta,
    analytic_gaussian_sigma,
    gaussian_log_delta,
    smallest_passing,
    validate_privacy,
)

B_MAX = 1e-16


def zcdp_log_delta(rho: float, epsilon: float) -> float:
    """log of the δ implied by ρ-zCDP at ε (Canonne, Kamath & Steinke 2020, Cor. 13).

    Any α > 1 gives a valid bound; α is chosen by bisection on the derivative
    (2α − 1)ρ − ε + log(1 − 1/α), which is increasing in α.

    >>> round(math.exp(zcdp_log_delta(0.025, 1.0)), 12) > 0
    True
    """
    if rho <= 0:
        return -math.inf
    lo, hi = 1.0, max(2.0, (epsilon + 1.0) / (2.0 * rho) + 2.0)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if (2 * mid - 1) * rho - epsilon + math.log1p(-1.0 / mid) < 0:
            lo = mid
        else:
            hi = mid
    alpha = hi
    log_delta = (alpha - 1) * (alpha * rho - epsilon) + alpha * math.log1p(-1.0 / alpha)
    return min(0.0, log_delta - math.log(alpha - 1))


def smoothing_width_sq(sigma_grid: float) -> float:
    """s² = (ln σ² + 40)/(2π²): the Gaussian smoothing width of route (b) for a cell of σ.

    >>> round(smoothing_width_sq(1.0), 3)
    2.026
    """
    return (2.0 * math.log(sigma_grid) + 40.0) / (2.0 * math.pi**2)


def _log_ratio_bound(s_sq: float) -> float:
    """log r = log((1+2η)/(1−2η)) with η ≤ e^{−2π²s²}/(1 − e^{−2π²s²})."""
    q = math.exp(-2.0 * math.pi**2 * s_sq)
    eta = q / (1.0 - q)
    return math.log1p(2 * eta) - math.log1p(-2 * eta)


def _route_b_ok(sigma: float, l2: float, epsilon: float, log_delta: float, grid_bound: float
                ) -> bool:
    coarse = sigma * grid_bound
    if coarse < 1.0:
        return False
    shrink = 1.0 - smoothing_width_sq(coarse) / coarse**2
    if shrink <= 0:
        return False
    mu = l2 / sigma
    lam = mu * mu * B_MAX
    eps0 = epsilon - 2 * lam
    if eps0 <= 0:
        return False
    mu_cont = mu / math.sqrt(shrink) * (1 + 1e-12)
    return gaussian_log_delta(mu_cont, eps0) <= log_delta - lam - 1e-12


def discrete_gaussian_sigma(l2: float, epsilon: float, delta: float, *,
                            grid_bound: float = 1.0) -> float:
    """Smallest σ (found by bisection, rounded up) for which route (a) or (b) proves (ε, δ)-DP.

    ``grid_bound`` is the smallest statistic bound measured in grid steps (bound/granularity),
    i.e. σ·grid_bound is the smallest per-cell σ in integer units; 1.0 for unit counts.

    >>> round(discrete_gaussian_sigma(2.0 ** 0.5 * 2, 1.0, 1e-5), 2)
    10.66
    """
    validate_privacy(epsilon, delta)
    _need_delta(delta)
    _check_sensitivity("l2", l2)
    if not math.isfinite(grid_bound) or grid_bound <= 0:
        raise PrivacyError(f"grid_bound={grid_bound!r} must be > 0")
    log_delta = math.log(delta) - 1e-12
    start = analytic_gaussian_sigma(l2, epsilon, delta)
    zcdp = smallest_passing(
        lambda s: zcdp_log_delta(l2 * l2 / (2 * s * s), epsilon) <= log_delta, start)
    smoothed = smallest_passing(
        lambda s: _route_b_ok(s, l2, epsilon, log_delta, grid_bound), start)
    return min(zcdp, smoothed)

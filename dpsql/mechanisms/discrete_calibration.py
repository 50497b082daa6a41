"""(ε, δ) calibration of the *multivariate discrete* Gaussian, conservatively.

Setting: each released cell j gets independent discrete Gaussian noise N_Z(0, σ_j²) in its
own grid units, and neighbouring inputs differ by an *integer* vector Δ (values are rounded
to the grid before noise; the chooser inflates the sensitivity for that rounding) with
μ² = Σ_j Δ_j²/σ_j² ≤ (L2/σ)², where σ is the unit-normalised scale and σ_j = σ·bound_j/grid_j
≥ σ·``grid_bound``.  The analytic Gaussian formula (Balle & Wang, ICML 2018, Thm 8) is proved
for the *continuous* Gaussian only and does NOT transfer as is: at ε = 1, δ = 1e-5 and its
σ = 3.7306, one unit-sensitivity discrete Gaussian cell has exact δ = 1.0346e-5 (CKS 2020,
Thm 7), and at ε = 2, δ = 1e-7 it is 1.129e-7.  So we return the smaller of two σ, each proved
sufficient:

(a) zCDP route.  Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy"
    (NeurIPS 2020, arXiv 2004.00010), Thm 14: the multivariate discrete Gaussian is ρ-zCDP
    with ρ = μ²/2; their ρ-zCDP → (ε, δ) conversion (Cor. 13, §2.3)
    δ = inf_{α>1} exp((α−1)(αρ−ε)) / (α−1) · (1 − 1/α)^α, the same formula as the authors'
    ``cdp_delta`` in github.com/IBM/discrete-gaussian-differential-privacy (cdp2adp.py).
    Costs about 5–9 % more σ than the continuous analytic σ (8.4 % at ε = 1, δ = 1e-5),
    independent of the number of cells.

(b) Smoothing route.  NOT from a paper: derived in-house, reviewed (proof below, each step
    checked numerically in tests/test_mechanisms_calibration.py); a write-up belongs in docs/.
    It uses the smoothing-parameter technique of lattice cryptography (Micciancio & Regev 2004;
    Peikert's convolution argument, CRYPTO 2010) with a continuous Gaussian in place of the
    lattice one.  Per cell, drop j; let s > 0, φ_v the N(0, v²) density,
    θ_s(u) = Σ_n exp(−(u+n)²/2s²) (1-periodic) and κ(u) = exp(−u²/2s²)/θ_s(u).
    1. Σ_n κ(u + n) = 1, so z ↦ "integer y with probability κ(z − y)" is a randomised map
       from the reals to Z that does not depend on the data.
    2. With Z = x + N(0, σ'²), x ∈ Z, and m = y − x: P[R(Z) = x + m] = Q(m) :=
       ∫ φ_σ'(w)·e^{−(w−m)²/2s²}/θ_s(w) dw (θ_s(w − m) = θ_s(w) as m ∈ Z).
    3. Poisson summation: θ_s(u) = √(2π)s·(1 + 2Σ_{k≥1} e^{−2π²s²k²} cos 2πku), so
       θ_s ∈ √(2π)s·[1 − 2η, 1 + 2η] with η = Σ_{k≥1} e^{−2π²s²k²} ≤ q/(1 − q), q = e^{−2π²s²}.
       Hence Q(m) = c(m)·φ_τ(m), τ² = σ'² + s², c(m) ∈ [1/(1+2η), 1/(1−2η)].  N_Z(0, τ²)(m) =
       φ_τ(m)/Σ_n φ_τ(n), and Σ_n c(n)φ_τ(n) = 1, so Q(m)/N_Z(0, τ²)(m) ∈ [1/r, r] with
       r = (1+2η)/(1−2η) for every m.
    4. Take σ'_j² = σ_j² − s_j².  Cells with Δ_j = 0 get the same independent noise under both
       inputs, so (post-processing) it suffices to treat the changed cells C.  On C the
       discrete mechanism P (product of N_Z(x_j, σ_j²)) and the product Q of the maps of 2.
       satisfy e^{−λ} ≤ P/Q ≤ e^{λ} pointwise, λ = Σ_{j∈C} log r_j ≤ Σ_j Δ_j² log r_j
       (|Δ_j| ≥ 1 on C) ≤ μ²·B with B ≥ max_j σ_j² log r_j.
    5. Q is post-processing (step 1, independent per cell) of the continuous Gaussian
       mechanism x ↦ x + N(0, diag σ'²), which after rescaling coordinates is Balle–Wang with
       sensitivity μ' = ‖Δ/σ'‖ ≤ μ/√(1 − max_j s_j²/σ_j²): (ε₀, δ₀)-DP with δ₀ = BW(μ', ε₀).
    6. With primes for the neighbouring input, for every event S:
       P(S) ≤ e^λ Q(S) ≤ e^λ(e^{ε₀} Q'(S) + δ₀) ≤ e^{ε₀+2λ} P'(S) + e^λ δ₀: P is
       (ε₀ + 2λ, e^λ δ₀)-DP.  The code sets ε₀ = ε − 2λ and requires δ₀ ≤ e^{−λ}δ.
    Constants: s_j² = (ln σ_j² + 40)/(2π²) gives q = e^{−40}/σ_j², so σ_j² log r_j ≈ 4e^{−40}
    ≈ 1.7e-17 ≤ B_MAX = 1e-16 for every σ_j ≥ 1; s_j²/σ_j² decreases in σ_j ≥ 1, so its max is
    at the coarsest cell σ·grid_bound (required ≥ 1, else route (b) is not used).  Net effect:
    the discrete σ² is the continuous analytic σ² plus ≈ 2.1 grid steps² (7.5 % more σ for one
    unit count at ε = 1, δ = 1e-5, 1 % at 8 counts, vanishing as σ grows).

No published theorem was found that calibrates the multivariate discrete Gaussian to the
continuous analytic σ up to a negligible factor, and the exact δ values above rule out one of
the form "Balle–Wang δ + an exponentially small correction".

>>> a = discrete_gaussian_sigma(1.0, 1.0, 1e-5)
>>> b = analytic_gaussian_sigma(1.0, 1.0, 1e-5)
>>> bool(b < a < 1.09 * b)
True
"""

from __future__ import annotations

import math
from contextlib import suppress

from dpsql.errors import PrivacyError
from dpsql.mechanisms.calibration import (
    _check_sensitivity,
    _need_delta,
    analytic_gaussian_sigma,
    gaussian_log_delta,
    gaussian_zcdp_rho,
    smallest_passing,
    validate_privacy,
)

# Route (b)'s B: ≥ σ_j² log r_j for every σ_j ≥ 1 (the max is ≈ 4e^{−40} ≈ 1.7e-17; tested).
B_MAX = 1e-16
ALPHA_CAP = 2.0**1000


def zcdp_log_delta(rho: float, epsilon: float) -> float:
    """log of the δ implied by ρ-zCDP at ε (Canonne, Kamath & Steinke 2020, Cor. 13).

    Any α > 1 gives a valid bound; α is chosen by bisection on the derivative
    (2α − 1)ρ − ε + log(1 − 1/α), which is increasing in α. The bisection stops when the
    floats run out, never at α = 1, and α is capped at 2^1000 (a valid, if looser, choice),
    so a huge ε or a tiny ρ gives a very negative (or −inf) log δ, never an error.

    >>> round(math.exp(zcdp_log_delta(0.025, 1.0)), 12) > 0
    True
    >>> zcdp_log_delta(1e-6, 1e300), zcdp_log_delta(math.inf, 1.0)
    (-inf, 0.0)
    """
    if rho <= 0:
        return -math.inf
    if math.isinf(rho):
        return 0.0
    lo, hi = 1.0, min(max(2.0, (epsilon + 1.0) / (2.0 * rho) + 2.0), ALPHA_CAP)
    for _ in range(1100):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
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
    """Steps 4–6 of route (b) in the module docstring: is σ proved (ε, δ)-DP this way?"""
    coarse = sigma * grid_bound
    if coarse < 1.0:
        return False
    shrink = 1.0 - smoothing_width_sq(coarse) / (coarse * coarse)
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
    epsilon, delta = validate_privacy(epsilon, delta)
    _need_delta(delta)
    _check_sensitivity("l2", l2)
    if not math.isfinite(grid_bound) or grid_bound <= 0:
        raise PrivacyError(f"grid_bound={grid_bound!r} must be > 0")
    log_delta = math.log(delta) - 1e-12
    start = analytic_gaussian_sigma(l2, epsilon, delta)
    routes = (lambda s: zcdp_log_delta(gaussian_zcdp_rho(l2, s), epsilon) <= log_delta,
              lambda s: _route_b_ok(s, l2, epsilon, log_delta, grid_bound))
    proved = []
    for ok in routes:
        with suppress(PrivacyError):  # the other route may still prove some σ
            proved.append(smallest_passing(ok, start))
    if not proved:
        raise PrivacyError(f"no discrete Gaussian sigma below 1e300 is (epsilon={epsilon:g}, "
                           f"delta={delta:g})-DP for l2={l2:g}: use a larger epsilon or delta")
    return min(proved)

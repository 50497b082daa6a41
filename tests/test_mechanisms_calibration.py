"""Calibration: analytic Gaussian (Balle & Wang 2018), discrete Gaussian, validation."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import norm

from dpsql.errors import PrivacyError
from dpsql.mechanisms import (
    analytic_gaussian_sigma,
    classic_gaussian_sigma,
    discrete_gaussian_sigma,
    gaussian_zcdp_rho,
    laplace_scale,
    validate_privacy,
)


def bw_delta(sigma: float, l2: float, eps: float) -> float:
    """Balle & Wang Thm 8, straight from the formula (independent of the module)."""
    a = l2 / (2 * sigma) - eps * sigma / l2
    b = -l2 / (2 * sigma) - eps * sigma / l2
    return norm.cdf(a) - math.exp(eps) * norm.cdf(b)


def test_pinned_value():
    assert analytic_gaussian_sigma(1.0, 1.0, 1e-5) == pytest.approx(3.7306, abs=1e-4)
    assert classic_gaussian_sigma(1.0, 1.0, 1e-5) == pytest.approx(4.845, abs=1e-3)


@pytest.mark.parametrize(("eps", "delta"), [(1.0, 1e-5), (0.1, 1e-6), (3.0, 1e-9), (0.5, 0.1)])
def test_sigma_is_the_smallest_passing(eps, delta):
    sigma = analytic_gaussian_sigma(1.0, eps, delta)
    assert bw_delta(sigma, 1.0, eps) <= delta
    assert bw_delta(sigma * (1 - 1e-6), 1.0, eps) > delta


def test_sigma_proportional_to_sensitivity():
    base = analytic_gaussian_sigma(1.0, 0.7, 1e-6)
    for l2 in (0.01, 3.0, 1e4):
        assert analytic_gaussian_sigma(l2, 0.7, 1e-6) == pytest.approx(l2 * base, rel=1e-12)


def test_monotone_in_epsilon_and_delta():
    eps_grid = [0.05, 0.2, 1.0, 4.0, 20.0]
    sigmas = [analytic_gaussian_sigma(1.0, e, 1e-6) for e in eps_grid]
    assert all(a > b for a, b in itertools.pairwise(sigmas))
    deltas = [1e-12, 1e-8, 1e-4, 1e-2]
    sigmas = [analytic_gaussian_sigma(1.0, 1.0, d) for d in deltas]
    assert all(a > b for a, b in itertools.pairwise(sigmas))


def test_beats_classic_where_classic_is_valid():
    for eps in (0.1, 0.5, 0.9):
        assert analytic_gaussian_sigma(1.0, eps, 1e-5) < classic_gaussian_sigma(1.0, eps, 1e-5)


@pytest.mark.parametrize("eps", [50.0, 500.0, 1e4])
def test_huge_epsilon_is_stable(eps):
    sigma = analytic_gaussian_sigma(1.0, eps, 1e-6)
    assert 0 < sigma < 1
    # δ in log space: log Φ(a) vs ε + log Φ(b), checked with scipy's logcdf
    a = 1 / (2 * sigma) - eps * sigma
    b = -1 / (2 * sigma) - eps * sigma
    delta = math.exp(norm.logcdf(a)) * -math.expm1(eps + norm.logcdf(b) - norm.logcdf(a))
    assert delta <= 1e-6


def test_tiny_epsilon():
    sigma = analytic_gaussian_sigma(1.0, 1e-4, 1e-6)
    assert math.isfinite(sigma) and sigma > 1e3
    assert bw_delta(sigma, 1.0, 1e-4) <= 1e-6


@pytest.mark.parametrize(
    ("eps", "delta"),
    [(0.0, 1e-6), (-1.0, 1e-6), (math.nan, 1e-6), (math.inf, 1e-6),
     (1.0, -1e-9), (1.0, 1.0), (1.0, 2.0), (1.0, math.nan)],
)
def test_invalid_privacy_parameters(eps, delta):
    with pytest.raises(PrivacyError, match="Fix"):
        validate_privacy(eps, delta)


def test_gaussian_needs_delta():
    with pytest.raises(PrivacyError, match="delta > 0"):
        analytic_gaussian_sigma(1.0, 1.0, 0.0)
    with pytest.raises(PrivacyError):
        discrete_gaussian_sigma(1.0, 1.0, 0.0)


def test_simple_scales():
    assert laplace_scale(3.0, 0.5) == 6.0
    assert gaussian_zcdp_rho(2.0, 4.0) == 0.125
    with pytest.raises(PrivacyError):
        laplace_scale(0.0, 1.0)


def cdp_sigma(l2: float, eps: float, delta: float) -> float:
    """σ from ρ-zCDP (CKS 2020 Thm 14) and the CKS Cor. 13 conversion, by brute-force α grid."""
    alphas = 1 + np.logspace(-4, 4, 20001)

    def log_delta(rho: float) -> float:
        values = (alphas - 1) * (alphas * rho - eps) + alphas * np.log1p(-1 / alphas)
        return float(np.min(values - np.log(alphas - 1)))

    lo, hi = 1e-6, 10.0
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if log_delta(mid) <= math.log(delta) else (lo, mid)
    return l2 / math.sqrt(2 * lo)


@pytest.mark.parametrize(("eps", "delta"), [(1.0, 1e-5), (0.5, 1e-6), (2.0, 1e-7)])
def test_discrete_sigma_between_continuous_and_zcdp(eps, delta):
    for l2 in (1.0, 3.0, 10.0):
        sigma = discrete_gaussian_sigma(l2, eps, delta)
        assert analytic_gaussian_sigma(l2, eps, delta) < sigma
        assert sigma <= cdp_sigma(l2, eps, delta) * (1 + 1e-6)


def exact_delta_unit_counts(sigma: float, d: int, eps: float) -> float:
    """Exact δ(ε) of d unit-sensitivity cells with N_Z(0, σ²) noise each.

    The privacy loss is (d + 2W)/(2σ²) with W = Σ Y_j, whose pmf is a d-fold convolution.
    """
    support = np.arange(-int(40 * sigma) - 2, int(40 * sigma) + 3)
    pmf = np.exp(-(support**2) / (2 * sigma**2))
    pmf /= pmf.sum()
    total = np.array([1.0])
    for _ in range(d):
        total = np.convolve(total, pmf)
    w = np.arange(total.size) + d * support[0]
    loss = (d + 2 * w) / (2 * sigma**2)
    return float(np.sum(total * np.clip(-np.expm1(eps - loss), 0, None)))


@pytest.mark.parametrize(("d", "eps", "delta"), [(1, 1.0, 1e-5), (8, 1.0, 1e-5), (3, 2.0, 1e-7)])
def test_discrete_calibration_holds_exactly(d, eps, delta):
    sigma = discrete_gaussian_sigma(math.sqrt(d), eps, delta)
    assert exact_delta_unit_counts(sigma, d, eps) <= delta


# --- route (b) of discrete_calibration: each step of its proof, checked numerically ---------


def test_analytic_sigma_alone_is_not_enough_for_the_discrete_gaussian():
    """Why a correction is needed: at the continuous analytic σ one discrete unit cell
    exceeds δ (CKS 2020 Thm 7 gives 1.0346e-5 at ε = 1, δ = 1e-5; 1.129e-7 at ε = 2)."""
    for eps, delta, ratio in [(1.0, 1e-5, 1.0346), (2.0, 1e-7, 1.1289)]:
        exact = exact_delta_unit_counts(analytic_gaussian_sigma(1.0, eps, delta), 1, eps)
        assert exact / delta == pytest.approx(ratio, abs=1e-3)


@pytest.mark.parametrize(("s", "sigma_c"), [(0.45, 1.3), (0.6, 2.0)])
def test_route_b_rounding_kernel_is_close_to_discrete_gaussian(s, sigma_c):
    """Steps 1–3: κ sums to one, and rounding N(0, σ'²) with κ gives a pmf within a factor
    r = (1+2η)/(1−2η) of N_Z(0, σ'² + s²).  A small s makes η visible (≈ 1e-2, 1e-3)."""
    from scipy import integrate

    from dpsql.mechanisms.discrete_calibration import _log_ratio_bound

    shifts = np.arange(-60, 61)

    def theta(u: float) -> float:
        return float(np.exp(-((u + shifts) ** 2) / (2 * s * s)).sum())

    for u in (0.0, 0.13, 0.5, 0.77):
        kernel = [math.exp(-((u + n) ** 2) / (2 * s * s)) / theta(u + n) for n in shifts]
        assert sum(kernel) == pytest.approx(1.0, abs=1e-12)
    ms = np.arange(-15, 16)
    q = []
    for m in ms:
        def density(w, m=m):
            return (norm.pdf(w, scale=sigma_c) * math.exp(-((w - m) ** 2) / (2 * s * s))
                    / theta(w))
        lo, hi = m - 12 * (s + sigma_c), m + 12 * (s + sigma_c)
        q.append(integrate.quad(density, lo, hi, limit=400, epsabs=0, epsrel=1e-12)[0])
    tau2 = sigma_c**2 + s**2
    grid = np.arange(-400, 401)
    target = np.exp(-(ms**2) / (2 * tau2)) / np.exp(-(grid**2) / (2 * tau2)).sum()
    log_ratio = np.abs(np.log(np.array(q) / target))
    assert log_ratio.max() <= _log_ratio_bound(s * s) * (1 + 1e-6)


def test_route_b_constants():
    """σ² log r(s²(σ)) ≤ B_MAX for every σ ≥ 1, and s²/σ² is largest at the coarsest cell."""
    from dpsql.mechanisms.discrete_calibration import (
        B_MAX,
        _log_ratio_bound,
        smoothing_width_sq,
    )

    sigmas = np.geomspace(1.0, 1e12, 4001)
    products = [sg * sg * _log_ratio_bound(smoothing_width_sq(sg)) for sg in sigmas]
    assert max(products) <= B_MAX
    assert max(products) == pytest.approx(4 * math.exp(-40), rel=1e-3)
    ratios = [smoothing_width_sq(sg) / sg**2 for sg in sigmas]
    assert all(a > b for a, b in itertools.pairwise(ratios))


def exact_delta_cells(cells: list[tuple[float, int]], eps: float) -> float:
    """Exact δ(ε) of independent N_Z(0, σ_j²) noise on cells shifted by integers Δ_j
    (at most two cells: the joint privacy loss is enumerated on the product grid)."""
    loss, prob = np.array([0.0]), np.array([1.0])
    for sigma, shift in cells:
        k = int(14 * sigma) + abs(shift) + 2
        y = np.arange(-k, k + 1)
        p = np.exp(-(y**2) / (2 * sigma**2))
        p /= p.sum()
        cell_loss = (shift * shift + 2 * shift * y) / (2 * sigma**2)
        loss = (loss[:, None] + cell_loss[None, :]).ravel()
        prob = (prob[:, None] * p[None, :]).ravel()
    return float(np.sum(prob * np.clip(-np.expm1(eps - loss), 0, None)))


@pytest.mark.parametrize(("eps", "delta"), [(1.0, 1e-5), (0.5, 1e-6), (2.0, 1e-7), (5.0, 1e-8)])
@pytest.mark.parametrize(("grid_bound", "cells"), [
    (1.0, [(1.0, 2)]),                  # the whole L2 = 2 in one count
    (1.0, [(1.0, 1), (3.0, 3)]),        # counts with bounds 1 and 3, both maxed out
    (1.0, [(1.0, 1), (3.0, 2)]),        # a cell below its bound
    (1.0, [(1.0, 2), (1.0, 1)]),
    (4.0, [(4.0, 4), (6.0, 5)]),        # coarser grids: σ_j = σ·bound_j in grid steps
])
def test_discrete_calibration_holds_exactly_for_uneven_cells(eps, delta, grid_bound, cells):
    """Cells of different σ_j (in grid steps) and uneven integer shifts Δ_j."""
    l2 = math.sqrt(sum((shift / bound) ** 2 for bound, shift in cells))
    sigma = discrete_gaussian_sigma(l2, eps, delta, grid_bound=grid_bound)
    assert exact_delta_cells([(sigma * bound, shift) for bound, shift in cells], eps) <= delta

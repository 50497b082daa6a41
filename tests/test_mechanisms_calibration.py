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

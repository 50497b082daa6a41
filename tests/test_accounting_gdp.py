"""Gaussian DP and the tightness of a single-µ description (dpsql.accounting.gdp)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpsql.accounting.composition import approx, gaussian, laplace
from dpsql.accounting.gdp import (
    gdp_delta,
    gdp_epsilon,
    gdp_mu,
    gdp_tightness,
    gdp_tradeoff,
    tradeoff_from_profile,
)
from dpsql.accounting.pld import pld, privacy_profile
from dpsql.errors import PrivacyError


def test_mu_composes_in_quadrature():
    assert gdp_mu([gaussian(2.0)] * 4) == pytest.approx(1.0)
    assert gdp_mu([]) == 0.0
    assert gdp_mu([gaussian(2.0), approx(0.1, 1e-9)]) is None
    assert gdp_mu([gaussian(2.0, discrete=True)]) is None


@pytest.mark.parametrize("mu", [0.1, 0.5, 1.0, 3.0])
@pytest.mark.parametrize("delta", [1e-10, 1e-6, 1e-2])
def test_epsilon_inverts_delta(mu, delta):
    eps = gdp_epsilon(mu, delta)
    assert gdp_delta(mu, eps) <= delta
    if eps > 0:
        assert gdp_delta(mu, eps - 1e-9) > delta * (1 - 1e-6)


def test_delta_edges_and_tails():
    assert gdp_delta(0.0, 1.0) == 0.0 and gdp_delta(1.0, math.inf) == 0.0
    assert gdp_delta(1.0, 0.0) == pytest.approx(2 * 0.6914624612740131 - 1)
    assert 0 < gdp_delta(1.0, 12.0) < 1e-20  # log-space keeps tiny δ
    assert gdp_epsilon(1.0, 0.0) == math.inf and gdp_epsilon(1.0, 0.9) == 0.0
    for bad in (lambda: gdp_delta(-1.0, 1.0), lambda: gdp_delta(1.0, math.nan),
                lambda: gdp_epsilon(1.0, 1.0), lambda: gdp_tradeoff(1.0, [1.5])):
        with pytest.raises(PrivacyError):
            bad()


def test_gdp_agrees_with_pld():
    history = [gaussian(4.0)] * 16
    assert gdp_epsilon(1.0, 1e-6) <= pld(history, 1e-6) <= gdp_epsilon(1.0, 1e-6) + 16e-4


def test_tradeoff_curve():
    alphas = np.array([0.0, 0.05, 0.5, 1.0])
    assert gdp_tradeoff(0.0, alphas).tolist() == pytest.approx((1 - alphas).tolist())
    assert np.all(np.diff(gdp_tradeoff(2.0, alphas)) < 0)


def test_tradeoff_from_pure_profile_is_the_two_line_curve():
    eps = 0.7
    alphas, betas = tradeoff_from_profile([eps], [0.0])
    kink = 1 / (1 + math.exp(eps))
    assert alphas.tolist() == pytest.approx([0.0, kink, 1.0])
    assert betas.tolist() == pytest.approx([1.0, kink, 0.0])


def test_tradeoff_from_profile_with_delta():
    alphas, betas = tradeoff_from_profile([0.0, 1.0], [0.2, 0.0])
    assert betas[0] == 1.0 and betas[-1] == 0.0
    grid = np.linspace(0, 1, 1001)
    f = np.interp(grid, alphas, betas)
    lines = np.maximum.reduce([np.zeros_like(grid), 0.8 - grid, 1 - math.e * grid,
                               (1 - grid) / math.e])
    assert np.allclose(f, lines, atol=1e-12)


def _fit(history):
    epsilons = np.linspace(0.0, pld(history, 1e-12), 300)
    return gdp_tightness(*tradeoff_from_profile(epsilons, privacy_profile(history, epsilons)))


def test_gaussian_history_is_tightly_gdp():
    mu, kappa = _fit([gaussian(4.0)] * 16)
    assert mu == pytest.approx(1.0, abs=0.01)
    assert kappa <= 0.01


def test_laplace_history_is_not():
    mu, kappa = _fit([laplace(1.0)] * 2)
    assert kappa > 0.03
    mixed_mu, mixed_kappa = _fit([laplace(1.0)] * 2 + [gaussian(2.0)])
    assert mixed_mu > mu and mixed_kappa > 0.005  # one Gaussian: less loose


def test_tightness_of_exact_curve_and_validation():
    alphas = np.linspace(0, 1, 401)
    mu, kappa = gdp_tightness(alphas, gdp_tradeoff(0.8, alphas))
    assert mu == pytest.approx(0.8, abs=1e-9) and kappa < 1e-3  # chords lie above f_µ
    assert gdp_tightness([0.0, 1.0], [1.0, 0.0]) == (0.0, pytest.approx(0.0, abs=1e-12))
    for a, b in [([0.0, 0.5], [1.0, 0.0]), ([0.0, 1.0], [1.0]), ([0.0, 1.0], [2.0, 0.0])]:
        with pytest.raises(PrivacyError):
            gdp_tightness(a, b)

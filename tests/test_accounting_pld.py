"""PLD composition (dpsql.accounting.pld): pessimistic, and close to the exact answers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import ndtr

from dpsql.accounting.composition import advanced, approx, basic, gaussian, laplace
from dpsql.accounting.gdp import gdp_epsilon
from dpsql.accounting.pld import (
    GRID,
    best_epsilon,
    compose,
    pld,
    pld_delta,
    privacy_profile,
)
from dpsql.errors import PrivacyError
from tests.support import rr_delta


def gaussian_delta(mu: float, at: float) -> float:
    return float(ndtr(-at / mu + mu / 2) - math.exp(at) * ndtr(-at / mu - mu / 2))


def rr_epsilon(epsilon: float, k: int, delta: float) -> float:
    low, high = 0.0, k * epsilon
    for _ in range(80):
        middle = (low + high) / 2
        low, high = (low, middle) if rr_delta(epsilon, k, middle) <= delta else (middle, high)
    return high


K_GAUSS, NOISE = 10, 3.0
MU = math.sqrt(K_GAUSS) / NOISE


@pytest.mark.parametrize("at", [0.0, 0.5, 1.0, 2.0, 3.0, 5.0])
def test_gaussians_match_closed_form_from_above(at):
    got = pld_delta([gaussian(NOISE)] * K_GAUSS, at)
    exact = gaussian_delta(MU, at)
    assert exact * (1 - 1e-9) <= got <= gaussian_delta(MU, at - K_GAUSS * GRID) + 1e-13


def test_gaussian_epsilon_close_to_exact():
    got = pld([gaussian(NOISE)] * K_GAUSS, 1e-5)
    exact = gdp_epsilon(MU, 1e-5)
    assert exact <= got <= exact + K_GAUSS * GRID


@pytest.mark.parametrize("at", [0.5, 1.0, 2.0, 3.0, 4.0])
def test_randomised_response_matches_exact_from_above(at):
    got = pld_delta([laplace(0.1)] * 50, at)
    assert rr_delta(0.1, 50, at) * (1 - 1e-9) <= got <= rr_delta(0.1, 50, at - 50 * GRID) + 1e-13


def test_many_laplace_beat_basic_and_advanced():
    history = [laplace(0.1)] * 50
    eps = pld(history, 1e-6)
    exact = rr_epsilon(0.1, 50, 1e-6)
    assert exact <= eps <= exact + 50 * GRID
    assert eps < advanced(history, 1e-6)[0] < basic(history)[0] == 5.0
    assert pld([laplace(0.1)], 1e-6) <= 0.1 + GRID


def test_continuous_and_discrete_laplace():
    one = [laplace(1.0, steps=None)]
    for at in (0.0, 0.3, 0.9):  # exact: 1 − e^{(ε'−ε)/2}
        assert pld_delta(one, at) == pytest.approx(-math.expm1((at - 1.0) / 2), abs=2 * GRID)
        assert pld_delta(one, at) >= -math.expm1((at - 1.0) / 2) - 1e-12
    many = [laplace(0.1, steps=None)] * 50
    worst = [laplace(0.1)] * 50
    fine = [laplace(0.1, steps=2**20)] * 50
    assert pld(many, 1e-6) < pld(fine, 1e-6) + 2e-3 and pld(fine, 1e-6) < pld(worst, 1e-6)
    assert pld([laplace(0.1, steps=1)] * 50, 1e-6) == pld(worst, 1e-6)


def test_approx_events_put_delta_at_infinity():
    assert pld_delta([approx(1.0, 1e-6)], 1.0) == pytest.approx(1e-6)
    assert pld_delta([approx(1.0, 1e-6)] * 3, 50.0) == pytest.approx(3e-6, rel=1e-6)
    assert pld([approx(0.5, 1e-3)], 1e-4) == math.inf
    assert pld([approx(0.0, 1e-9)], 1e-6) == 0.0


def test_pure_history_at_zero_delta_is_its_largest_loss():
    assert pld([laplace(0.25)] * 4, 0.0) == pytest.approx(1.0)


def test_profile_is_decreasing_and_matches_pld():
    history = [laplace(0.2)] * 10 + [gaussian(5.0)] * 5 + [approx(0.0, 1e-8)]
    epsilons = np.linspace(0, 4, 81)
    deltas = privacy_profile(history, epsilons)
    assert np.all(np.diff(deltas) <= 1e-15) and deltas[-1] >= 1e-8
    eps = pld(history, 1e-6)
    assert pld_delta(history, eps) <= 1e-6 < pld_delta(history, eps - 1e-3)


def test_discrete_gaussians_are_refused_by_pld_but_not_by_best():
    with pytest.raises(PrivacyError, match="zcdp"):
        pld([gaussian(2.0, discrete=True)], 1e-6)
    eps, method = best_epsilon([gaussian(2.0, discrete=True), approx(0.1, 1e-8)], 1e-6)
    assert method == "zcdp" and math.isfinite(eps)


@pytest.mark.parametrize("bad", [
    lambda: pld([laplace(1.0)], -1e-6), lambda: pld([laplace(1.0)], 1.0),
    lambda: pld([laplace(1.0)], math.nan), lambda: pld_delta([laplace(1.0)], -1.0),
    lambda: privacy_profile([laplace(1.0)], [math.nan]), lambda: compose([], grid=0.0),
    lambda: best_epsilon([laplace(1.0)], 2.0), lambda: pld([0.5], 1e-6),
])
def test_invalid_inputs(bad):
    with pytest.raises(PrivacyError):
        bad()


@pytest.mark.parametrize(("history", "method"), [
    ([laplace(0.5)], "basic"),
    ([laplace(0.1)] * 50, "pld"),
    ([gaussian(4.0)] * 16, "gdp"),
    ([gaussian(4.0, discrete=True)] * 16, "zcdp"),
    ([laplace(0.1)] * 20 + [gaussian(3.0)] * 5 + [approx(0.1, 1e-8)], "pld"),
])
def test_best_epsilon_picks_the_tightest_valid(history, method):
    delta = 1e-6 if method != "basic" else 0.0
    eps, chosen = best_epsilon(history, delta)
    assert chosen == method
    summed = basic(history)
    if summed is not None and summed[1] <= delta:
        assert eps <= summed[0]


def test_best_epsilon_of_nothing_is_zero():
    assert best_epsilon([], 1e-6)[0] == 0.0


def test_atoms_sit_on_their_own_grid_points():
    for epsilon in (0.01, 0.1, 0.3, 1.0):
        loss = compose([laplace(epsilon)])
        assert sorted(loss.probs.nonzero()[0] + loss.offset) == [
            round(-epsilon / GRID), round(epsilon / GRID)]


def test_too_fine_a_grid_is_refused_and_best_epsilon_falls_back():
    with pytest.raises(PrivacyError, match="grid of at least"):
        pld([gaussian(0.01)], 1e-6)
    assert best_epsilon([gaussian(0.01)], 1e-6)[1] == "gdp"
    assert pld_delta([approx(1.0, 0.9999999999999999)] * 3, 2.0) == 1.0

"""Noise scales against OpenDP and dp-accounting over a grid of (ε, δ, Δ).

Laplace and discrete Laplace: t = Δ/ε, which both libraries reproduce exactly.  Analytic
Gaussian (Balle & Wang 2018): dp-accounting's ``get_sigma_gaussian`` and its PLD search.
Discrete Gaussian: three references, since no library calibrates the *multivariate* discrete
Gaussian that dpsql draws —

- the exact one-cell profile (Canonne, Kamath & Steinke 2020, Thm 7), dpsql's
  ``discrete_gaussian_delta`` checked against dp-accounting's discrete-Gaussian PLD; every
  one-cell configuration a calibration must cover gives a *lower* bound on dpsql's σ;
- OpenDP's discrete Gaussian with its zCDP → (ε, δ) conversion, which must reproduce dpsql's
  route (a) σ and can only be above the σ dpsql uses.
"""

from __future__ import annotations

import itertools
import math

import pytest

from dpsql.mechanisms import (
    analytic_gaussian_sigma,
    discrete_gaussian_sigma,
    laplace_scale,
    zcdp_log_delta,
)
from dpsql.mechanisms.calibration import smallest_passing
from dpsql.mechanisms.discrete_calibration import discrete_gaussian_delta
from tests.reference.references import dp_accounting, opendp

dp = opendp()
accounting = dp_accounting()
Params = accounting.pld.common.DifferentialPrivacyParameters
smallest = accounting.pld.accountant

EPSILONS = (0.1, 0.5, 1.0, 2.0, 4.0)
DELTAS = (1e-5, 1e-7, 1e-9)
SENSITIVITIES = (1, 3, 10)
GAUSSIAN_L2 = (1.0, math.sqrt(8), 10.0)
GRID = list(itertools.product(EPSILONS, DELTAS))


@pytest.mark.parametrize(("eps", "sensitivity"), list(itertools.product(EPSILONS, SENSITIVITIES)))
def test_laplace_scale_is_the_reference_scale(eps, sensitivity):
    t = laplace_scale(sensitivity, eps)
    integer = dp.m.make_laplace(dp.atom_domain(T=int), dp.absolute_distance(T=int), scale=t)
    assert integer.map(sensitivity) <= eps  # OpenDP rounds its ε up: never above ours
    assert integer.map(sensitivity) == pytest.approx(eps, rel=1e-15)
    assert smallest.get_smallest_laplace_noise(Params(eps, 0.0), sensitivity=sensitivity) == \
        pytest.approx(t, rel=1e-9)
    parameter = smallest.get_smallest_discrete_laplace_noise(Params(eps, 0.0),
                                                             sensitivity=sensitivity)
    assert 1 / parameter == pytest.approx(t, rel=1e-9)


@pytest.mark.parametrize(("eps", "delta"), GRID)
def test_analytic_gaussian_sigma_is_balle_wang(eps, delta):
    for l2 in GAUSSIAN_L2:
        sigma = analytic_gaussian_sigma(l2, eps, delta)
        reference = accounting.get_sigma_gaussian(eps, delta) * l2
        assert reference <= sigma <= reference * (1 + 1e-9)
    pld_search = smallest.get_smallest_gaussian_noise(Params(eps, delta))
    assert analytic_gaussian_sigma(1.0, eps, delta) == pytest.approx(pld_search, rel=1e-6)


@pytest.mark.parametrize(("sigma", "eps", "shift"), [
    (0.6, 0.5, 1), (1.0, 1.0, 1), (3.7306, 1.0, 1), (4.0, 2.0, 1), (8.0, 0.5, 2),
    (12.0, 0.3, 3), (30.0, 0.1, 1), (5.0, 0.0, 1),
])
def test_exact_discrete_gaussian_profile_matches_dp_accounting(sigma, eps, shift):
    """CKS Thm 7 by summation against dp-accounting's PLD of the same discrete Gaussian, which
    discretises the loss pessimistically (grid 1e-5): above the exact δ, by little."""
    exact = discrete_gaussian_delta(sigma, eps, shift)
    loss = accounting.pld.privacy_loss_distribution.from_discrete_gaussian_mechanism(
        sigma, sensitivity=shift, value_discretization_interval=1e-5)
    reference = loss.get_delta_for_epsilon(eps)
    assert exact <= reference * (1 + 1e-9)
    assert exact == pytest.approx(reference, rel=2e-3)


def exact_one_cell_sigma(l2: float, eps: float, delta: float, shift: int) -> float:
    """σ (per unit bound) that one cell of bound shift/l2 grid steps, moved by ``shift`` steps,
    needs exactly: a configuration dpsql's σ must cover when that bound is ≥ 1."""
    bound = shift / l2
    return smallest_passing(
        lambda s: discrete_gaussian_delta(s * bound, eps, shift) <= delta,
        analytic_gaussian_sigma(l2, eps, delta)) if bound >= 1 else 0.0


@pytest.mark.parametrize(("eps", "delta"), GRID)
def test_discrete_gaussian_sigma_covers_every_exact_one_cell_case(eps, delta):
    """dpsql's σ is never below what CKS Thm 7 requires of a one-cell configuration (the
    shift spread over bound = shift/L2 steps), and at most 7.3 % above the largest of them."""
    for l2 in GAUSSIAN_L2:
        sigma = discrete_gaussian_sigma(l2, eps, delta)
        shifts = range(math.ceil(l2), math.ceil(l2) + 3)
        needed = max(exact_one_cell_sigma(l2, eps, delta, d) for d in shifts)
        assert needed <= sigma <= 1.073 * needed
        for shift in shifts:
            assert discrete_gaussian_delta(sigma * shift / l2, eps, shift) <= delta


def opendp_zcdp_sigma(l2: float, eps: float, delta: float) -> float:
    """The least scale of OpenDP's discrete Gaussian whose zCDP → (ε, δ) curve meets (ε, δ)."""
    def epsilon_at(scale: float) -> float:
        meas = dp.m.make_gaussian(dp.atom_domain(T=int), dp.absolute_distance(T=float),
                                  scale=scale)
        return dp.c.make_zCDP_to_approxDP(meas).map(l2).epsilon(delta)

    return smallest_passing(lambda s: epsilon_at(s) <= eps, analytic_gaussian_sigma(l2, eps, delta))


@pytest.mark.parametrize(("eps", "delta"), GRID)
def test_zcdp_route_is_opendps_discrete_gaussian(eps, delta):
    """Route (a): ρ = L2²/2σ² (CKS Thm 14) and the CKS Cor. 13 conversion, as in OpenDP."""
    log_delta = math.log(delta) - 1e-12
    for l2 in GAUSSIAN_L2:
        route_a = smallest_passing(
            lambda s, l2=l2: zcdp_log_delta(l2 * l2 / (2 * s * s), eps) <= log_delta,
            analytic_gaussian_sigma(l2, eps, delta))
        reference = opendp_zcdp_sigma(l2, eps, delta)
        assert route_a == pytest.approx(reference, rel=1e-8)
        assert discrete_gaussian_sigma(l2, eps, delta) <= route_a


@pytest.mark.parametrize("rho", [1e-3, 1 / 32, 0.5, 4.0])
def test_zcdp_conversion_matches_opendp(rho):
    meas = dp.m.make_gaussian(dp.atom_domain(T=int), dp.absolute_distance(T=float),
                              scale=1 / math.sqrt(2 * rho))
    curve = dp.c.make_zCDP_to_approxDP(meas).map(1.0)
    for eps in (0.05, 0.5, 1.0, 3.0, 10.0):
        ours = math.exp(zcdp_log_delta(rho, eps))
        assert ours <= curve.delta(eps) * (1 + 1e-9)
        assert ours == pytest.approx(curve.delta(eps), rel=1e-6, abs=1e-300)

"""Basic, advanced and zCDP composition of a mechanism history (dpsql.accounting.composition)."""

from __future__ import annotations

import math

import pytest
from scipy.special import ndtr

from dpsql.accounting.composition import (
    MechanismEvent,
    advanced,
    approx,
    basic,
    gaussian,
    laplace,
    zcdp,
    zcdp_to_dp,
)
from dpsql.errors import PrivacyError
from tests.support import rr_delta


def gaussian_delta(mu: float, at: float) -> float:
    return float(ndtr(-at / mu + mu / 2) - math.exp(at) * ndtr(-at / mu - mu / 2))


@pytest.mark.parametrize("bad", [
    lambda: laplace(0.0), lambda: laplace(-1.0), lambda: laplace(math.nan),
    lambda: laplace(math.inf), lambda: laplace(1.0, steps=0), lambda: gaussian(0.0),
    lambda: gaussian(-2.0), lambda: approx(1.0, 1.0), lambda: approx(-0.1, 0.0),
    lambda: approx(1.0, math.nan), lambda: MechanismEvent("poisson"),
    lambda: basic([(1.0, 0.0)]),
])
def test_invalid_events_are_refused(bad):
    with pytest.raises(PrivacyError):
        bad()


def test_events_read_well_and_are_hashable():
    assert [str(e) for e in (laplace(0.5, steps=None), gaussian(2.0, discrete=True),
                             approx(0.1, 1e-6))] == [
        "laplace(ε=0.5, steps=None)", "gaussian(σ/Δ=2, discrete)", "approx(ε=0.1, δ=1e-06)"]
    assert len({laplace(0.5), laplace(0.5), gaussian(1.0)}) == 2


def test_basic_is_exact_over_decimals():
    assert basic([laplace(0.1)] * 3) == (0.3, 0.0)
    assert basic([approx(0.1, 1e-7), approx(0.2, 2e-7)]) == (0.3, 3e-7)
    assert basic([]) == (0.0, 0.0)
    assert basic([laplace(1.0), gaussian(2.0)]) is None


@pytest.mark.parametrize(("epsilon", "k"), [(0.1, 100), (0.5, 20), (0.01, 1000), (1.0, 3)])
def test_advanced_is_valid_and_beats_drv(epsilon, k):
    slack = 1e-6
    eps, delta = advanced([laplace(epsilon)] * k, slack)
    assert delta == pytest.approx(slack)
    assert rr_delta(epsilon, k, eps) <= delta  # valid against the exact optimal composition
    drv = epsilon * math.sqrt(2 * k * math.log(1 / slack)) + k * epsilon * math.expm1(epsilon)
    assert eps <= min(drv, k * epsilon) + 1e-12


def test_advanced_heterogeneous_and_with_deltas():
    events = [laplace(0.05)] * 200 + [laplace(0.2)] * 10 + [approx(0.1, 1e-7)] * 5
    eps, delta = advanced(events, 1e-6)
    assert eps < basic(events)[0]
    assert delta == pytest.approx(1 - (1 - 1e-6) * (1 - 1e-7) ** 5)
    assert advanced([gaussian(1.0)], 1e-6) is None
    for bad in (0.0, 1.0, -1e-6, math.nan):
        with pytest.raises(PrivacyError):
            advanced([laplace(1.0)], bad)


def test_zcdp_rho():
    assert zcdp([gaussian(2.0)] * 4) == pytest.approx(0.5)
    assert zcdp([laplace(0.2)]) == pytest.approx(0.02)
    assert zcdp([gaussian(2.0, discrete=True)]) == pytest.approx(0.125)
    assert zcdp([approx(0.1, 1e-9)]) is None
    assert zcdp([]) == 0.0


@pytest.mark.parametrize("rho", [1e-6, 1e-3, 0.05, 0.5, 2.0, 30.0])
@pytest.mark.parametrize("delta", [1e-12, 1e-6, 1e-3])
def test_zcdp_conversion_is_tighter_and_valid(rho, delta):
    eps = zcdp_to_dp(rho, delta)
    assert eps <= rho + 2 * math.sqrt(rho * math.log(1 / delta))
    # A Gaussian with µ = √(2ρ) is exactly ρ-zCDP: its true δ at the returned ε is ≤ δ.
    assert gaussian_delta(math.sqrt(2 * rho), eps) <= delta * (1 + 1e-9)


def test_zcdp_conversion_edges():
    assert zcdp_to_dp(0.0, 1e-6) == 0.0
    assert zcdp_to_dp(1.0, 0.0) == math.inf
    for rho, delta in [(-1.0, 1e-6), (math.nan, 1e-6), (1.0, 1.0), (1.0, -1e-9)]:
        with pytest.raises(PrivacyError):
            zcdp_to_dp(rho, delta)

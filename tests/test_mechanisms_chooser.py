"""The Laplace/Gaussian chooser and its per-statistic noise."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpsql.errors import InternalError, PrivacyError
from dpsql.mechanisms import (
    Noise,
    Sampler,
    Sensitivity,
    analytic_gaussian_sigma,
    choose_noise,
    discrete_gaussian_sigma,
)
from dpsql.mechanisms.chooser import one_share

UNIT = Sensitivity("n", bound=1.0, l1=1.0, l2=1.0, integer=True)


def laplace_std(t: float) -> float:
    p = math.exp(-1 / t)
    return math.sqrt(2 * p) / (1 - p)


def crossover_bounds(eps: float, delta: float) -> tuple[int, int]:
    """(largest S surely Laplace, smallest S surely Gaussian), from formulas alone.

    The discrete-Gaussian σ lies between the continuous analytic σ (a lower bound) and 1.09×
    it (checked against zCDP in the calibration tests); std ≤ σ, and for σ ≥ 2 the discrete
    std equals σ to 1e-15.
    """
    unit = analytic_gaussian_sigma(1.0, eps, delta)
    laplace_side = max(s for s in range(1, 200) if unit * math.sqrt(s) >= laplace_std(s / eps))
    gauss_side = min(s for s in range(1, 200)
                     if 1.09 * unit * math.sqrt(s) < laplace_std(s / eps))
    return laplace_side, gauss_side


def test_crossover_reference_table():
    kinds = {s: choose_noise([UNIT] * s, 1.0, 1e-5).kind for s in range(1, 13)}
    assert all(kinds[s] == "laplace" for s in range(1, 7))
    assert all(kinds[s] == "gaussian" for s in range(8, 13))


@pytest.mark.parametrize(("eps", "delta"), [(1.0, 1e-5), (0.5, 1e-6), (2.0, 1e-7), (0.1, 1e-9)])
def test_crossover_matches_formulas(eps, delta):
    laplace_side, gauss_side = crossover_bounds(eps, delta)
    for s in range(1, gauss_side + 3):
        plan = choose_noise([UNIT] * s, eps, delta)
        if s <= laplace_side:
            assert plan.kind == "laplace", s
        if s >= gauss_side:
            assert plan.kind == "gaussian", s
        assert plan.kind == ("gaussian" if plan.gaussian_std < plan.laplace_std else "laplace")


def test_plan_values():
    plan = choose_noise([UNIT] * 8, 1.0, 1e-5)
    assert plan.kind == "gaussian"
    assert plan.unit_scale == discrete_gaussian_sigma(math.sqrt(8), 1.0, 1e-5)
    assert plan.l1 == 8 and plan.l2 == pytest.approx(math.sqrt(8))
    assert plan.laplace_std == pytest.approx(laplace_std(8.0))
    assert "gaussian" in str(plan)


def test_delta_zero_forces_laplace():
    plan = choose_noise([UNIT] * 50, 1.0, 0.0)
    assert plan.kind == "laplace"
    assert plan.unit_scale == 50.0
    assert plan.gaussian_std == math.inf


def test_mixed_bounds_scale_per_statistic():
    count = Sensitivity("n", bound=3.0, l1=2.0, l2=math.sqrt(2), integer=True)
    total = Sensitivity("s", bound=250.0, l1=2.0, l2=math.sqrt(2), integer=False)
    plan = choose_noise([count, total], 0.5, 0.0)
    n_noise, s_noise = plan.noise_for(count), plan.noise_for(total)
    # Each statistic is measured in m = ⌈l1⌉ = 2 per-cell bounds: one share each.
    assert n_noise == Noise("laplace", 3.0 * 2 * plan.unit_scale, 1.0)
    assert s_noise.scale == pytest.approx(250.0 * 2 * plan.unit_scale)
    g = s_noise.granularity
    assert math.frexp(g)[0] == 0.5 and g <= s_noise.scale * 2.0**-20
    # the real-valued statistic's sensitivity is inflated by (1 + g/bound), bound in shares
    assert plan.l1 == pytest.approx(1.0 + 1.0 * (1 + g / 500.0), rel=1e-15)
    assert plan.unit_scale == pytest.approx(plan.l1 / 0.5, rel=1e-15)
    # the noise is what per-cell units give: bound × L1 total / ε, L1 total = 2 + 2
    assert n_noise.scale == pytest.approx(3.0 * 4.0 / 0.5, rel=1e-5) and n_noise.scale > 24


def test_each_statistic_takes_one_share():
    """A count of people in 4 groups (q = 4) and a count of rows in 1 (q = 1): each gets
    half of ε, not 4/5 and 1/5 as per-cell bounds would split it (``one_share``)."""
    people = Sensitivity("u", bound=1.0, l1=4.0, l2=2.0, integer=True)
    rows = Sensitivity("n", bound=3.0, l1=1.0, l2=1.0, integer=True)
    plan = choose_noise([people, rows], 1.0, 0.0)
    assert plan.noise_for(people).scale == 4.0 / 0.5
    assert plan.noise_for(rows).scale == 3.0 / 0.5
    assert one_share(people) == Sensitivity("u", bound=4.0, l1=1.0, l2=0.5, integer=True)
    assert one_share(rows) is rows


def test_cells_inflates_additively():
    spread = Sensitivity("s", bound=1.0, l1=1.0, l2=1.0, integer=False, cells=100.0)
    plan = choose_noise([spread], 1.0, 0.0)
    g = plan.granularities[0]
    assert plan.l1 == pytest.approx(1.0 + 100.0 * g)
    gauss = choose_noise([spread] * 20, 1.0, 1e-5)
    assert gauss.kind == "gaussian"
    g = gauss.granularities[0]
    assert gauss.l2 == pytest.approx(math.sqrt(20) * (1.0 + 10.0 * g))


def test_gaussian_grid_statistics_use_fine_grid():
    real = Sensitivity("avg", bound=0.01, l1=1.0, l2=1.0)
    plan = choose_noise([real] * 30, 1.0, 1e-6)
    assert plan.kind == "gaussian"
    noise = plan.noise_for(real)
    assert noise.granularity == 2.0**-13  # floored: values up to 1e12 stay exact
    assert plan.unit_scale >= discrete_gaussian_sigma(plan.l2, 1.0, 1e-6, grid_bound=1e6)


def test_huge_integer_bound_goes_on_a_grid():
    big = Sensitivity("s", bound=1e9, l1=4.0, l2=2.0, integer=True)
    plan = choose_noise([big], 1.0, 1e-6)
    noise = plan.noise_for(big)
    assert noise.granularity >= 16.0
    assert noise.grid_scale < 2.0**22
    assert plan.l2 == pytest.approx(0.5 * (1 + noise.granularity / 4e9))  # in shares of 4
    assert noise.add_to(np.array([123456789.0]), Sampler(seed=1))[0] % noise.granularity == 0


def test_noise_for_unknown_statistic():
    plan = choose_noise([UNIT], 1.0, 1e-5)
    with pytest.raises(InternalError):
        plan.noise_for(Sensitivity("other", 1.0, 1.0, 1.0, True))


def test_statistic_validation():
    with pytest.raises(PrivacyError):
        Sensitivity("x", bound=0.0, l1=1.0, l2=1.0)
    with pytest.raises(PrivacyError):
        Sensitivity("x", bound=1.0, l1=math.inf, l2=1.0)
    with pytest.raises(InternalError):
        Sensitivity("x", bound=1.5, l1=1.0, l2=1.0, integer=True)
    with pytest.raises(InternalError):
        Sensitivity("x", bound=1.0, l1=1.0, l2=2.0)
    with pytest.raises(InternalError):
        choose_noise([], 1.0, 1e-5)
    with pytest.raises(PrivacyError):
        choose_noise([UNIT], -1.0, 1e-5)

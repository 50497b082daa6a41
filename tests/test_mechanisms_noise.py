"""Per-cell noise: grid rounding, std, confidence intervals, tails."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpsql.errors import InternalError
from dpsql.mechanisms import Noise, Sampler, grid_granularity

CASES = [
    Noise("laplace", 1.0),
    Noise("laplace", 6.5),
    Noise("laplace", 3.0, 2.0**-3),
    Noise("gaussian", 0.8),
    Noise("gaussian", 3.7306),
    Noise("gaussian", 2.0, 2.0**-4),
    Noise("gaussian", 5000.0, 2.0**-10),
]


def test_grid_granularity_is_a_small_power_of_two():
    for scale in (1e-3, 0.37, 1.0, 129.0, 5e4, 3e9):
        g = grid_granularity(scale)
        assert math.frexp(g)[0] == 0.5
        assert g >= 2.0**-13
        if scale >= 2.0**7:
            assert scale * 2.0**-21 < g <= scale * 2.0**-20
    with pytest.raises(InternalError):
        grid_granularity(0.0)


def test_add_to_rounds_to_the_grid_exactly():
    rng = np.random.default_rng(0)
    values = rng.normal(0, 1e6, size=50_000)
    noise = Noise("laplace", 0.75, 2.0**-10)
    out = noise.add_to(values, Sampler(seed=1))
    steps = out / noise.granularity
    assert np.array_equal(steps, np.round(steps))
    assert out.dtype == np.float64 and out.shape == values.shape
    assert np.abs(out - values).max() < 30


def test_add_to_keeps_shape_and_rejects_nan():
    noise = Noise("gaussian", 1.0)
    assert noise.add_to(np.zeros((2, 3)), Sampler(seed=1)).shape == (2, 3)
    with pytest.raises(InternalError):
        noise.add_to(np.array([1.0, math.nan]), Sampler(seed=1))
    with pytest.raises(InternalError):
        noise.add_to(np.array([math.inf]), Sampler(seed=1))


@pytest.mark.parametrize("noise", CASES, ids=str)
def test_std_matches_empirical(noise):
    draws = noise.add_to(np.zeros(200_000), Sampler(seed=2))
    assert draws.std() == pytest.approx(noise.std, rel=0.02)


def test_std_closed_forms():
    p = math.exp(-1 / 2.0)
    assert Noise("laplace", 2.0).std == pytest.approx(math.sqrt(2 * p) / (1 - p), rel=1e-12)
    assert Noise("laplace", 1.0, 2.0**-8).std == pytest.approx(math.sqrt(2), rel=1e-4)
    assert Noise("gaussian", 1e4, 2.0**-10).std == 1e4
    assert Noise("gaussian", 0.5).std < 0.5


@pytest.mark.parametrize("noise", CASES, ids=str)
def test_ci_covers(noise):
    draws = noise.add_to(np.zeros(100_000), Sampler(seed=3))
    for level in (0.5, 0.9, 0.95):
        h = noise.ci_halfwidth(level)
        assert h % noise.granularity == 0
        assert np.mean(np.abs(draws) <= h) >= level - 0.005
        if h > 0 and noise.grid_scale < 4096:
            # minimal: one grid step less undercovers (exactly, by the pmf)
            assert 2 * noise.tail(h) > 1 - level


def test_ci_laplace_closed_form():
    for t in (0.5, 1.0, 4.0, 30.0):
        noise = Noise("laplace", t)
        p = math.exp(-1 / t)
        m = noise.ci_halfwidth(0.95)
        assert 2 * p ** (m + 1) / (1 + p) <= 0.05
        assert m == 0 or 2 * p**m / (1 + p) > 0.05


def test_tail_laplace_closed_form_and_empirical():
    noise = Noise("laplace", 2.0)
    p = math.exp(-1 / 2.0)
    for m in (1, 3, 10):
        assert noise.tail(m) == pytest.approx(p**m / (1 + p), rel=1e-12)
    assert noise.tail(0) == pytest.approx(1 - p / (1 + p), rel=1e-12)
    assert noise.tail(-2) == pytest.approx(1 - p**3 / (1 + p), rel=1e-12)
    draws = noise.add_to(np.zeros(200_000), Sampler(seed=4))
    assert np.mean(draws >= 3) == pytest.approx(noise.tail(3), abs=0.003)


def test_tail_gaussian_bound_is_conservative():
    exact = Noise("gaussian", 3.0)
    draws = exact.add_to(np.zeros(200_000), Sampler(seed=5))
    assert np.mean(draws >= 4) == pytest.approx(exact.tail(4), abs=0.003)
    big = Noise("gaussian", 2.0**14)
    for k in (1, 2**14, 2**15):
        assert big.tail(k) >= 0.5 * math.erfc(k / 2.0**14 / math.sqrt(2))


def test_str_and_validation():
    assert str(Noise("laplace", 2.5, 2.0**-10)) == "discrete laplace(t=2.5, grid=2^-10)"
    assert str(Noise("gaussian", 3.0)) == "discrete gaussian(sigma=3, grid=1)"
    for bad in (dict(kind="cauchy", scale=1.0), dict(kind="laplace", scale=-1.0),
                dict(kind="laplace", scale=1.0, granularity=0.3)):
        with pytest.raises(InternalError):
            Noise(**bad)


def test_add_to_clamps_values_too_large_for_their_grid_instead_of_failing():
    """A float sum beyond 2^53 grid steps is released clamped: an error there would depend on
    the data after the charge."""
    noisy = Noise("laplace", 1e-9).add_to(np.array([1e300, -1e300, 3.0]), Sampler(seed=0))
    assert np.all(np.isfinite(noisy)) and noisy[2] == 3.0
    assert abs(noisy[0]) < 2.0**53 * Noise("laplace", 1e-9).granularity

"""Exact samplers: distributions checked against the exact pmf with fixed seeds."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from scipy.stats import binomtest, chisquare

from dpsql.errors import InternalError
from dpsql.mechanisms import Sampler

N = 200_000


def dlap_pmf(support: np.ndarray, t: float) -> np.ndarray:
    p = math.exp(-1 / t)
    return (1 - p) / (1 + p) * p ** np.abs(support)


def dgauss_pmf(support: np.ndarray, sigma: float) -> np.ndarray:
    y = np.arange(-int(40 * sigma) - 5, int(40 * sigma) + 6)
    total = np.exp(-(y**2) / (2 * sigma**2)).sum()
    return np.exp(-(support**2) / (2 * sigma**2)) / total


def chi2_pvalue(draws: np.ndarray, pmf) -> float:
    """Chi-square of draws against the exact pmf; values with expected count < 5 pooled."""
    support = np.arange(draws.min(), draws.max() + 1)
    expected = pmf(support) * draws.size
    observed = np.bincount(draws - draws.min())
    keep = expected >= 5
    obs = np.append(observed[keep], observed[~keep].sum() + (draws.size - observed.sum()))
    exp = np.append(expected[keep], draws.size - expected[keep].sum())
    return chisquare(obs, exp).pvalue


@pytest.mark.parametrize("t", [0.3, 1.0, 2.5, 7.0, 40.0])
def test_discrete_laplace_matches_pmf(t):
    draws = Sampler(seed=11).discrete_laplace(t, N)
    assert draws.dtype == np.int64
    assert chi2_pvalue(draws, lambda s: dlap_pmf(s, t)) > 1e-4
    p = math.exp(-1 / t)
    assert draws.var() == pytest.approx(2 * p / (1 - p) ** 2, rel=0.03)
    assert abs(draws.mean()) < 5 * math.sqrt(2 * p / (1 - p) ** 2 / N)


@pytest.mark.parametrize("sigma", [0.4, 1.0, 3.7306, 12.5])
def test_discrete_gaussian_matches_pmf(sigma):
    draws = Sampler(seed=12).discrete_gaussian(sigma, N)
    assert chi2_pvalue(draws, lambda s: dgauss_pmf(s, sigma)) > 1e-4
    support = np.arange(-int(40 * sigma) - 5, int(40 * sigma) + 6)
    variance = float((support**2 * dgauss_pmf(support, sigma)).sum())
    assert draws.var() == pytest.approx(variance, rel=0.03)
    assert abs(draws.mean()) < 5 * math.sqrt(variance / N)


def test_the_check_can_fail():
    """The same test rejects a 5 % error in the scale."""
    draws = Sampler(seed=11).discrete_laplace(2.5 * 1.05, N)
    assert chi2_pvalue(draws, lambda s: dlap_pmf(s, 2.5)) < 1e-4
    draws = Sampler(seed=12).discrete_gaussian(3.7306 * 1.05, N)
    assert chi2_pvalue(draws, lambda s: dgauss_pmf(s, 3.7306)) < 1e-4


@pytest.mark.parametrize("scale", [2.0**20, 3e7, 2.0**29.5])
def test_large_scales(scale):
    lap = Sampler(seed=4).discrete_laplace(scale, N)
    assert lap.std() == pytest.approx(math.sqrt(2) * scale, rel=0.02)
    gauss = Sampler(seed=4).discrete_gaussian(scale, N)
    assert gauss.std() == pytest.approx(scale, rel=0.01)
    assert np.mean(np.abs(gauss) <= 1.96 * scale) == pytest.approx(0.95, abs=0.005)


def test_tiny_scales():
    assert not Sampler(seed=1).discrete_laplace(1e-300, 1000).any()
    assert not Sampler(seed=1).discrete_gaussian(1e-3, 1000).any()


def test_seeded_reproducible_private_not():
    a = Sampler(seed=5).discrete_gaussian(3.0, 1000)
    b = Sampler(seed=5).discrete_gaussian(3.0, 1000)
    assert np.array_equal(a, b)
    assert not Sampler(seed=5).private
    secure = Sampler()
    assert secure.private
    assert not np.array_equal(secure.discrete_laplace(100.0, 1000),
                              secure.discrete_laplace(100.0, 1000))


@pytest.mark.parametrize("n", [3, 6, 256, 1000, 2**40 + 7])
def test_below_is_uniform(n):
    draws = Sampler(seed=8).below(n, N)
    assert draws.max() < n
    if n <= 1000:
        assert chisquare(np.bincount(draws.astype(np.int64), minlength=n)).pvalue > 1e-4
    else:
        assert (draws.astype(np.float64) / n).mean() == pytest.approx(0.5, abs=0.005)


@pytest.mark.parametrize(("whole", "num", "den"), [(0, 1, 3), (0, 5, 5), (2, 1, 2), (0, 0, 7)])
def test_bernoulli_exp(whole, num, den):
    s = Sampler(seed=9)
    hits = s.bernoulli_exp(np.full(N, whole, dtype=np.int64), np.full(N, num, dtype=np.uint64), den)
    expected = math.exp(-(whole + num / den))
    if expected == 1.0:
        assert hits.all()
    else:
        assert binomtest(int(hits.sum()), N, expected).pvalue > 1e-4


def test_rejects_bad_scales():
    for bad in (0.0, -1.0, math.nan, math.inf, 2.0**41):
        with pytest.raises(InternalError):
            Sampler(seed=1).discrete_laplace(bad, 3)
        with pytest.raises(InternalError):
            Sampler(seed=1).discrete_gaussian(bad, 3)
    with pytest.raises(InternalError):
        Sampler(seed=1).discrete_gaussian(2.0**31, 3)


@pytest.mark.parametrize("kind", ["discrete_laplace", "discrete_gaussian"])
def test_million_draws_timing(kind):
    sampler = Sampler()
    start = time.perf_counter()
    draws = getattr(sampler, kind)(3.7306, 1_000_000)
    elapsed = time.perf_counter() - start
    print(f"{kind}: 1e6 private draws in {elapsed:.3f} s")
    assert draws.size == 1_000_000
    assert elapsed < 3.0

"""dpsql's exact samplers against the exact pmf and against OpenDP's samplers.

dpsql draws at a fixed seed (reproducible); OpenDP draws from the OS (it cannot be seeded), so
its tests use a significance level of 1e-6: a correct sampler fails one in a million runs.
Each distribution is checked by Pearson's χ² on bins with ≥ 20 expected draws (the tails
pooled into two end bins), by its variance (z-test with the exact 4th moment), and by a two-sided
tail P(|X| ≥ k) at about 3 std (exact binomial test); dpsql's and OpenDP's draws are also
compared with each other (χ² test of homogeneity on the same bins).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from dpsql.mechanisms import Sampler
from tests.reference.references import discrete_gaussian_pmf, discrete_laplace_pmf, opendp

dp = opendp()

DRAWS = 200_000
REFERENCE_DRAWS = 50_000
LEVEL = 1e-3  # dpsql at a fixed seed: deterministic, a real bias fails every time
REFERENCE_LEVEL = 1e-6
CASES = [("laplace", 0.7), ("laplace", 2.5), ("laplace", 40.0),
         ("gaussian", 0.8), ("gaussian", 3.73), ("gaussian", 40.0)]


def exact_pmf(kind: str, scale: float) -> tuple[np.ndarray, np.ndarray]:
    width = math.ceil((60 if kind == "laplace" else 12) * scale) + 5
    support = np.arange(-width, width + 1)
    pmf = (discrete_laplace_pmf if kind == "laplace" else discrete_gaussian_pmf)(scale, support)
    return support, pmf


def dpsql_draws(kind: str, scale: float) -> np.ndarray:
    sampler = Sampler(seed=17)
    draw = sampler.discrete_laplace if kind == "laplace" else sampler.discrete_gaussian
    return draw(scale, DRAWS)


def opendp_draws(kind: str, scale: float) -> np.ndarray:
    domain = dp.vector_domain(dp.atom_domain(T=dp.i64))
    if kind == "laplace":
        meas = dp.m.make_laplace(domain, dp.l1_distance(T=dp.i64), scale=scale)
    else:
        meas = dp.m.make_gaussian(domain, dp.l2_distance(T=float), scale=scale)
    return np.asarray(meas(np.zeros(REFERENCE_DRAWS, dtype=np.int64)), dtype=np.int64)


def bins(support: np.ndarray, pmf: np.ndarray, draws: int) -> np.ndarray:
    """Right edges of bins with ≥ 20 expected draws each (tails pooled)."""
    keep = support[pmf * draws >= 20]
    return np.concatenate([[-np.inf], keep[:-1] + 0.5, [np.inf]])


def binned(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    return np.histogram(values, bins=edges)[0]


def assert_distribution(values: np.ndarray, kind: str, scale: float, level: float) -> None:
    support, pmf = exact_pmf(kind, scale)
    edges = bins(support, pmf, values.size)
    expected = np.array([pmf[(support > lo) & (support < hi)].sum()
                         for lo, hi in itertools.pairwise(edges)])
    observed = binned(values, edges)
    assert stats.chisquare(observed, expected / expected.sum() * values.size).pvalue > level
    var = float(np.sum(pmf * support**2.0))
    fourth = float(np.sum(pmf * support**4.0))
    z = (float(np.mean(values.astype(float) ** 2)) - var) / math.sqrt((fourth - var**2)
                                                                       / values.size)
    assert 2 * stats.norm.sf(abs(z)) > level, f"variance z = {z:.2f}"
    k = math.ceil(3 * math.sqrt(var))
    tail = float(pmf[np.abs(support) >= k].sum())
    hits = int(np.count_nonzero(np.abs(values) >= k))
    assert stats.binomtest(hits, values.size, tail).pvalue > level


@pytest.mark.parametrize(("kind", "scale"), CASES)
def test_dpsql_sampler_has_the_exact_distribution(kind, scale):
    assert_distribution(dpsql_draws(kind, scale), kind, scale, LEVEL)


@pytest.mark.parametrize(("kind", "scale"), CASES)
def test_opendp_sampler_has_the_same_distribution(kind, scale):
    ours, theirs = dpsql_draws(kind, scale), opendp_draws(kind, scale)
    assert_distribution(theirs, kind, scale, REFERENCE_LEVEL)
    support, pmf = exact_pmf(kind, scale)
    edges = bins(support, pmf, REFERENCE_DRAWS)
    table = np.array([binned(ours, edges), binned(theirs, edges)])
    assert stats.chi2_contingency(table).pvalue > REFERENCE_LEVEL

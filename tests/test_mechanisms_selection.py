"""Partition selection: thresholds and the truncated-geometric mechanism."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from dpsql.errors import PrivacyError
from dpsql.mechanisms import (
    Noise,
    Sampler,
    release_probability,
    selection_threshold,
    split_delta,
)
from dpsql.mechanisms.selection import (
    truncated_geometric_crossovers,
    truncated_geometric_probability,
    units_for_release,
)
from dpsql.mechanisms.selection_choice import Choice, best_selection


def test_split_delta():
    assert split_delta(1e-6, 1) == pytest.approx(1e-6, rel=1e-12)
    for k in (2, 7, 1000):
        d = split_delta(1e-6, k)
        assert 1 - (1 - d) ** k == pytest.approx(1e-6, rel=1e-9)
        assert d > 1e-6 / k
    with pytest.raises(PrivacyError):
        split_delta(0.0, 3)
    with pytest.raises(PrivacyError):
        split_delta(1e-6, 0)


@pytest.mark.parametrize("t", [0.5, 1.0, 2.0, 7.3, 40.0])
@pytest.mark.parametrize(("k", "delta"), [(1, 1e-6), (4, 1e-5), (25, 1e-9)])
def test_laplace_threshold_closed_form(t, k, delta):
    noise = Noise("laplace", t)
    tau = selection_threshold(noise, k, delta)
    d = split_delta(delta, k)
    p = math.exp(-1 / t)
    m = math.ceil(math.log(d * (1 + p)) / math.log(p))
    assert tau == 1 + m
    assert tau == int(tau)
    # P(1 + X ≥ τ) = P(X ≥ τ − 1) = p^(τ−1)/(1 + p) ≤ δ', and τ − 1 would not do
    assert p ** (tau - 1) / (1 + p) <= d
    assert p ** (tau - 2) / (1 + p) > d
    assert release_probability(noise, tau, 1) <= d
    assert release_probability(noise, tau - 1, 1) > d


@pytest.mark.parametrize("noise", [Noise("gaussian", 3.7306), Noise("gaussian", 12.0),
                                   Noise("gaussian", 9000.0, 2.0**-8)], ids=str)
def test_gaussian_threshold(noise):
    d = split_delta(1e-6, 3)
    tau = selection_threshold(noise, 3, 1e-6)
    assert release_probability(noise, tau, 1) <= d
    assert release_probability(noise, tau - noise.granularity, 1) > d
    # close to the continuous rule τ = 1 + σΦ⁻¹(1 − δ')
    assert tau == pytest.approx(1 + noise.scale * norm.isf(d), rel=0.05)


def test_release_probability_grows_with_units():
    noise = Noise("laplace", 2.0)
    tau = selection_threshold(noise, 2, 1e-6)
    probs = [release_probability(noise, tau, n) for n in (1, 10, 29, 60)]
    assert probs == sorted(probs)
    assert probs[-1] > 0.99
    p = math.exp(-0.5)
    assert release_probability(noise, tau, int(tau)) == pytest.approx(1 - p / (1 + p))


def test_release_rate_by_simulation():
    noise = Noise("laplace", 1.0)
    tau = selection_threshold(noise, 1, 1e-2)
    noisy = 1 + noise.add_to(np.zeros(200_000), Sampler(seed=6))
    assert np.mean(noisy >= tau) <= 1e-2 + 0.001
    assert np.mean(noisy >= tau) == pytest.approx(release_probability(noise, tau, 1), abs=0.001)


# ---------------------------------------------------------------------------------------------
# Truncated geometric (optimal) partition selection, Desfontaines et al., PoPETs 2022

TG_GRID = [(eps, delta, k) for eps in (0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0)
           for delta in (1e-12, 1e-9, 1e-6, 1e-3, 0.1, 0.5)
           for k in (1, 2, 3, 4, 7, 50)]


def _tg_curve(eps, delta, k):
    n1, n2 = truncated_geometric_crossovers(eps, delta, k)
    n = np.arange(n2 + 10)
    return n1, n2, truncated_geometric_probability(n, eps, delta, k)


@pytest.mark.parametrize(("eps", "delta", "k"), TG_GRID)
def test_truncated_geometric_is_a_valid_selection(eps, delta, k):
    d = split_delta(delta, k)
    e = eps / k
    n1, n2, p = _tg_curve(eps, delta, k)
    assert p[0] == 0.0
    assert 0 < p[1] <= d
    assert np.all(np.diff(p) >= 0)                   # monotone non-decreasing
    assert np.all((p >= 0) & (p <= 1))
    assert np.all(p[n2 + 1:] == 1.0) and 1 <= n1 <= n2
    # The two (ε', δ') constraints between neighbours n and n + 1 (one unit added or removed),
    # up to float rounding of the terms multiplied by e^ε'.
    tol = 8 * 2.0**-52 * math.exp(e)
    assert np.all(p[1:] <= math.exp(e) * p[:-1] + d + tol)
    assert np.all(1 - p[:-1] <= math.exp(e) * (1 - p[1:]) + d + tol)


@pytest.mark.parametrize(("eps", "delta", "k"), TG_GRID[::5])
def test_truncated_geometric_matches_the_optimal_recurrence(eps, delta, k):
    """Thm. 1: p(n) = min(e^ε' p(n−1) + δ', 1 − e^−ε'(1 − δ' − p(n−1)), 1), p(0) = 0."""
    e, d = eps / k, split_delta(delta, k) * (1 - 1e-12)
    _, _, p = _tg_curve(eps, delta, k)
    q = [0.0]
    for _ in range(1, len(p)):
        q.append(min(math.exp(e) * q[-1] + d, 1 - math.exp(-e) * (1 - d - q[-1]), 1.0))
    assert np.allclose(p, q, rtol=1e-9, atol=1e-11)


def test_truncated_geometric_closed_forms():
    """n₁ and the first regime from the paper's formulas, at ε = 1, δ = 1e-6."""
    for k, expected_n1 in ((1, 14), (4, 53)):
        e, d = 1.0 / k, split_delta(1e-6, k)
        n1, _ = truncated_geometric_crossovers(1.0, 1e-6, k)
        assert n1 == expected_n1 == 1 + math.floor(math.log1p(math.tanh(e / 2) * (1 / d - 1)) / e)
        n = np.arange(1, n1 + 1)
        assert np.allclose(truncated_geometric_probability(n, 1.0, 1e-6, k),
                           d * np.expm1(n * e) / math.expm1(e), rtol=1e-9)
    # scalar in, float out; array in, array out; non-integers refused
    assert isinstance(truncated_geometric_probability(3, 1.0, 1e-6, 1), float)
    assert truncated_geometric_probability(np.array([0, 1]), 1.0, 1e-6, 1).shape == (2,)
    assert truncated_geometric_probability(-3, 1.0, 1e-6, 1) == 0.0
    with pytest.raises(PrivacyError):
        truncated_geometric_probability(2.5, 1.0, 1e-6, 1)
    with pytest.raises(PrivacyError):
        truncated_geometric_probability(2, 0.0, 1e-6, 1)
    with pytest.raises(PrivacyError):
        truncated_geometric_probability(2, 1.0, 0.0, 1)


@pytest.mark.parametrize("k", [1, 2, 4, 8])
def test_truncated_geometric_against_the_laplace_threshold(k):
    """Same (ε, δ, k): the optimal mechanism dominates thresholding with Laplace t = k/ε.

    Per group, the threshold is itself an (ε', δ')-DP way to keep a group (a group with no
    units does not exist, so keeping it has probability 0), and p(n) is the largest keep
    probability any such selection can have at every n (Thm. 1): p(n) ≥ P(release) for every
    n ≥ 1, and it reaches 50 % with fewer units.
    """
    noise = Noise("laplace", float(k))
    tau = selection_threshold(noise, k, 1e-6)
    n = np.arange(1, int(3 * tau))
    threshold = np.array([release_probability(noise, tau, int(m)) for m in n])
    geometric = truncated_geometric_probability(n, 1.0, 1e-6, k)
    assert np.all(geometric >= threshold - 1e-12)
    n50_threshold = units_for_release(lambda m: release_probability(noise, tau, m))
    n50_geometric = units_for_release(
        lambda m: truncated_geometric_probability(m, 1.0, 1e-6, k))
    assert n50_geometric < n50_threshold == tau  # 15 against 14 at k = 1; 60 against 53 at k = 4
    # Gaussian thresholding (L2 = √k) overtakes both from k = 4 (test_gaussian_selection.py)
    expected = "gaussian_selection" if k >= 4 else "truncated_geometric"
    assert best_selection(noise, 1.0, 1e-6, k).method == expected


def test_best_selection_accounts_for_the_epsilon_it_would_take():
    """With little ε left for them, the separate selections lose to the free threshold."""
    noise = Noise("laplace", 1.0)
    assert best_selection(noise, 0.25, 1e-6, 1) == Choice("laplace_threshold", 15.0)
    # expected released groups over a reference distribution of sizes
    sizes = list(range(1, 200))
    assert best_selection(noise, 1.0, 1e-6, 1, sizes=sizes).method == "truncated_geometric"
    assert best_selection(noise, 0.25, 1e-6, 1, sizes=sizes) == Choice("laplace_threshold", 15.0)
    gaussian = Noise("gaussian", 4.0106)
    assert best_selection(gaussian, 0.5, 1e-6, 1) == Choice(
        "gaussian_threshold", selection_threshold(gaussian, 1, 1e-6))


def test_truncated_geometric_release_rate_by_simulation():
    """Keeping with probability p(n) releases a one-unit group at most δ' of the time."""
    p1 = truncated_geometric_probability(1, 1.0, 0.01, 1)
    rng = np.random.default_rng(3)
    assert np.mean(rng.random(200_000) < p1) <= 0.01 + 0.001

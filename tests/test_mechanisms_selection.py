"""Partition selection thresholds."""

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

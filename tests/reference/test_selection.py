"""Partition-selection thresholds against OpenDP's thresholded noise mechanisms.

dpsql keeps a group iff its noisy distinct-unit count is ≥ τ and picks the least τ with
P(1 + X ≥ τ) ≤ δ' per group, δ' = 1 − (1 − δ)^{1/g}.  OpenDP 0.16 (``make_laplace_threshold`` /
``make_gaussian_threshold``) also keeps counts ≥ its threshold, but its privacy map for a group
of count linf = 1 charges P(X ≥ threshold), one step short of the release event X ≥ threshold − 1
(at scale 1 and threshold 3 it claims δ = 0.0364 while a count-1 group is released with
probability P(X ≥ 2) = 0.0989).  So dpsql's τ corresponds to OpenDP's threshold τ − 1, where
the two agree exactly for discrete Laplace noise.  For discrete Gaussian noise OpenDP bounds the
tail by the continuous Gaussian's, Q((threshold − 1)/σ), above the exact discrete tail that
dpsql sums, so OpenDP's δ is the larger one.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpsql.mechanisms import Noise, release_probability, selection_threshold, split_delta
from tests.reference.references import discrete_gaussian_pmf, discrete_laplace_pmf, opendp

dp = opendp()

LAPLACE = [(1.0, 1, 1e-6), (4.0, 4, 1e-6), (2.0, 3, 1e-5), (0.5, 1, 1e-9), (12.0, 10, 1e-7)]
GAUSSIAN = [(15.197345439849862, 4, 5e-7), (4.0, 1, 5e-7), (40.0, 9, 1e-9)]


def opendp_delta(kind: str, scale: float, groups: int, threshold: float) -> float:
    domain = dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=int))
    if kind == "laplace":
        meas = dp.m.make_laplace_threshold(
            domain, dp.l01inf_distance(dp.absolute_distance(T=int)), scale=scale,
            threshold=int(threshold))
        return meas.map((groups, groups, 1))[1]
    meas = dp.m.make_gaussian_threshold(
        domain, dp.l02inf_distance(dp.absolute_distance(T=int)), scale=scale,
        threshold=int(threshold))
    return meas.map((groups, math.isqrt(groups) or 1, 1))[1]


def exact_release(kind: str, scale: float, tau: float) -> float:
    """P(1 + X ≥ τ), summed from the pmf (independent of dpsql's closed forms)."""
    support = np.arange(int(tau) - 1, int(tau) + int(60 * scale) + 60)
    pmf = (discrete_laplace_pmf if kind == "laplace" else discrete_gaussian_pmf)(scale, support)
    return float(pmf.sum())


@pytest.mark.parametrize(("scale", "groups", "delta"), LAPLACE)
def test_laplace_threshold_matches_opendp(scale, groups, delta):
    noise = Noise("laplace", scale)
    tau = selection_threshold(noise, groups, delta)
    per_group = exact_release("laplace", scale, tau)
    assert release_probability(noise, tau, 1) == pytest.approx(per_group, rel=1e-9)
    assert per_group <= split_delta(delta, groups) < exact_release("laplace", scale, tau - 1)
    total = -math.expm1(groups * math.log1p(-per_group))
    assert opendp_delta("laplace", scale, groups, tau - 1) == pytest.approx(total, rel=1e-9)


@pytest.mark.parametrize(("sigma", "groups", "delta"), GAUSSIAN)
def test_gaussian_threshold_is_exact_and_below_opendps_bound(sigma, groups, delta):
    noise = Noise("gaussian", sigma)
    tau = selection_threshold(noise, groups, delta)
    per_group = exact_release("gaussian", sigma, tau)
    assert release_probability(noise, tau, 1) == pytest.approx(per_group, rel=1e-9)
    assert per_group <= split_delta(delta, groups) < exact_release("gaussian", sigma, tau - 1)
    total = -math.expm1(groups * math.log1p(-per_group))
    assert total <= opendp_delta("gaussian", sigma, groups, tau - 1) <= 3 * total

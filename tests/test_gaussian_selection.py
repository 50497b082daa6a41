"""Gaussian thresholding with its own noise: the (ε, δ) inequality, checked exactly.

A person in at most g groups, D ⊃ D′ without them. Their groups of one person (s of them)
vanish in D′; the other g − s counts move by 1. The selection keeps a group iff its exact
count plus N_Z(0, σ²) is ≥ τ; only the kept keys leave (docs/mechanisms.md §6). Two checks:

- *the proof's inequality*: the noise is proved (ε, δ_N)-DP at L2 = √g by one of the two
  routes of §4; a one-person group passes τ with probability ≤ δ' = 1 − (1 − δ_sel)^{1/g},
  by the exact discrete Gaussian tail in high precision; δ_N + δ_sel ≤ δ in rationals;
- *the mechanism itself*: restricted to the person's groups, the output is a product of
  independent Bernoullis, so its hockey-stick divergence at ε is an exact finite sum. It
  must be ≤ δ both ways, for every s and a range of group sizes; with σ calibrated for
  L2 = 1 (a person in one group) it is not — the test has power.
"""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import product

import mpmath
import pytest

from dpsql.mechanisms import split_delta, zcdp_log_delta
from dpsql.mechanisms.discrete_calibration import _route_b_ok
from dpsql.mechanisms.noise import Noise
from dpsql.mechanisms.selection import release_probability, selection_threshold
from dpsql.mechanisms.selection_choice import GaussianSelection, gaussian_selection

CASES = [(1.0, 1e-6, 4), (1.0, 1e-6, 10), (0.5, 1e-6, 10), (1.0, 1e-9, 3), (2.0, 1e-5, 20),
         (0.1, 1e-6, 5), (1.0, 1e-3, 4)]


def exact_tail(sigma: float, m: int) -> mpmath.mpf:
    """P(N_Z(0, σ²) ≥ m) by summing the pmf in 50-digit arithmetic."""
    with mpmath.workdps(50):
        width = int(40 * sigma) + 50
        weight = [mpmath.exp(-mpmath.mpf(x) ** 2 / (2 * mpmath.mpf(sigma) ** 2))
                  for x in range(-width, width + 1)]
        total = mpmath.fsum(weight)
        return mpmath.fsum(weight[width + m:]) / total


@pytest.mark.parametrize(("epsilon", "delta", "groups"), CASES)
def test_the_proof_inequality_holds_for_the_calibrated_selection(epsilon, delta, groups):
    s = gaussian_selection(epsilon, delta, groups)
    assert Fraction(s.noise_delta) + Fraction(s.threshold_delta) <= Fraction(delta)
    # the noise: route (a) (zCDP) or route (b) (smoothing) at (ε, δ_N), L2 = √g
    log_delta = math.log(s.noise_delta)
    l2 = math.sqrt(groups) * (1 + 1e-15)
    assert (zcdp_log_delta(groups / (2 * s.sigma**2), epsilon) <= log_delta
            or _route_b_ok(s.sigma, l2, epsilon, log_delta, 1.0))
    # the threshold: a one-person group passes with probability ≤ δ', exactly
    assert exact_tail(s.sigma, int(s.threshold) - 1) <= split_delta(s.threshold_delta, groups)


def keys_delta(selection: GaussianSelection, epsilon: float, one_person: int,
               sizes: tuple[int, ...]) -> tuple[float, float]:
    """Exact δ(ε) of the kept keys, D vs D′ and D′ vs D.

    ``one_person`` groups of one person (absent from D′) and groups of ``sizes`` people in D
    (one fewer in D′). Each group's decision is independent: enumerate the kept subsets of
    the shared groups; the one-person groups matter only as "none kept" or "some kept" (the
    latter impossible from D′).
    """
    def keep(n: int) -> float:
        return release_probability(selection.noise, selection.threshold, n)

    none = (1.0 - keep(1)) ** one_person
    forward, backward = 1.0 - none, 0.0  # "some kept": probability 0 from D′
    for kept in product((False, True), repeat=len(sizes)):
        p = q = 1.0
        for n, k in zip(sizes, kept, strict=True):
            p *= keep(n) if k else 1.0 - keep(n)
            q *= keep(n - 1) if k else 1.0 - keep(n - 1)
        forward += max(0.0, none * p - math.exp(epsilon) * q)
        backward += max(0.0, q - math.exp(epsilon) * none * p)
    return forward, backward


def neighbours(selection: GaussianSelection, groups: int):
    """(s, sizes): s one-person groups, the rest of size n, for n around τ (where a count's
    change matters most), and mixed sizes for few groups."""
    tau, sigma = int(selection.threshold), selection.sigma
    around = sorted({max(2, tau + int(k * sigma)) for k in (-3, -2, -1, -0.5, 0, 0.5, 1, 2)})
    for s in range(groups + 1):
        for n in around:
            yield s, (n,) * (groups - s)
    if groups <= 4:
        for sizes in product(around[::2], repeat=groups):
            yield 0, sizes


@pytest.mark.parametrize(("epsilon", "delta", "groups"),
                         [(1.0, 1e-3, 4), (0.5, 1e-2, 3), (1.0, 1e-6, 4), (1.0, 1e-4, 10)])
def test_the_released_keys_are_epsilon_delta_private_exactly(epsilon, delta, groups):
    selection = gaussian_selection(epsilon, delta, groups)
    worst = max(max(keys_delta(selection, epsilon, s, sizes))
                for s, sizes in neighbours(selection, groups))
    assert worst <= delta


def test_negative_control_sigma_for_one_group_is_not_private():
    """σ calibrated as if a person were in one group (L2 = 1 for g = 4): the exact δ of the
    kept keys exceeds the target, so the check above can fail."""
    epsilon, delta, groups = 1.0, 1e-3, 4
    right = gaussian_selection(epsilon, delta, groups)
    wrong_sigma = gaussian_selection(epsilon, delta, 1).sigma
    tau = selection_threshold(Noise("gaussian", wrong_sigma), groups, right.threshold_delta)
    wrong = GaussianSelection(wrong_sigma, tau, right.noise_delta, right.threshold_delta)
    worst = max(max(keys_delta(wrong, epsilon, s, sizes)) for s, sizes in neighbours(wrong, groups))
    assert worst > delta

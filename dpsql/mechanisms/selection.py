"""Private group keys: release a group only if its noisy distinct-unit count clears τ.

A group present in D but not in D' (one unit fewer) has exactly one unit.  If a group with
one unit is released with probability ≤ δ', and one unit touches at most k groups, the keys
cost δ = 1 − (1 − δ')^k on top of the ε of the noisy counts (Google's partition-selection
design, Wilson et al., PoPETs 2020; Desfontaines et al., PoPETs 2022).  The released count
itself is the noisy count that was compared with τ.

>>> n = Noise("laplace", 1.0)
>>> selection_threshold(n, 1, 1e-6)
15.0
>>> release_probability(n, 15.0, 1) <= 1e-6
True

The optimal alternative for a pure count of units, the truncated-geometric mechanism of
Desfontaines et al. (:func:`truncated_geometric_probability`), needs its own ε; see
:mod:`dpsql.mechanisms.selection_choice` for Gaussian thresholding with its own noise and
for which of them releases more groups.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from dpsql.errors import PrivacyError
from dpsql.mechanisms.noise import SAFETY, Noise, least_integer

MIN_GROUP_DELTA = 1e-301
"""Smallest δ' per group: below it 1/δ' and the release probabilities leave the normal floats
(δ = 5e-324 would leave 0 per group, and a threshold "≤ 0" cannot be met)."""


def split_delta(delta: float, k: int) -> float:
    """δ' = 1 − (1 − δ)^{1/k}, computed as −expm1(log1p(−δ)/k) (no cancellation).

    A δ too small to split over k groups (δ' < 1e-301) is refused; the δ it suggests,
    k·1e-300, leaves room for rounding and for Gaussian noise taking half of δ.

    >>> split_delta(1e-6, 1)
    1e-06
    >>> 0 < split_delta(1e-6, 4) - 1e-6 / 4 < 1e-12
    True
    >>> split_delta(5e-324, 2)
    Traceback (most recent call last):
    ...
    dpsql.errors.PrivacyError: delta=5e-324 is too small for private group keys: split over 2 \
groups per unit it leaves 0 per group, below 1e-301. Fix: pass delta >= 2e-300 (e.g. \
delta=1e-10), or declare the group keys public
    """
    if not 0 < delta < 1:
        raise PrivacyError(f"partition selection needs 0 < delta < 1, got delta={delta!r}")
    if k < 1:
        raise PrivacyError(f"max groups per unit must be ≥ 1, got {k!r}")
    per_group = -math.expm1(math.log1p(-delta) / k)
    if per_group < MIN_GROUP_DELTA:
        raise PrivacyError(
            f"delta={delta!r} is too small for private group keys: split over {k} groups per "
            f"unit it leaves {per_group:g} per group, below {MIN_GROUP_DELTA:g}. Fix: pass "
            f"delta >= {10 * MIN_GROUP_DELTA * k:.3g} (e.g. delta=1e-10), or declare the "
            "group keys public")
    return per_group


def _on_grid(noise: Noise, value: float) -> float:
    return round(value / noise.granularity) * noise.granularity


def selection_threshold(noise: Noise, max_groups_per_unit: int, delta: float,
                        most: float = 1.0) -> float:
    """Smallest τ (grid point; an integer for integer noise) with P(most + noise ≥ τ) ≤ δ'.

    ``most`` is the largest value a group holding one person's rows alone can have: 1 for
    a count of people, a row count's per-group bound c for a threshold on a released count
    of rows (a smaller value is rounded to a grid point no larger, so it is released less
    often). For discrete Laplace with p = e^{−1/t}: P(X ≥ m) = p^m/(1 + p), so τ = most + m
    with m = ⌈ln(δ'(1 + p))/ln p⌉.  The search uses the noise's exact (or upper-bounded)
    tail.

    >>> selection_threshold(Noise("laplace", 2.0), 3, 1e-5)
    26.0
    >>> selection_threshold(Noise("laplace", 2.0), 3, 1e-5, most=4.0)
    29.0
    """
    target = split_delta(delta, max_groups_per_unit) * (1.0 - SAFETY)
    m = least_integer(lambda k: noise.grid_tail(k) <= target, 1)
    return _on_grid(noise, most) + m * noise.granularity


def release_probability(noise: Noise, threshold: float, n_units: int) -> float:
    """P(n + noise ≥ τ): the chance a group of ``n_units`` units is released.

    >>> round(release_probability(Noise("laplace", 2.0), 26.0, 26), 3)
    0.622
    """
    return noise.tail(threshold - _on_grid(noise, float(n_units)))


# ---------------------------------------------------------------------------------------------
# Truncated geometric (optimal) partition selection


HUGE_EPSILON = 100.0
"""ε' is capped here so e^{ε'} and the closed forms stay finite. Spending less ε than
allowed is always private, and at ε' = 100 a group of two units is kept with probability
min(1, ≈ e^{100}·δ'), i.e. 1 for any δ' above 4e-44."""
TINY_EPSILON = 1e-12
"""Smallest ε' the truncated geometric accepts: n₁, n₂ ≤ 1 + ln(1 + 1/δ')/ε' stay below
2⁵³/4 for δ' ≥ 1e-301, so the crossovers are exact in floats (and a threshold does better
at such an ε' anyway)."""


def _per_group_budget(epsilon: float, delta: float, max_groups_per_unit: int
                      ) -> tuple[float, float]:
    """(ε', δ') = (min(ε/k, HUGE_EPSILON), 1 − (1 − δ)^{1/k}), δ' shaved by SAFETY like the
    thresholds.

    >>> _per_group_budget(1e5, 1e-6, 1)[0]
    100.0
    """
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise PrivacyError(f"partition selection needs a finite epsilon > 0, got {epsilon!r}")
    per_group = min(epsilon / max_groups_per_unit, HUGE_EPSILON)
    if per_group < TINY_EPSILON:
        raise PrivacyError(
            f"epsilon={epsilon:g} over {max_groups_per_unit} groups per unit is below "
            f"{TINY_EPSILON:g} "
            "per group, too little for the truncated-geometric partition selection: use a "
            f"larger epsilon (>= {TINY_EPSILON * max_groups_per_unit:g}) or fewer groups per unit")
    return per_group, split_delta(delta, max_groups_per_unit) * (1.0 - SAFETY)


def _geometric_part(n, eps: float, dlt: float):
    """δ'·(e^{nε'} − 1)/(e^{ε'} − 1): the first regime (equality in p(n) ≤ e^{ε'}p(n−1) + δ').

    Past the floats (e^{nε'} > 1e308, beyond n₁ anyway) it is +inf."""
    with np.errstate(over="ignore"):
        return dlt * np.expm1(np.multiply(n, eps)) / math.expm1(eps)


def truncated_geometric_crossovers(epsilon: float, delta: float, max_groups_per_unit: int
                                   ) -> tuple[int, int]:
    """(n₁, n₂) of the truncated-geometric mechanism: p grows geometrically up to n₁, then
    approaches 1 geometrically, and is 1 from n₂ + 1 on.

    Closed forms (Desfontaines, Voss, Gipson & Mandayam, "Differentially private partition
    selection", PoPETs 2022, Thm. 1, arXiv:2006.03684; the same formulas are in Google's
    differential-privacy library, ``cc/algorithms/partition-selection.h`` and
    ``go/dpagg/select_partition.go``), with ε' = ε/k and δ' = 1 − (1 − δ)^{1/k}:

        n₁ = 1 + ⌊ln(1 + tanh(ε'/2)·(1/δ' − 1)) / ε'⌋
        n₂ = n₁ + ⌊ln(1 + (e^{ε'} − 1)(1 − p(n₁))/δ') / ε'⌋

    n₁ is the last n at which e^{ε'}p(n−1) + δ' is the smaller of the two DP constraints, and
    p(n) = 1 for every n > n₂.  Because a floor of a rounded logarithm can be off by one at an
    exact tie, n₁ is checked against the recurrence and moved if needed.

    >>> truncated_geometric_crossovers(1.0, 1e-6, 1), truncated_geometric_crossovers(1.0, 1e-6, 4)
    ((14, 27), (53, 105))
    """
    eps, dlt = _per_group_budget(epsilon, delta, max_groups_per_unit)
    n1 = 1 + math.floor(math.log1p(math.tanh(eps / 2) * (1 / dlt - 1)) / eps)

    def first_regime_holds(n: int) -> bool:  # the recurrence picks e^{ε'}p(n−1) + δ' at n
        previous = float(_geometric_part(n - 1, eps, dlt))
        return float(_geometric_part(n, eps, dlt)) <= 1 - math.exp(-eps) * (1 - previous - dlt)

    while n1 > 1 and not first_regime_holds(n1):
        n1 -= 1
    while first_regime_holds(n1 + 1):
        n1 += 1
    p1 = min(float(_geometric_part(n1, eps, dlt)), 1.0)
    return n1, n1 + math.floor(_log1p_quotient(math.expm1(eps) * (1 - p1), dlt) / eps)


def _log1p_quotient(numerator: float, denominator: float) -> float:
    """ln(1 + a/b) for a ≥ 0, b > 0, also when a/b overflows (then ln a − ln b).

    >>> _log1p_quotient(1.0, 1.0) == math.log(2), _log1p_quotient(1e300, 1e-300)
    (True, 1381.5510557964274)
    """
    quotient = numerator / denominator
    if math.isfinite(quotient):
        return math.log1p(quotient)
    return math.log(numerator) - math.log(denominator)


def truncated_geometric_probability(n, epsilon: float, delta: float, max_groups_per_unit: int):
    """Probability that the optimal (ε, δ) partition selection keeps a group of ``n`` units.

    Desfontaines, Voss, Gipson & Mandayam, PoPETs 2022 (Thm. 1, arXiv:2006.03684): for one
    group per unit the (ε, δ)-DP keep probability that is largest for every n is the
    recurrence p(0) = 0, p(n) = min(e^ε p(n−1) + δ, 1 − e^{−ε}(1 − δ − p(n−1)), 1), i.e. the
    two DP constraints (on "keep" and on "drop") taken with equality.  Its closed form, with
    the per-group budget ε' = ε/k, δ' = 1 − (1 − δ)^{1/k} (a unit in k groups pays for k of
    them: ε by basic composition, δ as 1 − (1 − δ')^k, the split :func:`split_delta` already
    uses for the thresholds, as in REFERENCES.md and Google's library), is

        p(n) = δ'·(e^{nε'} − 1)/(e^{ε'} − 1)                              for 0 ≤ n ≤ n₁
        p(n) = p(n₁) + (1 − p(n₁) + δ'/(e^{ε'} − 1))·(1 − e^{−(n − n₁)ε'})   for n₁ < n ≤ n₂
        p(n) = 1                                                           for n > n₂

    (:func:`truncated_geometric_crossovers` gives n₁, n₂).  It equals adding truncated
    geometric noise to the unit count and thresholding, hence the name.  ``n`` is the exact
    number of distinct units in the group *after* contribution bounding (each unit in at most
    k groups); ``n`` may be an int or an array of ints (vectorised; the result is then an
    array).  δ' is shaved by a factor 1 − 1e-12 so that p(1) < δ' strictly, as for the
    thresholds.  This is also "the probability that this group is released", which can be
    reported before running the query (it depends on n only through public parameters).
    Using it means drawing Bernoulli(p(n)) per group from secure randomness; p is a float, so
    its rounding (~1e-16, checked in the tests against the DP constraints) is the remaining
    gap to an exact implementation.

    >>> truncated_geometric_probability(0, 1.0, 1e-6, 1)
    0.0
    >>> truncated_geometric_probability(1, 1.0, 1e-6, 1) <= 1e-6
    True
    >>> [round(float(p), 4) for p in truncated_geometric_probability([13, 14, 15, 27], 1, 1e-6, 1)]
    [0.2575, 0.6999, 0.8896, 1.0]
    """
    eps, dlt = _per_group_budget(epsilon, delta, max_groups_per_unit)
    n1, n2 = truncated_geometric_crossovers(epsilon, delta, max_groups_per_unit)
    units = np.asarray(n, dtype=np.float64)
    if np.any(units != np.floor(units)):
        raise PrivacyError("the number of units in a group must be a whole number")
    p1 = min(float(_geometric_part(n1, eps, dlt)), 1.0)
    slope = 1.0 - p1 + dlt / math.expm1(eps)
    with np.errstate(over="ignore"):
        first = _geometric_part(np.minimum(units, n1), eps, dlt)
        second = p1 - slope * np.expm1(-(units - n1) * eps)
    p = np.where(units <= n1, first, np.where(units <= n2, second, 1.0))
    p = np.clip(np.where(units <= 0, 0.0, p), 0.0, 1.0)
    return float(p) if p.ndim == 0 else p


def units_for_release(probability: Callable[[int], float], level: float = 0.5) -> int:
    """Smallest number of units n ≥ 1 with ``probability(n) ≥ level`` (monotone in n).

    >>> units_for_release(lambda n: truncated_geometric_probability(n, 1.0, 1e-6, 1))
    14
    """
    return least_integer(lambda n: n >= 1 and float(probability(n)) >= level, 1)


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
"""

from __future__ import annotations

import math

from dpsql.errors import PrivacyError
from dpsql.mechanisms.noise import SAFETY, Noise, least_integer


def split_delta(delta: float, k: int) -> float:
    """δ' = 1 − (1 − δ)^{1/k}, computed as −expm1(log1p(−δ)/k) (no cancellation).

    >>> split_delta(1e-6, 1)
    1e-06
    >>> 0 < split_delta(1e-6, 4) - 1e-6 / 4 < 1e-12
    True
    """
    if not 0 < delta < 1:
        raise PrivacyError(f"partition selection needs 0 < delta < 1, got delta={delta!r}")
    if k < 1:
        raise PrivacyError(f"max groups per unit must be ≥ 1, got {k!r}")
    return -math.expm1(math.log1p(-delta) / k)


def _on_grid(noise: Noise, value: float) -> float:
    return round(value / noise.granularity) * noise.granularity


def selection_threshold(noise: Noise, max_groups: int, delta: float) -> float:
    """Smallest τ (grid point; an integer for integer noise) with P(1 + noise ≥ τ) ≤ δ'.

    For discrete Laplace with p = e^{−1/t}: P(X ≥ m) = p^m/(1 + p), so τ = 1 + m with
    m = ⌈ln(δ'(1 + p))/ln p⌉.  The search uses the noise's exact (or upper-bounded) tail.

    >>> selection_threshold(Noise("laplace", 2.0), 3, 1e-5)
    26.0
    """
    target = split_delta(delta, max_groups) * (1.0 - SAFETY)
    m = least_integer(lambda k: noise.grid_tail(k) <= target, 1)
    return _on_grid(noise, 1.0) + m * noise.granularity


def release_probability(noise: Noise, threshold: float, n_units: int) -> float:
    """P(n + noise ≥ τ): the chance a group of ``n_units`` units is released.

    >>> round(release_probability(Noise("laplace", 2.0), 26.0, 26), 3)
    0.622
    """
    return noise.tail(threshold - _on_grid(noise, float(n_units)))

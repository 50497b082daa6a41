"""Gaussian thresholding with its own noise, and the choice among the partition selections.

Three (ε, δ)-DP ways to release the groups one person touches (at most g of them):

- the **threshold** on the query's own noisy count of people (:func:`selection_threshold`):
  its ε is already in the query's noise, it costs only δ;
- the **truncated geometric** on the exact count (Desfontaines, Voss, Gipson & Mandayam,
  PoPETs 2022): optimal for g = 1, but with g groups it pays ε/g and δ' per group;
- **Gaussian thresholding** (:func:`gaussian_selection`): the exact count plus its own discrete
  Gaussian noise, never released, compared with τ. A person adds 1 to at most g counts, so the
  noise pays L2 = √g where Laplace pays L1 = g; from g ≈ 4 groups per person it releases a
  group at fewer people than either of the others (the Gaussian thresholding of Google's
  partition-selection library and PipelineDP; Wilson, Zhang, Lam, Desfontaines,
  Simmons-Marengo & Gipson, PoPETs 2020).

:func:`best_selection` keeps the one that releases a group with probability ½ at the fewest
people (n₅₀, as ``explain()`` computes it), ties to the earlier in that list.

>>> g = gaussian_selection(1.0, 1e-6, 10)
>>> round(g.sigma, 3), g.threshold
(13.887, 76.0)
>>> best_selection(None, 1.0, 1e-6, 10).method, best_selection(None, 1.0, 1e-6, 1).method
('gaussian_selection', 'truncated_geometric')
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from dpsql.errors import PrivacyError
from dpsql.exact import sqrt_at_least
from dpsql.mechanisms.discrete_calibration import discrete_gaussian_sigma
from dpsql.mechanisms.noise import MIN_GRID_SCALE, Noise
from dpsql.mechanisms.selection import (
    release_probability,
    selection_threshold,
    truncated_geometric_crossovers,
    truncated_geometric_probability,
    units_for_release,
)


@dataclass(frozen=True)
class GaussianSelection:
    """Keep a group iff (its exact count of people) + N_Z(0, σ²) ≥ ``threshold``.

    The noise is calibrated (ε, ``noise_delta``)-DP at L2 = √g and the threshold lets a
    one-person group through with probability ≤ δ' = 1 − (1 − ``threshold_delta``)^{1/g};
    together (ε, noise_delta + threshold_delta)-DP (docs/mechanisms.md §6, "Gaussian
    thresholding").
    """

    sigma: float
    threshold: float
    noise_delta: float
    threshold_delta: float

    @property
    def noise(self) -> Noise:
        return Noise("gaussian", self.sigma)


@functools.lru_cache(maxsize=256)
def gaussian_selection(epsilon: float, delta: float, max_groups_per_unit: int
                       ) -> GaussianSelection:
    """Gaussian thresholding at (``epsilon``, ``delta``) for a person in at most g groups.

    δ is split in halves (at ε = 1 and 0.5, δ = 1e-6, g = 1, 2, 3, 4, 5, 10, 20, no share of
    0.1, 0.2, 0.3, 0.7 or 0.9 for the noise needs fewer people for a 50 % chance): δ_N for
    the noise, δ_sel for the threshold. Then
    σ = the proved discrete Gaussian σ (:func:`discrete_gaussian_sigma`, docs/mechanisms.md
    §4) for L2 = √g at (ε, δ_N); τ = the least integer with P(1 + N_Z(0, σ²) ≥ τ) ≤ δ'
    (:func:`selection_threshold`). PrivacyError when σ is too large to sample (a tiny ε).

    >>> s = gaussian_selection(0.5, 1e-6, 10)
    >>> round(s.sigma, 2), s.threshold, s.noise_delta + s.threshold_delta
    (26.44, 143.0, 1e-06)
    """
    noise_delta = delta / 2  # exact for a normal float, as is δ − δ/2
    threshold_delta = delta - noise_delta
    l2 = sqrt_at_least(Fraction(max_groups_per_unit))
    sigma = max(discrete_gaussian_sigma(l2, epsilon, noise_delta), MIN_GRID_SCALE)
    noise = Noise("gaussian", sigma)
    if not noise.samplable:
        raise PrivacyError(f"epsilon={epsilon:g} needs Gaussian thresholding noise too large "
                           "to sample: use a larger epsilon")
    threshold = selection_threshold(noise, max_groups_per_unit, threshold_delta)
    return GaussianSelection(sigma, threshold, noise_delta, threshold_delta)


@dataclass(frozen=True)
class Choice:
    """One partition selection: ``method`` is ``<kind>_threshold`` (the query's noise),
    ``truncated_geometric`` or ``gaussian_selection`` (with its ``gaussian`` calibration)."""

    method: str
    threshold: float = 0.0
    gaussian: GaussianSelection | None = None


def best_selection(noise: Noise | None, epsilon: float, delta: float, max_groups_per_unit: int,
                   *, sizes: Iterable[int] | None = None) -> Choice:
    """The selection that releases a group at the fewest people, all spending δ.

    Candidates: the threshold on the unit count's ``noise`` (when the query noises it; it
    spends no ε of its own), and, each with ``epsilon`` of its own, the truncated geometric
    and Gaussian thresholding. A candidate that cannot be calibrated at this ε drops out. The
    score is n₅₀, the fewest people released with probability ≥ ½ (:func:`units_for_release`),
    or with reference group ``sizes`` the expected number released; ties go to the earlier.

    So compare like with like: pass as ``epsilon`` the share the separate mechanisms would
    really get, and as ``noise`` the unit count's noise the query would have *with* the
    threshold (``sensitivity._separate_selection`` does).

    >>> best_selection(Noise("laplace", 1.0), 1.0, 1e-6, 1)     # n₅₀: 15, 14, 24
    Choice(method='truncated_geometric', threshold=0.0, gaussian=None)
    >>> best_selection(Noise("laplace", 1.0), 0.25, 1e-6, 1).method  # too little ε for them
    'laplace_threshold'
    """
    candidates: list[tuple[Choice, Callable[[int], float]]] = []
    if noise is not None:
        tau = selection_threshold(noise, max_groups_per_unit, delta)
        candidates.append((Choice(f"{noise.kind}_threshold", tau),
                           functools.partial(release_probability, noise, tau)))
    errors = []
    try:
        truncated_geometric_crossovers(epsilon, delta, max_groups_per_unit)
        candidates.append((Choice("truncated_geometric"), lambda n: float(
            truncated_geometric_probability(n, epsilon, delta, max_groups_per_unit))))
    except PrivacyError as error:
        errors.append(error)
    try:
        gaussian = gaussian_selection(epsilon, delta, max_groups_per_unit)
        candidates.append((Choice("gaussian_selection", gaussian.threshold, gaussian),
                           functools.partial(release_probability, gaussian.noise,
                                             gaussian.threshold)))
    except PrivacyError as error:
        errors.append(error)
    if not candidates:
        raise errors[0]
    reference = None if sizes is None else [int(n) for n in sizes]

    def score(chance: Callable[[int], float]) -> float:
        if reference is None:
            return units_for_release(chance)
        return -float(np.sum([chance(n) for n in reference]))

    scores = [score(chance) for _, chance in candidates]
    return candidates[scores.index(min(scores))][0]


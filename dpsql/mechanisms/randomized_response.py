"""Randomised response: local DP for sensitive yes/no answers, collected before any server.

Each respondent reports the truth with probability p = e^ε / (1 + e^ε) and the
opposite otherwise, which is ε-DP for that person whatever the collector does
(Warner 1965; the ε-LDP form as in Dwork & Roth 2014, §3.2). The proportion of
"yes" among n reports, ȳ, estimates the true proportion unbiasedly as
(ȳ − (1 − p)) / (2p − 1), with standard error √(ȳ(1 − ȳ)/n) / (2p − 1).

>>> from dpsql.mechanisms import Sampler
>>> reports = randomize([True] * 600 + [False] * 400, epsilon=1.0, sampler=Sampler(seed=3))
>>> estimate = estimate_proportion(reports, epsilon=1.0)
>>> round(estimate.value, 2), round(estimate.stderr, 3)
(0.63, 0.034)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dpsql.errors import PrivacyError
from dpsql.mechanisms.calibration import validate_privacy
from dpsql.mechanisms.samplers import Sampler

RESOLUTION = 2**53
"""Truth is kept with probability ⌊p·2⁵³⌋ / 2⁵³ ≤ p: never more truthful than calibrated."""


def truth_probability(epsilon: float) -> float:
    """p = e^ε / (1 + e^ε), computed stably."""
    validate_privacy(epsilon, 0.0)
    return 1.0 / (1.0 + math.exp(-epsilon))


def randomize(answers: Sequence[bool], *, epsilon: float, sampler: Sampler) -> np.ndarray:
    """Each answer flipped with probability 1 − p, using exact uniform integers."""
    keep = math.floor(truth_probability(epsilon) * RESOLUTION)
    draws = sampler.below(RESOLUTION, len(answers))
    truthful = draws < keep
    values = np.asarray(answers, dtype=bool)
    return np.where(truthful, values, ~values)


@dataclass(frozen=True)
class Proportion:
    """An unbiased estimate of the true proportion of "yes", with its standard error."""

    value: float
    stderr: float
    reports: int

    def interval(self, z: float = 1.96) -> tuple[float, float]:
        """A normal-approximation interval, clipped to [0, 1]."""
        return max(0.0, self.value - z * self.stderr), min(1.0, self.value + z * self.stderr)


def estimate_proportion(reports: Sequence[bool], *, epsilon: float) -> Proportion:
    """(ȳ − (1 − p)) / (2p − 1) and its standard error from n randomised reports."""
    n = len(reports)
    if n == 0:
        raise ValueError("no reports to estimate from")
    p = truth_probability(epsilon)
    mean = float(np.mean(np.asarray(reports, dtype=float)))
    scale = math.tanh(epsilon / 2)  # = 2p − 1, without cancellation at a tiny ε
    if scale == 0:
        raise PrivacyError(f"epsilon={epsilon!r} is too small to estimate from: the reports "
                           "carry no information at this float precision; use a larger epsilon")
    return Proportion(value=(mean - (1 - p)) / scale,
                      stderr=math.sqrt(mean * (1 - mean) / n) / scale, reports=n)

"""Randomised response: ε-LDP flip rate and an unbiased estimator."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpsql.mechanisms import Sampler
from dpsql.mechanisms.randomized_response import (
    estimate_proportion,
    randomize,
    truth_probability,
)


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 3.0])
def test_truth_rate_is_at_most_the_calibrated_one(epsilon):
    reports = randomize([True] * 200_000, epsilon=epsilon, sampler=Sampler(seed=1))
    p = truth_probability(epsilon)
    rate = reports.mean()
    assert abs(rate - p) < 5 * math.sqrt(p * (1 - p) / 200_000)
    # ε-LDP: P(report yes | yes) / P(report yes | no) = p / (1 − p) ≤ e^ε
    assert p / (1 - p) <= math.exp(epsilon) * (1 + 1e-12)


def test_estimator_is_unbiased_and_its_stderr_is_honest():
    truth = 0.3
    answers = [True] * 300 + [False] * 700
    estimates = [estimate_proportion(randomize(answers, epsilon=1.0, sampler=Sampler(seed=s)),
                                     epsilon=1.0) for s in range(400)]
    values = np.array([e.value for e in estimates])
    assert abs(values.mean() - truth) < 4 * values.std() / math.sqrt(len(values))
    assert values.std() == pytest.approx(np.mean([e.stderr for e in estimates]), rel=0.15)
    covered = np.mean([lo <= truth <= hi for lo, hi in (e.interval() for e in estimates)])
    assert covered >= 0.9


def test_invalid_inputs():
    with pytest.raises(Exception, match="epsilon"):
        truth_probability(0.0)
    with pytest.raises(ValueError):
        estimate_proportion([], epsilon=1.0)

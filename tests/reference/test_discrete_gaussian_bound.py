"""The PLD that the report uses for a discrete Gaussian query, against the exact definition.

A query with noise multiplier m = σ/L2 may move any number of cells j, with noise N_Z(0, σ_j²) in
grid steps, by integers Δ_j with Σ Δ_j²/σ_j² ≤ 1/m².  Its exact δ(ε) = E[(1 − e^{ε−L})₊] is
enumerated here for one and two cells (the joint loss on the product grid), including the
coarsest cells allowed (σ_j = m·|Δ_j|), and must never exceed
``discrete_gaussian_profile(m, ε)`` nor the δ of the PLD built from it.  No library needed.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpsql.accounting.composition import gaussian
from dpsql.accounting.pld import gaussian_loss, pld_delta, profile_loss
from dpsql.mechanisms.calibration import gaussian_log_deltas
from dpsql.mechanisms.discrete_calibration import discrete_gaussian_profile
from tests.reference.references import discrete_gaussian_pmf

EPSILONS = np.array([0.0, 0.1, 0.3, 0.7, 1.0, 2.0, 4.0])


def exact_deltas(cells: list[tuple[float, int]], epsilons: np.ndarray) -> np.ndarray:
    loss, prob = np.array([0.0]), np.array([1.0])
    for sigma, shift in cells:
        width = math.ceil(14 * sigma) + abs(shift) + 2
        y = np.arange(-width, width + 1)
        cell_loss = (shift * shift + 2 * shift * y) / (2 * sigma * sigma)
        loss = (loss[:, None] + cell_loss[None, :]).ravel()
        prob = (prob[:, None] * discrete_gaussian_pmf(sigma, y)[None, :]).ravel()
    return np.array([np.sum(prob * np.clip(-np.expm1(e - loss), 0, None)) for e in epsilons])


def configurations(m: float) -> list[list[tuple[float, int]]]:
    """Cells (σ_j, Δ_j) with Σ Δ_j²/σ_j² = 1/m²: one cell, or the sensitivity split in two."""
    out = [[(m * d, d)] for d in (1, 2, 3)]
    for share in (0.5, 0.2):
        out.append([(m * 1 / math.sqrt(share), 1), (m * 2 / math.sqrt(1 - share), 2)])
        out.append([(m / math.sqrt(share), 1), (m / math.sqrt(1 - share), 1)])
    return out


@pytest.mark.parametrize("m", [0.7, 1.0, 1.5, 2.0, 4.0, 8.0])
def test_profile_bounds_every_configuration(m):
    bound = discrete_gaussian_profile(m, EPSILONS)
    for cells in configurations(m):
        assert np.all(exact_deltas(cells, EPSILONS) <= bound * (1 + 1e-9) + 1e-15), cells


@pytest.mark.parametrize("m", [1.0, 4.0, 8.0])
def test_report_pld_bounds_the_exact_delta_of_a_composition(m):
    """Two queries, each on its own coarsest one-cell configuration: the PLD of the history
    is above the exact δ of the product (computed by enumeration)."""
    history = [gaussian(m, discrete=True)] * 2
    exact = exact_deltas([(m, 1), (m, 1)], EPSILONS)
    ours = np.array([pld_delta(history, e, bound_discrete=True) for e in EPSILONS])
    assert np.all(exact <= ours + 1e-12)


@pytest.mark.parametrize("m", [0.5, 1.0, 4.0, 20.0])
def test_profile_loss_of_a_gaussian_profile_is_the_gaussian_pld(m):
    """The pair built from a profile reproduces the Gaussian PLD (dpsql's own, which rounds
    losses up): connect-the-dots is at most one grid step per event tighter."""
    built = profile_loss(lambda e: np.exp(gaussian_log_deltas(1 / m, e)), 1e-4)
    direct = gaussian_loss(m, 1e-4)
    for count in (1, 16):
        ours, theirs = built.self_compose(count), direct.self_compose(count)
        assert ours.epsilon(1e-6) == pytest.approx(theirs.epsilon(1e-6), abs=1e-4 * count)
        assert ours.epsilon(1e-6) <= theirs.epsilon(1e-6) + 1e-9

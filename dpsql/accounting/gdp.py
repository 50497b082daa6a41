"""Gaussian differential privacy (GDP) and how well one µ describes a history.

Dong, Roth & Su, "Gaussian differential privacy" (JRSS-B 2022): a mechanism is µ-GDP if
telling neighbours apart is at least as hard as telling N(0, 1) from N(µ, 1), i.e. its
trade-off curve (least type-II error β at type-I error α) is at least
f_µ(α) = Φ(Φ⁻¹(1 − α) − µ).  A Gaussian with noise multiplier σ/Δ₂ is (Δ₂/σ)-GDP (Thm 2.7)
and µ's compose as √(Σµᵢ²) (Cor. 3.3).

>>> from dpsql.accounting.composition import gaussian, laplace
>>> mu = gdp_mu([gaussian(4.0)] * 16)
>>> mu, round(gdp_epsilon(mu, 1e-6), 4)
(1.0, 4.8866)
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from itertools import pairwise

import numpy as np
from scipy.special import ndtr, ndtri

from dpsql.accounting.composition import MechanismEvent, as_history, require, total
from dpsql.errors import PrivacyError
from dpsql.mechanisms.calibration import gaussian_log_delta


def gdp_mu(events: Iterable[MechanismEvent]) -> float | None:
    """µ = √Σ(Δ/σ)² for a history of continuous Gaussians; None if it holds anything else.

    >>> from dpsql.accounting.composition import gaussian, laplace
    >>> round(gdp_mu([gaussian(3.0), gaussian(4.0)]), 12) == round(math.hypot(1 / 3, 1 / 4), 12)
    True
    >>> gdp_mu([gaussian(1.0), laplace(1.0)]) is None
    True
    """
    history = as_history(events)
    if any(event.kind != "gaussian" or event.discrete for event in history):
        return None
    return math.sqrt(total(1 / event.noise_multiplier / event.noise_multiplier
                           for event in history))


def gdp_delta(mu: float, epsilon: float) -> float:
    """δ(ε) of µ-GDP: Φ(−ε/µ + µ/2) − e^ε Φ(−ε/µ − µ/2) (Dong, Roth & Su, Cor. 2.13).

    The analytic Gaussian's curve, so computed by its cancellation-free log form
    (:func:`~dpsql.mechanisms.calibration.gaussian_log_delta`): tiny δ keep their digits and
    a huge ε or µ gives a number, not an overflow.

    >>> f"{gdp_delta(1.0, 3.0):.4e}", gdp_delta(1e150, 1e300), gdp_delta(1e150, 1.0)
    ('1.5372e-03', 0.0, 1.0)
    """
    mu = require("mu", mu, high=math.inf)
    epsilon = require("epsilon", epsilon, high=math.inf, high_ok=True)
    if mu == 0 or math.isinf(epsilon):
        return 0.0
    return math.exp(gaussian_log_delta(mu, epsilon))


def gdp_epsilon(mu: float, delta: float) -> float:
    """The least ε with gdp_delta(µ, ε) ≤ δ, by bisection (returns the upper end).

    >>> round(gdp_epsilon(1.0, gdp_delta(1.0, 2.0)), 9)
    2.0
    """
    require("mu", mu, high=math.inf)
    require("delta", delta, high=1.0)
    if gdp_delta(mu, 0.0) <= delta:
        return 0.0
    if delta == 0:
        return math.inf
    low, high = 0.0, max(1.0, mu * mu)
    while gdp_delta(mu, high) > delta:
        low, high = high, 2 * high
    for _ in range(200):
        middle = (low + high) / 2
        if middle in (low, high):
            break
        low, high = (low, middle) if gdp_delta(mu, middle) <= delta else (middle, high)
    return high


def gdp_tradeoff(mu: float, alphas: Iterable[float]) -> np.ndarray:
    """f_µ(α) = Φ(Φ⁻¹(1 − α) − µ), written Φ(−Φ⁻¹(α) − µ) to keep small α exact.

    >>> gdp_tradeoff(0.0, [0.25]).tolist(), gdp_tradeoff(1.0, [0.0, 1.0]).tolist()
    ([0.75], [1.0, 0.0])
    """
    require("mu", mu, high=math.inf, high_ok=True)
    alpha = _unit_interval("alphas", alphas)
    if math.isinf(mu):  # perfectly distinguishable: β = 0 at every α
        return np.zeros_like(alpha)
    return ndtr(-ndtri(alpha) - mu)


def _unit_interval(name: str, values: Iterable[float]) -> np.ndarray:
    array = np.asarray(list(values), dtype=float)
    if array.ndim != 1 or np.isnan(array).any() or (array < 0).any() or (array > 1).any():
        raise PrivacyError(f"{name}: need a list of numbers in [0, 1]")
    return array


def tradeoff_from_profile(epsilons: Iterable[float], deltas: Iterable[float]
                          ) -> tuple[np.ndarray, np.ndarray]:
    """Breakpoints (α, β) of the trade-off curve implied by a privacy profile ε ↦ δ(ε).

    Each (ε, δ) guarantee bounds β ≥ max(0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)) (Kairouz, Oh &
    Viswanath 2015; Dong, Roth & Su, Prop. 2.5), so f is the upper envelope of these lines:
    convex and piecewise linear.  Returned sorted by α, from α = 0 to α = 1.

    >>> alphas, betas = tradeoff_from_profile([1.0], [0.0])
    >>> alphas.round(4).tolist(), betas.round(4).tolist()
    ([0.0, 0.2689, 1.0], [1.0, 0.2689, 0.0])
    """
    eps = np.asarray(list(epsilons), dtype=float)
    dlt = np.asarray(list(deltas), dtype=float)
    if eps.shape != dlt.shape or eps.ndim != 1 or eps.size == 0:
        raise PrivacyError("epsilons and deltas: need two lists of the same nonzero length")
    if np.isnan(eps).any() or (eps < 0).any() or np.isnan(dlt).any() or (dlt < 0).any() \
            or (dlt > 1).any():
        raise PrivacyError("need epsilons >= 0 and deltas in [0, 1]")
    slopes = np.concatenate([-np.exp(eps), -np.exp(-eps), [0.0]])
    intercepts = np.concatenate([1 - dlt, np.exp(-eps) * (1 - dlt), [0.0]])
    alphas = np.unique(np.concatenate([[0.0, 1.0], _hull_breaks(slopes, intercepts)]))
    betas = np.max(slopes[None, :] * alphas[:, None] + intercepts[None, :], axis=1)
    return alphas, np.clip(betas, 0.0, 1.0)


def _hull_breaks(slopes: np.ndarray, intercepts: np.ndarray) -> np.ndarray:
    """The α's in (0, 1) where the upper envelope of the lines changes line."""
    order = np.lexsort((intercepts, slopes))
    hull: list[tuple[float, float]] = []
    for m, c in zip(slopes[order], intercepts[order], strict=True):
        if hull and hull[-1][0] == m:
            hull.pop()  # same slope: the later one has the larger intercept
        while len(hull) >= 2 and _cross(hull[-2], (m, c)) <= _cross(hull[-2], hull[-1]):
            hull.pop()
        hull.append((m, c))
    breaks = np.array([_cross(a, b) for a, b in pairwise(hull)])
    return breaks[(breaks > 0) & (breaks < 1)]


def _cross(first: tuple[float, float], second: tuple[float, float]) -> float:
    return (first[1] - second[1]) / (second[0] - first[0])


def gdp_tightness(alphas: Iterable[float], betas: Iterable[float]) -> tuple[float, float]:
    """(µ*, κ): the least µ the curve f through (αᵢ, βᵢ) satisfies, and how loosely.

    µ* = maxᵢ Φ⁻¹(1 − αᵢ) − Φ⁻¹(βᵢ) over breakpoints inside (0, 1)² (f − f_µ is concave on
    each linear piece, so checking breakpoints suffices).  Breakpoints on the border are
    skipped: a profile known up to a finite ε has δ(ε_max) > 0, so f(0) < 1 and f reaches 0
    before α = 1, which no finite µ allows; µ* then describes f up to that δ(ε_max).
    κ is the least κ with f(α + κ) − κ ≤ f_µ*(α) for all α (f = 0 beyond 1), found by
    bisection — the Lévy-type distance between f and f_µ* (REFERENCES.md, "Tightness of a GDP
    description"); κ ≤ 0.01 means µ* describes the history tightly.  For each κ the worst α
    is found exactly: a breakpoint, or where f_µ*'s slope −exp(µz − µ²/2), z = Φ⁻¹(1 − α),
    equals the piece's slope (f_µ* is convex, so f − f_µ* peaks there on each piece).

    >>> a = np.linspace(0, 1, 201)
    >>> mu, kappa = gdp_tightness(a, gdp_tradeoff(1.0, a))
    >>> round(mu, 6), kappa < 1e-3
    (1.0, True)
    """
    alpha = _unit_interval("alphas", alphas)
    beta = _unit_interval("betas", betas)
    if alpha.shape != beta.shape or alpha[0] != 0 or alpha[-1] != 1 or (np.diff(alpha) <= 0).any():
        raise PrivacyError("need breakpoints sorted by α from α = 0 to α = 1, with one β each")
    inside = (alpha > 0) & (alpha < 1) & (beta > 0) & (beta < 1)
    mu = max(0.0, float(np.max(-ndtri(alpha[inside]) - ndtri(beta[inside]), initial=0.0)))
    low, high = 0.0, 1.0
    for _ in range(60):
        middle = (low + high) / 2
        low, high = (low, middle) if _below(alpha, beta, mu, middle) else (middle, high)
    return mu, high


def _below(alpha: np.ndarray, beta: np.ndarray, mu: float, kappa: float) -> bool:
    """Whether f(x + κ) − κ ≤ f_µ(x) for every x in [0, 1 − κ]."""
    lefts, rights = alpha[:-1] - kappa, alpha[1:] - kappa
    points = [np.clip(alpha - kappa, 0.0, 1.0 - kappa), [0.0]]
    slopes = np.diff(beta) / np.diff(alpha)
    if 0 < mu < math.inf:
        falling = slopes < 0
        with np.errstate(divide="ignore"):
            z = (np.log(-slopes[falling]) + mu * mu / 2) / mu
        points.append(np.clip(ndtr(-z), np.maximum(lefts[falling], 0.0), rights[falling]))
    x = np.clip(np.concatenate(points), 0.0, 1.0 - kappa)
    shifted = np.interp(x + kappa, alpha, beta, right=0.0) - kappa
    return bool(np.all(shifted <= gdp_tradeoff(mu, x) + 1e-12))

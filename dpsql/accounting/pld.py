"""Privacy loss distributions (PLD): tight numerical composition of a whole history.

For output distributions P, Q of a mechanism on neighbouring inputs, the privacy loss
L = ln(P(o)/Q(o)), o ~ P, gives every guarantee at once: the mechanism is (ε, δ(ε))-DP with
δ(ε) = E[(1 − e^{ε−L})₊] + P[L = +∞] (Sommer, Meiser & Mohammadi, PoPETs 2019; Meiser &
Mohammadi, CCS 2018).  Losses of independent releases add up, so the history's PLD is the
convolution of the mechanisms' PLDs, computed by FFT (Koskela, Jälkö & Honkela, AISTATS 2020).
Each PLD is discretised pessimistically, as Google's dp_accounting does (Doroshenko, Ghazi,
Kamath, Kumar & Manurangsi, "Connect the dots", PoPETs 2022): the mass of losses in
((i−1)h, ih] is put at ih.  Rounding losses up makes the composed loss stochastically larger,
and δ(ε) is increasing in L, so every δ here is an upper bound, too large by at most the δ
of a loss shifted by (number of events)·h; tails below ~1e-15 are cut off, upward (to the
lowest kept loss or to +∞), which keeps the bound.

Every pair used here is symmetric (swapping P and Q gives the same PLD: Laplace,
randomised response and Gaussian are symmetric about the midpoint of their two means), so
one neighbouring direction covers both add and remove.

A discrete Gaussian event has no single PLD (it depends on how the change spreads over cells
of different σ); ``bound_discrete=True`` composes it through the worst pair of a privacy profile
proved for all of them (:func:`discrete_gaussian_loss`, :func:`profile_loss`).

>>> from dpsql.accounting.composition import gaussian, laplace
>>> round(pld([laplace(0.1)] * 50, 1e-6), 3)
3.173
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable
from contextlib import suppress
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property, lru_cache

import numpy as np
import scipy.fft
from scipy.optimize import isotonic_regression
from scipy.signal import lfilter
from scipy.special import ndtr

from dpsql.accounting.composition import (
    MechanismEvent,
    advanced,
    as_history,
    basic,
    log_no_failure,
    require,
    zcdp,
    zcdp_to_dp,
)
from dpsql.accounting.gdp import gdp_epsilon, gdp_mu
from dpsql.errors import PrivacyError
from dpsql.mechanisms.discrete_calibration import discrete_gaussian_profile

GRID = 1e-4  # loss discretisation h: Google dp_accounting's default
TAIL = 1e-15  # mass cut from each end after every convolution
MAX_CELLS = 2**22  # one mechanism's PLD; beyond this, ask for a coarser grid
GAUSS_TAIL_Z = 8.8  # Φ(−8.8) ≈ 7e-19: the Gaussian loss is cut at mean ± 8.8 std
PROFILE_POINTS = 2**14  # a profile is sampled at most this often (on multiples of the grid)


@dataclass(frozen=True, eq=False)
class PrivacyLoss:
    """A discretised PLD: mass ``probs[i]`` at loss (offset + i)·grid, ``infinity`` at +∞."""

    probs: np.ndarray
    offset: int
    grid: float
    infinity: float

    def __post_init__(self) -> None:
        self.probs.setflags(write=False)  # shared through the cache

    def __str__(self) -> str:
        low, high = self.offset * self.grid, (self.offset + self.probs.size - 1) * self.grid
        return (f"PrivacyLoss(losses {low:g}..{high:g} step {self.grid:g}, "
                f"P[L=∞]={self.infinity:g})")

    def compose(self, other: PrivacyLoss) -> PrivacyLoss:
        """The PLD of running both mechanisms: losses add, so masses convolve."""
        infinity = self.infinity + other.infinity - self.infinity * other.infinity
        return _truncated(_convolve(self.probs, other.probs), self.offset + other.offset,
                          self.grid, infinity)

    def self_compose(self, count: int) -> PrivacyLoss:
        """``count`` independent runs, by repeated squaring."""
        result, base = None, self
        while count:
            if count & 1:
                result = base if result is None else result.compose(base)
            count >>= 1
            if count:
                base = base.compose(base)
        return result if result is not None else _certain(self.grid)

    def deltas(self, epsilons: np.ndarray) -> np.ndarray:
        """δ(ε) = Σ_{L>ε} p_L (1 − e^{ε−L}) + P[L = ∞], for each ε.

        With k the first grid index above ε: δ = A_k − e^{ε−L_k} B_k + P[∞], where
        A_k = Σ_{i≥k} pᵢ and B_k = Σ_{i≥k} pᵢ e^{−(Lᵢ−L_k)} = p_k + e^{−h} B_{k+1}; no overflow.
        """
        above, weighted = self._sums
        losses = self._losses()
        k = np.searchsorted(losses, epsilons, side="right")
        at_k = (self.offset + k) * self.grid
        value = above[k] - np.exp(np.minimum(epsilons - at_k, 0.0)) * weighted[k]
        return np.clip(value + self.infinity, 0.0, 1.0)

    def epsilon(self, delta: float) -> float:
        """The least ε ≥ 0 with δ(ε) ≤ delta (solved exactly between grid points)."""
        if self.infinity > delta:
            return math.inf
        above, weighted = self._sums
        losses = self._losses()
        at_grid = above[1:] - math.exp(-self.grid) * weighted[1:] + self.infinity
        m = int(np.argmax(at_grid <= delta))  # at_grid is decreasing; the last is P[∞]
        ratio = (above[m] + self.infinity - delta) / weighted[m] if weighted[m] > 0 else 0.0
        epsilon = losses[m] + math.log(ratio) if ratio > 0 else -math.inf
        floor = losses[m - 1] if m > 0 else -math.inf
        bad, good = max(0.0, min(max(epsilon, floor), losses[m])), max(0.0, float(losses[m]))
        for _ in range(60):  # float rounding can leave δ(ε) a hair above delta: step up
            if self.deltas(np.array([bad]))[0] <= delta or bad == good:
                return float(bad)
            bad = (bad + good) / 2
        return good

    def _losses(self) -> np.ndarray:
        return (self.offset + np.arange(self.probs.size)) * self.grid

    @cached_property
    def _sums(self) -> tuple[np.ndarray, np.ndarray]:
        """(A, B) of :meth:`deltas`, each with a trailing 0 for "nothing above"."""
        reverse = self.probs[::-1]
        above = np.append(np.cumsum(reverse)[::-1], 0.0)
        weighted = np.append(lfilter([1.0], [1.0, -math.exp(-self.grid)], reverse)[::-1], 0.0)
        return above, weighted


def _certain(grid: float) -> PrivacyLoss:
    return PrivacyLoss(np.ones(1), 0, grid, 0.0)


def _convolve(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    if min(first.size, second.size) <= 64:
        return np.convolve(first, second)
    size = first.size + second.size - 1
    fast = scipy.fft.next_fast_len(size, real=True)
    product = scipy.fft.rfft(first, fast) * scipy.fft.rfft(second, fast)
    return np.clip(scipy.fft.irfft(product, fast)[:size], 0.0, None)


def _truncated(probs: np.ndarray, offset: int, grid: float, infinity: float) -> PrivacyLoss:
    """Cut ≤ TAIL mass from each end: the low tail moves up to the first kept loss, the
    high tail to +∞ (both only raise losses)."""
    low = int(np.searchsorted(np.cumsum(probs), TAIL, side="right"))
    high = probs.size - int(np.searchsorted(np.cumsum(probs[::-1]), TAIL, side="right"))
    high = max(high, 1)
    low = min(low, high - 1)
    kept = probs[low:high].copy()
    kept[0] += probs[:low].sum()
    return PrivacyLoss(kept, offset + low, grid, min(1.0, infinity + float(probs[high:].sum())))


def _ceil_steps(value: float, grid: float) -> int:
    """The least i with float(i·grid) ≥ value: losses are compared with the grid as floats."""
    steps = math.ceil(Fraction(value) / Fraction(grid))
    return steps - 1 if (steps - 1) * grid >= value else steps


def _from_cdf(cdf: Callable[[np.ndarray], np.ndarray], sf: Callable[[np.ndarray], np.ndarray],
              low: float, high: float, grid: float) -> PrivacyLoss:
    """Pessimistic discretisation of a loss with CDF ``cdf`` (survival ``sf``) on [low, high]:
    cell i gets the mass in ((i−1)h, ih]; mass below the first cell joins it, mass above the
    last goes to +∞.  Differences are taken on whichever of cdf/sf is below ½ (accurate tails)."""
    cells = (high - low) / grid  # checked before the steps: a huge ε overflows them
    if not cells <= MAX_CELLS + 2:
        raise PrivacyError(f"the PLD would need {cells:.3g} cells of width {grid:g}: "
                           f"pass a grid of at least {1.01 * (high - low) / MAX_CELLS:.2g}")
    first, last = _ceil_steps(low, grid), _ceil_steps(high, grid)
    if last - first > MAX_CELLS:
        raise PrivacyError(f"the PLD would need {last - first:,} cells of width {grid:g}: "
                           f"pass a grid of at least {1.01 * (high - low) / MAX_CELLS:.2g}")
    edges = np.arange(first - 1, last + 1) * grid
    below, above = cdf(edges), sf(edges)
    probs = np.where(below[1:] <= 0.5, np.diff(below), -np.diff(above))
    probs[0] += below[0]
    return _truncated(np.clip(probs, 0.0, None), first, grid, float(above[-1]))


def laplace_loss(epsilon: float, steps: int | None, grid: float) -> PrivacyLoss:
    """PLD of an ε-DP Laplace release, on [−ε, ε].

    Discrete Laplace with parameter t on integers, shift Δ = ``steps``, ε = Δ/t, q = e^{−ε/Δ}:
    L = ε(Δ − 2X)/Δ clipped to [−ε, ε] and P[L ≤ ℓ] = q^⌈Δ(ε−ℓ)/(2ε)⌉/(1 + q) for
    −ε ≤ ℓ < ε.  Δ = 1 is randomised response, L = ±ε w.p. e^{±ε}/(1 + e^ε), whose
    composition dominates any ε-DP mechanism's (Kairouz, Oh & Viswanath 2015).  Continuous
    Laplace (steps None; the Δ → ∞ limit): L = (|X − Δ| − |X|)/b has P[L ≤ ℓ] = ½e^{−(ε−ℓ)/2}
    on [−ε, ε) and an atom ½ at ε.  A float error in ⌈·⌉ only moves an atom up a step.
    """
    def cdf(t: np.ndarray) -> np.ndarray:
        if steps is None:
            inside = 0.5 * np.exp((t - epsilon) / 2)
        else:
            power = np.ceil(steps * (epsilon - t) / (2 * epsilon))
            inside = np.exp(-epsilon / steps * power) / (1 + math.exp(-epsilon / steps))
        return np.where(t >= epsilon, 1.0, np.where(t < -epsilon, 0.0, inside))

    return _from_cdf(cdf, lambda t: 1.0 - cdf(t), -epsilon, epsilon, grid)


def gaussian_loss(noise_multiplier: float, grid: float) -> PrivacyLoss:
    """PLD of a Gaussian with µ = Δ/σ: L ~ N(µ²/2, µ²) (Dong, Roth & Su 2022; Sommer et al.)."""
    mu = 1 / noise_multiplier
    mean = mu * mu / 2
    return _from_cdf(lambda t: ndtr((t - mean) / mu), lambda t: ndtr((mean - t) / mu),
                     mean - GAUSS_TAIL_Z * mu, mean + GAUSS_TAIL_Z * mu, grid)


def approx_loss(epsilon: float, delta: float, grid: float) -> PrivacyLoss:
    """PLD of the worst (ε, δ)-DP mechanism: +∞ w.p. δ, else randomised response at ε
    (Kairouz, Oh & Viswanath 2015, Thm 2.1; Murtagh & Vadhan 2016)."""
    if epsilon == 0:
        return PrivacyLoss(np.array([1.0 - delta]), 0, grid, delta)
    pure = laplace_loss(epsilon, 1, grid)
    return PrivacyLoss(pure.probs * (1 - delta), pure.offset, grid, delta)


def profile_loss(profile: Callable[[np.ndarray], np.ndarray], grid: float) -> PrivacyLoss:
    """The PLD of the worst pair with a given symmetric privacy profile ε ↦ δ(ε) (an upper bound).

    A mechanism meeting (ε, δ(ε)) for every ε is f-DP for the trade-off curve f bounded by those
    lines, hence dominated by f's canonical pair, and dominating pairs compose (Dong, Roth & Su,
    JRSS-B 2022, Prop. 2.12 and Thm 3.2; Zhu, Dong & Wang, AISTATS 2022).  δ is sampled at
    ε_j = j·h (h a multiple of ``grid``, at most PROFILE_POINTS samples) up to δ ≤ 1e-16; the
    pair interpolates it linearly in E = e^ε between samples ("connect the dots", Doroshenko et
    al. 2022).  Its profile at the samples is the greatest convex minorant of δ in E (every
    profile is convex in E, so this is still an upper bound), found by weighted isotonic
    regression of the slopes.  The slopes −B_j give
    the pair's losses exactly on the grid: mass B_{j−1} − B_j at −ε_j, e^{ε_j} times as much at
    +ε_j, δ(ε_max) at +∞, the rest at 0.  Symmetric, so one direction covers both.
    """
    tops = grid * 2.0 ** np.arange(MAX_CELLS.bit_length() - 1)  # up to MAX_CELLS/2 cells
    small = np.flatnonzero(profile(tops) <= 1e-16)
    if small.size == 0:
        raise PrivacyError(f"the PLD would need more than {MAX_CELLS:,} cells of width "
                           f"{grid:g}: pass a coarser grid")
    top = float(tops[small[0]])
    stride = max(1, math.ceil(top / grid / PROFILE_POINTS))  # losses land on grid multiples
    steps = math.ceil(top / grid / stride)
    epsilons = np.arange(steps + 1) * (stride * grid)
    deltas = np.minimum.accumulate(np.clip(profile(epsilons), 0.0, 1.0))
    widths = np.diff(np.exp(epsilons))
    slopes = isotonic_regression(np.diff(deltas) / widths, weights=widths).x
    above = np.append(-slopes, 0.0)  # B_j, non-increasing
    low = np.clip(above[:-1] - above[1:], 0.0, None)  # mass at −ε_j, j = 1..steps
    high = low * np.exp(epsilons[1:])
    infinity = float(deltas[-1])
    zero = max(0.0, 1.0 - infinity - math.fsum(low) - math.fsum(high))
    probs = np.zeros(2 * steps * stride + 1)
    probs[::stride] = np.concatenate([low[::-1], [zero], high])
    return _truncated(probs, -steps * stride, grid, infinity)


def discrete_gaussian_loss(noise_multiplier: float, grid: float) -> PrivacyLoss:
    """A PLD that dominates every multivariate discrete Gaussian of this noise multiplier σ/Δ₂:
    the pair of :func:`~dpsql.mechanisms.discrete_calibration.discrete_gaussian_profile` (the
    smaller of the zCDP and smoothing bounds), by :func:`profile_loss`."""
    return profile_loss(lambda eps: discrete_gaussian_profile(noise_multiplier, eps), grid)


def event_loss(event: MechanismEvent, grid: float, *, bound_discrete: bool = False
               ) -> PrivacyLoss:
    """The pessimistic PLD of one event.

    A discrete Gaussian has no single PLD (it depends on how the sensitivity splits over cells
    of different σ); with ``bound_discrete`` it gets :func:`discrete_gaussian_loss`, which
    dominates them all, and otherwise a PrivacyError.
    """
    if event.kind == "laplace":
        return laplace_loss(event.epsilon, event.steps, grid)
    if event.kind == "approx":
        return approx_loss(event.epsilon, event.delta, grid)
    if event.discrete:
        if bound_discrete:
            return discrete_gaussian_loss(event.noise_multiplier, grid)
        raise PrivacyError(f"{event}: the continuous Gaussian's PLD does not bound a discrete "
                           "Gaussian's; pass bound_discrete=True for a dominating PLD, or "
                           "account for it with zcdp() (or best_epsilon)")
    return gaussian_loss(event.noise_multiplier, grid)


@lru_cache(maxsize=16)
def _composed(history: tuple[MechanismEvent, ...], grid: float, bound_discrete: bool
              ) -> PrivacyLoss:
    losses = [event_loss(event, grid, bound_discrete=bound_discrete).self_compose(count)
              for event, count in Counter(history).items()] or [_certain(grid)]
    while len(losses) > 1:  # pairwise, so each FFT is about as long as its inputs
        losses = [a.compose(b) for a, b in zip(losses[::2], losses[1::2], strict=False)] + \
            losses[len(losses) - len(losses) % 2:]
    return losses[0]


def compose(events: Iterable[MechanismEvent], *, grid: float = GRID,
            bound_discrete: bool = False) -> PrivacyLoss:
    """The history's pessimistic PLD (cached: identical histories are composed once).

    ``bound_discrete``: account discrete Gaussians by :func:`discrete_gaussian_loss` (a valid
    upper bound) instead of refusing them.

    >>> from dpsql.accounting.composition import approx
    >>> str(compose([approx(1.0, 1e-6)], grid=0.5))
    'PrivacyLoss(losses -1..1 step 0.5, P[L=∞]=1e-06)'
    """
    require("grid", grid, low_ok=False, high=1.0)
    return _composed(as_history(events), float(grid), bound_discrete)


def pld_delta(events: Iterable[MechanismEvent], epsilon: float, *, grid: float = GRID,
              bound_discrete: bool = False) -> float:
    """An upper bound on the history's δ at ``epsilon`` (see the module docstring).

    >>> from dpsql.accounting.composition import laplace
    >>> f"{pld_delta([laplace(1.0, steps=None)], 0.5):.4f}"  # exact: 1 − e^{−1/4} = 0.2212
    '0.2212'
    """
    require("epsilon", epsilon, high=math.inf, high_ok=True)
    loss = compose(events, grid=grid, bound_discrete=bound_discrete)
    return float(loss.deltas(np.array([float(epsilon)]))[0])


def pld(events: Iterable[MechanismEvent], delta: float, *, grid: float = GRID,
        bound_discrete: bool = False) -> float:
    """The least ε with the PLD's δ(ε) ≤ ``delta``: a valid ε for the history at δ.

    >>> from dpsql.accounting.composition import gaussian
    >>> round(pld([gaussian(4.0)] * 16, 1e-6), 3)  # exact (µ = 1 GDP): 4.887
    4.887
    """
    require("delta", delta, high=1.0)
    return compose(events, grid=grid, bound_discrete=bound_discrete).epsilon(float(delta))


def privacy_profile(events: Iterable[MechanismEvent], epsilons: Iterable[float], *,
                    grid: float = GRID, bound_discrete: bool = False) -> np.ndarray:
    """δ(ε) for each ε (an upper bound, via the PLD), e.g. to plot or feed to
    :func:`dpsql.accounting.gdp.tradeoff_from_profile`.

    >>> from dpsql.accounting.composition import laplace
    >>> privacy_profile([laplace(1.0)], [0.0, 1.0]).round(4).tolist()
    [0.4621, 0.0]
    """
    values = np.asarray(list(epsilons), dtype=float)
    if values.ndim != 1 or np.isnan(values).any() or (values < 0).any():
        raise PrivacyError("epsilons: need a list of numbers >= 0")
    return compose(events, grid=grid, bound_discrete=bound_discrete).deltas(values)


def best_epsilon(events: Iterable[MechanismEvent], delta: float, *,
                 grid: float = GRID) -> tuple[float, str]:
    """The tightest ε valid at ``delta``, and the method that gave it.

    Candidates, each used only where it is valid: "basic" (no Gaussian, Σδᵢ ≤ δ),
    "advanced" (no Gaussian; its δ̃ is what the events' δᵢ leave of δ), "zcdp" (the
    Gaussian and Laplace events' ρ converted at δ − (1 − Π(1 − δᵢ)), plus the approx events'
    ε by basic composition), "gdp" (continuous Gaussians only: exact) and "pld" (no discrete
    Gaussian).  Ties go to the simplest method.

    >>> from dpsql.accounting.composition import approx, gaussian, laplace
    >>> best_epsilon([laplace(0.5)] * 2, 0.0)
    (1.0, 'basic')
    >>> eps, method = best_epsilon([laplace(0.5)] * 2, 1e-6)
    >>> eps < 1.0, method
    (True, 'pld')
    >>> eps, method = best_epsilon([gaussian(4.0, discrete=True)] * 16 + [approx(0, 1e-7)], 1e-6)
    >>> round(eps, 3), method
    (5.267, 'zcdp')
    """
    require("delta", delta, high=1.0)
    history = as_history(events)
    candidates: list[tuple[float, str]] = []
    summed = basic(history)
    if summed is not None and summed[1] <= delta:
        candidates.append((summed[0], "basic"))
    approximate = [event for event in history if event.kind == "approx"]
    rest = [event for event in history if event.kind != "approx"]
    log_slack = math.log1p(-delta) - log_no_failure(approximate)
    slack = -math.expm1(log_slack) * (1 - 1e-9)  # what δ the events' δᵢ leave, rounded down
    if slack > 0:
        spread = advanced(history, slack)
        if spread is not None and spread[1] <= delta:
            candidates.append((spread[0], "advanced"))
        rho = zcdp(rest)
        extra = basic(approximate)
        if rho is not None and extra is not None and slack - extra[1] > 0:
            candidates.append((zcdp_to_dp(rho, slack - extra[1]) + extra[0], "zcdp"))
    mu = gdp_mu(history)
    if mu is not None:
        candidates.append((gdp_epsilon(mu, delta), "gdp"))
    if not any(event.kind == "gaussian" and event.discrete for event in history):
        with suppress(PrivacyError):  # a grid too fine for so large a loss: others still hold
            candidates.append((pld(history, delta, grid=grid), "pld"))
    if not candidates:
        return math.inf, "none"
    return min(candidates, key=lambda candidate: candidate[0])

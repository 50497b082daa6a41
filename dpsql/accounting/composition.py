"""A history of released mechanisms and the classical ways to compose it.

A history is a sequence of :class:`MechanismEvent`: ``laplace(ε)`` (pure ε-DP),
``gaussian(σ/Δ₂)`` (a Gaussian mechanism, given by its noise multiplier) and
``approx(ε, δ)`` (any (ε, δ)-DP step, e.g. the δ part of partition selection).
This module composes a history by basic composition, advanced composition (pure and
approximate events only) and zCDP (Gaussian and pure events);
:mod:`dpsql.accounting.pld` composes any history numerically and picks the tightest.

>>> history = [laplace(0.1)] * 3 + [approx(0.0, 1e-7)]
>>> basic(history)
(0.3, 1e-07)
>>> round(zcdp_to_dp(zcdp([gaussian(4.0)] * 10), 1e-6), 3)
4.01
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from dpsql.errors import PrivacyError
from dpsql.exact import as_fraction, nearest_float, real_number

Kind = Literal["laplace", "gaussian", "approx"]


def require(name: str, value: float, *, low: float = 0.0, low_ok: bool = True,
            high: float = math.inf, high_ok: bool = False) -> float:
    """``value`` as a float if it is a number within the bounds, else PrivacyError."""
    lo, hi = ("[" if low_ok else "("), ("]" if high_ok else ")")
    interval = f"{name} in {lo}{low:g}, {high:g}{hi}"
    number = real_number(name, value, f"Fix: need {interval}")
    above = number >= low if low_ok else number > low
    below = number <= high if high_ok else number < high
    if not (above and below):
        raise PrivacyError(f"{name}={value!r} is out of range: need {interval}")
    return number


@dataclass(frozen=True)
class MechanismEvent:
    """One released mechanism, as the accountant sees it; build with laplace/gaussian/approx.

    ``steps`` (Laplace only) is the L1 sensitivity in lattice steps of a *discrete* Laplace:
    1 (the default) is the worst case over every ε-DP mechanism (randomised response),
    valid whatever the noise; None means one coordinate of *continuous* Laplace noise.
    ``discrete`` (Gaussian only) marks a discrete Gaussian: zCDP covers it exactly (Canonne,
    Kamath & Steinke 2020, Thm 14) but the continuous Gaussian's PLD/GDP do not (one cell can
    have a slightly larger δ(ε)): :mod:`pld` composes it with a profile that dominates every
    multivariate discrete Gaussian of its multiplier (``pld(..., bound_discrete=True)``, as
    the report does), and :mod:`gdp` refuses it.
    """

    kind: Kind
    epsilon: float = 0.0
    delta: float = 0.0
    noise_multiplier: float = 0.0
    steps: int | None = 1
    discrete: bool = False

    def __post_init__(self) -> None:
        if self.kind == "laplace":
            require("epsilon", self.epsilon, low_ok=False)
            if self.steps is not None and (not isinstance(self.steps, int) or self.steps < 1):
                raise PrivacyError(f"steps={self.steps!r}: need an integer >= 1, or None")
        elif self.kind == "gaussian":
            require("noise_multiplier", self.noise_multiplier, low_ok=False)
        elif self.kind == "approx":
            require("epsilon", self.epsilon)
            require("delta", self.delta, high=1.0)
        else:
            raise PrivacyError(f"kind={self.kind!r}: use laplace(), gaussian() or approx()")

    def __str__(self) -> str:
        if self.kind == "laplace":
            steps = "" if self.steps == 1 else f", steps={self.steps}"
            return f"laplace(ε={self.epsilon:g}{steps})"
        if self.kind == "gaussian":
            discrete = ", discrete" if self.discrete else ""
            return f"gaussian(σ/Δ={self.noise_multiplier:g}{discrete})"
        return f"approx(ε={self.epsilon:g}, δ={self.delta:g})"


def laplace(epsilon: float, *, steps: int | None = 1) -> MechanismEvent:
    """A pure ε-DP release, e.g. (discrete) Laplace noise of scale b on L1 sensitivity Δ: ε = Δ/b.

    >>> str(laplace(0.5))
    'laplace(ε=0.5)'
    """
    return MechanismEvent("laplace", epsilon=epsilon, steps=steps)


def gaussian(noise_multiplier: float, *, discrete: bool = False) -> MechanismEvent:
    """A Gaussian release with noise multiplier σ/Δ₂ (std over L2 sensitivity).

    >>> str(gaussian(2.0))
    'gaussian(σ/Δ=2)'
    """
    return MechanismEvent("gaussian", noise_multiplier=noise_multiplier, discrete=discrete)


def approx(epsilon: float, delta: float) -> MechanismEvent:
    """A generic (ε, δ)-DP release, composed as its worst case (privacy loss +∞ w.p. δ).

    >>> str(approx(0.0, 1e-9))
    'approx(ε=0, δ=1e-09)'
    """
    return MechanismEvent("approx", epsilon=epsilon, delta=delta)


def as_history(events: Iterable[MechanismEvent]) -> tuple[MechanismEvent, ...]:
    """The events as a tuple, each checked to be a MechanismEvent."""
    history = tuple(events)
    for event in history:
        if not isinstance(event, MechanismEvent):
            raise PrivacyError(f"{event!r} is not a MechanismEvent: build it with "
                               "laplace(), gaussian() or approx()")
    return history


def basic(events: Iterable[MechanismEvent]) -> tuple[float, float] | None:
    """Basic composition (Dwork, McSherry, Nissim & Smith 2006): (Σεᵢ, Σδᵢ).

    Sums are exact over the decimals written (as the Accountant does). None if the history
    holds a Gaussian, which has no single (ε, δ): use :func:`zcdp` or the PLD for it.

    >>> basic([laplace(0.1), laplace(0.2)])
    (0.3, 0.0)
    >>> basic([gaussian(1.0)]) is None
    True
    """
    history = as_history(events)
    if any(event.kind == "gaussian" for event in history):
        return None
    epsilon = sum((as_fraction(event.epsilon) for event in history), Fraction(0))
    delta = sum((as_fraction(event.delta) for event in history), Fraction(0))
    return nearest_float(epsilon), nearest_float(delta)


def log_no_failure(events: Iterable[MechanismEvent]) -> float:
    """ln Π(1 − δᵢ): the log-probability that no approximate event "fails"."""
    return math.fsum(math.log1p(-event.delta) for event in events)


def advanced(events: Iterable[MechanismEvent], delta_prime: float) -> tuple[float, float] | None:
    """Advanced composition of pure and approximate events; None if there is a Gaussian.

    Kairouz, Oh & Viswanath, "The composition theorem for differential privacy" (ICML 2015),
    Thm 3.5 (heterogeneous): for δ̃ ∈ (0, 1) the history is (ε̃, 1 − (1 − δ̃)Π(1 − δᵢ))-DP with
    ε̃ = min{Σεᵢ, Σεᵢ·tanh(εᵢ/2) + √(2Σεᵢ² ln(e + √(Σεᵢ²)/δ̃)), Σεᵢ·tanh(εᵢ/2) +
    √(2Σεᵢ² ln(1/δ̃))}, where εᵢ·tanh(εᵢ/2) = εᵢ(e^εᵢ − 1)/(e^εᵢ + 1).  For k equal events this
    is never worse than Dwork, Rothblum & Vadhan (FOCS 2010, Thm III.3):
    (ε√(2k ln(1/δ̃)) + kε(e^ε − 1), kδ + δ̃).

    >>> eps, delta = advanced([laplace(0.1)] * 100, 1e-6)
    >>> round(eps, 3), delta
    (5.756, 1e-06)
    >>> round(advanced([laplace(0.01)] * 1000, 1e-6)[0], 3)
    1.641
    """
    require("delta_prime", delta_prime, low_ok=False, high=1.0)
    history = as_history(events)
    if any(event.kind == "gaussian" for event in history):
        return None
    epsilons = [event.epsilon for event in history]
    squares = total(e * e for e in epsilons)
    drift = total(e * math.tanh(e / 2) for e in epsilons)
    candidates = [
        total(epsilons),
        drift + math.sqrt(2 * squares * math.log(1 / delta_prime)),
        drift + math.sqrt(2 * squares * math.log(math.e + math.sqrt(squares) / delta_prime)),
    ]
    delta = -math.expm1(math.log1p(-delta_prime) + log_no_failure(history))
    return min(candidates), delta


def zcdp(events: Iterable[MechanismEvent]) -> float | None:
    """The history's ρ-zCDP; None if it holds an approx event (not zCDP).

    Bun & Steinke (TCC 2016): a Gaussian with noise multiplier σ/Δ₂ is ρ = 1/(2(σ/Δ₂)²)-zCDP
    (Prop. 1.6; the discrete Gaussian too, Canonne, Kamath & Steinke 2020, Thm 14), pure ε-DP
    implies ε²/2-zCDP (Prop. 1.4), and ρ's add up (Lemma 1.7).

    >>> zcdp([gaussian(2.0), laplace(1.0)])
    0.625
    """
    history = as_history(events)
    if any(event.kind == "approx" for event in history):
        return None
    return total(event.epsilon * event.epsilon / 2 if event.kind == "laplace"
                 else 0.5 / event.noise_multiplier / event.noise_multiplier for event in history)


def total(values: Iterable[float]) -> float:
    """Σ of non-negative floats, exactly rounded; +inf when it passes the largest float.

    (``math.fsum`` raises OverflowError there; a huge ε must give an infinite ρ, not an error.)

    >>> total([0.1, 0.2]), total([1e308, 1e308])
    (0.30000000000000004, inf)
    """
    try:
        return math.fsum(values)
    except OverflowError:
        return math.inf


def _cks_epsilon(rho: float, log_inv_delta: float, alpha: float) -> float:
    """ε at Rényi order α: ρα + (ln(1/δ) + (α−1)ln(1 − 1/α) − ln α)/(α − 1)."""
    return rho * alpha + (log_inv_delta + (alpha - 1) * math.log1p(-1 / alpha)
                          - math.log(alpha)) / (alpha - 1)


def zcdp_to_dp(rho: float, delta: float) -> float:
    """The ε with which ρ-zCDP implies (ε, δ)-DP, by the tighter conversion.

    Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy" (NeurIPS 2020),
    Cor. 13 (§2.3), as in their cdp2adp.py: ρ-zCDP gives (ε, δ)-DP with
    ε = inf_{α>1} ρα + (ln(1/δ) + (α−1)ln(1 − 1/α) − ln α)/(α − 1).  Any α gives a valid ε; we
    minimise numerically over α = 1 + eᵘ and never return more than Bun & Steinke's
    ρ + 2√(ρ ln(1/δ)) (Prop. 1.3).

    >>> round(zcdp_to_dp(0.5, 1e-5), 4), round(0.5 + 2 * math.sqrt(0.5 * math.log(1e5)), 4)
    (4.7284, 5.2985)
    """
    rho = require("rho", rho, high=math.inf, high_ok=True)
    delta = require("delta", delta, high=1.0)
    if rho == 0:
        return 0.0
    if delta == 0 or math.isinf(rho):
        return math.inf
    log_inv_delta = -math.log(delta)
    classic = rho + 2 * math.sqrt(rho * log_inv_delta)
    if math.isinf(classic):
        return math.inf
    from scipy.optimize import minimize_scalar  # slow to import: only when converting

    found = minimize_scalar(lambda u: _cks_epsilon(rho, log_inv_delta, 1 + math.exp(u)),
                            bounds=(-30.0, 30.0), method="bounded",
                            options={"xatol": 1e-10})
    tight = _cks_epsilon(rho, log_inv_delta, 1 + math.exp(found.x))
    return max(0.0, min(classic, tight))

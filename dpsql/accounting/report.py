"""What a history of queries has spent, under every composition method.

Two kinds of answer. The **limit** (what the connection enforces) must hold even
though the analyst picks each query after seeing earlier answers and the system
stops them at the budget: that is a *privacy filter*, and only basic composition
and zCDP (a Rényi filter, Feldman & Zrnic 2021) are valid filters here, so the
limit uses the smaller of the two. The **report** adds what the realised history
would cost if it had been fixed in advance: advanced composition (Kairouz, Oh &
Viswanath 2015), PLD accounting, and for Gaussian histories the GDP µ (Dong, Roth &
Su 2022) with the tightness of that one-number description.

>>> from dpsql.accounting.composition import gaussian, laplace
>>> eps, method = filter_epsilon([laplace(0.5)] * 2, [(0.5, 0.0)] * 2, 1e-6)
>>> eps, method
(1.0, 'basic')
>>> eps, method = filter_epsilon([gaussian(5.0, discrete=True)] * 40, [(1.0, 1e-7)] * 40, 1e-5)
>>> method, round(eps, 2)
('zcdp', 6.21)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from dpsql.accounting.composition import (
    MechanismEvent,
    advanced,
    approx,
    basic,
    gaussian,
    laplace,
    zcdp,
    zcdp_to_dp,
)
from dpsql.errors import PrivacyError
from dpsql.exact import as_fraction, nearest_float


def query_events(kind: str, epsilon: float, noise_multiplier: float,
                 selection_delta: float) -> tuple[MechanismEvent, ...]:
    """The events of one query: its noise (pure Laplace, or a discrete Gaussian given by
    its noise multiplier σ/Δ₂) and, with private keys, partition selection's δ."""
    noise = laplace(epsilon) if kind == "laplace" else gaussian(noise_multiplier, discrete=True)
    return (noise, approx(0.0, selection_delta)) if selection_delta > 0 else (noise,)


def _basic_costs(costs: Sequence[tuple[float, float]]) -> tuple[Fraction, Fraction]:
    eps = sum((as_fraction(e) for e, _ in costs), Fraction(0))
    delta = sum((as_fraction(d) for _, d in costs), Fraction(0))
    return eps, delta


def zcdp_epsilon(events: Sequence[MechanismEvent], delta: float) -> float | None:
    """ε at ``delta`` by zCDP for the noise events plus the approx events' δ (and ε)."""
    approximate = [e for e in events if e.kind == "approx"]
    rest = [e for e in events if e.kind != "approx"]
    extra = basic(approximate) if approximate else (0.0, 0.0)
    rho = zcdp(rest)
    left = delta - extra[1]
    if rho is None or left <= 0:
        return None
    return (zcdp_to_dp(rho, left) if rho > 0 else 0.0) + extra[0]


def filter_epsilon(events: Sequence[MechanismEvent], costs: Sequence[tuple[float, float]],
                   delta: float) -> tuple[float, str]:
    """The smallest ε at total ``delta`` that a valid privacy filter certifies.

    ``costs`` are the (ε, δ) each query was calibrated to (basic composition sums
    them exactly); ``events`` are the same queries as mechanisms (for zCDP).
    Returns (inf, "none") when no method fits ``delta``.
    """
    candidates = []
    eps, dlt = _basic_costs(costs)
    if dlt <= as_fraction(delta):
        candidates.append((nearest_float(eps), "basic"))
    if delta > 0 and events:
        zc = zcdp_epsilon(events, delta)
        if zc is not None:
            candidates.append((zc, "zcdp"))
    return min(candidates, default=(math.inf, "none"))


@dataclass(frozen=True)
class BudgetReport:
    """Spending of one history, at the total budget's δ, under each method."""

    total_epsilon: float
    total_delta: float
    limit_epsilon: float
    limit_method: str
    basic: tuple[float, float]
    advanced: float | None
    zcdp: float | None
    pld: float | None
    gdp_mu: float | None
    gdp_tightness: float | None
    queries: int
    events: tuple[MechanismEvent, ...] = field(default=(), repr=False)

    def privacy_profile(self, epsilons: Sequence[float]) -> np.ndarray:
        """δ(ε) of the history at each ε (PLD, pessimistic; discrete Gaussians by a dominating
        PLD), as data for tables or plots: an upper bound, never an approximation."""
        from dpsql.accounting.pld import privacy_profile

        return privacy_profile(self.events, epsilons, bound_discrete=True)

    def tradeoff(self, epsilons: Sequence[float] | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
        """The trade-off curve (type I error α, smallest type II error β) of the history."""
        from dpsql.accounting.gdp import tradeoff_from_profile

        grid = list(epsilons) if epsilons is not None else [x / 4 for x in range(0, 81)]
        return tradeoff_from_profile(grid, self.privacy_profile(grid))

    def plot(self, path: str | None = None):
        """Privacy profile and trade-off curve side by side (needs matplotlib)."""
        try:
            import matplotlib.pyplot as plt
        except ImportError:
            raise ImportError("plotting needs matplotlib: pip install 'dpsql[plot]'") from None
        grid = np.linspace(0, max(2 * self.limit_epsilon, 1.0), 60)
        fig, (left, right) = plt.subplots(1, 2, figsize=(9, 4))
        left.semilogy(grid, np.maximum(self.privacy_profile(grid), 1e-15))
        left.set(xlabel="ε", ylabel="δ(ε)", title="privacy profile", ylim=(1e-15, 1.5))
        alphas, betas = self.tradeoff()
        right.plot(alphas, betas, label="history")
        right.plot([0, 1], [1, 0], ":", color="grey", label="perfect privacy")
        right.set(xlabel="type I error α", ylabel="type II error β", title="trade-off curve")
        right.legend()
        fig.tight_layout()
        if path is not None:
            fig.savefig(path)
        return fig

    def __str__(self) -> str:
        def fmt(value: float | None) -> str:
            return "n/a" if value is None else f"{value:.4g}"

        left = self.total_epsilon - self.limit_epsilon if self.limit_epsilon < \
            self.total_epsilon else 0.0
        lines = [
            f"budget ε={self.total_epsilon:g} δ={self.total_delta:g}; {self.queries} queries",
            f"  enforced ({self.limit_method}): ε spent {fmt(self.limit_epsilon)}, "
            f"left {fmt(left)}",
            f"  basic: ε={self.basic[0]:.4g} δ={self.basic[1]:.3g}",
            f"  at δ={self.total_delta:g}: zCDP ε={fmt(self.zcdp)}, "
            f"advanced ε={fmt(self.advanced)}, PLD ε={fmt(self.pld)} "
            "(PLD/advanced: as if the queries were fixed in advance)",
        ]
        if self.gdp_mu is not None:
            lines.append(f"  GDP µ={self.gdp_mu:.4g} (continuous-Gaussian description), "
                         f"tightness Δ={fmt(self.gdp_tightness)}")
        return "\n".join(lines)


def build_report(events: Sequence[MechanismEvent], costs: Sequence[tuple[float, float]],
                 total_epsilon: float, total_delta: float) -> BudgetReport:
    """Every method's ε at the total δ (slow methods are imported only here).

    PLD covers every history: a discrete Gaussian is composed through a PLD that dominates it
    (:func:`~dpsql.accounting.pld.discrete_gaussian_loss`).  Advanced composition needs each
    step as (ε, δ)-DP, which a Gaussian event is not by itself: a history with one is composed
    query by query, each as the (ε, δ) it was calibrated to and charged.  GDP describes
    Gaussian histories by the continuous counterparts of their noise; its tightness is
    measured on that description's privacy profile, sampled at 300 ε from 0 to its ε at
    δ = 1e-10 (a coarse or far-reaching grid would overstate µ* and Δ through the profile's
    discretised tail).
    """
    from dpsql.accounting.gdp import gdp_mu, gdp_tightness, tradeoff_from_profile
    from dpsql.accounting.pld import pld, privacy_profile

    limit = filter_epsilon(events, costs, total_delta)
    eps, dlt = _basic_costs(costs)
    spread = advanced(_as_approximate(events, costs), total_delta) \
        if events and total_delta > 0 else None
    pld_eps = _unless_too_fine(lambda: pld(events, total_delta, bound_discrete=True)) \
        if events and total_delta > 0 else None
    mu = tightness = None
    if events and all(e.kind == "gaussian" for e in events):
        continuous = [_as_continuous(e) for e in events]
        mu = gdp_mu(continuous)

        def fit() -> float:
            grid = np.linspace(0.0, pld(continuous, 1e-10), 300)
            return gdp_tightness(*tradeoff_from_profile(grid, privacy_profile(continuous, grid)))[1]

        tightness = _unless_too_fine(fit)
    return BudgetReport(
        total_epsilon=total_epsilon, total_delta=total_delta, limit_epsilon=limit[0],
        limit_method=limit[1], basic=(nearest_float(eps), nearest_float(dlt)),
        advanced=None if spread is None else spread[0],
        zcdp=zcdp_epsilon(events, total_delta) if events and total_delta > 0 else None,
        pld=pld_eps, gdp_mu=mu, gdp_tightness=tightness, queries=len(costs),
        events=tuple(events))


def _unless_too_fine(compute: Callable[[], float]) -> float | None:
    """``compute()``, or None (shown as n/a) when the PLD grid cannot hold the history's
    losses: a huge ε (or a tiny noise multiplier) spans more cells than PLD accounting keeps.
    """
    try:
        return compute()
    except PrivacyError:
        return None


def _as_approximate(events: Sequence[MechanismEvent], costs: Sequence[tuple[float, float]]
                    ) -> list[MechanismEvent]:
    """The events, or with a Gaussian among them, each query as approx(its ε, its δ)."""
    if any(e.kind == "gaussian" for e in events):
        return [approx(eps, delta) for eps, delta in costs]
    return list(events)


def _as_continuous(event: MechanismEvent) -> MechanismEvent:
    """The continuous-Gaussian description of a discrete Gaussian (for GDP µ and its tightness)."""
    if event.kind == "gaussian" and event.discrete:
        return gaussian(event.noise_multiplier)
    return event

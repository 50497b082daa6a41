"""Statistical privacy audits of whole queries on neighbouring databases.

Run a query many times on D and on D' = D minus one unit; for an event E,
(ε, δ)-DP implies P_D(E) ≤ e^ε P_D'(E) + δ (and symmetrically). With
Clopper–Pearson bounds (p_D from below, p_D' from above) this gives a lower
bound on the ε actually achieved:

    ε_lb = ln((p_D,lower − δ) / p_D',upper)

which must not exceed the claimed ε. An audit with a deliberately broken
mechanism (the negative control) must flag, so the audit is known to have power.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from scipy.stats import beta


def clopper_pearson(successes: int, trials: int, alpha: float) -> tuple[float, float]:
    """Two-sided (1 − alpha) exact binomial interval."""
    lower = 0.0 if successes == 0 else beta.ppf(alpha / 2, successes, trials - successes + 1)
    upper = 1.0 if successes == trials else beta.ppf(1 - alpha / 2, successes + 1,
                                                      trials - successes)
    return float(lower), float(upper)


@dataclass(frozen=True)
class AuditResult:
    hits_d: int
    hits_neighbour: int
    trials: int
    epsilon_lower: float

    def __str__(self) -> str:
        return (f"P_D(E)={self.hits_d}/{self.trials}, P_D'(E)={self.hits_neighbour}/"
                f"{self.trials}, ε lower bound={self.epsilon_lower:.3f}")


def epsilon_lower_bound(hits_d: int, hits_n: int, trials: int, delta: float,
                        alpha: float = 0.01) -> float:
    """Largest ε the observed counts prove, in both directions (confidence 1 − alpha)."""
    best = 0.0
    for a, b in ((hits_d, hits_n), (hits_n, hits_d)):
        p_lower, _ = clopper_pearson(a, trials, alpha / 2)
        _, q_upper = clopper_pearson(b, trials, alpha / 2)
        if p_lower - delta > 0 and q_upper > 0:
            best = max(best, math.log((p_lower - delta) / q_upper))
    return best


def audit(run_d: Callable[[int], bool], run_neighbour: Callable[[int], bool], *,
          trials: int, delta: float) -> AuditResult:
    """Count how often event E happens on D and on D' over ``trials`` seeds each."""
    hits_d = sum(run_d(seed) for seed in range(trials))
    hits_n = sum(run_neighbour(seed + trials) for seed in range(trials))
    return AuditResult(hits_d, hits_n, trials, epsilon_lower_bound(hits_d, hits_n, trials, delta))

"""The exponential mechanism for quantiles on a bucketed domain, sampled exactly.

Quantiles follow Smith (STOC 2011) with the exponential mechanism of McSherry & Talwar
(FOCS 2007) on B equal buckets of [lo, hi] (the rewrite computes the bucket weights in SQL).

**Utility.** Bucket weights h_0..h_{B−1} are non-negative integers; N = Σ h, L_j = Σ_{i<j} h_i,
R_j = L_j + h_j. For q = n/d, bucket j has utility u_j = −dist(qN, [L_j, R_j]) =
−max(L_j − qN, 0, qN − R_j): 0 for the buckets where rank qN falls (including empty buckets
in a gap between values), and minus the number of ranks (weight) between them otherwise.

**Sensitivity.** Removing a unit removes its weights w_b ≥ 0, W = Σ w_b in total, and leaves
every other unit's weights as they were (the rewrite makes weights a function of the unit's own
rows). Then N, L_j, R_j and qN each fall by an amount in [0, W], so L_j − qN and qN − R_j each
move by at most W, and so does their maximum with 0: |Δu_j| ≤ W for every j.

**Privacy over groups.** Each group gets an independent draw with P(j) ∝ exp(−γ̃_j), where
γ_j = −a·u_j ≥ 0 and γ̃_j = ⌈γ_j·2^k⌉/2^k (so γ_j ≤ γ̃_j < γ_j + η with η = 2^−k). If one unit
adds weight W_G to group G, the numerator and the normaliser of every P(j) each move by a factor
of at most exp(a·W_G + η), so that group's draw loses at most 2a·W_G + 2η. The unit touches at
most g groups and adds at most ``max_weight`` = W_tot in total (the rewrite enforces both), so the
whole column loses at most 2a·W_tot + 2gη. With a = (ε − 2gη)/(2·W_tot) that is ε: pure ε-DP,
and per group the familiar ε/(2Δ) scale with Δ = W_tot (ε_q/g per group when W_tot = g·c).
k is chosen so that 2gη ≤ 2⁻²⁰ε (the rounding costs a millionth of ε).

**Exact sampling.** No floating-point probability touches the random bits (the floating-point
exponential mechanism is not exactly ε-DP: Ilvento, "Implementing the exponential mechanism with
base-2 differential privacy", CCS 2020). γ̃_j is an exact dyadic rational computed with Python
integers, and j is drawn by rejection: propose j uniformly (``Sampler.below``) and accept with an
exact Bernoulli(exp(−γ̃_j)) (Canonne, Kamath & Steinke 2020, Alg. 1, as in the noise samplers).
The accepted j has probability ∝ exp(−γ̃_j) exactly. Some bucket has γ̃ = 0, so each proposal is
accepted with probability ≥ 1/B; B proposals per round finish a round with probability ≥ 1 − 1/e.
Exponents above 2⁶² are capped at 2⁶² (as in the samplers: 2⁶² consecutive Bernoulli(e⁻¹)
successes never happen).

**Accuracy** (no budget, public parameters only): some bucket has γ̃ = 0, so the released bucket
is more than t ranks (weight) from rank qN with probability at most B·exp(−a·t).

**Confidence intervals** (``side="lower"``/``"upper"``, two more releases, each with its own
ε). The lower end is drawn from B + 1 candidates: a virtual bucket of public weight τ *below*
the domain (released as ``lo``) followed by the real buckets (released as their lower edges),
with the same utility for the target rank qN. Every real bucket past the one holding rank qN
starts at rank ≥ qN + τ in these coordinates, so it is at distance ≥ τ, while some candidate
is at distance 0: each is drawn with probability ≤ exp(−aτ), and the lower end exceeds the
bucket of rank qN with probability ≤ (B + 1)·exp(−aτ) — even when N is tiny or zero (the
virtual bucket then wins). The upper end mirrors it (virtual bucket above ``hi``, upper edges,
target qN + τ). With τ = ⌈ln(2(B + 1)/(1 − level))/a⌉ both ends hold together with probability
≥ level, whatever the data. τ is public, so neighbouring histograms move every utility by at
most W exactly as above: each end is ε-DP by the same proof.

>>> m = ExponentialQuantile(epsilon=1.0, q=Fraction(1, 2), max_weight=1, max_groups_per_unit=1)
>>> m.exponents(np.array([[0, 3, 0, 1]]))[0].tolist()  # rank 2 lies in bucket 1
[2097150, 0, 1048575, 1048575]
>>> m.sample(np.array([[0, 1000, 0, 0]]), Sampler(seed=1)).tolist()
[1]
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np

from dpsql.errors import InternalError, PrivacyError
from dpsql.mechanisms.samplers import Sampler

ROUNDING_COST = 2.0**-20
"""Share of ε spent on rounding the exponents to a dyadic grid (2gη ≤ this × ε)."""
MAX_EXPONENT = 2**62
MAX_ROUNDING_BITS = 62
PROPOSALS_PER_DRAW = 2**20
SIDES = ("point", "lower", "upper")


@dataclass(frozen=True)
class ExponentialQuantile:
    """One quantile released per group by the exponential mechanism (pure ε-DP in total).

    ``epsilon`` covers every group of the column; ``max_weight`` is the most total histogram
    weight one unit can add over all groups, and ``max_groups_per_unit`` the most groups it
    can touch.
    """

    epsilon: float
    q: Fraction
    max_weight: int
    max_groups_per_unit: int
    side: str = "point"
    pad: int = 0

    def __post_init__(self) -> None:
        if self.side not in SIDES or (self.side == "point") != (self.pad == 0) or self.pad < 0:
            raise InternalError(f"quantile side={self.side!r} with pad={self.pad!r}")
        if not (math.isfinite(self.epsilon) and self.epsilon > 0):
            raise PrivacyError(f"quantile epsilon={self.epsilon!r} must be finite and > 0")
        if not 0 <= self.q <= 1:
            raise InternalError(f"quantile q={self.q} is outside [0, 1]")
        if self.max_weight < 1 or self.max_groups_per_unit < 1:
            raise InternalError("quantile weight and group limits must be at least 1")
        if self.rounding_bits > MAX_ROUNDING_BITS:
            raise PrivacyError(f"quantile epsilon={self.epsilon!r} is too small to sample "
                               "exactly; use epsilon ≥ 1e-9 per quantile")

    @property
    def rounding_bits(self) -> int:
        """k with η = 2^−k and 2·g·η ≤ 2⁻²⁰·ε (in logs: a subnormal ε must not divide by 0).

        Any k is private (a = (ε − 2gη)/(2W) absorbs the rounding); k only sets its share.

        >>> [ExponentialQuantile(e, Fraction(1, 2), 1, 1).rounding_bits for e in (1.0, 1e300)]
        [21, 0]
        """
        bits = (math.log2(2 * self.max_groups_per_unit) - math.log2(ROUNDING_COST)
                - math.log2(self.epsilon))
        return max(0, math.ceil(bits))

    @property
    def scale(self) -> Fraction:
        """a = (ε − 2gη) / (2·W_tot): the exponent is a × (ranks away from qN)."""
        eta = Fraction(1, 2**self.rounding_bits)
        return (Fraction(self.epsilon) - 2 * self.max_groups_per_unit * eta) / (2 * self.max_weight)

    def distances(self, histograms: np.ndarray) -> np.ndarray:
        """d × dist(qN, [L_j, R_j]) for q = n/d, exactly (int64, or Python integers if large)."""
        h = np.asarray(histograms, dtype=np.int64)
        if h.ndim != 2 or (h < 0).any():
            raise InternalError("histograms must be a 2-D array of non-negative weights")
        n, d = self.q.numerator, self.q.denominator
        if (int(h.sum(axis=1).max(initial=0)) + self.pad) * max(n, d) >= 2**62:
            h = h.astype(object)  # d × distance would not fit in int64
        target = n * h.sum(axis=1, keepdims=True)
        virtual = np.full((h.shape[0], 1), self.pad, dtype=h.dtype)
        if self.side == "lower":
            h = np.concatenate([virtual, h], axis=1)
        elif self.side == "upper":
            h = np.concatenate([h, virtual], axis=1)
            target = target + d * self.pad
        right = np.cumsum(h, axis=1)
        return np.maximum(np.maximum(d * (right - h) - target, target - d * right), 0)

    def exponents(self, histograms: np.ndarray) -> np.ndarray:
        """G with γ̃ = G / 2^k = ⌈a·dist·2^k⌉ / 2^k, exactly (Python integers), per bucket."""
        scale = self.scale
        num = scale.numerator << self.rounding_bits
        den = scale.denominator * self.q.denominator
        return -((-(self.distances(histograms).astype(object) * num)) // den)

    def probabilities(self, histogram: np.ndarray) -> np.ndarray:
        """The exact output distribution for one histogram, as floats (for tests and docs)."""
        g = self.exponents(np.asarray(histogram)[None, :])[0]
        gamma = np.array([float(Fraction(min(x, MAX_EXPONENT), 2**self.rounding_bits))
                          for x in g])
        weights = np.exp(-(gamma - gamma.min()))
        return weights / weights.sum()

    def sample(self, histograms: np.ndarray, sampler: Sampler) -> np.ndarray:
        """One bucket index per histogram row, with P(j) ∝ exp(−γ̃_j) exactly."""
        g = self.exponents(histograms)
        mask = (1 << self.rounding_bits) - 1
        whole = np.minimum(g >> self.rounding_bits, MAX_EXPONENT).astype(np.int64)
        frac = (g & mask).astype(np.uint64)
        return _rejection(whole, frac, 1 << self.rounding_bits, sampler)

    def rank_error(self, level: float, buckets: int) -> float:
        """t with P(released bucket more than t weight away from rank qN) ≤ 1 − level."""
        if not 0 < level < 1:
            raise InternalError(f"confidence level {level!r} must be in (0, 1)")
        return math.log(buckets / (1 - level)) / float(self.scale)

    def interval_end(self, side: str, level: float, buckets: int) -> ExponentialQuantile:
        """The mechanism for one end of a ``level`` interval (same ε, q and limits).

        >>> m = ExponentialQuantile(epsilon=1.0, q=Fraction(1, 2), max_weight=4,
        ...                         max_groups_per_unit=1)
        >>> m.interval_end("lower", 0.95, 1024).pad  # ⌈ln(2·1025/0.05)/a⌉, a = (1 − 2η)/8
        85
        """
        if not 0 < level < 1:
            raise InternalError(f"confidence level {level!r} must be in (0, 1)")
        tau = math.log(2 * (buckets + 1) / (1 - level)) / float(self.scale)
        return replace(self, side=side, pad=math.ceil(tau))

    def edges(self, index: np.ndarray, lo: float, hi: float, buckets: int) -> np.ndarray:
        """The released value of an interval end: ``lo``/``hi`` for the virtual bucket, else
        the lower (or upper) edge of the chosen bucket."""
        width = (hi - lo) / buckets
        index = np.asarray(index)
        if self.side == "lower":
            return np.where(index == 0, lo, lo + (index - 1) * width)
        if self.side == "upper":
            return np.where(index == buckets, hi, lo + (index + 1) * width)
        raise InternalError("edges() is for interval ends")

    def __str__(self) -> str:
        end = "" if self.side == "point" else f", {self.side} end, pad={self.pad}"
        return (f"exponential(q={self.q}, eps={self.epsilon:g}, max weight={self.max_weight}, "
                f"groups={self.max_groups_per_unit}{end})")


def _rejection(whole: np.ndarray, frac: np.ndarray, den: int, sampler: Sampler) -> np.ndarray:
    """Row i: j uniform in [0, B), accepted w.p. exp(−(whole + frac/den)); first acceptance wins."""
    rows, buckets = whole.shape
    out = np.full(rows, -1, dtype=np.int64)
    todo = np.arange(rows)
    per_chunk = max(1, PROPOSALS_PER_DRAW // buckets)
    while todo.size:
        for start in range(0, todo.size, per_chunk):
            chunk = todo[start:start + per_chunk]
            proposal = sampler.below(buckets, chunk.size * buckets).astype(np.int64)
            owner = np.repeat(chunk, buckets)
            # CKS Alg. 1 for the fractional part, then one Bernoulli(e⁻¹) per whole unit.
            accept = sampler.bernoulli_exp(whole[owner, proposal], frac[owner, proposal], den)
            accept = accept.reshape(chunk.size, buckets)
            done = accept.any(axis=1)
            first = accept.argmax(axis=1)
            out[chunk[done]] = proposal.reshape(chunk.size, buckets)[done, first[done]]
        todo = np.flatnonzero(out < 0)
    return out

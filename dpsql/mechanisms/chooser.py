"""Choose Laplace or Gaussian noise for a whole query, and calibrate it.

Every statistic is normalised to its share: m = ⌈l1⌉ × parts per-cell bounds (:func:`one_share`;
noise scale = m × bound × unit scale), so one unit's influence on the query is L1 = Σ l1/m and
L2 = √(Σ (l2/m)²) (REFERENCES.md, "Sensitivity"), and each statistic takes a share of ε
proportional to 1/parts (``parts`` = 1 for all: equal shares).
Laplace: t = L1/ε, pure ε-DP — discrete Laplace on integers loses exactly |Δ|/t per cell.
Gaussian: σ from :func:`discrete_gaussian_sigma`, proved for the multivariate *discrete*
Gaussian.  Gaussian is chosen iff its std is smaller (δ = 0 forces Laplace), the rule of
PipelineDP's DPStrategySelector.

Grid inflation.  A real-valued statistic is rounded to its grid g before noise; rounding moves
a cell's change by at most g, so a cell's normalised change is at most 1 + g/bound.  The
normalised norms become l1 + c·g/bound and l2 + √c·g/bound (triangle inequality), where c is
the number of cells one unit can change.  When ``cells`` is not given, every touched cell is
assumed to count fully in l1 and l2 (c ≤ l1 and c ≤ l2², the L0 × L∞ normalisation), which
gives the factor (1 + g/bound).  The grid is taken from the un-inflated scale, the norms are
inflated, then the scale is recomputed (only larger); the grids used are stored in the plan.

>>> plan = choose_noise([Sensitivity("n", 1.0, 1.0, 1.0, True)], 1.0, 1e-5)
>>> plan.kind, plan.unit_scale
('laplace', 1.0)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Literal

from dpsql.errors import InternalError, PrivacyError
from dpsql.exact import float_at_least, sqrt_at_least
from dpsql.mechanisms.calibration import finite_scale, laplace_scale, validate_privacy
from dpsql.mechanisms.discrete_calibration import discrete_gaussian_sigma
from dpsql.mechanisms.noise import MIN_GRID_SCALE, Noise, grid_granularity

Kind = Literal["laplace", "gaussian"]
# Integer statistics whose noise scale exceeds 2^24 go on a (≥ 16) grid too: the noise is
# then ≥ 2^20 grid steps and the exact samplers' integers stay small.
INTEGER_SCALE_LIMIT = 2.0**24


@dataclass(frozen=True)
class Sensitivity:
    """One released statistic (a column of cells) and one unit's influence on it.

    ``bound``: max change of one cell by one unit; ``l1``/``l2``: max over units of the
    L1/L2 norm of (changes / bound) over this statistic's cells; ``integer``: values and bound
    are integers (integer noise, no grid); ``cells``: max number of its cells one unit can
    change, needed for real-valued statistics when that exceeds l1 or l2²; ``parts``: the
    statistic takes 1/parts of a whole share of ε (a whole number, so its noise stays a whole
    number of per-cell bounds: :func:`one_share`).
    """

    name: str
    bound: float
    l1: float
    l2: float
    integer: bool = False
    cells: float | None = None
    parts: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.parts, int) or self.parts < 1:
            raise InternalError(f"statistic {self.name}: parts={self.parts!r} must be a whole "
                                "number ≥ 1")
        for field in ("bound", "l1", "l2"):
            value = getattr(self, field)
            if not math.isfinite(value) or value <= 0:
                raise PrivacyError(f"statistic {self.name}: {field}={value!r} must be > 0")
        if self.l2 > self.l1 * (1 + 1e-12):
            raise InternalError(f"statistic {self.name}: l2 {self.l2} exceeds l1 {self.l1}")
        if self.integer and not float(self.bound).is_integer():
            raise InternalError(f"integer statistic {self.name} has bound {self.bound}")

    def inflated(self, granularity: float) -> tuple[float, float]:
        """(l1, l2) after rounding to ``granularity`` (unchanged for integer statistics)."""
        if self.integer and granularity == 1.0:
            return self.l1, self.l2
        step = granularity / self.bound
        if self.cells is None:
            return self.l1 * (1 + step), self.l2 * (1 + step)
        return self.l1 + self.cells * step, self.l2 + math.sqrt(self.cells) * step


@dataclass(frozen=True)
class NoisePlan:
    """The noise of one query: the kind, the normalised scale and what it was derived from."""

    kind: Kind
    epsilon: float
    delta: float
    unit_scale: float
    laplace_std: float
    gaussian_std: float
    l1: float
    l2: float
    sensitivities: tuple[Sensitivity, ...] = ()
    granularities: tuple[float, ...] = ()

    def __str__(self) -> str:
        name = "t" if self.kind == "laplace" else "sigma"
        return (f"{self.kind} noise ({name}={self.unit_scale:.6g} per unit bound; "
                f"L1={self.l1:.6g}, L2={self.l2:.6g}; eps={self.epsilon:g}, delta={self.delta:g})")

    def noise_for(self, stat: Sensitivity) -> Noise:
        """The noise for ``stat``: scale = bound × unit scale, on the grid used to calibrate.

        A scale below MIN_GRID_SCALE grid steps (a huge ε) is raised to it: the samplers
        draw the same noise (none) either way, and the scale stays a positive float.
        """
        try:
            index = self.sensitivities.index(stat)
        except ValueError:
            raise InternalError(f"statistic {stat.name} was not part of this noise plan") from None
        grid = self.granularities[index]
        scale = _cell_scale(one_share(stat), self.unit_scale)
        return Noise(self.kind, max(scale, grid * MIN_GRID_SCALE), grid)


def one_share(stat: Sensitivity) -> Sensitivity:
    """``stat`` measured in m = ⌈l1⌉ × parts per-cell bounds, so that its L1 is at most 1/parts.

    The chooser calibrates every statistic so measured (``choose_noise``): the unit scale is
    set by the sum of the L1s, so statistic i takes (1/parts_i) / Σ_j (1/parts_j) of ε. With
    every parts = 1 each statistic takes one share, as in SmartNoise and PipelineDP; the
    analysis gives each released *column* one share and splits it over the statistics the
    column reads (``analysis.sensitivity.column_parts``), as Tumult gives each aggregate its
    own. In per-cell bounds a statistic's L1 is its q (§1 of docs/mechanisms.md), and q
    differs between statistics: a person moves the count of people by 1 in min(g, r)
    groups, a count of rows by c in min(g, r/c). With g = r = c = 10 and one COUNT(*) by a
    private key, measured in per-cell bounds the count of people for selection took 10/11 of
    ε and the COUNT's noise had 5× the std of an equal split. Privacy holds as for any
    bound: m per-cell bounds bound a cell's change, and the norms of the changes shrink by m
    (rounded up, so never understated); m is a whole number, so an integer statistic's
    bound stays an integer (§4's discrete calibration).

    >>> one_share(Sensitivity("u", 1.0, 4.0, 2.0, True))
    Sensitivity(name='u', bound=4.0, l1=1.0, l2=0.5, integer=True, cells=None, parts=1)
    >>> one_share(Sensitivity("s", 3.0, 1.0, 1.0, True, parts=2)).l1
    0.5
    """
    m = max(1, math.ceil(stat.l1)) * stat.parts
    if m == 1:
        return stat
    return replace(stat, bound=float_at_least(Fraction(stat.bound) * m),
                   l1=float_at_least(Fraction(stat.l1) / m),
                   l2=float_at_least(Fraction(stat.l2) / m), parts=1)


def _cell_scale(stat: Sensitivity, unit_scale: float) -> float:
    """bound × unit scale; a PrivacyError if it overflows (the noise would not be a number)."""
    return finite_scale(stat.bound * unit_scale, f"the noise scale of statistic {stat.name} "
                        f"(bound {stat.bound:g} × {unit_scale:g})")


def _norms(norms: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """(Σ l1, √Σ l2²) of (l1, l2) pairs, each rounded up: rounding never understates them.

    >>> _norms([(0.1, 0.1), (0.2, 0.2)])[0] >= Fraction(3, 10)
    True
    """
    l1 = float_at_least(sum((Fraction(a) for a, _ in norms), Fraction(0)))
    return l1, sqrt_at_least(sum((Fraction(b) ** 2 for _, b in norms), Fraction(0)))


def _unit_scale(kind: Kind, l1: float, l2: float, epsilon: float, delta: float,
                grid_bound: float) -> float:
    if kind == "laplace":
        return laplace_scale(l1, epsilon)
    return discrete_gaussian_sigma(l2, epsilon, delta, grid_bound=grid_bound)


def _candidate(kind: Kind, stats: Sequence[Sensitivity], epsilon: float, delta: float
               ) -> tuple[float, tuple[float, ...], float, float]:
    """(unit scale, grids, inflated L1, inflated L2) for one kind of noise."""
    l1, l2 = _norms([(s.l1, s.l2) for s in stats])
    integer_bounds = [s.bound for s in stats if s.integer]
    first = _unit_scale(kind, l1, l2, epsilon, delta, min(integer_bounds, default=1.0))
    scales = [_cell_scale(s, first) for s in stats]
    grids = tuple(1.0 if s.integer and scale <= INTEGER_SCALE_LIMIT
                  else grid_granularity(scale) for s, scale in zip(stats, scales, strict=True))
    norms = [s.inflated(g) for s, g in zip(stats, grids, strict=True)]
    l1, l2 = _norms(norms)
    coarsest = min(s.bound / g for s, g in zip(stats, grids, strict=True))
    unit_scale = _unit_scale(kind, l1, l2, epsilon, delta, coarsest)
    for stat, grid in zip(stats, grids, strict=True):
        _check_samplable(Noise(kind, _cell_scale(stat, unit_scale), grid), stat, epsilon)
    return unit_scale, grids, l1, l2


def _check_samplable(noise: Noise, stat: Sensitivity, epsilon: float) -> None:
    """PrivacyError unless the exact samplers can draw ``noise``.

    The grid is ~2⁻²⁰ of the first scale, but at a tiny ε (≲ 1e-12) rounding to it inflates
    the sensitivity so much that the final scale spans more grid steps than they accept.
    """
    if not noise.samplable:
        raise PrivacyError(
            f"the noise of statistic {stat.name} at epsilon={epsilon:g} spans "
            f"{noise.grid_scale:.3g} grid steps, more than exact sampling allows: use a larger "
            "epsilon, or smaller bounds or contribution limits")


def choose_noise(stats: Sequence[Sensitivity], epsilon: float, delta: float) -> NoisePlan:
    """Calibrate both candidates and keep the one with the smaller (normalised) std.

    A candidate that cannot be calibrated in floats or sampled exactly (an extreme ε or δ)
    drops out, with std inf; if both do, the Laplace candidate's PrivacyError is raised.

    >>> unit = Sensitivity("n", 1.0, 1.0, 1.0, True)
    >>> [choose_noise([unit] * k, 1.0, 1e-5).kind for k in (6, 8)]
    ['laplace', 'gaussian']
    """
    epsilon, delta = validate_privacy(epsilon, delta)
    stats = tuple(stats)
    if not stats:
        raise InternalError("choose_noise needs at least one statistic")
    shares = tuple(one_share(s) for s in stats)
    kinds: tuple[Kind, ...] = ("laplace", "gaussian") if delta > 0 else ("laplace",)
    found, errors = {}, []
    for kind in kinds:
        try:
            found[kind] = _candidate(kind, shares, epsilon, delta)
        except PrivacyError as error:
            errors.append(error)
    if not found:
        raise errors[0]
    stds = {kind: Noise(kind, found[kind][0]).std if kind in found else math.inf
            for kind in ("laplace", "gaussian")}
    kind = "gaussian" if stds["gaussian"] < stds["laplace"] else "laplace"
    unit_scale, grids, l1, l2 = found[kind]
    return NoisePlan(kind, epsilon, delta, unit_scale, stds["laplace"], stds["gaussian"], l1,
                     l2, stats, grids)

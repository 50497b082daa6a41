"""Grouping sets whose totals add up: weighted least squares over the released levels.

The sets of a ROLLUP, CUBE or GROUPING SETS statement are released independently, each with
its own noise (``dpsql.grouping``), so a subtotal and the sum of its cells differ by noise.
When every key of some sets is public (each set then releases every cell of the product of
its keys' domains), the cells of those sets are all sums of one unknown table x over the
product of all their keys, and each set measured its sums with a noise of known variance v_s.
The weighted least-squares estimate (Hay, Rastogi, Miklau & Suciu, "Boosting the Accuracy of
Differentially Private Histograms Through Consistency", VLDB 2010, for trees; for any family
of marginals, weights 1/v_s) is the best linear unbiased estimate of every released cell
(Gauss–Markov): no cell's variance is above what its own set measured. It reads only noisy
values and public parameters, so it is post-processing and costs nothing.

The fit has a closed form. Split each key's space R^d into the constants and their
complement; the tensor products give one subspace per set of keys T, on which the normal
matrix Σ_s M_sᵀM_s / v_s is the number λ_T = Σ_{s ⊇ T} Π_{k ∉ s} d_k / v_s. So each set's
fitted cells are Π_{k ∉ s} d_k · Σ_{T ⊆ s} u_T / λ_T, with u_T = Σ_{r ⊇ T} C_T(mean over
r \\ T of y_r) / v_r (C_T centres along the keys of T), and each cell of s has the variance
Σ_{T ⊆ s} Π_{k ∈ T}(1 − 1/d_k) Π_{k ∈ s \\ T} 1/d_k Π_{k ∉ s} d_k / λ_T, the same for all
cells of s (docs/mechanisms.md §14). Every array is the size of a released set or smaller.

The other design noises only the finest set, at the statement's whole ε, and sums its cells
into every coarser set (``summed``): its fine cells get less noise, a coarse cell over m of
them m times a fine cell's variance. ``derives_better`` chooses between the two by their
expected errors, from the plans (public domain sizes and noise scales) only.

>>> import numpy as np
>>> fine = Level(("a",), np.array([10.0, 20.0]), 1.0)
>>> total = Level((), np.array(33.0), 1.0)
>>> [(v.tolist(), round(var, 4)) for v, var in least_squares([fine, total], {"a": 2})]
[([11.0, 21.0], 0.6667), (32.0, 0.6667)]
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dpsql.plan import PrivacyPlan

LINEAR_KINDS = ("count_star", "count", "sum", "avg")
"""Aggregates made consistent: a cell of a coarser set is the sum of the finer cells' values
for their statistics (counts, sums, AVG's count and centred sum). COUNT(DISTINCT) and the
unit count are not sums over cells; VAR, STDDEV, CORR, COVAR, REGR_* and quantiles are left
as each set released them."""


@dataclass(frozen=True)
class Level:
    """One set's noisy cells of one statistic: ``values`` over its ``keys`` (an array with one
    axis per key, in that order) and the variance of each cell's noise."""

    keys: tuple[str, ...]
    values: np.ndarray
    variance: float


def least_squares(levels: Sequence[Level], sizes: dict[str, int]
                  ) -> list[tuple[np.ndarray, float]]:
    """Each level's fitted cells (same shape as its values) and their variance, for levels
    over keys of public domains of ``sizes``; weights 1/variance (module docstring).

    The fit depends only on the variances' ratios: they are taken relative to the largest,
    and a noise too fine to have a variance as a float (a huge ε) counts as 10⁻¹² of it, or
    all levels as equal when none has any; the variances returned are then 0.
    """
    order = list(sizes)
    axes = [_full(level, order, sizes) for level in levels]
    sets = [frozenset(level.keys) for level in levels]
    largest = max(level.variance for level in levels)
    weights = [1.0 / max(level.variance / largest, 1e-12) if largest > 0 else 1.0
               for level in levels]
    parts = {t for s in sets for t in _subsets(s)}
    lam = {t: sum(w * _outside(s, sizes) for s, w in zip(sets, weights, strict=True) if t <= s)
           for t in parts}
    u = {t: sum(w * _centred(y, s - t, t, order)
                for y, s, w in zip(axes, sets, weights, strict=True) if t <= s)
         for t in parts}
    fitted = []
    for level, s in zip(levels, sets, strict=True):
        shape = tuple(sizes[k] if k in s else 1 for k in order)
        cells = _outside(s, sizes) * sum(np.broadcast_to(u[t], shape) / lam[t]
                                         for t in _subsets(s))
        variance = largest * sum(_spread(s, t, sizes) / lam[t] for t in _subsets(s))
        fitted.append((_as_level(cells, level, order), float(variance)))
    return fitted


def _subsets(keys: frozenset[str]) -> list[frozenset[str]]:
    return [frozenset(c) for n in range(len(keys) + 1)
            for c in itertools.combinations(sorted(keys), n)]


def _outside(keys: frozenset[str], sizes: dict[str, int]) -> int:
    """How many cells of the full table one cell of a set over ``keys`` sums."""
    return math.prod(d for k, d in sizes.items() if k not in keys)


def _full(level: Level, order: list[str], sizes: dict[str, int]) -> np.ndarray:
    """The level's values with one axis per key of ``order`` (length 1 where it has none)."""
    present = [k for k in order if k in level.keys]
    moved = np.transpose(level.values, [level.keys.index(k) for k in present])
    return moved.reshape([sizes[k] if k in level.keys else 1 for k in order])


def _centred(y: np.ndarray, averaged: frozenset[str], centred: frozenset[str],
             order: list[str]) -> np.ndarray:
    """``y`` averaged over the keys ``averaged`` and centred along the keys ``centred``."""
    out = y
    for i, key in enumerate(order):
        if key in averaged:
            out = out.mean(axis=i, keepdims=True)
    for i, key in enumerate(order):
        if key in centred:
            out = out - out.mean(axis=i, keepdims=True)
    return out


def _spread(keys: frozenset[str], t: frozenset[str], sizes: dict[str, int]) -> float:
    """m_cᵀ P_T m_c for a cell c of the set over ``keys`` (the same for every cell)."""
    return math.prod((1 - 1 / sizes[k]) if k in t else 1 / sizes[k] for k in keys) \
        * _outside(keys, sizes)


def _as_level(cells: np.ndarray, level: Level, order: list[str]) -> np.ndarray:
    present = [k for k in order if k in level.keys]
    squeezed = cells.reshape([cells.shape[order.index(k)] for k in present])
    return np.transpose(squeezed, [present.index(k) for k in level.keys])


def finest_set(plans: Sequence[PrivacyPlan]) -> int | None:
    """The set every other set can be summed from, when the whole statement can be derived
    from it: every set is over public keys and noised (``public_sets`` holds them all), one
    set's keys hold every other's, every aggregate is a count, sum or average of the same
    statistics in every set, and every set's noise is of one kind (so a sum of the finest
    set's noises is read with that kind's intervals). Read from the plans only."""
    if len(public_sets(plans)) != len(plans):
        return None
    first = plans[0]
    names = set(linear_statistics(first))
    for plan in plans:
        if any(a.kind not in LINEAR_KINDS for a in plan.aggregates) or \
                names != {s.name for s in plan.sensitivities} or \
                set(linear_statistics(plan)) != names or plan.noise.kind != first.noise.kind or \
                any(plan.stat(n) != first.stat(n) for n in names):
            return None
    return next((i for i, plan in enumerate(plans)
                 if all(set(p.key_names) <= set(plan.key_names) for p in plans)), None)


def derives_better(plans: Sequence[PrivacyPlan], whole: PrivacyPlan) -> bool:
    """Whether summing the cells of the finest set measured at the whole ε (its plan ``whole``)
    has a lower expected error than least squares over every set measured at its share
    (``plans``): per statistic and set, each design's variance of a cell over that of the set
    measured alone, summed over sets and statistics (each level counts alike, whatever its
    number of cells). Ties keep least squares; so does a noise too fine to have a variance.
    Every set's keys are among the finest set's, so ``sizes`` are the finest set's domains."""
    sizes = {k.name: len(k.domain) for plan in plans for k in plan.keys}
    fitted = derived = 0.0
    for name in linear_statistics(whole):
        alone = [plan.noise_for(name).std ** 2 for plan in plans]
        fine = whole.noise_for(name).std ** 2
        if min(alone) <= 0 or fine <= 0:
            return False
        levels = [Level(tuple(p.key_names), np.zeros([len(k.domain) for k in p.keys]), v)
                  for p, v in zip(plans, alone, strict=True)]
        fitted += sum(v / a for (_, v), a in zip(least_squares(levels, sizes), alone,
                                                 strict=True))
        derived += sum(fine * _outside(frozenset(p.key_names), sizes) / a
                       for p, a in zip(plans, alone, strict=True))
    return derived < fitted


def summed(plans: Sequence[PrivacyPlan], finest: int, stats: dict[str, np.ndarray]
           ) -> tuple[list[dict[str, np.ndarray]], list[dict[str, np.ndarray]]]:
    """Every set's statistics summed from ``stats``, the noisy cells of set ``finest`` (its
    plan ``plans[finest]``, measured at the whole ε; rows in the product of its keys' domains),
    and per set, for each statistic, its std over the noise std of the set's own plan: a cell
    summing m fine cells has √m times a fine cell's std. Post-processing: nothing else is read."""
    whole = plans[finest]
    order = list(whole.key_names)
    shape = [len(k.domain) for k in whole.keys]
    out: list[dict[str, np.ndarray]] = []
    scales: list[dict[str, np.ndarray]] = []
    for plan in plans:
        dropped = tuple(i for i, k in enumerate(order) if k not in plan.key_names)
        kept = [k for k in order if k in plan.key_names]
        cells = math.prod(shape[i] for i in dropped)
        values, ratios = {}, {}
        for name in linear_statistics(whole):
            total = stats[name].reshape(shape).sum(axis=dropped)
            values[name] = np.transpose(total, [kept.index(k) for k in plan.key_names]
                                        ).reshape(-1)
            ratio = whole.noise_for(name).std * math.sqrt(cells) / plan.noise_for(name).std
            ratios[name] = np.full(values[name].size, ratio)
        out.append(values)
        scales.append(ratios)
    return out, scales


def public_sets(plans: Sequence[PrivacyPlan]) -> tuple[int, ...]:
    """The sets made consistent: those whose keys are all public (every cell released, none
    selected) and that add noise, when there are at least two. Read from the plans only."""
    chosen = tuple(i for i, plan in enumerate(plans) if plan.noise is not None
                   and plan.selection is None and all(k.public for k in plan.keys))
    return chosen if len(chosen) > 1 else ()


def linear_statistics(plan: PrivacyPlan) -> tuple[str, ...]:
    """The noisy statistics that only LINEAR_KINDS aggregates read, in plan order."""
    readers: dict[str, set[str]] = {}
    for agg in plan.aggregates:
        for name in agg.stats:
            readers.setdefault(name, set()).add(agg.kind)
    noised = {s.name for s in plan.sensitivities}
    return tuple(s.name for s in plan.stats if s.name in noised and s.name in readers
                 and readers[s.name] <= set(LINEAR_KINDS))


def consistent(plans: Sequence[PrivacyPlan], stats: Sequence[dict[str, np.ndarray]]
               ) -> tuple[list[dict[str, np.ndarray]], list[dict[str, np.ndarray]]]:
    """Each set's noisy statistics with the linear ones of ``public_sets`` fitted by least
    squares, and per set, for each fitted statistic, the fitted std over the set's own
    noise std (one value per row: its intervals scale by it). Rows of a public set are the
    product of its keys' domains in declaration order (``release.with_public_domain``)."""
    chosen = public_sets(plans)
    out = [dict(s) for s in stats]
    scales: list[dict[str, np.ndarray]] = [{} for _ in plans]
    if not chosen:
        return out, scales
    sizes = {k.name: len(k.domain) for i in chosen for k in plans[i].keys}
    first = plans[chosen[0]]
    shared = [name for name in linear_statistics(first)
              if all(name in linear_statistics(plans[i]) and plans[i].stat(name) == first.stat(name)
                     for i in chosen)]
    for name in shared:
        levels = [Level(tuple(plans[i].key_names),
                        stats[i][name].reshape([len(k.domain) for k in plans[i].keys]),
                        plans[i].noise_for(name).std ** 2) for i in chosen]
        for i, level, (values, variance) in zip(chosen, levels,
                                                least_squares(levels, sizes), strict=True):
            out[i][name] = values.reshape(-1)
            ratio = math.sqrt(variance / level.variance) if level.variance > 0 else 1.0
            scales[i][name] = np.full(values.size, min(ratio, 1.0))
    return out, scales

"""Passes that bound one unit's influence and calibrate the noise.

With g groups per unit, c rows per (unit, group) and at most r rows per unit,
a statistic whose cells one unit moves by at most ``bound`` each has, after
normalising by that bound, L1 = q and L2 = √(⌊q⌋ + (q − ⌊q⌋)²) with
q = min(g, r/c): the largest norms of a vector with at most g entries in
[0, 1] summing to at most r/c (see docs/privacy.md).

>>> normalised_norms(4, 3, None)
(4.0, 2.0)
>>> normalised_norms(4, 3, 6)
(2.0, 1.4142135623730951)
"""

from __future__ import annotations

import functools
import math
import reprlib
import sys
from dataclasses import replace
from fractions import Fraction

import numpy as np

from dpsql.analysis.draft import Context, Draft, QueryOptions
from dpsql.errors import DeltaNeeded, PrivacyError
from dpsql.exact import float_at_least, float_at_most
from dpsql.mechanisms import Sensitivity, choose_noise, selection_threshold, validate_privacy
from dpsql.mechanisms.chooser import one_share
from dpsql.mechanisms.exponential import ExponentialQuantile
from dpsql.mechanisms.selection import (
    release_probability,
    truncated_geometric_crossovers,
    units_for_release,
)
from dpsql.mechanisms.selection_choice import Choice, best_selection
from dpsql.plan import (
    COUNT_QUANTUM,
    WEIGHT_SCALE,
    Aggregate,
    Contribution,
    Selection,
    StatSpec,
    exact_share,
    in_output_units,
)

DEFAULT_GROUPS_PER_UNIT = 1
DEFAULT_ROWS_PER_GROUP = 1
MAX_CONTRIBUTION = 2**53
"""Largest contribution limit: limits and the norms built from them stay exact in floats."""


def contribution_limits(draft: Draft, ctx: Context) -> Draft:
    """Declared limits, or the defaults the rewrite enforces when none are declared."""
    info = draft.table
    if info.row_level:
        return replace(draft, contribution=Contribution(1, 1, 1, (("all", "row-level privacy"),)))
    # A unit's rows in a group are at most its rows in all: with only max_rows_per_unit
    # declared, that is also the default per group (not 1, which would drop rows the
    # declaration allows).
    declared = {
        "max_groups_per_unit": (info.max_groups_per_unit, DEFAULT_GROUPS_PER_UNIT),
        "max_rows_per_group": (info.max_rows_per_group,
                               info.max_rows_per_unit or DEFAULT_ROWS_PER_GROUP),
        "max_rows_per_unit": (info.max_rows_per_unit, None),
    }
    values = {k: v if v is not None else d for k, (v, d) in declared.items()}
    sources = {k: "declared" if v is not None else "default" for k, (v, _) in declared.items()}
    for name, value in query_limits(draft.options).items():
        values[name], sources[name] = value, "query"
    if not draft.keys:
        values["max_groups_per_unit"] = 1
    elif all(k.public for k in draft.keys):
        # A unit cannot touch more groups than exist.
        values["max_groups_per_unit"] = max(1, min(values["max_groups_per_unit"],
                                                   _domain_size(draft)))
    for name, value in values.items():
        if value is not None and value > MAX_CONTRIBUTION:
            raise PrivacyError(
                f"{name}={reprlib.repr(value)} ({sources[name]}) is too large: contribution "
                f"limits go up to 2^53 (about {MAX_CONTRIBUTION:.3g}), beyond which "
                "sensitivities are no longer exact and the noise could not be released anyway. "
                "Fix: give a smaller limit (the noise grows with it)")
    return replace(draft, contribution=Contribution(**values, sources=tuple(sources.items())))


def query_limits(options: QueryOptions) -> dict[str, int]:
    """Limits set by WITH DIFFERENTIAL_PRIVACY OPTIONS; they replace the catalog's.

    Any positive value is private: the rewrite enforces the limit and the noise is scaled
    to it. ``max_rows_contributed = r`` (ZetaSQL) bounds only the rows in total, which
    also bounds the groups and the rows per group by r.

    >>> query_limits(QueryOptions(max_rows=5))
    {'max_groups_per_unit': 5, 'max_rows_per_group': 5, 'max_rows_per_unit': 5}
    """
    if options.max_rows is not None:
        r = options.max_rows
        return {"max_groups_per_unit": r, "max_rows_per_group": r, "max_rows_per_unit": r}
    if options.max_groups_per_unit is not None:
        return {"max_groups_per_unit": options.max_groups_per_unit}
    return {}


def _domain_size(draft: Draft) -> int:
    return math.prod(len(k.domain) for k in draft.keys)


def normalised_norms(groups: int, rows_per_group: int, rows_total: int | None
                     ) -> tuple[float, float]:
    """(L1, L2) of one unit's changes to a statistic, in units of its per-cell bound."""
    q = float(groups) if rows_total is None else min(groups, rows_total / rows_per_group)
    whole = math.floor(q)
    return q, math.sqrt(whole + (q - whole) ** 2)


def sensitivity_of(spec: StatSpec, limits: Contribution) -> Sensitivity:
    """Per-cell bound and normalised norms; sums are integers counted in quanta.

    A per-group-bounded statistic moves each of a unit's g cells by at most its group
    bound, whatever the rows: normalised L1 = g, L2 = √g. (Scaling a unit's partials down
    for max_rows_per_unit only shrinks them.)

    A distinct count keeps at most c distinct values per (unit, group), so one unit moves a
    cell by at most c, in at most g groups; ``max_rows_per_unit`` is not enforced on distinct
    values, so their norms ignore it (L1 = g·c, L2 = c·√g, in units of the bound c). When
    the expression takes at most k values per unit (``values_per_unit``), c becomes min(c, k).
    A statistic with rows of its own keeps at most that many of the c (``kept_rows``): its
    bound is theirs, and the total cap r then spreads over more of its cells (r / rows).
    """
    c, g = limits.rows_per_group, limits.groups_per_unit
    if spec.per_group:
        l1, l2 = normalised_norms(g, 1, None)
        return Sensitivity(name=spec.name, bound=float_at_least(Fraction(spec.group_bound)),
                         l1=l1, l2=l2, integer=True, cells=float(g))
    kept = spec.kept_rows(c)
    rows = 1 if spec.kind == "units" else min(kept, spec.values_per_unit or kept)
    total = None if spec.kind == "distinct" else limits.max_rows_per_unit
    l1, l2 = normalised_norms(g, rows, total)
    return Sensitivity(name=spec.name, bound=float_at_least(Fraction(rows * spec.row_bound)),
                     l1=l1, l2=l2, integer=True, cells=float(g))


def measure_sensitivity(draft: Draft, ctx: Context) -> Draft:
    """One ``Sensitivity`` per released statistic, adding the unit count for selection; counts
    are kept in ``COUNT_QUANTUM`` when ``max_rows_per_unit`` scales partials."""
    stats = draft.stats
    if needs_selection(draft) and not any(s.kind == "units" for s in stats):
        stats = (*stats, StatSpec(name=f"__dp_s{len(stats)}", kind="units", expr=None))
    if draft.contribution.caps_total:
        stats = tuple(replace(s, quantum=COUNT_QUANTUM) if s.kind in ("rows", "count") else s
                      for s in stats)
    parts = column_parts(draft.aggregates, tuple(s.name for s in stats))
    statistics = tuple(replace(sensitivity_of(s, draft.contribution), parts=parts[s.name])
                       for s in stats)
    return replace(draft, stats=stats, sensitivities=statistics)


def column_parts(aggregates: tuple[Aggregate, ...], names: tuple[str, ...]) -> dict[str, int]:
    """How many parts of a whole share of ε each statistic takes (``Sensitivity.parts``):
    ε is split by released column, not by statistic (docs/mechanisms.md §12).

    Each noisy column (aggregate) weighs 1, split equally over the statistics it reads (AVG:
    1/2 to its count and its centred sum; VAR: 1/3 each), except those another column
    releases on its own: a SUM(x) or AVG(x) beside COUNT(*) with x declared NOT NULL reads
    the rows statistic that COUNT(*) already has a whole share for, and spends its share on
    its centred sum. A statistic that several columns read weighs the sum of its portions,
    and the count of people that partition selection alone reads weighs 1, as a column
    would. The weights w_i are rational; with W the least common multiple of their
    numerators, parts_i = W/w_i is a whole number and 1/parts_i ∝ w_i, so statistic i takes
    w_i / Σ w of ε (``chooser.one_share``); they are divided by their greatest common divisor,
    so that a query of one column, or of columns that each read their own statistics, keeps
    parts = 1 (its noise as before the split by column).

    >>> avg = Aggregate(name="a", kind="avg", sql="AVG(x)", stats=("c", "s"))
    >>> count = Aggregate(name="n", kind="count", sql="COUNT(*)", stats=("r",))
    >>> column_parts((count, avg), ("r", "c", "s", "u"))
    {'r': 1, 'c': 2, 's': 2, 'u': 1}
    >>> var = Aggregate(name="v", kind="var", sql="VAR(x)", stats=("c", "s", "q"))
    >>> column_parts((avg, var), ("c", "s", "q"))
    {'c': 2, 's': 2, 'q': 5}
    >>> column_parts((replace(count, stats=("c",)), avg), ("c", "s"))
    {'c': 1, 's': 1}
    """
    weights = dict.fromkeys(names, Fraction(0))
    noisy = [a for a in aggregates if a.quantile is None and a.stats]
    alone = {a.stats[0] for a in noisy if len(a.stats) == 1}
    for agg in noisy:
        own = [n for n in agg.stats if n not in alone] or list(agg.stats)
        for name in own:
            weights[name] += Fraction(1, len(own))
    weights = {name: w or Fraction(1) for name, w in weights.items()}
    whole = math.lcm(*(w.numerator for w in weights.values()))
    parts = {name: whole * w.denominator // w.numerator for name, w in weights.items()}
    common = math.gcd(*parts.values())  # equal parts are equal shares: the smallest whole ones
    return {name: p // common for name, p in parts.items()}


@functools.lru_cache(maxsize=256)
def _choose_noise(sensitivities: tuple[Sensitivity, ...], epsilon: float, delta: float):
    """choose_noise, memoised: calibration is pure and costs milliseconds per call."""
    return choose_noise(sensitivities, epsilon, delta)


def needs_selection(draft: Draft) -> bool:
    """Group keys need DP partition selection unless every key is public; a global
    aggregate needs it on its one group (the empty key) when it has a floor of people,
    ``min_privacy_units_per_group`` (ZetaSQL's ``k_threshold``), which releases its row only
    if the group passes the selection (docs/mechanisms.md §6, "A floor on a global
    aggregate")."""
    if not draft.keys:
        return draft.options.min_units is not None
    return not all(k.public for k in draft.keys)


def calibrate(draft: Draft, ctx: Context) -> Draft:
    """Split ε between the noise and the quantiles; calibrate each; set the selection threshold.

    ε is shared equally by the mechanisms that spend it (``plan.exact_share``): the noise of
    all noisy statistics together, when there are any, and each quantile aggregate, so a
    query with noisy statistics and k quantiles gives each ε/(1 + k) (ε/(1 + 3k) with
    ``quantile_ci``: each quantile's interval ends are two more releases). With private keys, δ is
    split: Gaussian noise gets δ/2 and selection the rest; Laplace noise is pure ε-DP, so
    selection gets all of δ. Quantiles are pure ε-DP and use no δ.

    Splits are exact: each share is a Fraction of the ε the user wrote, each mechanism is
    calibrated with the largest float not above its share, and the plan is charged the
    written ε (:meth:`PrivacyPlan.verify_cost` checks all this exactly). Finally the plan is
    refused, before any data is read, if its noise cannot be released as finite numbers
    (:func:`check_release`).
    """
    epsilon, delta = validate_privacy(draft.epsilon, draft.delta)
    draft = replace(draft, epsilon=epsilon, delta=delta)
    share = float_at_most(_share(draft))
    aggregates = tuple(_with_mechanism(a, share, draft.contribution, draft.quantile_ci)
                       if a.quantile else a for a in draft.aggregates)
    draft = replace(draft, aggregates=aggregates)
    if not draft.sensitivities:
        return replace(draft, noise=None, cost_delta=0.0)
    if not draft.aggregates:
        return check_release(_keys_only(draft))
    return check_release(_calibrate_noise(draft))


def _share(draft: Draft) -> Fraction:
    """The exact ε of each share: the noise (if any statistic is noised) and each quantile
    release (three with ``quantile_ci``: the value and an interval's ends)."""
    releases = 1 if draft.quantile_ci is None else 3
    quantiles = sum(1 for a in draft.aggregates if a.quantile is not None)
    return exact_share(draft.epsilon, releases * quantiles + bool(draft.sensitivities))


def _calibrate_noise(draft: Draft) -> Draft:
    """The noise (and, with private keys, the partition selection) at its ε share and δ."""
    # Calibrate with values never above what is charged (the decimals the user wrote).
    epsilon, delta = float_at_most(_share(draft)), float_at_most(draft.delta)
    if not needs_selection(draft):
        noise = _choose_noise(draft.sensitivities, epsilon, delta)
        used = draft.delta if noise.kind == "gaussian" else 0.0
        return replace(draft, noise=noise, cost_delta=used)
    if draft.delta == 0 and not draft.keys:
        raise DeltaNeeded(
            f"{draft.options.clause} min_privacy_units_per_group (k_threshold): releasing the "
            "row only if enough people are in it is partition selection on its one group, "
            "which needs delta > 0 (pass delta=1e-6 or smaller than 1/number of people), or "
            "drop the option to release the row whatever its size")
    if draft.delta == 0:
        keys = ", ".join(k.name for k in draft.keys if not k.public)
        raise DeltaNeeded(
            f"GROUP BY {keys}: group keys are private, and releasing them needs delta > 0 "
            f"(pass delta=1e-6 or smaller than 1/number of people), or declare the keys public: "
            f"con.register(..., public_keys={{\"{keys.split(', ')[0]}\": [...values...]}})")
    noise, selection_delta = _noise_and_selection_delta(draft.sensitivities, epsilon, delta)
    units = next(s for s in draft.sensitivities if s.name == _units_name(draft))
    groups = draft.contribution.groups_per_unit
    threshold = selection_threshold(noise.noise_for(units), groups, selection_delta)
    selection = Selection(method=f"{noise.kind}_threshold", threshold=threshold,
                          delta=selection_delta, max_groups_per_unit=groups,
                          min_units=draft.options.min_units or 1)
    draft = replace(draft, noise=noise, selection=selection, cost_delta=draft.delta)
    return _count_threshold(_separate_selection(draft, units), draft, units, epsilon, delta)


def _noise_and_selection_delta(sensitivities: tuple[Sensitivity, ...], epsilon: float,
                               delta: float):
    """The noise calibrated with δ/2, and the δ left for a threshold selection: the other
    half when the noise is Gaussian, all of δ when it is Laplace (pure ε-DP)."""
    half = float_at_most(Fraction(delta) / 2)
    noise = _choose_noise(sensitivities, epsilon, half)
    if noise.kind == "gaussian":
        return noise, float_at_most(Fraction(delta) - Fraction(half))
    return noise, delta


def _separate_selection(draft: Draft, units: Sensitivity) -> Draft:
    """Swap the threshold for a selection with its own randomness (the truncated geometric
    or Gaussian thresholding) when it releases more groups and leaves every cell's noise as
    it was.

    Only for Laplace noise, and only when the query does not itself release the unit
    count (it is in the statistics for selection alone). The count then carries L1 share
    ``one_share(units).l1 / L1`` of the noise's ε; dropping it and calibrating the other
    statistics with the remaining ε gives them the same Laplace scale, and the freed ε pays
    for a selection on the *exact* unit count. The swap is made when that releases a group
    with probability ½ at fewer units (n₅₀) than the threshold (``best_selection``); the
    query's cost is unchanged: the two parts are float_at_most of exact parts of the noise's
    exact share, so they sum to at most it.
    """
    noise = draft.noise
    if noise.kind != "laplace" or any(units.name in a.stats for a in draft.aggregates):
        return draft
    kept = tuple(s for s in draft.sensitivities if s is not units)
    share = _share(draft)
    # noise.l1 is after grid inflation, in shares; the unit count is an integer, never
    # inflated.
    noise_epsilon = float_at_most(share * (Fraction(noise.l1) - Fraction(one_share(units).l1))
                                  / Fraction(noise.l1))
    selection_epsilon = float_at_most(share - Fraction(noise_epsilon))
    if noise_epsilon <= 0 or selection_epsilon <= 0:
        return draft
    lighter = _choose_noise(kept, noise_epsilon, 0.0)
    if lighter.unit_scale > noise.unit_scale * (1 + 1e-9):
        return draft
    selection = draft.selection
    choice = best_selection(noise.noise_for(units), selection_epsilon, selection.delta,
                            selection.max_groups_per_unit)
    if choice.method == selection.method:
        return draft
    # explain() compares the candidates: keep the Gaussian design's std for reference.
    lighter = replace(lighter, gaussian_std=noise.gaussian_std)
    return replace(draft, sensitivities=kept, noise=lighter,
                   selection=_selection(choice, selection_epsilon, selection.delta,
                                        selection.max_groups_per_unit, selection.min_units))


COUNT_THRESHOLD_ALLOWANCE = 2
"""How many times the people the best other selection needs for a 50 % release a threshold
on the released count of rows may need, counting one row per person, and still be chosen."""


def _count_threshold(chosen: Draft, draft: Draft, units: Sensitivity, epsilon: float,
                     delta: float) -> Draft:
    """Threshold the query's own noisy count of rows instead, when that is the better deal.

    ``draft`` is the plan with the unit count among its statistics for a threshold, and
    ``chosen`` the selection kept so far (that threshold, or a separate selection paid by the
    unit count's share of ε). A released count of rows already carries noise the query pays
    for; a group that only one person's rows are in has a count of at most c, its per-group
    bound, so the threshold τ with P(c + noise ≥ τ) ≤ δ' keeps such a group with chance at
    most δ' (docs/mechanisms.md §6, "A threshold on the released count"). The unit count is
    then not noised at all: every statistic is calibrated with the whole share of ε. With
    one row per person in a group the threshold needs more people than the separate
    selections once people touch many groups (about 10 at ε = 1): it is chosen while it
    needs at most ``COUNT_THRESHOLD_ALLOWANCE`` times as many, since the other selections'
    ε comes out of every released statistic's, and a person with more than one row in the
    group brings it closer. Not when the query sets a floor of people (``min_units``, even
    of 1): it asks for a selection that counts people.
    """
    if draft.options.min_units is not None or any(units.name in a.stats
                                                  for a in draft.aggregates):
        return chosen
    kept = tuple(s for s in draft.sensitivities if s is not units)
    counts = [s for s in kept if _spec(draft, s.name).kind in ("rows", "count")]
    if not counts:
        return chosen
    noise, selection_delta = _noise_and_selection_delta(kept, epsilon, delta)
    groups = draft.contribution.groups_per_unit
    options = []
    for stat in counts:
        quantum = _spec(draft, stat.name).quantum
        own = in_output_units(noise.noise_for(stat), quantum)
        tau = selection_threshold(own, groups, selection_delta, most=stat.bound * quantum)
        options.append((units_for_release(functools.partial(release_probability, own, tau)),
                        tau, stat.name))
    needed, tau, name = min(options)
    current = chosen.selection
    current_noise = None if current.separate else chosen.noise.noise_for(units)
    if needed > COUNT_THRESHOLD_ALLOWANCE * units_for_release(
            lambda n: float(current.chance(np.array([n]), current_noise)[0])):
        return chosen
    selection = Selection(method=f"{noise.kind}_threshold", threshold=tau,
                          delta=selection_delta, max_groups_per_unit=groups, statistic=name)
    return replace(draft, sensitivities=kept, noise=noise, selection=selection)


def _spec(draft: Draft, name: str) -> StatSpec:
    return next(s for s in draft.stats if s.name == name)


def _selection(choice: Choice, epsilon: float, delta: float, groups: int, min_units: int
               ) -> Selection:
    """The plan's Selection for a separate ``choice`` spending (``epsilon``, ``delta``)."""
    gaussian = choice.gaussian
    return Selection(method=choice.method, threshold=choice.threshold, delta=delta,
                     max_groups_per_unit=groups, epsilon=epsilon, min_units=min_units,
                     sigma=0.0 if gaussian is None else gaussian.sigma,
                     noise_delta=0.0 if gaussian is None else gaussian.noise_delta)


def _keys_only(draft: Draft) -> Draft:
    """Releasing only private keys: nothing is noised, and the separate selection that
    releases a group at fewer people gets all of ε and δ: the truncated geometric (optimal
    for one group per person, Desfontaines, Voss, Gipson & Mandayam 2022) or, for a person
    in many groups, Gaussian thresholding (``best_selection``)."""
    if draft.delta == 0:
        raise DeltaNeeded("releasing private group keys needs delta > 0 (e.g. delta=1e-7)")
    epsilon, delta = float_at_most(draft.epsilon), float_at_most(draft.delta)
    groups = draft.contribution.groups_per_unit
    choice = best_selection(None, epsilon, delta, groups)
    selection = _selection(choice, epsilon, delta, groups, draft.options.min_units or 1)
    return replace(draft, noise=None, selection=selection, cost_delta=draft.delta)


COUNT_KINDS = ("units", "rows", "count", "distinct")
"""Statistics released as counts, i.e. as 64-bit integers."""


def check_release(draft: Draft) -> Draft:
    """Refuse, at plan time, noise that cannot be released as finite numbers at this ε.

    A noisy statistic is released as g·k for an integer k with |k| < 2⁵³ (``Noise.add_to``
    refuses more), g its grid in the answer's units: so every value it can release is
    finite iff g·2⁵³ is, and fits a count's 64-bit integer iff g·2⁵³ ≤ 2⁶³ (a count's noise
    scale below ~2³¹). Sensitivities, noise scales and the selection's threshold must be
    finite too. Otherwise: PrivacyError naming the fix (a larger ε, smaller bounds or
    limits). The truncated geometric is checked to be computable at its (ε, δ).
    """
    if draft.noise is not None:
        for spec in draft.stats:
            stat = next((s for s in draft.sensitivities if s.name == spec.name), None)
            if stat is not None:
                _check_statistic(spec, stat, draft)
    selection = draft.selection
    if selection is not None and selection.truncated_geometric:
        truncated_geometric_crossovers(selection.epsilon, selection.delta,
                                       selection.max_groups_per_unit)
    elif selection is not None and not math.isfinite(selection.threshold):
        raise PrivacyError(f"the partition-selection threshold overflows at epsilon="
                           f"{draft.epsilon:g}: use a larger epsilon")
    return draft


def _check_statistic(spec: StatSpec, stat: Sensitivity, draft: Draft) -> None:
    """PrivacyError unless every value the noise of ``stat`` can release is a finite number
    (a 64-bit integer for counts)."""
    noise = draft.noise.noise_for(stat)  # in quanta; the answer's units are × quantum
    scale, largest = noise.scale * spec.quantum, noise.granularity * spec.quantum * 2.0**53
    sensitivity = stat.bound * stat.l1 * spec.quantum
    count = spec.kind in COUNT_KINDS
    if math.isfinite(scale + sensitivity) and largest <= (2.0**63 if count
                                                          else sys.float_info.max):
        return
    what = "a count (a 64-bit integer)" if count else "a finite number"
    fix = "smaller contribution limits" if count else "smaller bounds or contribution limits"
    raise PrivacyError(
        f"{_label(spec, draft)}: at epsilon={draft.epsilon:g} its noise (scale {scale:.3g}, "
        f"sensitivity {sensitivity:.3g}) is too large to release as {what}. Fix: use a larger "
        f"epsilon, or {fix}")


def _label(spec: StatSpec, draft: Draft) -> str:
    """The aggregate a statistic belongs to, as the user wrote it (or the statistic)."""
    return next((a.sql for a in draft.aggregates if spec.name in a.stats), str(spec))


def _units_name(draft: Draft) -> str:
    return next(s.name for s in draft.stats if s.kind == "units")


def quantile_weight_limits(limits: Contribution) -> tuple[int, int]:
    """(W_tot, g): the most histogram weight one unit adds over all groups, and its groups.

    The rewrite gives a unit at most c rows' weight per group, in at most g groups, scaled
    down to r rows in total when max_rows_per_unit binds: W_tot = min(g·c, r) rows.
    """
    g, c, r = limits.groups_per_unit, limits.rows_per_group, limits.max_rows_per_unit
    rows = g * c if r is None else min(g * c, r)
    return rows * WEIGHT_SCALE, g


def _with_mechanism(agg: Aggregate, epsilon: float, limits: Contribution,
                    level: float | None) -> Aggregate:
    """The quantile's exponential mechanism, and with ``level`` its interval's two ends."""
    weight, groups = quantile_weight_limits(limits)
    mechanism = ExponentialQuantile(epsilon=epsilon, q=agg.quantile.q, max_weight=weight,
                                    max_groups_per_unit=groups)
    spec = replace(agg.quantile, mechanism=mechanism)
    if level is not None:
        buckets = agg.quantile.histogram.buckets
        spec = replace(spec, level=level,
                       lower=mechanism.interval_end("lower", level, buckets),
                       upper=mechanism.interval_end("upper", level, buckets))
    return replace(agg, quantile=spec)

"""The bounding strategy of a plan: one ordered table of rules, first match wins.

Each rule reads the plan (the SQL text's statistics and keys, the declared limits, the
catalog's column types and public domains) and the engine's traits — never the data: the
chooser is handed nothing else, and nothing it reads is computed from a row (the plan is
built before any data is read). So which rows a unit keeps is decided by the same rule
whatever the rows hold, and the running time's shape cannot depend on one person's row.
The strategies, their builders and what each costs are in docs/architecture.md.

>>> from dpsql.analysis import analyze
>>> from dpsql.catalog import Catalog, TableInfo
>>> from dpsql.engines import DUCKDB, SPARK
>>> cat = Catalog()
>>> _ = cat.add(TableInfo.private("t", columns={"pid": "INT", "k": "TEXT", "x": "INT"},
...                               privacy_unit="pid", bounds={"x": (0, 5)}))
>>> plan = analyze("SELECT k, SUM(x) FROM t GROUP BY k", cat, epsilon=1, delta=1e-6)
>>> bounding = choose(plan, DUCKDB)
>>> bounding.strategy, bounding.options
('first_pair', ('g=1', 'packed'))
>>> choose(plan, SPARK).options
('g=1', 'in_rows')
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from dpsql.engines import EngineTraits
from dpsql.errors import InternalError
from dpsql.plan import Bounding, PrivacyPlan, Strategy
from dpsql.rewrite.digest import integer_unit


@dataclass(frozen=True)
class Rule:
    """``strategy`` applies to the plans for which ``applies(plan, engine)`` holds."""

    strategy: Strategy
    applies: Callable[[PrivacyPlan, EngineTraits], bool]
    why: str


def public_domain_size(plan: PrivacyPlan) -> float:
    """How many groups the keys can form: the product of the public domains' sizes, or
    infinity when a key is private."""
    if not all(k.public for k in plan.keys):
        return math.inf
    return math.prod(len(k.domain) for k in plan.keys)


def _integer_unit(plan: PrivacyPlan) -> bool:
    return integer_unit(plan.column_types.get(plan.privacy_unit, ""))


def _counts_only(plan: PrivacyPlan, *, rows_too: bool) -> bool:
    """Every statistic a count without per-group bounds: of units, and of rows and values
    if ``rows_too``."""
    kinds = ("units", "rows", "count") if rows_too else ("units",)
    return all(s.kind in kinds and not s.per_group for s in plan.stats)


def ranks_rows(plan: PrivacyPlan, engine: EngineTraits) -> bool:
    """A grouped query of quantiles beside nothing but counts (of units, rows or values,
    without per-group bounds), an integer unit, groups to choose, and no total-rows cap
    (whose total over the kept pairs the pairs carry)."""
    return (bool(plan.histograms and plan.keys) and not plan.contribution.caps_total
            and _counts_only(plan, rows_too=True) and _integer_unit(plan)
            and public_domain_size(plan) > plan.contribution.groups_per_unit)


def first_group_of_rows(plan: PrivacyPlan, engine: EngineTraits) -> bool:
    """A grouped query of counts alone (of units at any c; of rows and values at c = 1,
    dpsql's default), g = 1, an integer unit, groups to choose, no total-rows cap."""
    limits = plan.contribution
    return (bool(plan.keys) and not plan.histograms and not limits.caps_total
            and limits.groups_per_unit == 1
            and _counts_only(plan, rows_too=limits.rows_per_group == 1)
            and _integer_unit(plan) and public_domain_size(plan) > 1)


def nothing_to_choose(plan: PrivacyPlan, engine: EngineTraits) -> bool:
    """No keys, or a public domain of at most g groups: no unit can exceed g."""
    return not plan.keys or public_domain_size(plan) <= plan.contribution.groups_per_unit


RULES: tuple[Rule, ...] = (
    Rule("row_level", lambda plan, engine: plan.row_level,
         "every row is its own privacy unit: clamp its values and aggregate per group"),
    Rule("kept_rows_ranked", ranks_rows,
         "quantiles by private groups beside counts alone: each unit's rows in its first g "
         "groups, ranked in one window over the rows"),
    Rule("first_group_of_rows", first_group_of_rows,
         "counts alone at one group per unit: each unit's first group from one aggregate "
         "over its rows"),
    Rule("all_pairs", nothing_to_choose,
         "no unit can be in more groups than the limit: every (unit, group) pair is kept"),
    Rule("heavy_units_by_hash", lambda plan, engine: not _integer_unit(plan),
         "a privacy unit that is not an integer: the units in more than g groups keep the "
         "first g of their pairs by a salted MD5"),
    Rule("first_pair", lambda plan, engine: plan.contribution.groups_per_unit == 1,
         "one group per unit, over an integer unit: each unit's first pair in one "
         "aggregate over its pairs (ARG_MIN_NULL)"),
    Rule("first_pairs_by_window", lambda plan, engine: True,
         "several groups per unit, over an integer unit: each unit's first g pairs by a "
         "window ranking them in a salted order"),
)
"""The rules in order; the last applies to every plan."""

PAIR_STRATEGIES: frozenset[Strategy] = frozenset(
    {"all_pairs", "heavy_units_by_hash", "first_pair", "first_pairs_by_window"})
"""The strategies that aggregate (unit, group) pairs (``dpsql.rewrite.unit_level``)."""

IN_ROWS: frozenset[Strategy] = frozenset({"all_pairs", "first_pair", "first_pairs_by_window"})
"""The strategies with a form that computes in each row what a CTE of groups would give."""


def choose(plan: PrivacyPlan, engine: EngineTraits) -> Bounding:
    """The first rule that applies to ``plan`` on ``engine``, with its options."""
    for rule in RULES:
        if rule.applies(plan, engine):
            return _bounding(rule, plan, engine)
    raise InternalError("no bounding rule applies: the last rule must apply to every plan")


def bounding(strategy: Strategy, plan: PrivacyPlan, engine: EngineTraits) -> Bounding:
    """``strategy``'s ``Bounding`` for ``plan`` on ``engine``, with the options and the why
    ``choose`` gives it where its rule is the first that applies. Another strategy than the
    chosen one is built only to compare strategies (``tests/benchmarks/bench_choice.py``),
    and must fit the plan: the first-pair strategies need an integer unit, ``first_pair``
    also g = 1, and the rules of the strategies before ``all_pairs`` must hold.

    >>> from dpsql.analysis import analyze
    >>> from dpsql.catalog import Catalog, TableInfo
    >>> from dpsql.engines import DUCKDB
    >>> cat = Catalog()
    >>> _ = cat.add(TableInfo.private("t", columns={"pid": "INT", "k": "TEXT"},
    ...                               privacy_unit="pid"))
    >>> plan = analyze("SELECT k, COUNT(*) FROM t GROUP BY k", cat, epsilon=1, delta=1e-6)
    >>> choose(plan, DUCKDB).strategy, bounding("first_pair", plan, DUCKDB).options
    ('first_group_of_rows', ('g=1', 'packed'))
    """
    rule = next(rule for rule in RULES if rule.strategy == strategy)
    return _bounding(rule, plan, engine)


def _bounding(rule: Rule, plan: PrivacyPlan, engine: EngineTraits) -> Bounding:
    strategy = rule.strategy
    chooses = strategy not in ("row_level", "all_pairs")
    return Bounding(
        strategy=strategy, why=rule.why,
        groups_per_unit=plan.contribution.groups_per_unit if chooses else None,
        in_rows=engine.inlines_ctes and strategy in IN_ROWS,
        packed=strategy == "first_pair" and engine.pays_per_aggregate
        and not engine.inlines_ctes,
        compute_once=_computed_once(strategy, plan, engine))


def _computed_once(strategy: Strategy, plan: PrivacyPlan, engine: EngineTraits) -> bool:
    """Whether what a quantile's histogram reads beside the other statistics is made
    computed once, on an engine that reuses only a non-deterministic CTE:
    ``kept_rows_ranked``'s cells (the group's rank, buckets and sums: integers alone), or
    the kept pairs — but not with a
    TIME column among the unit and the keys where the engine refuses one there (it then
    computes them at each reference)."""
    if not engine.reuses_nondeterministic_ctes:
        return False
    if strategy == "kept_rows_ranked":
        return True  # its cells carry the group's rank, never a key nor the unit
    if strategy not in PAIR_STRATEGIES or not plan.histograms:
        return False
    return engine.time_in_reused_cte or not any(
        _is_time(plan.column_types.get(column, ""))
        for column in (plan.privacy_unit, *(k.column for k in plan.keys)))


def _is_time(sql_type: str) -> bool:
    """Whether a column of this type holds times of day (TIME, TIMETZ; not TIMESTAMP).

    >>> _is_time("TIME"), _is_time("TIME WITH TIME ZONE"), _is_time("TIMESTAMP")
    (True, True, False)
    """
    name = sql_type.upper()
    return name.startswith("TIME") and not name.startswith("TIMESTAMP")

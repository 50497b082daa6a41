"""Strategy ``first_pair``: each integer unit keeps its first pair (g = 1), by one aggregate.

The pairs are ordered by ``digest.unit_order`` (``pairs.pair_ordered``: one BIGINT, ``order
· 2³² + rank``); one aggregate per unit takes its first pair's group and partials with
``ArgMinNull``. Every pair is ordered (no search for the units over the limit), so the
running time does not depend on how many units exceed it.

- By rank (DuckDB): the pairs are aggregated per (unit, keys) and joined once to their
  group's codes, which give each its rank and code
  (``pairs.pairs_by_rank``: far fewer pairs than rows join); the rank is the smallest
  order modulo 2³², the partials with a bound travel as the digits of few BIGINTs
  (``packing``, where the engine pays per aggregate: ``Bounding.packed``), and a join to
  the codes on the rank gives the keys back after the choice.
- With the keys (``Bounding.in_rows``: an engine that computes the codes' CTE again at each
  reference): the pairs are formed per (unit, keys), joined to the codes by the keys, and
  each column of the first pair, keys included, is taken by its own ``ArgMinNull``.
"""

from __future__ import annotations

from sqlglot import exp

from dpsql.expr.nodes import ArgMinNull
from dpsql.plan import Bounding, PrivacyPlan
from dpsql.rewrite.frame import FIRST, GROUP_RANK, GROUP_RANKS, PAIRS, UNIT, keys, over
from dpsql.rewrite.frame import output_columns as columns_of
from dpsql.rewrite.packing import packed
from dpsql.rewrite.pairs import (
    groups_of,
    ordered_pairs,
    pairs_by_rank,
    pairs_of,
    with_codes,
    with_keys,
)


def keep(plan: PrivacyPlan, bounding: Bounding, rows: exp.Select,
         partials: list[exp.Expression], domain: exp.Expression | None,
         bounds: dict[str, int]) -> exp.Select:
    """Each unit's first pair of ``rows`` in the public ``domain`` (``unit_level.Keep``)."""
    read_from, groups = groups_of(plan, rows, domain)
    names = columns_of(pairs_of(rows, keys(plan), partials))
    if bounding.in_rows:
        kept = with_codes(_first_by_min(plan, names), plan, rows, read_from, groups)
        return kept.with_(PAIRS, as_=pairs_of(rows, keys(plan), partials), copy=False)
    key_names = set(plan.key_names)
    carried = [exp.column(GROUP_RANK), *(c for c in names if c.name not in key_names)]
    chosen = _first_by_packed_min(plan, carried, bounds if bounding.packed else {})
    kept = with_codes(with_keys(chosen, names, key_names), plan, rows, read_from, groups)
    return kept.with_(PAIRS, as_=pairs_by_rank(plan, read_from, partials), copy=False)


def _first_by_min(plan: PrivacyPlan, columns: list[exp.Column]) -> exp.Select:
    """Per unit, ``columns`` of its first pair (the smallest ``ordered_pairs`` order), from
    pairs that carry their keys, one ``ArgMinNull`` each."""
    rows, first = ordered_pairs(plan, by_rank=False)
    ordered = over(rows, "__dp_o", "*", exp.alias_(first, FIRST))
    taken = [_of_first(c.name) for c in columns if c.name != UNIT]
    return (over(ordered, "__dp_k", exp.column(UNIT), *taken)
            .group_by(exp.column(UNIT), copy=False))


def _of_first(column: str) -> exp.Expression:
    """``column`` of the unit's first pair (the smallest ``FIRST``), under its own name."""
    return exp.alias_(ArgMinNull(this=exp.column(column), expression=exp.column(FIRST)), column)


def _first_by_packed_min(plan: PrivacyPlan, columns: list[exp.Column],
                         bounds: dict[str, int]) -> exp.Select:
    """Per unit, ``columns`` (its group's rank and partials) of its first pair (the
    smallest ``ordered_pairs`` order by the rank), in few aggregates: the rank is the
    smallest order modulo 2³², the partials with a bound in ``bounds`` travel as the
    digits of a few BIGINTs (``packing``), one ``ArgMinNull`` per pack, and the others
    one each."""
    rows, first = ordered_pairs(plan, by_rank=True)
    names = [c.name for c in columns if c.name not in (UNIT, GROUP_RANK)]
    packs = packed([(name, bounds[name]) for name in names if name in bounds])
    in_packs = {column for pack in packs for column, _ in pack.fields}
    alone = [name for name in names if name not in in_packs]
    ordered = over(rows, "__dp_o", "*", exp.alias_(first, FIRST),
                   *(exp.alias_(pack.code(), pack.name) for pack in packs))
    rank = exp.Mod(this=exp.Min(this=exp.column(FIRST)),
                   expression=exp.Literal.number(GROUP_RANKS))
    chosen = (over(ordered, "__dp_k", exp.column(UNIT), exp.alias_(rank, GROUP_RANK),
                   *(_of_first(pack.name) for pack in packs), *map(_of_first, alone))
              .group_by(exp.column(UNIT), copy=False))
    unpacked = [exp.alias_(pack.field(column, exp.column(pack.name)), column)
                for pack in packs for column, _ in pack.fields]
    return over(chosen, "__dp_m", exp.column(UNIT), exp.column(GROUP_RANK), *unpacked,
                *map(exp.column, alone))

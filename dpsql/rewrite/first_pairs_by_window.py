"""Strategy ``first_pairs_by_window``: each integer unit keeps its first g pairs (g > 1).

The pairs are ordered by ``digest.unit_order`` (``pairs.pair_ordered``) and ranked within
their unit by ``ROW_NUMBER``; ranks 1 to g are kept. Every pair is ordered (no search for
the units over the limit), so the running time does not depend on how many exceed it.

- By rank (DuckDB): the pairs are aggregated per (unit, keys) and joined once to their
  group's codes (``pairs.pairs_by_rank``); the window orders them by the one BIGINT
  ``order · 2³² + rank``, and a join to the codes on the rank gives the keys back after
  the choice.
- In the rows (``Bounding.in_rows``: an engine that computes the codes' CTE again at each
  reference): the pairs are formed per (unit, keys) and each hashes its own code; the
  window orders them by (order, keys), and the public domain filters the pairs, as no
  codes are joined.
"""

from __future__ import annotations

from sqlglot import exp

from dpsql.expr.nodes import number
from dpsql.plan import Bounding, PrivacyPlan
from dpsql.rewrite.frame import GROUP_RANK, PAIRS, RANK, keys, output_columns
from dpsql.rewrite.pairs import (
    code_column,
    first_by_window,
    groups_of,
    ordered_pairs,
    pairs_by_rank,
    pairs_of,
    unit_ordered,
    with_codes,
    with_keys,
)


def keep(plan: PrivacyPlan, bounding: Bounding, rows: exp.Select,
         partials: list[exp.Expression], domain: exp.Expression | None,
         bounds: dict[str, int]) -> exp.Select:
    """Each unit's first g pairs of ``rows`` in the public ``domain`` (``unit_level.Keep``)."""
    g = plan.contribution.groups_per_unit
    pairs = pairs_of(rows, keys(plan), partials)
    names = output_columns(pairs)
    if bounding.in_rows:
        hashed = exp.select("*", code_column(plan)).from_(PAIRS)
        hashed, order = unit_ordered(hashed if domain is None else hashed.where(domain))
        kept = first_by_window(hashed, [order, *keys(plan)], names,
                               exp.LTE(this=exp.column(RANK), expression=number(g)))
        return kept.with_(PAIRS, as_=pairs, copy=False)
    read_from, groups = groups_of(plan, rows, domain)
    key_names = set(plan.key_names)
    carried = [exp.column(GROUP_RANK), *(c for c in names if c.name not in key_names)]
    ordered, first = ordered_pairs(plan, by_rank=True)
    # BETWEEN, not <=: DuckDB turns a window ranked by one column and cut at ≤ g into a
    # top-N aggregate, which is slower (docs/benchmarks.md).
    chosen = first_by_window(ordered, [first], carried,
                             exp.Between(this=exp.column(RANK), low=number(1), high=number(g)))
    kept = with_codes(with_keys(chosen, names, key_names), plan, rows, read_from, groups)
    return kept.with_(PAIRS, as_=pairs_by_rank(plan, read_from, partials), copy=False)

"""Strategy ``heavy_units_by_hash``: a unit that is not an integer, in more than g groups.

The first-pair strategies order a unit's pairs by arithmetic on an integer unit
(``digest.unit_order``); a text (or other) unit cannot take part in it. Here the units with
more than g groups ("heavy") rank their pairs by ``keyed_hash`` of (unit, keys), an MD5 per
pair with the query's salt, and keep the first g; the others keep all theirs. Which branch
a unit takes depends only on its own rows, and its choice only on the salt.
"""

from __future__ import annotations

from sqlglot import exp

from dpsql.expr.nodes import number
from dpsql.plan import Bounding, PrivacyPlan
from dpsql.rewrite.digest import keyed_hash
from dpsql.rewrite.frame import HEAVY, PAIRS, RANK, UNIT, keys, output_columns
from dpsql.rewrite.pairs import first_by_window, pairs_of, within


def keep(plan: PrivacyPlan, bounding: Bounding, rows: exp.Select,
         partials: list[exp.Expression], domain: exp.Expression | None,
         bounds: dict[str, int]) -> exp.Select:
    """The light units' pairs and the heavy units' first g by hash (``unit_level.Keep``)."""
    g = plan.contribution.groups_per_unit
    pairs = pairs_of(rows, keys(plan), partials)
    names = output_columns(pairs)
    heavy = (exp.select(UNIT).from_(PAIRS, copy=False).group_by(UNIT, copy=False)
             .having(exp.GT(this=exp.Count(this=exp.Star()), expression=number(g)), copy=False))
    heavy_units = exp.select(UNIT).from_(HEAVY, copy=False).subquery(copy=False)
    in_heavy = exp.In(this=exp.column(UNIT), query=heavy_units)
    light = exp.select(*names).from_(PAIRS, copy=False).where(exp.Not(this=in_heavy.copy()),
                                                             copy=False)
    key_types = [(k.name, plan.column_types.get(k.column, "")) for k in plan.keys]
    unit_type = plan.column_types.get(plan.privacy_unit, "")
    heavy_pairs = exp.select("*").from_(PAIRS, copy=False).where(in_heavy, copy=False)
    order = keyed_hash([(UNIT, unit_type), *key_types])
    chosen = first_by_window(heavy_pairs, [order, *keys(plan)], names,
                             exp.LTE(this=exp.column(RANK), expression=number(g)))
    kept = exp.union(light, chosen, distinct=False, copy=False)
    query = exp.select("*").from_(kept.subquery("__dp_kept", copy=False), copy=False)
    query = query.with_(PAIRS, as_=within(pairs, names, domain), copy=False)
    return query.with_(HEAVY, as_=heavy, copy=False)

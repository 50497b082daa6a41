"""Strategy ``all_pairs``: nothing to choose, every (unit, group) pair is kept.

A query without keys has one group; a public domain of at most g groups cannot take a
unit past its g. The pairs in the public domain are kept, each with its bounded partials.
"""

from __future__ import annotations

from sqlglot import exp

from dpsql.plan import Bounding, PrivacyPlan
from dpsql.rewrite.frame import keys, output_columns
from dpsql.rewrite.pairs import pairs_of, within


def keep(plan: PrivacyPlan, bounding: Bounding, rows: exp.Select,
         partials: list[exp.Expression], domain: exp.Expression | None,
         bounds: dict[str, int]) -> exp.Select:
    """Every pair of ``rows`` in the public ``domain`` (``unit_level.Keep``)."""
    pairs = pairs_of(rows, keys(plan), partials)
    return within(pairs, output_columns(pairs), domain)

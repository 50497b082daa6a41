"""The rewrite stage: a PrivacyPlan becomes SQL that enforces its bounds, on one engine.

``rewrite`` chooses the plan's bounding strategy from one ordered table of rules
(``choose``: the plan and the engine's traits, never the data) and builds it with that
strategy's builder (``BUILDERS``): every row its own unit (``row_level``); every (unit,
group) pair kept (``all_pairs``); each unit's first g pairs in a salted order, by one
aggregate (``first_pair``) or a window (``first_pairs_by_window``); the heavy units of a
non-integer unit by a salted hash (``heavy_units_by_hash``); quantiles of the kept rows
ranked in a window (``kept_rows_ranked``); counts of each unit's first group of rows
(``first_group_of_rows``). The pair strategies share the pairs and codes
(``pairs``) and the frame around them (``unit_level``, ``frame``). The tree is sqlglot in
DuckDB's meaning; the engine's dialect writes it (``dpsql.engines``).

>>> from dpsql.analysis import analyze
>>> from dpsql.catalog import Catalog, TableInfo
>>> cat = Catalog()
>>> _ = cat.add(TableInfo.private("t", columns={"pid": "INT", "x": "INT"}, row_privacy=True,
...                               bounds={"x": (0, 5)}))
>>> bounded = rewrite(analyze("SELECT SUM(x) FROM t", cat, epsilon=1, delta=0))
>>> print(bounded.bounding)
row_level: every row is its own privacy unit: clamp its values and aggregate per group
>>> print(bounded.ast.sql(pretty=True, max_text_width=40))
SELECT
  CAST(COALESCE(
    SUM(
      CASE
        WHEN x IS NULL
        THEN NULL
        ELSE LEAST(GREATEST(x, 0), 5)
      END
    ),
    0
  ) AS DOUBLE) AS __dp_s0
FROM t
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from dpsql.engines import DUCKDB, EngineTraits
from dpsql.plan import Bounding, PrivacyPlan, Strategy
from dpsql.rewrite import (
    all_pairs,
    first_group_of_rows,
    first_pair,
    first_pairs_by_window,
    heavy_units,
    kept_rows_ranked,
    row_level,
    unit_level,
)
from dpsql.rewrite.bounded import BoundedQuery
from dpsql.rewrite.choose import choose
from dpsql.rewrite.widths import read_within_widths

Builder = Callable[[PrivacyPlan, Bounding], exp.Select]

BUILDERS: dict[Strategy, Builder] = {
    "row_level": row_level.build,
    "all_pairs": unit_level.builder(all_pairs.keep),
    "first_pair": unit_level.builder(first_pair.keep),
    "first_pairs_by_window": unit_level.builder(first_pairs_by_window.keep),
    "heavy_units_by_hash": unit_level.builder(heavy_units.keep),
    "kept_rows_ranked": kept_rows_ranked.build,
    "first_group_of_rows": first_group_of_rows.build,
}
"""One builder per strategy (``dpsql.plan.STRATEGIES``)."""


def rewrite(plan: PrivacyPlan, engine: EngineTraits = DUCKDB,
            bounding: Bounding | None = None) -> BoundedQuery:
    """Build the bounded aggregate query for ``plan`` on ``engine``; the group choice reads
    the salt from the query parameter ``digest.SALT`` (bound by the backend for each run).

    The strategy is ``choose``'s; a ``bounding`` given (``choose.bounding``: one that fits
    the plan) is built instead, to compare strategies (``tests/benchmarks/bench_choice.py``).
    """
    if bounding is None:
        bounding = choose(plan, engine)
    query = BUILDERS[bounding.strategy](plan, bounding)
    return BoundedQuery(read_within_widths(query, plan.reads), bounding, engine)


__all__ = ["BUILDERS", "BoundedQuery", "rewrite"]

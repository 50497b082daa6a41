"""The release stage: exact bounded aggregates in, noisy post-processed Result out.

Order matters for privacy: the connection charges the ledger *before* calling
:func:`release`, which is the only place noise is drawn. Everything after the
noise (AVG's ratio, selection on the noisy unit count, HAVING, ORDER BY, LIMIT,
arithmetic) reads only noisy values and public parameters.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import duckdb
import numpy as np
import pyarrow as pa

from dpsql.mechanisms import Sampler
from dpsql.plan import NOISY_TABLE, ROW_ID, PrivacyPlan

AVG_COUNT_FLOOR = 1.0
"""AVG divides by max(noisy count, 1) so that an empty or tiny group stays finite."""


@dataclass(frozen=True)
class NoisyGroups:
    """Released groups: public key values and noisy statistics, row-aligned."""

    keys: pa.Table
    stats: dict[str, np.ndarray]

    @property
    def num_rows(self) -> int:
        return self.keys.num_rows


def with_public_domain(plan: PrivacyPlan, exact: pa.Table) -> pa.Table:
    """All public key combinations, in declaration order; absent groups get zeros."""
    names = [k.name for k in plan.keys]
    combos = list(itertools.product(*(k.domain for k in plan.keys)))
    rows = exact.select(names).to_pylist()
    found = {tuple(row[n] for n in names): i for i, row in enumerate(rows)}
    index = np.array([found.get(c, -1) for c in combos], dtype=np.int64)
    columns = {n: pa.array([c[i] for c in combos], type=exact.schema.field(n).type)
               for i, n in enumerate(names)}
    for name in exact.column_names:
        if name in columns:
            continue
        values = exact.column(name).to_numpy(zero_copy_only=False)
        filled = np.where(index >= 0, values[np.maximum(index, 0)] if len(values) else 0, 0)
        columns[name] = pa.array(filled.astype(values.dtype if len(values) else np.float64))
    return pa.table(columns)


def add_noise(plan: PrivacyPlan, exact: pa.Table, sampler: Sampler) -> NoisyGroups:
    """Noise every statistic, then drop groups whose noisy unit count misses the threshold."""
    if plan.keys and all(k.public for k in plan.keys):
        exact = with_public_domain(plan, exact)
    stats = {}
    for spec in plan.stats:
        values = exact.column(spec.name).to_numpy(zero_copy_only=False).astype(np.float64)
        stats[spec.name] = plan.noise_for(spec.name).add_to(values * spec.quantum, sampler)
    keys = exact.select([k.name for k in plan.keys])
    if plan.selection is not None:
        units = next(s.name for s in plan.stats if s.kind == "units")
        keep = stats[units] >= plan.selection.threshold
        keys = keys.filter(pa.array(keep))
        stats = {name: values[keep] for name, values in stats.items()}
    return NoisyGroups(keys=keys, stats=stats)


def aggregate_values(plan: PrivacyPlan, groups: NoisyGroups) -> dict[str, np.ndarray]:
    """Each aggregate's noisy value per released group (AVG = centre + sum/count)."""
    values = {}
    for agg in plan.aggregates:
        first = groups.stats[agg.stats[0]]
        if agg.kind == "avg":
            count, centered = first, groups.stats[agg.stats[1]]
            center = plan.stat(agg.stats[1]).center
            ratio = centered / np.maximum(count, AVG_COUNT_FLOOR)
            values[agg.name] = np.clip(center + ratio, agg.lo, agg.hi)
        elif agg.kind in ("count_star", "count", "count_units"):
            values[agg.name] = first.astype(np.int64)
        else:
            values[agg.name] = first
    return values


def post_process(plan: PrivacyPlan, groups: NoisyGroups,
                 con: duckdb.DuckDBPyConnection) -> tuple[pa.Table, np.ndarray]:
    """Run the query's SELECT/HAVING/ORDER BY/LIMIT over the noisy table.

    ``con`` must be a DuckDB connection that holds no private data (only noisy
    tables ever enter it). Returns the released table and, per released row,
    the index of its group.
    """
    columns = {name: groups.keys.column(name) for name in groups.keys.column_names}
    columns.update({name: pa.array(v) for name, v in aggregate_values(plan, groups).items()})
    columns[ROW_ID] = pa.array(np.arange(groups.num_rows, dtype=np.int64))
    noisy = pa.table(columns)
    con.register(NOISY_TABLE, noisy)
    try:
        table = con.sql(plan.output.sql(dialect="duckdb")).to_arrow_table()
    finally:
        con.unregister(NOISY_TABLE)
    rows = table.column(ROW_ID).to_numpy()
    return table.drop_columns([ROW_ID]), rows

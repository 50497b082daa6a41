"""The release stage: exact bounded aggregates in, noisy post-processed Result out.

``release(compiled, exact, sampler)``: the engine's groups in an order that depends on the
keys alone (``release_groups``), partition selection and noise (``add_noise``, the only
place noise is drawn and quantiles are sampled), then the query's SELECT/HAVING/ORDER
BY/LIMIT over the noisy table (``post_process``).

Order matters for privacy. The connection checks the budget and charges it, in one step,
*before* the engine computes ``exact``, so before ``release`` runs: when a query stops
tells how long it ran, which may depend on the data, so a cancel or a failure in the
engine or in ``release`` leaves the charge. The answer is stored for the question only
after ``release`` returns (docs/architecture.md, "One query, in order"). Everything after
the noise (AVG's ratio, selection on a noisy unit count, a quantile's bucket midpoint,
HAVING, ORDER BY, LIMIT, arithmetic) reads only noisy values and public parameters.
``sampler=None`` releases the noise-free answer instead: a data owner's evaluation tool,
never an analyst's.
"""

from __future__ import annotations

import dataclasses
import itertools
import threading
from typing import TYPE_CHECKING

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dpsql.accounting.values import Cost
from dpsql.analysis.composition import PART
from dpsql.analysis.reports import CONFIDENCE_LEVEL, interval_columns
from dpsql.arrays import from_numpy, to_numpy
from dpsql.composed import ComposedQuery
from dpsql.consistency import consistent, summed
from dpsql.errors import UnsupportedQueryError
from dpsql.estimators import NoisyGroups, aggregate_values, estimator, interval_name
from dpsql.expr.totality import guard_division
from dpsql.grouping import GroupedQuery
from dpsql.mechanisms import Sampler
from dpsql.plan import NOISY_TABLE, ROW_ID, HistogramSpec, PrivacyPlan
from dpsql.result import Result, composed_result, concatenated

if TYPE_CHECKING:
    from dpsql.compile import CompiledQuery


def with_public_domain(plan: PrivacyPlan, exact: pa.Table) -> pa.Table:
    """All public key combinations, in declaration order; absent groups get zeros."""
    names = plan.key_names
    keys = public_domain(plan, exact.schema)
    found = {tuple(row[n] for n in names): i
             for i, row in enumerate(exact.select(names).to_pylist())}
    index = np.array([found.get(tuple(row[n] for n in names), -1) for row in keys.to_pylist()],
                     dtype=np.int64)
    columns = {n: keys.column(n) for n in names}
    for name in exact.column_names:
        if name in columns:
            continue
        if pa.types.is_list(exact.schema.field(name).type):  # a histogram: absent = empty
            taken = from_numpy(np.where(index >= 0, index, 0), mask=index < 0)
            columns[name] = exact.column(name).combine_chunks().take(taken)
            continue
        values = to_numpy(exact.column(name))
        filled = np.where(index >= 0, values[np.maximum(index, 0)] if len(values) else 0, 0)
        columns[name] = from_numpy(filled.astype(values.dtype if len(values) else np.float64))
    return pa.table(columns)


def public_domain(plan: PrivacyPlan, schema: pa.Schema) -> pa.Table:
    """Every combination of ``plan``'s public keys, in declaration order, typed by ``schema``
    (one row of no column for the empty set)."""
    combos = list(itertools.product(*(k.domain for k in plan.keys)))
    columns = {n: pa.array([c[i] for c in combos], type=schema.field(n).type)
               for i, n in enumerate(plan.key_names)}
    return pa.table({**columns, ROW_ID: np.arange(len(combos))}).select(plan.key_names)


def release_groups(plan: PrivacyPlan, exact: pa.Table) -> pa.Table:
    """The engine's exact groups as noise is drawn and rows are released: every public key
    combination in declaration order (absent ones with zeros), or with private keys the
    groups found, in key order. Neither order depends on the statistics."""
    if plan.keys and all(k.public for k in plan.keys):
        return with_public_domain(plan, exact)
    return in_key_order(plan, exact)


def add_noise(plan: PrivacyPlan, exact: pa.Table, sampler: Sampler) -> NoisyGroups:
    """From ``release_groups``' table: select groups (truncated geometric or Gaussian
    thresholding on the exact unit count, or a threshold on the noisy one; never one of
    fewer people than the floor ``min_privacy_units_per_group``, counted exactly), noise
    every released statistic, then draw each quantile of every released group (its bucket
    midpoint)."""
    keys = exact.select(plan.key_names)
    keep = np.ones(exact.num_rows, dtype=bool)
    if plan.selection is not None and plan.selection.separate:
        keep = _separate_keep(plan, exact, sampler)
    noised = {s.name for s in plan.sensitivities} if plan.noise is not None else set()
    stats = {}
    for spec in plan.stats:
        if spec.name in noised:
            values = to_numpy(exact.column(spec.name))[keep]
            values = values.astype(np.float64) * spec.quantum
            stats[spec.name] = plan.noise_for(spec.name).add_to(values, sampler)
    if plan.selection is not None and not plan.selection.separate:
        keep = _threshold_keep(plan, exact, stats)
        stats = {name: values[keep] for name, values in stats.items()}
    keys = keys.filter(from_numpy(keep))
    quantiles = {}
    for agg in plan.quantiles:  # one exponential mechanism per released group
        spec = agg.quantile.histogram
        weights = dense_histograms(exact.column(spec.name).filter(from_numpy(keep)), spec)
        quantiles[agg.name] = spec.midpoints(agg.quantile.mechanism.sample(weights, sampler))
        for end in (agg.quantile.lower, agg.quantile.upper):
            if end is not None:
                index = end.sample(weights, sampler)
                quantiles[interval_name(agg.name, end.side)] = end.edges(
                    index, spec.lo, spec.hi, spec.buckets)
    return NoisyGroups(keys=keys, stats=stats, quantiles=quantiles)


def in_key_order(plan: PrivacyPlan, exact: pa.Table) -> pa.Table:
    """The groups sorted by their keys alone.

    Engines return groups in an order that can depend on the data (hash tables, threads,
    partitions); released rows keep the order of this table unless the query sorts them,
    so it must be a function of the keys, never of the exact statistics. It also makes
    seeded releases identical on every engine, since noise is drawn group by group.
    Dictionary-encoded keys (DuckDB ENUMs) sort by their values; keys Arrow cannot sort
    (nested types) sort by their text.

    >>> plan = type("Plan", (), {"keys": [type("Key", (), {"name": "k"})]})()
    >>> in_key_order(plan, pa.table({"k": ["b", None, "a"], "n": [1, 2, 3]})).to_pydict()
    {'k': ['a', 'b', None], 'n': [3, 1, 2]}
    >>> enum = pa.array(["y", "x"]).dictionary_encode()
    >>> in_key_order(plan, pa.table({"k": enum, "n": [1, 2]})).column("n").to_pylist()
    [2, 1]
    >>> in_key_order(plan, pa.table({"k": [[2], [1], None], "n": [1, 2, 3]})).to_pydict()
    {'k': [[1], [2], None], 'n': [2, 1, 3]}
    """
    if exact.num_rows < 2 or not plan.keys:
        return exact
    keys = pa.table({f"k{i}": _sortable(exact.column(k.name)) for i, k in enumerate(plan.keys)})
    try:
        order = pc.sort_indices(keys, sort_keys=[(n, "ascending") for n in keys.column_names])
    except (pa.ArrowNotImplementedError, pa.ArrowTypeError):  # nested keys: by their text
        rows = [tuple((v is None, str(v)) for v in row.values()) for row in keys.to_pylist()]
        order = pa.array(sorted(range(len(rows)), key=rows.__getitem__))
    return exact.take(order)


def _sortable(column: pa.ChunkedArray) -> pa.ChunkedArray:
    if pa.types.is_dictionary(column.type):
        return column.cast(column.type.value_type)
    return column


def _unit_counts(plan: PrivacyPlan, exact: pa.Table) -> np.ndarray:
    """Each group's exact count of people after the contribution limits (never released)."""
    units = next(s.name for s in plan.stats if s.kind == "units")
    return to_numpy(exact.column(units)).astype(np.int64)


def _separate_keep(plan: PrivacyPlan, exact: pa.Table, sampler: Sampler) -> np.ndarray:
    """Keep groups by their exact count of people, which is never released (0 below the
    floor, ``Selection.chance``).

    Truncated geometric: keep a group of n units with probability p(n). The Bernoulli(p)
    draw compares a uniform 53-bit integer with ⌊p·2⁵³⌋, so each group is kept with
    probability at most p(n); p is computed with δ' shrunk by a safety factor far larger
    than this rounding. Gaussian thresholding: keep it iff n (less min_units − 1) plus its
    own discrete Gaussian noise reaches the threshold.
    """
    selection, counts = plan.selection, _unit_counts(plan, exact)
    noise = selection.own_noise
    if noise is None:
        chance = selection.chance(counts)
        return sampler.below(2**53, len(chance)) < np.floor(chance * 2**53)
    noisy = noise.add_to(selection.shifted(counts).astype(np.float64), sampler)
    return selection.floor(counts) & (noisy >= selection.threshold)


def _threshold_keep(plan: PrivacyPlan, exact: pa.Table, stats: dict[str, np.ndarray]
                    ) -> np.ndarray:
    """Keep a group of at least ``min_units`` people (counted exactly) whose noisy count of
    people, less min_units − 1, reaches the threshold (or whose released count of rows
    does, for a threshold on that count). The floor is a public constant compared with the
    exact count: it only decides between releasing a group as the shifted threshold would
    and not releasing it (docs/mechanisms.md §6)."""
    selection = plan.selection
    passed = selection.shifted(stats[plan.thresholded]) >= selection.threshold
    return selection.floor(_unit_counts(plan, exact)) & passed


def bounded_quantiles(plan: PrivacyPlan, exact: pa.Table) -> dict[str, np.ndarray]:
    """Each quantile without noise: the midpoint of a bucket holding rank qN (evaluation only).

    ``exact`` is the bounded query's table (with public keys filled in); nothing is released.
    """
    out = {}
    for agg in plan.quantiles:
        spec = agg.quantile.histogram
        weights = dense_histograms(exact.column(spec.name), spec)
        distances = np.asarray(agg.quantile.mechanism.distances(weights), dtype=np.float64)
        out[agg.name] = spec.midpoints(np.argmin(distances, axis=1))
    return out


def dense_histograms(column: pa.ChunkedArray | pa.Array, spec: HistogramSpec) -> np.ndarray:
    """Rows of B integer weights from the bounded query's lists of {b, w} (NULL = empty).

    >>> col = pa.array([[{"b": 2, "w": 5}], None])
    >>> dense_histograms(col, HistogramSpec("h", None, 0, 1, buckets=3)).tolist()
    [[0, 0, 5], [0, 0, 0]]
    """
    lists = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    out = np.zeros((len(lists), spec.buckets), dtype=np.int64)
    entries = pc.list_flatten(lists)
    if len(entries):
        rows = to_numpy(pc.list_parent_indices(lists))
        buckets = to_numpy(entries.field("b"))
        out[rows, buckets] = to_numpy(entries.field("w"))
    return out


class NoisyEngine:
    """A DuckDB connection that only ever holds noisy tables: where post-processing runs."""

    def __init__(self) -> None:
        self.con = duckdb.connect()
        self._lock = threading.Lock()

    def post_process(self, plan: PrivacyPlan, groups: NoisyGroups) -> tuple[pa.Table, np.ndarray]:
        with self._lock:
            return post_process(plan, groups, self.con)

    def run(self, sql: str, tables: dict[str, pa.Table]) -> pa.Table:
        """``sql`` over ``tables`` (released, noisy tables only), registered for the call."""
        with self._lock:
            for name, table in tables.items():
                self.con.register(name, table)
            try:
                return self.con.sql(sql).to_arrow_table()
            finally:
                for name in tables:
                    self.con.unregister(name)

    def close(self) -> None:
        self.con.close()


def release(compiled: CompiledQuery | GroupedQuery | ComposedQuery,
            exact: pa.Table | tuple[pa.Table, ...], sampler: Sampler | None, *,
            engine: NoisyEngine) -> Result:
    """The released Result of a compiled query from its bounded aggregates ``exact`` (for
    grouping sets, one table per set: ``release_grouped``; for several releases, one per
    part: ``release_composed``).

    With ``sampler=None``, the noise-free bounded answer (every group kept), which is not
    private and costs nothing: the data owner's evaluation uses it.
    """
    if isinstance(compiled, GroupedQuery):
        return release_grouped(compiled, exact, sampler, engine=engine)
    if isinstance(compiled, ComposedQuery):
        return release_composed(compiled, exact, sampler, engine=engine)
    return released(compiled, noised(compiled.plan, exact, sampler), sampler, engine=engine)


def check_binds(compiled: CompiledQuery | GroupedQuery | ComposedQuery,
                engine: NoisyEngine) -> None:
    """What runs over the released values binds to their types, checked before anything is
    charged: the query around several releases (``check_outer_binds``), or each release's
    own post-processing (``check_post_process_binds``; one per grouping set)."""
    if isinstance(compiled, ComposedQuery):
        check_outer_binds(compiled, engine)
        return
    parts = compiled.set_parts if isinstance(compiled, GroupedQuery) else (compiled,)
    for part in parts:
        check_post_process_binds(part.plan, engine)


def check_outer_binds(composed: ComposedQuery, engine: NoisyEngine) -> None:
    """The query around the parts runs over their released tables as typed (refused before
    anything is charged otherwise): ``compile_composed`` binds it over columns of no type,
    which takes ``a.k + 1`` of a text key ``k`` for a query that runs. Each part's table is
    its post-processing over made-up groups (``sample_release``), so it reads no data."""
    for groups in SAMPLE_GROUPS:
        tables: dict[str, pa.Table] = {}
        try:
            for i, part in enumerate(composed.parts):
                tables[f"{PART}{i}"] = sample_release(part.plan, engine, groups)
            engine.run(f"SELECT * FROM ({composed.outer})" + (" LIMIT 0" if not groups else ""),
                       tables)
        except duckdb.Error as error:
            if groups and not _fails_on_types(error):
                continue
            raise UnsupportedQueryError(
                f"the query around the releases does not run over their columns: "
                f"{str(error).splitlines()[0]}; the parts release " + "; ".join(
                    f"{name}: {', '.join(f'{f.name} {f.type}' for f in table.schema)}"
                    for name, table in tables.items())) from None


def check_post_process_binds(plan: PrivacyPlan, engine: NoisyEngine) -> None:
    """A query's own post-processing runs over its noisy statistics as typed (refused before
    anything is charged otherwise): ``ROUND(APPROX_QUANTILES(x, 4), 1)`` rounds an array,
    which only DuckDB's binder knows to refuse. Run over made-up groups
    (``sample_release``), so it reads no data. Only a release with an array (a quantile's)
    can fail so, and only DuckDB's refusal of its types is the query's: a made-up value's
    failure is not the data's."""
    if not plan.quantiles:
        return
    for groups in SAMPLE_GROUPS:
        try:
            sample_release(plan, engine, groups)
        except duckdb.Error as error:
            if groups and not _fails_on_types(error):
                continue
            raise UnsupportedQueryError(
                f"the query's expressions around its aggregates do not run over their "
                f"released values: {str(error).splitlines()[0]}; compute them on the "
                "aggregates' types (APPROX_QUANTILES releases an array: read its elements "
                "with [i])") from None


def _typed_null(sql_type: str | None, engine: NoisyEngine) -> str:
    """A NULL of ``sql_type`` where DuckDB parses that type, else an untyped NULL.

    >>> engine = NoisyEngine()
    >>> _typed_null("TIME", engine), _typed_null("STRUCT<A:INT>", engine)
    ('CAST(NULL AS TIME)', 'NULL')
    """
    if sql_type is None:
        return "NULL"
    try:
        engine.run(f"SELECT CAST(NULL AS {sql_type}) LIMIT 0", {})
    except duckdb.Error:
        return "NULL"
    return f"CAST(NULL AS {sql_type})"


SAMPLE_GROUPS = (0, 1)
"""The made-up groups a release is checked over: none, for DuckDB's binder; then one, as
DuckDB casts a column only when it holds a value (``COUNT(*) UNION ALL APPROX_QUANTILES(x,
1)`` binds the count as an array, then fails to cast the first count)."""


def _fails_on_types(error: duckdb.Error) -> bool:
    """DuckDB refused a cast between the types themselves, whatever the value."""
    return isinstance(error, duckdb.ConversionException) and \
        "Unimplemented type for cast" in str(error)


def sample_release(plan: PrivacyPlan, engine: NoisyEngine, groups: int) -> pa.Table:
    """The table a part releases over ``groups`` made-up groups (0 or 1), reading no data:
    its keys NULL of the types the catalog gives their columns (untyped when a key is
    computed, or its type is one DuckDB does not spell: a Spark ``struct<a:int>``), its
    statistics and quantiles 1, its aggregates as the release computes them."""
    keys = ", ".join(_typed_null(plan.column_types.get(k.column), engine) + f' AS "{k.name}"'
                     for k in plan.keys)
    table = engine.run(f"SELECT {keys or 'NULL AS one'} LIMIT {groups}", {})
    table = table if keys else table.drop_columns(["one"])
    ones = np.ones(groups)
    quantiles = {a.name: ones for a in plan.quantiles} | {
        interval_name(a.name, side): ones for a in plan.quantiles
        for side in ("lower", "upper")}
    noisy = NoisyGroups(keys=table, stats={s.name: ones for s in plan.stats},
                        quantiles=quantiles)
    return engine.post_process(plan, noisy)[0]


def noised(plan: PrivacyPlan, exact: pa.Table, sampler: Sampler | None) -> NoisyGroups:
    """The released groups with their noisy statistics (without noise if no ``sampler``)."""
    groups = release_groups(plan, exact)
    return noise_free(plan, groups) if sampler is None else add_noise(plan, groups, sampler)


def released(compiled: CompiledQuery, noisy: NoisyGroups, sampler: Sampler | None, *,
             engine: NoisyEngine) -> Result:
    """The query's SELECT/HAVING over its noisy groups, as a Result."""
    plan = compiled.plan
    table, rows = engine.post_process(plan, noisy)
    private = sampler is not None and sampler.private
    return Result(table=table, plan=plan, groups=noisy, rows=rows,
                  cost=compiled.cost if sampler is not None else Cost(0.0, 0.0),
                  private=private, engine=compiled.bounded.engine)


def release_grouped(grouped: GroupedQuery, exact: tuple[pa.Table, ...],
                    sampler: Sampler | None, *, engine: NoisyEngine) -> Result:
    """Each grouping set released as its own query (selection, noise, HAVING) from its own
    bounded aggregates, then the sets' rows one after another, in the order of the sets
    (an order of the query's text, never of the data). The Result keeps each set's own
    Result, whose intervals it concatenates.

    With ``consistent_totals`` (the default), the counts and sums of the sets whose keys
    are all public are fitted by least squares before HAVING (``dpsql.consistency``), so
    their cells add up; or, where the plan chose it, only the finest set was measured and
    every set's cells are sums of its noisy cells. Post-processing of the noisy values, so
    free."""
    if grouped.finest is not None:
        return _grouped_result(grouped, _summed(grouped, exact[0], sampler), sampler,
                               engine=engine)
    noisy = [noised(part.plan, table, sampler)
             for part, table in zip(grouped.parts, exact, strict=True)]
    if sampler is not None and grouped.consistent_totals:
        stats, scales = consistent([p.plan for p in grouped.parts], [g.stats for g in noisy])
        noisy = [dataclasses.replace(g, stats=st, scales=sc)
                 for g, st, sc in zip(noisy, stats, scales, strict=True)]
    return _grouped_result(grouped, noisy, sampler, engine=engine)


def _summed(grouped: GroupedQuery, exact: pa.Table, sampler: Sampler | None
            ) -> list[NoisyGroups]:
    """Every set's groups from the finest set's noisy cells (``consistency.summed``): each
    set's rows are the product of its keys' domains, in declaration order."""
    plans = [part.plan for part in grouped.set_parts]
    fine = noised(plans[grouped.finest], exact, sampler)
    stats, scales = summed(plans, grouped.finest, fine.stats)
    return [NoisyGroups(keys=public_domain(plan, fine.keys.schema), stats=st, scales=sc)
            for plan, st, sc in zip(plans, stats, scales, strict=True)]


def _grouped_result(grouped: GroupedQuery, noisy: list[NoisyGroups], sampler: Sampler | None,
                    *, engine: NoisyEngine) -> Result:
    parts = tuple(released(part, groups, sampler, engine=engine)
                  for part, groups in zip(grouped.set_parts, noisy, strict=True))
    if grouped.finest is not None:
        parts = tuple(r if i == grouped.finest else dataclasses.replace(r, cost=Cost(0.0, 0.0))
                      for i, r in enumerate(parts))
    return dataclasses.replace(
        parts[0], table=concatenated([r.table for r in parts]), parts=parts, query=grouped,
        cost=grouped.cost if sampler is not None else Cost(0.0, 0.0))


def release_composed(composed: ComposedQuery, exact: tuple[pa.Table, ...],
                     sampler: Sampler | None, *, engine: NoisyEngine) -> Result:
    """Each part released as its own query from its own bounded aggregates, then the
    statement around them run over the released tables (``__dp_part_<i>``): post-processing
    in the engine that holds noisy tables only. The Result keeps each part's Result."""
    parts = tuple(release(part, table, sampler, engine=engine)
                  for part, table in zip(composed.parts, exact, strict=True))
    table = engine.run(composed.outer, {f"{PART}{i}": r.table for i, r in enumerate(parts)})
    return composed_result(composed, table, parts,
                           composed.cost if sampler is not None else Cost(0.0, 0.0))


def noise_free(plan: PrivacyPlan, exact: pa.Table) -> NoisyGroups:
    """The groups as released without noise or selection (quantiles: the true bucket)."""
    stats = {s.name: to_numpy(exact.column(s.name)).astype(float)
             * s.quantum for s in plan.stats}
    return NoisyGroups(keys=exact.select(plan.key_names), stats=stats,
                       quantiles=bounded_quantiles(plan, exact))


def _column(values: np.ndarray) -> pa.Array:
    """Released values as Arrow: a NaN is a value the estimator leaves NULL (a correlation
    without spread), never a number."""
    if values.dtype.kind == "f":
        return from_numpy(values, mask=np.isnan(values))
    return from_numpy(values)


def report_intervals(plan: PrivacyPlan, groups: NoisyGroups,
                     values: dict[str, np.ndarray]) -> dict[str, pa.Array]:
    """The intervals that reports read (``dpsql.analysis.reports``), as noisy-table columns:
    from the noisy values and public noise parameters only, like ``Result.ci``."""
    columns = {}
    rows = np.arange(groups.num_rows)
    for agg in plan.aggregates:
        if not agg.reported:
            continue
        ends = estimator(agg).interval(plan, agg, groups, rows,
                                       np.asarray(values[agg.name], dtype=np.float64),
                                       CONFIDENCE_LEVEL)
        for name, end in zip(interval_columns(agg.name), ends, strict=True):
            columns[name] = end if isinstance(end, pa.Array) else \
                _column(np.asarray(end, dtype=np.float64) + np.zeros(len(rows)))
    return columns


def post_process(plan: PrivacyPlan, groups: NoisyGroups,
                 con: duckdb.DuckDBPyConnection) -> tuple[pa.Table, np.ndarray]:
    """Run the query's SELECT/HAVING/ORDER BY/LIMIT over the noisy table.

    ``con`` must be a DuckDB connection that holds no private data (only noisy
    tables ever enter it). Returns the released table and, per released row,
    the index of its group. Division, ``//`` and ``%`` by a (noisy) zero give NULL
    rather than an error after the budget is spent.
    """
    columns = {name: groups.keys.column(name) for name in groups.keys.column_names}
    values = aggregate_values(plan, groups)
    columns.update({name: _column(np.asarray(v)) for name, v in values.items()})
    columns.update(report_intervals(plan, groups, values))
    columns[ROW_ID] = from_numpy(np.arange(groups.num_rows, dtype=np.int64))
    noisy = pa.table(columns)
    query = guard_division(plan.output, floor=False).sql(dialect="duckdb")
    con.register(NOISY_TABLE, noisy)
    try:
        table = con.sql(query).to_arrow_table()
    finally:
        con.unregister(NOISY_TABLE)
    rows = to_numpy(table.column(ROW_ID))
    return table.drop_columns([ROW_ID]), rows

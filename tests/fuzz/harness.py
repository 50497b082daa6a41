"""The production pipeline on fuzz data, and the checks a bounded answer must pass.

``Engine`` registers the fuzz tables on a real backend (``DuckDBBackend`` or
``SparkBackend``) and builds the catalog with ``dpsql.catalog`` from the types the backend
reports; ``plan`` runs ``dpsql.grouping.compile_statement`` (analysis, rewrite, cost check; for
grouping sets one compiled query per set, for a statement of several releases one per part,
each checked as its own release), ``run`` the backend's ``execute`` with a fixed salt.
Nothing here re-implements a stage.

``check_neighbour`` mirrors ``tests/test_rewrite_bounds.py`` for a whole plan: every cell
of every statistic moves by at most its ``Sensitivity.bound`` when one unit is removed; per
statistic, the changes normalised by the bound have L1 ≤ ``l1`` and L2 ≤ ``l2`` and touch
at most ``cells`` cells; all released cells together at most ``statistics_per_unit``.
The unit count kept only for a truncated-geometric selection moves by at most 1 in at most
``max_groups_per_unit`` groups. Quantile histograms (``dpsql.rewrite.quantiles``) lose weight only
(removing a unit never adds any), at most W_tot in total over at most g groups
(``sensitivity.quantile_weight_limits``).

A statement of several releases (grouping sets, ``dpsql.composed``) is checked part by part
as above, and over all parts: the released cells one unit changes, summed over the parts,
are at most the statement's ``statistics_per_unit``, and the parts' ε and δ, each read as
the decimal its own plan checks, add up to at most the statement's charge. Its release (the
parts' noisy tables, least squares of consistent totals, the query around the parts) must
not fail to bind: a statement accepted but unable to run would be charged for nothing.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import os
from collections.abc import Iterator, Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
from hypothesis import HealthCheck, Phase, settings

import dpsql
from dpsql.analysis.sensitivity import quantile_weight_limits
from dpsql.catalog import Catalog, TableInfo, text_widths
from dpsql.compile import CompiledQuery
from dpsql.composed import Composed
from dpsql.exact import as_fraction
from dpsql.grouping import compile_statement
from dpsql.mechanisms import Sampler, Sensitivity
from dpsql.plan import PrivacyPlan
from dpsql.release import NoisyEngine, check_binds, release
from tests.fuzz.tables import (
    BOUNDS,
    NOT_NULL,
    ODD_STRINGS,
    PUBLIC_KEYS,
    ROW_LEVEL,
    SCHEMA,
    UNIT_TABLES,
    Database,
)

NOISY = NoisyEngine()
"""Where the fuzzed statements' releases are post-processed (as a connection's own)."""

SALT = "fuzz"
EPSILON, DELTA = 1.0, 1e-6
TOLERANCE = 1e-9
_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
          HealthCheck.large_base_example]
_PHASES = [Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink]
"""No explain phase: it reruns a failure hundreds of times to annotate the report."""
settings.register_profile("dpsql-fuzz-short", max_examples=150, derandomize=True, deadline=None,
                          database=None, suppress_health_check=_QUIET, phases=_PHASES)
settings.register_profile("dpsql-fuzz-long",
                          max_examples=int(os.environ.get("DPSQL_FUZZ_EXAMPLES", "2000")),
                          deadline=None, suppress_health_check=_QUIET, phases=_PHASES)
settings.register_profile("dpsql-fuzz-spark",
                          max_examples=int(os.environ.get("DPSQL_FUZZ_SPARK_EXAMPLES", "300")),
                          deadline=None, suppress_health_check=_QUIET, phases=_PHASES)

PUBLIC_WIDTH = max(len(v) for v in ODD_STRINGS if v is not None)
"""The width of the public table's text: its longest value in any fuzzed database."""


def source_seed() -> int | None:
    """The seed of the long and Spark runs: a hash of dpsql's code and the fuzzer's own.

    New code gets new examples, the same code the same ones, so a CI run can be reproduced
    exactly before it happens (and a failure in CI is a failure on a developer's machine).
    ``DPSQL_FUZZ_SEED`` overrides it: a number, or ``random`` for Hypothesis's own seed.
    """
    chosen = os.environ.get("DPSQL_FUZZ_SEED", "")
    if chosen == "random":
        return None
    if chosen:
        return int(chosen)
    root = Path(__file__).resolve().parents[2]
    digest = hashlib.sha256()
    for path in sorted([*root.glob("dpsql/**/*.py"), *root.glob("tests/fuzz/*.py")]):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return int(digest.hexdigest()[:15], 16)


FUZZ_SEED = source_seed()
SHORT = settings.get_profile("dpsql-fuzz-short")
"""The default run: reproducible (derandomized), about half a minute on one core."""
LONG = settings.get_profile("dpsql-fuzz-long")
"""The slow run: thousands of examples (``DPSQL_FUZZ_EXAMPLES`` to change) from
``FUZZ_SEED``, about ten minutes on two cores."""
SPARK = settings.get_profile("dpsql-fuzz-spark")
"""DuckDB against Spark: fewer examples, as Spark takes about a second per query."""

Cells = dict[tuple, dict[str, Any]]
"""Bounded output per group key: statistic → value, histogram → {bucket: weight}."""


class Engine:
    """One backend with the fuzz tables registered; ``load`` swaps in another database.

    On DuckDB the HUGEINT column of ``t`` is a view over text (Arrow has no 128-bit
    integers); on Spark (``spark=True``) the data must be ``Database(spark=True)``.
    """

    def __init__(self, backend: Any, *, spark: bool = False) -> None:
        self.backend = backend
        self.spark = spark
        empty = Database({name: () for name in SCHEMA}, spark)
        self.types = {name: self._register(name, empty) for name in SCHEMA}

    def _register(self, name: str, db: Database) -> Mapping[str, str]:
        columns = SCHEMA[name]
        if self.spark or all(c.view is None for c in columns):
            return self.backend.load(name, db.arrow(name))
        self.backend.load(f"{name}_text", db.arrow(name))
        items = ", ".join(f"CAST({c.name} AS {c.view}) AS {c.name}" if c.view else c.name
                          for c in columns)
        self.backend.con.execute(f"CREATE TEMP VIEW {name} AS SELECT {items} FROM {name}_text")
        described = self.backend.con.execute(f"DESCRIBE {name}").fetchall()
        return {str(row[0]): str(row[1]) for row in described}

    def load(self, db: Database) -> None:
        for name, columns in SCHEMA.items():
            view = not self.spark and any(c.view for c in columns)
            self.backend.load(f"{name}_text" if view else name, db.arrow(name))

    def catalog(self, limits: Mapping[str, Mapping[str, Any]]) -> Catalog:
        catalog = Catalog()
        for name in UNIT_TABLES:
            declared = dict(limits[name])
            own = declared.pop("rows_for", {})
            catalog.add(dataclasses.replace(TableInfo.private(
                name, columns=self.types[name], privacy_unit="pid", bounds=BOUNDS[name],
                public_keys=PUBLIC_KEYS.get(name), not_null=NOT_NULL.get(name, ()),
                **declared), rows_for=own))
        catalog.add(TableInfo.private(ROW_LEVEL, columns=self.types[ROW_LEVEL],
                                      row_privacy=True, bounds=BOUNDS[ROW_LEVEL]))
        # A public table's width is measured from its rows; the fuzzed rows differ from
        # example to example, so this one declares the widest text they hold (ODD_STRINGS).
        catalog.add(TableInfo(name="pub", public=True, columns=text_widths(
            self.types["pub"], None, unit=None, default=PUBLIC_WIDTH, table="pub")))
        return catalog

    def plan(self, sql: str, limits: Mapping[str, Mapping[str, Any]]
             ) -> CompiledQuery | Composed | dpsql.Error:
        """The compiled query (plan and bounded query; with grouping sets or several
        releases, one per set or part), or the error that refused it; a statement of several
        releases is checked to bind as ``Connection.compile`` checks it.

        An InternalError, or any exception that is not a ``dpsql.Error``, is a bug and
        propagates. Public key domains are read from the loaded ``pub``.
        """
        try:
            compiled = compile_statement(sql, self.catalog(limits), default_epsilon=EPSILON,
                                         default_delta=DELTA,
                                         public_values=self.backend.public_values)
            check_binds(compiled, NOISY)  # as the connection compiles
            return compiled
        except dpsql.InternalError:
            raise
        except dpsql.Error as err:
            return err

    def run(self, compiled: CompiledQuery, db: Database | None) -> pa.Table:
        """Execute on ``db`` (None: the database loaded last); a failure on any database is
        a failure of the property."""
        if db is not None:
            self.load(db)
        try:
            return self.backend.execute(compiled, salt=SALT)
        except dpsql.ExecutionError as err:
            raise AssertionError(f"the bounded query raised on this data: {err}\n"
                                 f"{compiled.bounded_sql(self.backend.dialect)}") from err


def canonical(values: pa.ChunkedArray) -> list[Any]:
    """Values comparable across engines and neighbours: dates and times as integers
    (Python cannot hold DuckDB's extreme dates), NaN as a string (NaN ≠ NaN)."""
    kind = values.type
    if pa.types.is_date32(kind):
        values = values.cast(pa.int32())
    elif pa.types.is_temporal(kind):
        values = values.cast(pa.int64())
    return ["NaN" if isinstance(v, float) and math.isnan(v) else v for v in values.to_pylist()]


def cells(plan: PrivacyPlan, table: pa.Table) -> Cells:
    """The bounded output by group key, checked: statistics finite, histogram weights
    non-negative integers in buckets of [0, B)."""
    keys = list(zip(*(canonical(table.column(k.name)) for k in plan.keys), strict=True)) \
        if plan.keys else [()] * table.num_rows
    out: Cells = {}
    for key, row in zip(keys, _rows(plan, table), strict=True):
        assert key not in out, f"group {key} appears twice in the bounded output"
        values: dict[str, Any] = {}
        for spec in plan.stats:
            value = float(row[spec.name])
            assert math.isfinite(value), f"{spec} is {value} in group {key}"
            values[spec.name] = value
        for spec in plan.histograms:
            weights = {e["b"]: e["w"] for e in row[spec.name] or []}
            assert all(0 <= b < spec.buckets and w >= 0 for b, w in weights.items()), weights
            values[spec.name] = weights
        out[key] = values
    return out


def _rows(plan: PrivacyPlan, table: pa.Table) -> list[dict[str, Any]]:
    """The value columns as Python (the key columns may hold dates Python cannot)."""
    names = [s.name for s in plan.stats] + [h.name for h in plan.histograms]
    return table.select(names).to_pylist()


def sensitivities(plan: PrivacyPlan) -> dict[str, Sensitivity]:
    """Each computed statistic's guarantee: its released ``Sensitivity``, or for the unit
    count of a truncated-geometric selection, 1 per group in ``max_groups_per_unit`` groups."""
    found = {s.name: s for s in plan.sensitivities}
    for spec in plan.stats:
        if spec.name not in found:
            assert spec.kind == "units" and plan.selection is not None, \
                f"{spec} is computed but has no sensitivity in the plan"
            groups = plan.selection.max_groups_per_unit
            found[spec.name] = Sensitivity(spec.name, bound=1.0, l1=groups,
                                         l2=math.sqrt(groups), integer=True, cells=groups)
    return found


def check_neighbour(plan: PrivacyPlan, full: Cells, rest: Cells, unit: Any) -> int:
    """D and D − unit differ as the plan allows (see the module docstring); returns the
    released cells the unit changes."""
    keys = set(full) | set(rest)
    released = {s.name for s in plan.sensitivities}
    touched = 0
    for name, stat in sensitivities(plan).items():
        l1 = l2 = 0.0
        changed = 0
        for key in keys:
            diff = abs(full.get(key, {}).get(name, 0.0) - rest.get(key, {}).get(name, 0.0))
            assert diff <= stat.bound * (1 + TOLERANCE), \
                f"removing unit {unit} moves {plan.stat(name)} in group {key} by {diff} > " \
                f"bound {stat.bound}"
            l1 += diff / stat.bound
            l2 += (diff / stat.bound) ** 2
            changed += diff > 0
        assert l1 <= stat.l1 + TOLERANCE, f"unit {unit}: L1 of {name} is {l1} > {stat.l1}"
        assert math.sqrt(l2) <= stat.l2 + TOLERANCE, \
            f"unit {unit}: L2 of {name} is {math.sqrt(l2)} > {stat.l2}"
        assert stat.cells is None or changed <= stat.cells, \
            f"unit {unit} changes {changed} cells of {name} > {stat.cells}"
        touched += changed if name in released else 0
    groups = {spec.name: _check_histogram(plan, spec.name, full, rest, keys, unit)
              for spec in plan.histograms}
    touched += sum(groups[agg.quantile.histogram.name] for agg in plan.quantiles)
    assert touched <= plan.statistics_per_unit, \
        f"unit {unit} changes {touched} cells > {plan.statistics_per_unit}"
    return touched


def _check_histogram(plan: PrivacyPlan, name: str, full: Cells, rest: Cells, keys: set,
                     unit: Any) -> int:
    """Removal only removes weight, W_tot at most, in at most g groups; returns the groups."""
    most, groups = quantile_weight_limits(plan.contribution)
    removed, changed = 0, 0
    for key in keys:
        before, after = full.get(key, {}).get(name, {}), rest.get(key, {}).get(name, {})
        for bucket in set(before) | set(after):
            assert after.get(bucket, 0) <= before.get(bucket, 0), \
                f"removing unit {unit} adds weight to bucket {bucket} of {name} in {key}"
            removed += before.get(bucket, 0) - after.get(bucket, 0)
        changed += before != after
    assert removed <= most, f"unit {unit} carries weight {removed} of {name} > {most}"
    assert changed <= groups, f"unit {unit} changes {changed} groups of {name} > {groups}"
    return changed


def check_query(engine: Engine, db: Database, limits: Mapping[str, Mapping[str, Any]],
                sql: str) -> str:
    """Plan ``sql``; if accepted, run it on ``db`` and every neighbour and check each part,
    the statement as a whole, and its release.

    Returns the outcome (``accepted`` or the refusal's class) for Hypothesis statistics.
    """
    engine.load(db)
    compiled = engine.plan(sql, limits)
    if isinstance(compiled, dpsql.Error):
        return f"refused: {type(compiled).__name__}"
    every = parts(compiled)
    exact = tuple(engine.run(part, None) for part in every)
    full = [cells(part.plan, table) for part, table in zip(every, exact, strict=True)]
    for unit, neighbour, reading in neighbours(db, every):
        engine.load(neighbour)
        touched = sum(check_neighbour(every[i].plan, full[i],
                                      cells(every[i].plan, engine.run(every[i], None)), unit)
                      for i in reading)
        assert touched <= statistics_per_unit(compiled), \
            f"unit {unit} changes {touched} cells over all parts > " \
            f"{statistics_per_unit(compiled)}"
    if isinstance(compiled, Composed):
        check_composed_cost(compiled)
    check_release(compiled, exact if isinstance(compiled, Composed) else exact[0])
    return outcome(compiled)


def outcome(compiled: CompiledQuery | Composed) -> str:
    """``accepted``, or ``accepted: grouping sets`` (``..., summed`` when only the finest
    set is measured) / ``accepted: parts``."""
    if isinstance(compiled, CompiledQuery):
        return "accepted"
    summed = ", summed" if getattr(compiled, "finest", None) is not None else ""
    return f"accepted: {compiled.kind}s{summed}"


def parts(compiled: CompiledQuery | Composed) -> tuple[CompiledQuery, ...]:
    """The queries a statement runs: itself, or one per grouping set or part."""
    return compiled.parts if isinstance(compiled, Composed) else (compiled,)


def statistics_per_unit(compiled: CompiledQuery | Composed) -> int:
    """The released cells one unit can change in the whole statement, as its plan says."""
    return compiled.statistics_per_unit if isinstance(compiled, Composed) else \
        compiled.plan.statistics_per_unit


def neighbours(db: Database, every: tuple[CompiledQuery, ...]
               ) -> Iterator[tuple[Any, Database, list[int]]]:
    """(unit, D − unit, the parts that read the unit's table) for every neighbour: one row
    of the row-level table, or all rows of one person in the unit tables."""
    for tables in ((ROW_LEVEL,), UNIT_TABLES):
        reading = [i for i, p in enumerate(every) if set(p.plan.private_tables) & set(tables)
                   and (tables == (ROW_LEVEL,)) == (ROW_LEVEL in p.plan.private_tables)]
        if reading:
            for unit, neighbour in db.neighbours(tables):
                yield unit, neighbour, reading


def check_composed_cost(compiled: Composed) -> None:
    """The parts' ε and δ add up to at most the statement's charge, in exact rationals."""
    for name in ("epsilon", "delta"):
        spent = sum((as_fraction(getattr(p.cost, name)) for p in compiled.parts), Fraction(0))
        assert spent <= as_fraction(getattr(compiled.cost, name)), \
            f"the parts spend {name} {float(spent)} > the statement's {compiled.cost}"


def check_release(compiled: CompiledQuery | Composed, exact: pa.Table | tuple[pa.Table, ...]
                  ) -> None:
    """The release of the bounded aggregates (seeded noise) runs, or fails on a value only:
    post-processing of noisy values may (it is charged, and answered as a failure), but
    DuckDB's Binder and Catalog errors say SQL was accepted that never runs."""
    try:
        release(compiled, exact, Sampler(0), engine=NOISY)
    except (duckdb.BinderException, duckdb.CatalogException, duckdb.ParserException) as err:
        raise AssertionError(f"the release cannot run: {err}") from err


def check_engines(duck: Engine, spark: Engine, db: Database,
                  limits: Mapping[str, Mapping[str, Any]], sql: str) -> str:
    """Plan ``sql`` on each engine's own catalog: the same plan (or both refuse), and the
    same bounded aggregates on ``db`` with the same salt. Returns the outcome."""
    for engine in (duck, spark):
        engine.load(db)
    compiled, on_spark = duck.plan(sql, limits), spark.plan(sql, limits)
    if isinstance(compiled, dpsql.Error):
        assert isinstance(on_spark, dpsql.Error), f"only DuckDB refuses: {compiled}"
        return f"refused: {type(compiled).__name__}"
    assert not isinstance(on_spark, dpsql.Error), f"only Spark refuses: {on_spark}"
    for duck_part, spark_part in zip(parts(compiled), parts(on_spark), strict=True):
        plan = duck_part.plan
        assert str(spark_part.plan) == str(plan)
        assert cells(plan, spark.run(spark_part, db)) == cells(plan, duck.run(duck_part, db))
    return outcome(compiled)

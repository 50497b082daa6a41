"""The user-facing connection: register tables, ask SQL, get noisy answers.

>>> import dpsql, pyarrow as pa
>>> con = dpsql.connect(budget=dpsql.Budget(epsilon=1.0), seed=7)
>>> con.register("t", pa.table({"pid": [1, 2, 3], "x": [1.0, 2.0, 3.0]}), privacy_unit="pid",
...              bounds={"x": (0, 5)})
>>> res = con.sql("SELECT COUNT(*) AS n FROM t", epsilon=0.5)
>>> res.columns, res.private, con.budget.remaining.epsilon
(['n'], False, 0.5)
"""

from __future__ import annotations

import functools
import secrets
import threading
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa

from dpsql.accounting import Accountant, Budget, Cost
from dpsql.accounting.composition import approx, laplace
from dpsql.accounting.exact import real_number
from dpsql.accounting.guide import delta_warning
from dpsql.accounting.ledger import DATASETS_SEPARATOR, Ledger
from dpsql.accounting.report import query_events
from dpsql.analysis import analyze
from dpsql.backends import DuckDBBackend
from dpsql.cache import AnswerStore, LedgerCache, MemoryCache, answer_key, dump, load
from dpsql.catalog import Catalog, TableInfo, read_toml
from dpsql.dbapi import Cursor
from dpsql.dialect import DIALECTS
from dpsql.errors import (
    ExecutionError,
    InterfaceError,
    ParseError,
    PrivacyError,
    PrivacyWarning,
    ProgrammingError,
    QueryCancelled,
    RoleError,
)
from dpsql.evaluate import UtilityReport, evaluate_utility
from dpsql.explain import Explanation
from dpsql.mechanisms import Sampler
from dpsql.plan import PrivacyPlan
from dpsql.release import NoisyGroups, add_noise, post_process, release_groups
from dpsql.result import Result
from dpsql.rewrite import rewrite

if TYPE_CHECKING:
    from dpsql.backends.spark import SparkBackend

DEFAULT_BUDGET = Budget(epsilon=1.0, delta=1e-6)
DEFAULT_EPSILON = 1.0
DEFAULT_DELTA = 1e-7
SALT_PLACEHOLDER = "__dp_salt_placeholder__"
PLAN_CACHE_SIZE = 512
FAILED_AFTER_READING = (
    "the query failed while reading the data, and its full cost was charged: an accepted query "
    "that fails on some data and not on other data would answer a question for free. This "
    "is a bug in dpsql or an unreadable source; the data owner can check the sources")


class Connection:
    """A connection that answers SQL with differential privacy, on DuckDB or Spark.

    ``backend="spark"`` runs the bounded queries on ``spark``: a SparkSession, a master
    URL such as ``"local[2]"``, or None for ``SparkSession.builder.getOrCreate()``.
    """

    def __init__(self, database: str | duckdb.DuckDBPyConnection = ":memory:", *,
                 backend: str = "duckdb", spark: Any = None,
                 budget: Budget | None = None, catalog: str | Path | None = None,
                 seed: int | None = None, default_epsilon: float = DEFAULT_EPSILON,
                 default_delta: float | None = None, cache: bool = True,
                 ledger: str | Path | None = None, analyst: str = "default",
                 dataset_budgets: Mapping[str, Budget] | None = None,
                 dialect: str = "duckdb", role: str = "owner") -> None:
        role = _known_role(role)
        if role == "analyst" and seed is not None:
            raise RoleError(_owner_only("seed="))
        self.role = "owner"  # until the catalog is loaded
        self.backend = _backend(backend, database, spark)
        self.dialect = _known_dialect(dialect)
        self.catalog = Catalog()
        self.analyst = analyst
        self.budget: Accountant | Ledger
        self.answers: AnswerStore | None
        if ledger is None:
            if dataset_budgets:
                raise PrivacyError("dataset_budgets are kept in a ledger file: pass ledger=...")
            self.budget = Accountant(budget or DEFAULT_BUDGET)
            self.answers = MemoryCache() if cache else None
        else:
            self.budget = Ledger(ledger, budget=budget, analyst=analyst,
                                 dataset_budgets=dataset_budgets)
            self.answers = LedgerCache(self.budget) if cache else None
        self.seed = seed
        self._sources: dict[str, str] = {}
        self._sizes: dict[str, int] = {}
        self._noisy = duckdb.connect()  # post-processing only: never sees private rows
        self._noisy_lock = threading.Lock()
        self._plans: dict[tuple, tuple[PrivacyPlan, str]] = {}
        self.default_epsilon = default_epsilon
        if default_delta is None:
            default_delta = min(DEFAULT_DELTA, self.budget.total.delta)
        self.default_delta = default_delta
        if catalog is not None:
            self._load_catalog(catalog)
        self.role = role

    def _load_catalog(self, path: str | Path) -> None:
        for entry in read_toml(path):
            if entry.public:
                self.register_public(entry.name, entry.source, **entry.options)
            else:
                self.register(entry.name, entry.source, **entry.options)

    def register(self, name: str, source: Any, *, privacy_unit: str | None = None,
                 row_privacy: bool = False, bounds: Mapping[str, Any] | None = None,
                 max_groups_per_unit: int | None = None, max_rows_per_group: int | None = None,
                 max_rows_per_unit: int | None = None,
                 public_keys: Mapping[str, Iterable[Any] | str] | None = None,
                 size: int | None = None) -> None:
        """Register a private table from a file path, DataFrame, Arrow table or table name.

        ``size`` is a public (declared) number of people, used only to warn when a
        query's δ is not well below 1/size; it is never read from the data.
        Owner role only.
        """
        self._require_owner("register()")
        columns = self.backend.load(name, source)
        self._sources[name.lower()] = _fingerprint(source)
        if size is not None:
            self._sizes[name.lower()] = size
        self.catalog.add(TableInfo.private(
            name, columns=columns, privacy_unit=privacy_unit, row_privacy=row_privacy,
            bounds=bounds, max_groups_per_unit=max_groups_per_unit,
            max_rows_per_group=max_rows_per_group, max_rows_per_unit=max_rows_per_unit,
            public_keys=public_keys))

    def register_public(self, name: str, source: Any) -> None:
        """Register a public table (lookups and public group keys; never noised). Owner role
        only."""
        self._require_owner("register_public()")
        columns = self.backend.load(name, source)
        self._sources[name.lower()] = _fingerprint(source)
        self.catalog.add(TableInfo(name=name, columns=columns, public=True))

    def _plan(self, query: str, epsilon: float | None, delta: float | None,
              dialect: str | None = None, quantile_ci: float | None = None) -> PrivacyPlan:
        return self._prepared(query, epsilon, delta, dialect, quantile_ci)[0]

    def _prepared(self, query: str, epsilon: float | None, delta: float | None,
                  dialect: str | None = None, quantile_ci: float | None = None
                  ) -> tuple[PrivacyPlan, str]:
        """The plan and its bounded SQL (salt as a placeholder), memoised per catalog state.

        Plans are frozen and depend only on the query, its dialect, (ε, δ) as passed, the
        defaults and the catalog, so asking the same question again skips parsing, analysis
        and SQL generation. ε and δ left out of the call come from the query's
        WITH DIFFERENTIAL_PRIVACY OPTIONS, else from the connection's defaults.
        """
        read = self.dialect if dialect is None else _known_dialect(dialect)
        if quantile_ci is not None and not 0 < quantile_ci < 1:
            raise ProgrammingError(f"quantile_ci={quantile_ci!r}: give a confidence level "
                                   "between 0 and 1, e.g. quantile_ci=0.95")
        # Checked before the lookup: True == 1 and hashes like it, but is not an ε.
        for name, value in (("epsilon", epsilon), ("delta", delta)):
            if value is not None:
                real_number(name, value, f"Fix: pass {name} as a number")
        key = (query, read, type(epsilon), epsilon, type(delta), delta, self.default_epsilon,
               self.default_delta, self.catalog.version, quantile_ci)
        if key not in self._plans:
            plan = analyze(query, self.catalog, epsilon=epsilon, delta=delta,
                           default_epsilon=self.default_epsilon,
                           default_delta=self.default_delta, dialect=read,
                           public_values=self._public_values, quantile_ci=quantile_ci)
            bounded = self.backend.sql(rewrite(plan, salt=SALT_PLACEHOLDER))
            if len(self._plans) >= PLAN_CACHE_SIZE:
                self._plans.clear()
            self._plans[key] = (plan, bounded)
        return self._plans[key]

    def _public_values(self, table: str, column: str) -> tuple[Any, ...]:
        info = self.catalog.get(table)
        if not info.public:
            raise PrivacyError(f"public_keys refer to {table!r}, which is private; "
                               "register the key list with con.register_public(...)")
        return self.backend.public_values(info.name, column)

    def explain(self, query: str, *, epsilon: float | None = None,
                delta: float | None = None, dialect: str | None = None,
                quantile_ci: float | None = None) -> Explanation:
        """What ``query`` would release and cost. Touches no data, spends nothing."""
        return Explanation.of(self._plan(query, epsilon, delta, dialect, quantile_ci))

    def sql(self, query: str, *, epsilon: float | None = None, delta: float | None = None,
            seed: int | None = None, dialect: str | None = None,
            quantile_ci: float | None = None) -> Result:
        """Answer ``query`` with (epsilon, delta)-DP noise; charge the budget first.

        ``dialect`` ("duckdb", "postgres", "bigquery" or "spark"; default: the
        connection's) is the SQL dialect ``query`` is written in. ``quantile_ci`` (e.g.
        0.95) also releases a confidence interval for every quantile (``Result.ci``), with
        two more exponential mechanisms per quantile that share the query's ε.
        """
        if self.backend.closed:
            raise InterfaceError("the connection is closed: open a new one with dpsql.connect()")
        if seed is not None:
            self._require_owner("seed=")
        plan, bounded = self._prepared(query, epsilon, delta, dialect, quantile_ci)
        seed = self.seed if seed is None else seed
        key = self._answer_key(plan, bounded) if seed is None else None
        cached = self.answers.get(key) if key and self.answers is not None else None
        if cached is not None:
            return load(cached, plan)
        self._warn_about_delta(plan)
        events = plan_events(plan)
        dataset = DATASETS_SEPARATOR.join(plan.private_tables)
        self.budget.check(plan.cost.epsilon, plan.cost.delta, events, dataset=dataset)
        _verify_cost(plan)
        charge = functools.partial(self.budget.charge, plan.cost.epsilon, plan.cost.delta,
                                   query=query, dataset=dataset, plan=str(plan), events=events)
        try:
            exact = release_groups(plan, self._bounded_aggregates(bounded, seed))
        except QueryCancelled:
            raise
        except Exception:
            # Whether a query fails must never depend on the data unpaid: charge, then say
            # nothing of why (the engine's message may quote private values).
            charge(mechanism=f"{plan.mechanism} (failed while reading the data)")
            raise ExecutionError(FAILED_AFTER_READING) from None
        charge(mechanism=plan.mechanism)
        sampler = Sampler(seed)
        result = self._released(plan, add_noise(plan, exact, sampler), private=sampler.private)
        if key and self.answers is not None:
            self.answers.put(key, dump(result))
        return result

    def _bounded_aggregates(self, bounded: str, seed: int | None) -> pa.Table:
        """Run the bounded query with a fresh secret salt (or one derived from ``seed``)."""
        salt = secrets.token_hex(16) if seed is None else f"seed{seed}"
        return self.backend.run_sql(bounded.replace(SALT_PLACEHOLDER, salt))

    def _released(self, plan: PrivacyPlan, groups: NoisyGroups, *, private: bool,
                  cost: Cost | None = None) -> Result:
        """Post-process noisy groups into the Result the analyst sees."""
        with self._noisy_lock:
            table, rows = post_process(plan, groups, self._noisy)
        return Result(table=table, plan=plan, groups=groups, rows=rows,
                      cost=plan.cost if cost is None else cost, private=private)

    def evaluate(self, query: str, *, runs: int = 100, epsilon: float | None = None,
                 delta: float | None = None, level: float = 0.95,
                 quantile_ci: float | None = None) -> UtilityReport:
        """Utility of ``query`` for a data owner who may see the table: MAE, relative error
        and CI coverage over ``runs`` seeded releases. Not private; spends no budget. Owner
        role only."""
        self._require_owner("evaluate()")
        return evaluate_utility(self, query, runs=runs, epsilon=epsilon, delta=delta,
                                level=level, quantile_ci=quantile_ci)

    def report(self):
        """Spending under every composition method, GDP µ and its tightness (no data read)."""
        return self.budget.report()

    def cursor(self) -> Cursor:
        """A PEP 249 cursor on this connection."""
        return Cursor(self)

    def execute(self, query: str, parameters: Sequence[Any] | None = None, *,
                epsilon: float | None = None, delta: float | None = None,
                seed: int | None = None, dialect: str | None = None) -> Cursor:
        """Run ``query`` with ``?`` parameters bound safely; fetch from the returned cursor."""
        return self.cursor().execute(query, parameters, epsilon=epsilon, delta=delta,
                                     seed=seed, dialect=dialect)

    def read_parquet(self, path: str | Path, *, name: str | None = None,
                     **options: Any) -> str:
        """Register a parquet file as a private table (options as for ``register``)."""
        return self._read(path, name, options)

    def read_csv(self, path: str | Path, *, name: str | None = None, **options: Any) -> str:
        """Register a CSV file as a private table (options as for ``register``)."""
        return self._read(path, name, options)

    def _read(self, path: str | Path, name: str | None, options: dict[str, Any]) -> str:
        name = name or Path(path).stem
        self.register(name, str(path), **options)
        return name

    def commit(self) -> None:
        """PEP 249: nothing to commit (dpsql never writes data; spends commit at once)."""

    def _require_owner(self, what: str) -> None:
        if self.role != "owner":
            raise RoleError(_owner_only(what))

    def _answer_key(self, plan: PrivacyPlan, bounded: str) -> str:
        tables = sorted({*(t.lower() for t in plan.tables), *self._public_tables(plan)})
        sources = ";".join(f"{t}={self._sources.get(t, '')}" for t in tables)
        return answer_key(analyst=self.analyst, bounded_sql=bounded,
                          epsilon=plan.cost.epsilon, delta=plan.cost.delta, sources=sources)

    def _public_tables(self, plan: PrivacyPlan) -> set[str]:
        infos = [self.catalog.get(t) for t in plan.private_tables]
        return {v.lower() for info in infos for v in info.public_keys.values()
                if isinstance(v, str)}

    def _warn_about_delta(self, plan: PrivacyPlan) -> None:
        message = delta_warning(plan.cost.delta, self._sizes.get(plan.table.lower()))
        if message:
            warnings.warn(message, PrivacyWarning, stacklevel=3)

    def close(self) -> None:
        self.backend.close()
        self._noisy.close()
        if isinstance(self.budget, Ledger):
            self.budget.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _backend(name: str, database: str | duckdb.DuckDBPyConnection,
             spark: Any) -> DuckDBBackend | SparkBackend:
    """The backend that runs bounded queries: ``duckdb`` (default) or ``spark``."""
    if name == "duckdb":
        if spark is not None:
            raise InterfaceError("spark= is an option of backend='spark'; pass both, or neither "
                                 "for DuckDB")
        return DuckDBBackend(database)
    if name == "spark":
        if not (isinstance(database, str) and database == ":memory:"):
            raise InterfaceError("backend='spark' reads no DuckDB database: drop the database "
                                 "argument and pass spark=<SparkSession or master URL>")
        from dpsql.backends.spark import SparkBackend

        return SparkBackend(spark)
    raise InterfaceError(f"unknown backend {name!r}: use 'duckdb' (default) or 'spark'")


def _verify_cost(plan: PrivacyPlan) -> None:
    """The charge must cover exactly what the noise, selection and quantiles use."""
    plan.verify_cost()


def plan_events(plan: PrivacyPlan) -> tuple:
    """The mechanisms a query releases, as the accountant composes them.

    Each quantile is an exponential mechanism, pure ε-DP: the generic ``laplace(ε)`` event
    (steps=1 is valid for any ε-DP mechanism).
    """
    events: list = []
    noise, selection = plan.noise, plan.selection
    geometric = selection is not None and selection.truncated_geometric
    if noise is not None:
        multiplier = noise.unit_scale / noise.l2 if noise.kind == "gaussian" else 0.0
        threshold_delta = selection.delta if selection is not None and not geometric else 0.0
        events += query_events(noise.kind, noise.epsilon, multiplier, threshold_delta)
    if geometric:
        events.append(approx(selection.epsilon, selection.delta))
    events += [laplace(m.epsilon) for agg in plan.quantiles for m in agg.quantile.mechanisms]
    return tuple(events)


ROLES = ("owner", "analyst")
"""Who holds the connection (docs/privacy.md, "Roles"): the data owner, who may see the
data, or an analyst, who may only receive noisy answers."""


def _known_role(role: str) -> str:
    if role not in ROLES:
        raise InterfaceError(f"role={role!r}: use 'owner' (the data owner, the default) or "
                             "'analyst' (noisy answers only)")
    return role


def _owner_only(what: str) -> str:
    return (f"{what} is a data-owner tool that reveals or reproduces un-noised values; this "
            "connection has role='analyst', which receives noisy answers only. Ask the data "
            "owner, or use an owner connection (role='owner') if you are the owner")


def _known_dialect(name: str) -> str:
    """``name`` in lower case if dpsql reads that dialect; ParseError otherwise."""
    if not isinstance(name, str) or name.lower() not in DIALECTS:
        raise ParseError(f"unknown SQL dialect {name!r}: dpsql reads "
                         f"{', '.join(repr(d) for d in DIALECTS)}")
    return name.lower()


def _fingerprint(source: Any) -> str:
    """What identifies a source's content across processes (files: path, size, mtime)."""
    if isinstance(source, str | Path) and Path(source).exists():
        stat = Path(source).stat()
        return f"file:{Path(source).resolve()}:{stat.st_size}:{stat.st_mtime_ns}"
    if isinstance(source, str):
        return f"table:{source}"
    return f"object:{id(source)}"


def connect(database: str | duckdb.DuckDBPyConnection = ":memory:", **options: Any) -> Connection:
    """Open a dpsql connection (see :class:`Connection` for the options)."""
    return Connection(database, **options)


_default: Connection | None = None


def default_connection() -> Connection:
    """The module-level connection behind ``dpsql.sql(...)`` (in memory, default budget)."""
    global _default
    if _default is None:
        _default = Connection()
    return _default


def sql(query: str, **options: Any) -> Result:
    """``dpsql.sql(...)`` on the default connection, like ``duckdb.sql``."""
    return default_connection().sql(query, **options)


def execute(query: str, parameters: Sequence[Any] | None = None, **options: Any) -> Cursor:
    """``dpsql.execute(...)`` on the default connection, like ``duckdb.execute``."""
    return default_connection().execute(query, parameters, **options)


def register(name: str, source: Any, **options: Any) -> None:
    """``dpsql.register(...)`` on the default connection."""
    default_connection().register(name, source, **options)

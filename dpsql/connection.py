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

import dataclasses
import difflib
import inspect
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa

from dpsql import listing, suggest
from dpsql.accounting import Accountant, Budget, BudgetKeeper, Cost
from dpsql.accounting import defaults as shares
from dpsql.accounting.guide import delta_warning
from dpsql.accounting.values import Left, total, without_delta
from dpsql.backends import Backend, DuckDBBackend
from dpsql.cache import (
    AnswerStore,
    LedgerCache,
    MemoryCache,
    Registered,
    answer_key,
    dump,
    fingerprint,
    load,
)
from dpsql.catalog import (
    Catalog,
    CatalogFile,
    TableInfo,
    WorkLimits,
    column_class,
    read_toml,
    text_widths,
)
from dpsql.compile import CompiledQuery, fresh_salt, seeded_salt
from dpsql.composed import Composed
from dpsql.dialect import DIALECTS
from dpsql.errors import (
    BoundsNeeded,
    BudgetExceededError,
    CatalogError,
    DeltaNeeded,
    ExecutionError,
    InterfaceError,
    ParseError,
    PrivacyError,
    PrivacyWarning,
    ProgrammingError,
    QueryCancelled,
    RoleError,
)
from dpsql.exact import real_number
from dpsql.grouping import compile_statement, run_bounded
from dpsql.listing import Listing
from dpsql.mechanisms import Sampler
from dpsql.plan import PrivacyPlan
from dpsql.release import NoisyEngine, check_binds, release
from dpsql.result import Result
from dpsql.statements import Statements

if TYPE_CHECKING:
    from dpsql.dbapi import Cursor
    from dpsql.evaluate import UtilityReport
    from dpsql.explain import Explanation

# What only some connections or calls use is imported where it is used: the owner's tools
# (dpsql.owner), the durable ledger, the PEP 249 cursor, the utility evaluation and
# explain(). A process that connects and asks one query loads none of them
# (docs/benchmarks.md, "Start-up"; tests/test_startup.py).

DEFAULT_BUDGET = Budget(epsilon=1.0, delta=1e-6)
DEFAULT_DELTA = 1e-7
PLAN_CACHE_SIZE = 512
FAILED_AFTER_READING = (
    "the query failed while reading the data, and its full cost was charged (it is charged "
    "before the engine starts): an accepted query that fails on some data and not on other "
    "data would answer a question for free. This is a bug in dpsql or an unreadable source; "
    "the data owner can check the sources")


def declared_budget(declared: CatalogFile, path: str | Path) -> Budget | None:
    """The total budget a TOML catalog declares in ``[budget]``, or None if it has none.

    >>> import pathlib, tempfile
    >>> toml = pathlib.Path(tempfile.mkdtemp(), "c.toml")
    >>> _ = toml.write_text("[budget]\\nepsilon = 3\\ndelta = 1e-7\\n")
    >>> str(declared_budget(read_toml(toml), toml))
    'ε=3, δ=1e-07'
    """
    if not declared.budget:
        return None
    try:
        return Budget(**declared.budget)
    except PrivacyError as err:
        raise CatalogError(f"catalog {str(path)!r}, [budget]: {err}") from None


class Connection:
    """A connection that answers SQL with differential privacy, on DuckDB or Spark.

    ``backend="spark"`` runs the bounded queries on ``spark``: a SparkSession, a master
    URL such as ``"local[2]"``, or None for ``SparkSession.builder.getOrCreate()``.
    A ``catalog=`` file's ``[engine]`` section stands for ``backend=`` (and, for Spark, its
    ``master`` and ``config`` for ``spark=``) when none is given.
    With ``ledger=`` the budget is kept in that file: ``budget=None`` uses the one stored
    for ``analyst``, and ``reset_budget=True`` replaces it (what was spent stays spent).
    A ``catalog=`` file's ``[budget]`` section stands for ``budget=`` when none is given.
    ``limits`` (a ``WorkLimits``, or a catalog file's ``[limits]``) bound what one row may
    cost; ``statement_timeout`` (seconds) cancels a query that runs longer, charged in full
    if its engine had started (``dpsql.statements``).

    A query given no ε spends ``default_epsilon`` if one is passed, else a tenth of the ε
    the budget has left (``dpsql.accounting.defaults``; docs/accounting.md, "The default
    ε"); every Result says what it cost and what is left (``Result.cost``, ``Result.left``).
    """

    def __init__(self, database: str | duckdb.DuckDBPyConnection = ":memory:", *,
                 backend: str | None = None, spark: Any = None,
                 budget: Budget | None = None, catalog: str | Path | None = None,
                 seed: int | None = None, default_epsilon: float | None = None,
                 default_delta: float | None = None, cache: bool = True,
                 ledger: str | Path | None = None, analyst: str = "default",
                 dataset_budgets: Mapping[str, Budget] | None = None,
                 dialect: str = "duckdb", role: str = "owner",
                 reset_budget: bool = False, limits: WorkLimits | None = None,
                 statement_timeout: float | None = None) -> None:
        role = _known_role(role)
        if role == "analyst" and seed is not None:
            raise RoleError(_owner_only("seed="))
        self.role = "owner"  # until the catalog is loaded
        declared = read_toml(catalog) if catalog is not None else None
        self.backend = _backend(backend, database, spark,
                                declared.engine if declared is not None else {})
        self.statements = Statements(self.backend.interrupt,
                                     timeout=_timeout(statement_timeout))
        self.dialect = _known_dialect(dialect)
        if limits is None and declared is not None and declared.limits:
            limits = WorkLimits(**declared.limits)
        self.catalog = Catalog(limits)
        if budget is None and declared is not None:
            budget = declared_budget(declared, catalog)
        if budget is not None and not isinstance(budget, Budget):
            raise ProgrammingError(
                f"budget={budget!r}: pass dpsql.Budget(epsilon=..., delta=...), e.g. "
                "dpsql.connect(budget=dpsql.Budget(epsilon=1.0, delta=1e-6))")
        self.analyst = analyst
        self.budget: BudgetKeeper
        self.answers: AnswerStore | None
        self.budget, self.answers = _keepers(budget, ledger=ledger, analyst=analyst,
                                             dataset_budgets=dataset_budgets,
                                             reset_budget=reset_budget, cache=cache)
        self.seed = seed
        self._sources: dict[str, Any] = {}  # as registered; fingerprinted when asked
        self._sizes: dict[str, int] = {}
        self._noisy = NoisyEngine()  # post-processing only: never sees private rows
        self._compiled: dict[tuple, CompiledQuery | Composed] = {}
        if default_epsilon is not None:
            real_number("default_epsilon", default_epsilon, "Fix: pass the ε of a query as a "
                        "number, or leave it out for a tenth of what the budget has left")
        self._default_epsilon = default_epsilon
        if default_delta is None:
            default_delta = min(DEFAULT_DELTA, self.budget.total.delta)
        self.default_delta = default_delta
        if declared is not None:
            self._load_catalog(declared, catalog)
        self.role = role

    def _load_catalog(self, declared: CatalogFile, path: str | Path) -> None:
        for entry in declared.tables:
            register = self.register_public if entry.public else self.register
            known = [p for p in inspect.signature(register).parameters if p not in
                     ("name", "source")]
            for key in entry.options:
                if key not in known:
                    close = difflib.get_close_matches(key, known, n=1)
                    hint = f"did you mean `{close[0]}`? " if close else ""
                    raise CatalogError(
                        f"catalog {str(path)!r}, table {entry.name!r}: unknown key `{key}`; "
                        f"{hint}the keys are {', '.join(known)}")
            register(entry.name, entry.source, **entry.options)

    def register(self, name: str, source: Any, *, privacy_unit: str | None = None,
                 row_privacy: bool = False, bounds: Mapping[str, Any] | None = None,
                 max_groups_per_unit: int | None = None, max_rows_per_group: int | None = None,
                 max_rows_per_unit: int | None = None,
                 public_keys: Mapping[str, Iterable[Any] | str] | None = None,
                 size: int | None = None, options: Mapping[str, Any] | None = None,
                 max_text_length: Mapping[str, int] | None = None,
                 not_null: Iterable[str] = ()) -> None:
        """Register a private table from a file path, DataFrame, Arrow table or table name.

        ``not_null`` names columns that hold no NULL (a fact of the schema, declared like
        bounds and enforced like them: a NULL read anyway counts as a value, the middle of
        the column's bounds). COUNT(x) of such a column is COUNT(*), so a query asking
        COUNT(*) beside AVG(x) or SUM(x) draws one count for all (docs/mechanisms.md §12).

        ``max_text_length`` gives the most characters of a text column's values (e.g.
        ``{"notes": 20000}``); a longer value is read cut to it, and undeclared text columns
        take the connection's ``WorkLimits.default_text_length`` (docs/privacy.md, Timing).

        ``size`` is a public (declared) number of people, used only to warn when a
        query's δ is not well below 1/size; it is never read from the data. ``options``
        are the file reader's (DuckDB's ``read_csv``/``read_parquet`` options, e.g.
        ``{"delim": ";", "types": {"age": "INTEGER"}}``); a path may be a glob.
        Owner role only.
        """
        self.require_owner("register()")
        columns = self.backend.load(name, source, options)
        self._sources[name.lower()] = _as_registered(source)
        if size is not None:
            self._sizes[name.lower()] = size
        self.catalog.add(TableInfo.private(
            name, columns=columns, privacy_unit=privacy_unit, row_privacy=row_privacy,
            bounds=bounds, max_groups_per_unit=max_groups_per_unit,
            max_rows_per_group=max_rows_per_group, max_rows_per_unit=max_rows_per_unit,
            public_keys=public_keys, max_text_length=max_text_length,
            default_text_length=self.catalog.limits.default_text_length, not_null=not_null))

    def register_public(self, name: str, source: Any, *,
                        options: Mapping[str, Any] | None = None) -> None:
        """Register a public table (lookups and public group keys; never noised); ``options``
        as for ``register``. Owner role only."""
        self.require_owner("register_public()")
        columns = self.backend.load(name, source, options)
        self._sources[name.lower()] = _as_registered(source)
        texts = [c for c, t in columns.items() if column_class(t) == "string"]
        widths = self.backend.text_widths(name, texts)  # public data: measured, then cut to
        self.catalog.add(TableInfo(name=name, public=True, columns=text_widths(
            columns, widths, unit=None, default=self.catalog.limits.default_text_length,
            table=name)))

    def compile(self, query: str, *, epsilon: float | None = None,
                delta: float | None = None, dialect: str | None = None,
                quantile_ci: float | None = None) -> CompiledQuery | Composed:
        """The query compiled against the catalog: plan, bounded query, cost. No data read.

        Compiled queries are frozen and depend only on the query, its dialect, (ε, δ) as
        passed, the defaults and the catalog, so asking the same question again skips
        parsing, analysis and SQL generation. ε and δ left out of the call come from the
        query's WITH DIFFERENTIAL_PRIVACY OPTIONS, else from the connection's defaults.
        """
        return self._compile(query, epsilon=epsilon, delta=delta, dialect=dialect,
                             quantile_ci=quantile_ci, default=self._query_epsilon(epsilon))

    @property
    def default_epsilon(self) -> float:
        """The ε a query given none would spend now: the ``default_epsilon`` passed to
        ``connect``, else a tenth of the ε the budget has left (0.0 when nothing is left;
        ``dpsql.accounting.defaults``). It reads the ledger, never the data."""
        if self._default_epsilon is not None:
            return self._default_epsilon
        return shares.default_epsilon(self.left())

    def left(self) -> Left:
        """What the budget has left now (ε and δ; ρ and δ for a ρ-zCDP budget)."""
        return shares.left(self.budget)

    def _query_epsilon(self, epsilon: float | None) -> float:
        """The default ε for a query asked with ``epsilon`` (only read when that is None);
        BudgetExceededError, spending nothing, when the budget has nothing left."""
        if epsilon is not None:
            return 1.0  # unused: the call's ε wins; a constant keeps the plan cache's key
        default = self.default_epsilon
        if default <= 0:
            raise BudgetExceededError(
                f"query refused, nothing was spent: the budget ({self.budget.total}) has "
                f"{self.left()} left, and a query without ε spends a tenth of the ε left. "
                "Ask the data owner for a new budget")
        return default

    def _compile(self, query: str, *, epsilon: float | None, delta: float | None,
                 dialect: str | None, quantile_ci: float | None, default: float,
                 remaining: tuple[float, float] | None = None) -> CompiledQuery | Composed:
        """``compile``; ``default``: the ε if neither the call nor the query gives one;
        ``remaining``: the (ε, δ) the query has left after paying for the bounds it needed
        estimated, in place of its own (ε, δ) however given."""
        read = self.dialect if dialect is None else _known_dialect(dialect)
        if quantile_ci is not None and not 0 < quantile_ci < 1:
            raise ProgrammingError(f"quantile_ci={quantile_ci!r}: give a confidence level "
                                   "between 0 and 1, e.g. quantile_ci=0.95")
        # Checked before the lookup: True == 1 and hashes like it, but is not an ε.
        for name, value in (("epsilon", epsilon), ("delta", delta)):
            if value is not None:
                real_number(name, value, f"Fix: pass {name} as a number")
        key = (query, read, type(epsilon), epsilon, type(delta), delta, default,
               self.default_delta, self.catalog.version, quantile_ci, remaining)
        if key not in self._compiled:
            if len(self._compiled) >= PLAN_CACHE_SIZE:
                self._compiled.clear()
            try:
                compiled = compile_statement(
                    query, self.catalog, epsilon=epsilon, delta=delta,
                    default_epsilon=default, default_delta=self.default_delta,
                    dialect=read, public_values=self._public_values, quantile_ci=quantile_ci,
                    remaining=remaining, engine=self.backend.traits)
            except DeltaNeeded as need:
                raise DeltaNeeded(f"{need}{without_delta(self.budget.total)}") from None
            check_binds(compiled, self._noisy)
            self._compiled[key] = compiled
        return self._compiled[key]

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
        from dpsql.explain import Explanation

        return Explanation.of(self.compile(query, epsilon=epsilon, delta=delta,
                                           dialect=dialect, quantile_ci=quantile_ci))

    def sql(self, query: str, *, epsilon: float | None = None, delta: float | None = None,
            seed: int | None = None, dialect: str | None = None,
            quantile_ci: float | None = None) -> Result | Listing:
        """Answer ``query`` with (epsilon, delta)-DP noise, charged before it is returned.

        ``SHOW TABLES`` and ``DESCRIBE table`` are answered from the catalog (a ``Listing``,
        free).

        ``dialect`` ("duckdb", "postgres", "bigquery" or "spark"; default: the
        connection's) is the SQL dialect ``query`` is written in. ``quantile_ci`` (e.g.
        0.95) also releases a confidence interval for every quantile (``Result.ci``), with
        two more exponential mechanisms per quantile that share the query's ε.
        """
        if (listing := self._listing(query, dialect)) is not None:
            return listing
        seed = self._usable(seed)
        with self.statements.statement():
            result = self._answer(query, epsilon=epsilon, delta=delta, seed=seed,
                                  dialect=dialect, quantile_ci=quantile_ci)
        return dataclasses.replace(result, left=self.left())

    def cancel(self) -> None:
        """Cancel the query this connection is answering, from another thread: free if the
        engine has not started reading data, charged in full if it has (a cancel's timing
        tells how long the query ran; ``dpsql.statements``). It then raises QueryCancelled."""
        self.statements.cancel()

    def _answer(self, query: str, *, epsilon: float | None, delta: float | None,
                seed: int | None, dialect: str | None,
                quantile_ci: float | None) -> Result:
        """``sql`` for a query: compiled, answered from the cache or charged, run, released.

        Its cost is the whole charge of the statement: the estimates of ``"auto"`` bounds
        and limits it paid for first, and its own."""
        remaining, default, estimates = None, self._query_epsilon(epsilon), []
        while True:  # each estimate turns one "auto" column into bounds: this ends
            try:
                compiled = self._compile(query, epsilon=epsilon, delta=delta, dialect=dialect,
                                         quantile_ci=quantile_ci, default=default,
                                         remaining=remaining)
                break
            except BoundsNeeded as need:
                from dpsql import owner

                remaining, paid = owner.estimate_first(self, need)
                estimates.append(paid)
        result = self._answer_compiled(compiled, query, seed)
        if not estimates:
            return result
        return dataclasses.replace(result, cost=total([*estimates, result.cost]))

    def _answer_compiled(self, compiled: CompiledQuery | Composed, query: str,
                         seed: int | None) -> Result:
        """The answer to a compiled query: from the cache (free), or charged and run."""
        if seed is not None or self.answers is None or isinstance(compiled, Composed):
            # Grouping sets and several releases are answered afresh (and charged) each
            # time they are asked.
            return self._run(compiled, query, seed)
        key = self._answer_key(compiled)
        with self.statements.asking(self.answers.scope, key):
            if (cached := self._cached(compiled, key)) is not None:
                return cached
            if isinstance(self.answers, LedgerCache):
                return self._run_held(compiled, query, key)
            return self._keep(compiled, key, self._run(compiled, query, seed))

    def _run(self, compiled: CompiledQuery | Composed, query: str,
             seed: int | None) -> Result:
        """Charge the query, then run it and release its noisy answer."""
        self._warn_about_delta(compiled)
        with self.statements.reading(lambda: self._charge(compiled, query)):
            exact = self._execute(compiled, seed)
            return self._release(compiled, exact, Sampler(seed))

    def _run_held(self, compiled: CompiledQuery, query: str, key: str) -> Result:
        """Hold the question's cost in the ledger, run it, then commit its charge and its
        answer together (``Ledger.hold``, ``Ledger.settle``); while another process answers
        the same question, wait for its answer (a cancel then is free)."""
        from dpsql.accounting.ledger import QuestionBusy

        self._warn_about_delta(compiled)
        while True:
            try:
                return self._answer_held(self.answers.ledger, compiled, query, key)
            except QuestionBusy:
                self.statements.pause()

    def _answer_held(self, ledger: Any, compiled: CompiledQuery, query: str,
                     key: str) -> Result:
        cost, plan = compiled.cost, compiled.plan
        answered: list[bytes | None] = []

        def hold() -> Cost:
            answered.append(ledger.hold(key, cost.epsilon, cost.delta,
                                        dataset=compiled.dataset, events=compiled.events))
            return cost if answered[0] is None else Cost(0.0, 0.0)

        def settle(answer: bytes | None) -> bytes | None:
            return ledger.settle(key, cost.epsilon, cost.delta, query=query, answer=answer,
                                 dataset=compiled.dataset, plan=str(plan),
                                 mechanism=plan.mechanism, events=compiled.events)

        with self.statements.reading(hold):
            if answered[0] is not None:
                return load(answered[0], compiled)
            try:
                result = self._release(compiled, self._execute(compiled, None), Sampler(None))
            except BaseException:
                settle(None)  # it read data: charged, with no answer to keep
                raise
            data = dump(result)
            stored = settle(data)
        return result if stored == data else load(stored, compiled)

    def tables(self) -> Listing:
        """The registered tables from the catalog: kind, privacy unit, declared limits (SQL:
        ``SHOW TABLES``). No data is read."""
        return listing.tables(self.catalog)

    def describe(self, table: str) -> Listing:
        """The columns of ``table`` from the catalog: type, role (privacy unit, public key)
        and declared bounds (SQL: ``DESCRIBE table``). No data is read."""
        return listing.describe(self.catalog, table)

    def _listing(self, query: str, dialect: str | None) -> Listing | None:
        """SHOW TABLES and DESCRIBE answered from the catalog; None for a query."""
        found = listing.statement(query, dialect or self.dialect) if isinstance(query, str) \
            else None
        if found is None:
            return None
        kind, table = found
        return self.tables() if kind == "tables" else self.describe(table)

    def _usable(self, seed: int | None) -> int | None:
        """The seed of this query (the connection's if none given), on an open connection."""
        if self.backend.closed:
            raise InterfaceError("the connection is closed: open a new one with dpsql.connect()")
        if seed is not None:
            self.require_owner("seed=")
        return self.seed if seed is None else seed

    def _execute(self, compiled: CompiledQuery | Composed, seed: int | None
                 ) -> pa.Table | tuple[pa.Table, ...]:
        """The exact bounded aggregates, with a fresh secret salt (or a seed's).

        Whether a query fails must never depend on the data unpaid: it was charged before
        the engine started, and a failure is reported without its cause (the engine's
        message may quote private values).
        """
        salt = fresh_salt() if seed is None else seeded_salt(seed)
        try:
            return self.statements.run(lambda: run_bounded(self.backend, compiled, salt))
        except QueryCancelled:
            raise
        except Exception:
            raise ExecutionError(FAILED_AFTER_READING) from None

    def _charge(self, compiled: CompiledQuery | Composed, query: str) -> Cost:
        """Charge the query in full, durably, before its engine may read data; what it cost.

        A budget that cannot pay refuses the query here, before any data is read."""
        grouped = isinstance(compiled, Composed)
        self.budget.charge(compiled.cost.epsilon, compiled.cost.delta, query=query,
                           dataset=compiled.dataset,
                           plan=str(compiled if grouped else compiled.plan),
                           mechanism=compiled.mechanism if grouped else compiled.plan.mechanism,
                           events=compiled.events)
        return compiled.cost

    def _keep(self, compiled: CompiledQuery, key: str, result: Result) -> Result:
        """Store the paid answer for the same question asked again; the answer to return.

        If another process answered the same question first, its answer is returned: one
        question has one released value (``Ledger.cache_put``)."""
        data = dump(result)
        stored = self.answers.put(key, data)
        return result if stored == data else load(stored, compiled)

    def _release(self, compiled: CompiledQuery | Composed,
                 exact: pa.Table | tuple[pa.Table, ...], sampler: Sampler | None) -> Result:
        """``release``, after the charge; a failure there is answered generically (it may
        depend on the data)."""
        try:
            return release(compiled, exact, sampler, engine=self._noisy)
        except Exception:
            raise ExecutionError(FAILED_AFTER_READING) from None

    def _cached(self, compiled: CompiledQuery, key: str) -> Result | None:
        """The answer given before to the same question (``key``)."""
        data = self.answers.get(key)
        return None if data is None else load(data, compiled)

    def evaluate(self, query: str, *, runs: int = 100, epsilon: float | None = None,
                 delta: float | None = None, level: float = 0.95,
                 quantile_ci: float | None = None) -> UtilityReport:
        """Utility of ``query`` for a data owner who may see the table: MAE, relative error
        and CI coverage over ``runs`` seeded releases. Not private; spends no budget. Owner
        role only."""
        self.require_owner("evaluate()")
        from dpsql.evaluate import evaluate_utility

        return evaluate_utility(self, query, runs=runs, epsilon=epsilon, delta=delta,
                                level=level, quantile_ci=quantile_ci)

    def suggest_bounds(self, table: str, *, epsilon: float, delta: float,
                       group_by: str | None = None,
                       coverage: float = suggest.COVERAGE) -> suggest.BoundsSuggestion:
        """Propose value bounds and contribution limits for ``table`` from its data,
        privately, for ``group_by`` queries if given; the catalog is not changed. A paid
        release (``dpsql.owner.suggest_bounds``)."""
        from dpsql import owner

        return owner.suggest_bounds(self, table, epsilon=epsilon, delta=delta,
                                    group_by=group_by, coverage=coverage)

    def bounding_report(self, query: str, *, epsilon: float, delta: float,
                        dialect: str | None = None) -> suggest.BoundingReport:
        """What the query's contribution limits and clamps cut, estimated privately, with
        the fix when they surely cut 5% or more. A paid release
        (``dpsql.owner.bounding_report``)."""
        from dpsql import owner

        return owner.bounding_report(self, query, epsilon=epsilon, delta=delta,
                                     dialect=dialect)

    def estimate_bounds(self, table: str, column: str, *, epsilon: float,
                        delta: float) -> tuple[float, float]:
        """Estimate the bounds of a column declared ``bounds="auto"``; they then stand in
        the catalog. A paid release (``dpsql.owner.estimate_bounds``). Returns (lo, hi)."""
        from dpsql import owner

        return owner.estimate_bounds(self, table, column, epsilon=epsilon, delta=delta)

    def estimate_limits(self, table: str, *, epsilon: float, delta: float) -> int:
        """Estimate a ``max_rows_per_unit="auto"``; it then stands in the catalog. A paid
        release (``dpsql.owner.estimate_limits``). Returns it."""
        from dpsql import owner

        return owner.estimate_limits(self, table, epsilon=epsilon, delta=delta)

    def report(self):
        """Spending under every composition method, GDP µ and its tightness (no data read)."""
        return self.budget.report()

    def cursor(self) -> Cursor:
        """A PEP 249 cursor on this connection."""
        from dpsql.dbapi import Cursor

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

    def require_owner(self, what: str) -> None:
        """Raise RoleError unless this is a data owner's connection (docs/privacy.md, Roles)."""
        if self.role != "owner":
            raise RoleError(_owner_only(what))

    def _answer_key(self, compiled: CompiledQuery) -> str:
        plan = compiled.plan
        tables = sorted({*(t.lower() for t in plan.tables), *self._public_tables(plan)})
        sources = ";".join(f"{t}={fingerprint(self._sources[t]) if t in self._sources else ''}"
                           for t in tables)
        return answer_key(analyst=self.analyst, compiled=compiled, sources=sources)

    def _public_tables(self, plan: PrivacyPlan) -> set[str]:
        infos = [self.catalog.get(t) for t in plan.private_tables]
        return {v.lower() for info in infos for v in info.public_keys.values()
                if isinstance(v, str)}

    def _warn_about_delta(self, compiled: CompiledQuery) -> None:
        message = delta_warning(compiled.cost.delta,
                                self._sizes.get(compiled.plan.table.lower()))
        if message:
            warnings.warn(message, PrivacyWarning, stacklevel=3)

    def close(self) -> None:
        self.backend.close()
        self._noisy.close()
        self.budget.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _keepers(budget: Budget | None, *, ledger: str | Path | None, analyst: str,
             dataset_budgets: Mapping[str, Budget] | None, reset_budget: bool,
             cache: bool) -> tuple[BudgetKeeper, AnswerStore | None]:
    """The keeper of the budget and the store of answers beside it (None: no cache): both
    in memory, or both in the ledger file, where other processes share them."""
    if ledger is None:
        if dataset_budgets:
            raise PrivacyError("dataset_budgets are kept in a ledger file: pass ledger=...")
        return Accountant(budget or DEFAULT_BUDGET), MemoryCache() if cache else None
    from dpsql.accounting.ledger import Ledger

    kept = Ledger(ledger, budget=budget, analyst=analyst, dataset_budgets=dataset_budgets,
                  reset_budget=reset_budget)
    return kept, LedgerCache(kept) if cache else None


def _backend(name: str | None, database: str | duckdb.DuckDBPyConnection, spark: Any,
             declared: Mapping[str, Any]) -> Backend:
    """The backend that runs bounded queries: ``duckdb`` (default) or ``spark``; what is not
    given comes from the catalog's ``[engine]`` (``declared``)."""
    config = None
    if name is None:
        name = declared.get("name", "duckdb")
        if name == "spark" and spark is None:
            spark, config = declared.get("master"), declared.get("config")
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

        return SparkBackend(spark, config=config)
    raise InterfaceError(f"unknown backend {name!r}: use 'duckdb' (default) or 'spark'")


def spark_session(master: str | None = None,
                  config: Mapping[str, str] | None = None) -> tuple[Any, bool]:
    """A SparkSession for several connections to share (``spark=`` of each), and whether
    this call started it: the process's active one, else a new quiet one on ``master``
    with ``config`` (``dpsql.backends.spark.start_session``). ``dpsql serve`` on Spark
    runs every session on one."""
    from dpsql.backends.spark import start_session

    return start_session(master, config)


ROLES = ("owner", "analyst")
"""Who holds the connection (docs/privacy.md, "Roles"): the data owner, who may see the
data, or an analyst, who may only receive noisy answers."""


def _timeout(seconds: float | None) -> float | None:
    if seconds is None:
        return None
    real_number("statement_timeout", seconds, "Fix: pass the seconds a query may run")
    if not 0 < seconds < 10**7:
        raise InterfaceError(f"statement_timeout={seconds!r}: give the seconds a query may run "
                             "(more than 0), or None for no limit")
    return float(seconds)


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


def _as_registered(source: Any) -> Any:
    """What the answer cache fingerprints for a source: a path or name as given, a Python
    object as a fresh registration token (``dpsql.cache.Registered``)."""
    return source if isinstance(source, str | Path) else Registered()

"""The compile stage: SQL text to a ``CompiledQuery`` — the plan, the bounded query, the cost.

A compiled query carries everything that does not depend on the data: the frozen
``PrivacyPlan`` (what each person can change and which noise releases it), the bounded
query that enforces the plan on the connection's engine (its strategy, ``Bounding``, chosen
from the plan and the engine's traits; its secret salt a query parameter, bound per run),
its cost, and the mechanism events the accountant composes (its *privacy map*, in
OpenDP's words). Building one checks that the cost is exactly what the mechanisms spend.
Nothing here reads data or spends budget; ``explain()`` is a printed ``CompiledQuery``.

>>> from dpsql.catalog import Catalog, TableInfo
>>> cat = Catalog()
>>> _ = cat.add(TableInfo.private("t", columns={"pid": "INT", "k": "VARCHAR"}, privacy_unit="pid",
...                               max_groups_per_unit=2))
>>> q = compile_query("SELECT k, COUNT(*) FROM t GROUP BY k", cat, epsilon=1, delta=1e-6)
>>> q.cost, q.salted, [e.kind for e in q.events]
(Cost(epsilon=1.0, delta=1e-06), True, ['laplace', 'approx'])
>>> "$__dp_salt" in q.bounded_sql("duckdb"), ":__dp_salt" in q.bounded_sql("spark")
(True, True)
"""

from __future__ import annotations

import functools
import hashlib
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import duckdb
import pyarrow as pa
from sqlglot import exp

from dpsql.accounting.composition import MechanismEvent, approx, laplace
from dpsql.accounting.report import query_events
from dpsql.accounting.values import DATASETS_SEPARATOR, Cost
from dpsql.analysis import analyze
from dpsql.canonical import canonical, text
from dpsql.catalog import Catalog
from dpsql.engines import DUCKDB, EngineTraits
from dpsql.errors import UnsupportedQueryError
from dpsql.expr.totality import guard_division
from dpsql.plan import NOISY_TABLE, ROW_ID, Bounding, PrivacyPlan
from dpsql.rewrite import BoundedQuery, rewrite
from dpsql.rewrite.digest import SALT, salt_parameters

NOT_RELEASED = frozenset({("CompiledQuery", "sql"), ("PrivacyPlan", "sql"),
                          ("BoundedQuery", "engine")})
"""What ``CompiledQuery.release_digest`` leaves out, as (class, field): the analyst's text. All
it means is in the other fields (the plan, the bounded query, the query after the noise), and
nothing after compiling reads it (explain() shows it, the ledger records it), so the same
question spelled differently is the same question. The engine's traits are in the bounded
query's tree and its strategy (``Bounding``), which the digest keeps."""


@dataclass(frozen=True)
class CompiledQuery:
    """A query ready to run: plan, bounded query, cost and accounting events (frozen)."""

    sql: str
    plan: PrivacyPlan
    bounded: BoundedQuery
    events: tuple[MechanismEvent, ...]

    def __post_init__(self) -> None:
        self.plan.verify_cost()  # the charge must be exactly what the mechanisms use
        check_post_processing(self.plan)

    @classmethod
    def of(cls, plan: PrivacyPlan, engine: EngineTraits = DUCKDB) -> CompiledQuery:
        """The compiled form of an analysed plan: its bounded query on ``engine`` and its
        events."""
        return cls(sql=plan.sql, plan=plan, bounded=rewrite(plan, engine),
                   events=privacy_events(plan))

    @property
    def bounding(self) -> Bounding:
        """The bounded query's strategy, its options and why it was chosen."""
        return self.bounded.bounding

    @property
    def cost(self) -> Cost:
        return self.plan.cost

    @property
    def dataset(self) -> str:
        """The ledger's name for the private tables the query reads (their budgets)."""
        return DATASETS_SEPARATOR.join(self.plan.private_tables)

    @functools.cached_property
    def release_digest(self) -> str:
        """The SHA-256 of everything that decides what this query releases, as canonical JSON
        (``dpsql.canonical``): every field of the plan, the bounded query and the events
        (selection and its floor, bounds, each mechanism's ε, δ and scale, quantile levels,
        the query after the noise), but ``NOT_RELEASED``. The same in every process; the
        answer cache's key is built from it."""
        data = text(canonical(self, leave_out=NOT_RELEASED))
        return hashlib.sha256(data.encode()).hexdigest()

    @functools.cached_property
    def read_parameters(self) -> frozenset[str]:
        """The names of the query parameters the bounded query reads."""
        return frozenset(p.name for p in self.bounded.ast.find_all(exp.Placeholder))

    @property
    def salted(self) -> bool:
        """Whether the bounded query reads the salt parameter (it chooses groups by hash)."""
        return SALT in self.read_parameters

    def bounded_sql(self, dialect: str | None = None, *, pretty: bool = False) -> str:
        """The bounded query as ``dialect`` SQL (by default its engine's); the salt is the
        parameter ``SALT``."""
        if dialect in (None, self.bounded.engine.name) and not pretty:
            return self._engine_sql
        return self.bounded.sql(dialect, pretty=pretty)

    @functools.cached_property
    def _engine_sql(self) -> str:
        return self.bounded.sql()

    def named(self, table: pa.Table) -> pa.Table:
        """An engine's result with the group keys under the plan's names. Engines name a
        bare column reference by the column's own spelling (DuckDB and Spark answer
        ``SELECT k`` over a column ``K`` with a column ``K``), while the plan reads its
        key names, which are lower case."""
        keys = {k.name.lower(): k.name for k in self.plan.keys}
        return table.rename_columns([keys.get(c.lower(), c) for c in table.column_names])

    def parameters(self, salt: str) -> dict[str, Any]:
        """The query parameters to bind when the bounded query runs: the salt, and the
        keyed constants of ``digest.unit_order`` that the query reads."""
        return salt_parameters(salt, self.read_parameters)


def compile_query(sql: str, catalog: Catalog, *, epsilon: float | None = None,
                  delta: float | None = None, default_epsilon: float = 1.0,
                  default_delta: float = 0.0, dialect: str = "duckdb",
                  public_values: Callable[[str, str], tuple[Any, ...]] | None = None,
                  quantile_ci: float | None = None,
                  remaining: tuple[float, float] | None = None,
                  engine: EngineTraits = DUCKDB) -> CompiledQuery:
    """Analyse ``sql`` against ``catalog`` and build its bounded query for ``engine`` (no
    data read).

    ε and δ come from the call, else from the query's WITH DIFFERENTIAL_PRIVACY OPTIONS,
    else from the defaults; ``remaining`` replaces them with what is left after the bounds
    the query needed were estimated. ``public_values(table, column)`` reads public key lists.
    """
    options = {} if public_values is None else {"public_values": public_values}
    plan = analyze(sql, catalog, epsilon=epsilon, delta=delta, default_epsilon=default_epsilon,
                   default_delta=default_delta, dialect=dialect, quantile_ci=quantile_ci,
                   remaining=remaining, **options)
    return CompiledQuery.of(plan, engine)


def check_post_processing(plan: PrivacyPlan) -> None:
    """Bind the query after the noise to an empty noisy table, so that SQL no engine can run
    on released rows (a window or a query over a release taking the AVG of a text key, ...)
    is refused before any data is read, not after the budget is spent.

    Other outputs need no check: the post-processing whitelist binds by construction.
    """
    output = plan.output
    if output is None or not output.find(exp.Window, exp.Subquery, exp.Qualify):
        return
    types = {k.name: plan.column_types.get(k.column) or "VARCHAR" for k in plan.keys}
    types.update({a.name: "BIGINT" if a.kind.startswith("count") else "DOUBLE"
                  for a in plan.aggregates})
    types[ROW_ID] = "BIGINT"
    columns = ", ".join(f"{exp.to_identifier(n, quoted=True).sql('duckdb')} {t}"
                        for n, t in types.items())
    con = duckdb.connect()
    try:
        con.execute(f'CREATE TABLE "{NOISY_TABLE}" ({columns})')
        con.execute(guard_division(output, floor=False).sql(dialect="duckdb"))
    except duckdb.Error as err:
        reason = str(err).split("\n")[0]
        raise UnsupportedQueryError(
            f"the query after the noise cannot run on the released rows ({reason}); check "
            "what it reads: released keys keep their column's type, aggregates are numbers"
        ) from None
    finally:
        con.close()


def privacy_events(plan: PrivacyPlan) -> tuple[MechanismEvent, ...]:
    """The mechanisms a query releases, as the accountant composes them.

    Each quantile is an exponential mechanism, pure ε-DP: the generic ``laplace(ε)`` event
    (steps=1 is valid for any ε-DP mechanism).
    """
    events: list[MechanismEvent] = []
    noise, selection = plan.noise, plan.selection
    separate = selection is not None and selection.separate
    if noise is not None:
        multiplier = noise.unit_scale / noise.l2 if noise.kind == "gaussian" else 0.0
        threshold_delta = selection.delta if selection is not None and not separate else 0.0
        events += query_events(noise.kind, noise.epsilon, multiplier, threshold_delta)
    if separate:
        events.append(approx(selection.epsilon, selection.delta))
    events += [laplace(m.epsilon) for agg in plan.quantiles for m in agg.quantile.mechanisms]
    return tuple(events)


def fresh_salt() -> str:
    """A secret salt for one run: 128 bits from the OS CSPRNG."""
    return secrets.token_hex(16)


def seeded_salt(seed: int) -> str:
    """The predictable salt of a seeded (not private) run, the same on every backend."""
    return f"seed{seed}"

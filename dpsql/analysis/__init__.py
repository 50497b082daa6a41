"""The analysis stage: SQL AST to PrivacyPlan through an ordered tuple of passes.

>>> import sqlglot
>>> from dpsql.catalog import Catalog, TableInfo
>>> cat = Catalog()
>>> _ = cat.add(TableInfo.private("visits", columns={"pid": "INT", "cost": "DOUBLE"},
...                               privacy_unit="pid", bounds={"cost": (0, 100)}))
>>> plan = analyze("SELECT SUM(cost) FROM visits", cat, epsilon=1.0, delta=0.0)
>>> plan.noise.kind, plan.statistics_per_unit, plan.cost.epsilon
('laplace', 1, 1.0)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlglot import exp

from dpsql.analysis.aggregates import collect_aggregates
from dpsql.analysis.draft import Context, Draft
from dpsql.analysis.options import check_options, check_public_groups, read_options
from dpsql.analysis.outer import nest_release, split_release
from dpsql.analysis.relations import resolve_source
from dpsql.analysis.sensitivity import calibrate, contribution_limits, measure_sensitivity
from dpsql.analysis.shape import (
    check_auto_limits,
    check_names,
    check_statement,
    check_where,
    resolve_keys,
    resolve_table,
)
from dpsql.analysis.work import check_row_work
from dpsql.catalog import Catalog
from dpsql.dialect import DIALECTS
from dpsql.errors import InternalError
from dpsql.mechanisms import validate_privacy
from dpsql.parse import parse
from dpsql.plan import Cost, PrivacyPlan

PASSES: tuple[Callable[[Draft, Context], Draft], ...] = (
    check_names,
    split_release,
    read_options,
    check_statement,
    resolve_source,
    resolve_table,
    check_auto_limits,
    check_options,
    check_where,
    resolve_keys,
    check_public_groups,
    collect_aggregates,
    check_row_work,
    nest_release,
    contribution_limits,
    measure_sensitivity,
    calibrate,
)


def _no_public_tables(table: str, column: str) -> tuple[Any, ...]:
    raise InternalError(f"no reader for public table {table!r}")


def analyze(sql: str | exp.Expression, catalog: Catalog, *, epsilon: float | None = None,
            delta: float | None = None, default_epsilon: float = 1.0,
            default_delta: float = 0.0, dialect: str = "duckdb",
            public_values: Callable[[str, str], tuple[Any, ...]] = _no_public_tables,
            quantile_ci: float | None = None,
            remaining: tuple[float, float] | None = None) -> PrivacyPlan:
    """Run every pass over the query and return its frozen PrivacyPlan.

    ε and δ come from the call, else from the query's WITH DIFFERENTIAL_PRIVACY OPTIONS,
    else from the defaults; the call and the options must agree where both give one.
    ``quantile_ci`` (a level such as 0.95) also releases an interval for each quantile.
    ``remaining``: the (ε, δ) left after estimating the bounds the query needed, which
    then replaces the query's own (``Connection.sql``).
    """
    ast = parse(sql, dialect=dialect) if isinstance(sql, str) else sql
    text = sql if isinstance(sql, str) else sql.sql(dialect=DIALECTS[dialect])
    draft = Draft(sql=text, ast=ast, epsilon=default_epsilon if epsilon is None else epsilon,
                  delta=default_delta if delta is None else delta, quantile_ci=quantile_ci)
    ctx = Context(catalog=catalog, public_values=public_values, call_epsilon=epsilon,
                  call_delta=delta, remaining=remaining)
    for step in PASSES:
        draft = step(draft, ctx)
    return _to_plan(draft)


def privacy_parameters(ast: exp.Expression, catalog: Catalog, *, epsilon: float | None,
                       delta: float | None, default_epsilon: float, default_delta: float,
                       remaining: tuple[float, float] | None = None) -> tuple[float, float]:
    """The (ε, δ) ``analyze`` would give the whole query, validated: the call's, else its
    WITH DIFFERENTIAL_PRIVACY OPTIONS', else the defaults; ``remaining`` replaces them."""
    draft = Draft(sql="", ast=ast, epsilon=default_epsilon if epsilon is None else epsilon,
                  delta=default_delta if delta is None else delta, quantile_ci=None)
    ctx = Context(catalog=catalog, public_values=_no_public_tables, call_epsilon=epsilon,
                  call_delta=delta, remaining=remaining)
    draft = read_options(check_names(draft, ctx), ctx)
    return validate_privacy(draft.epsilon, draft.delta)


def _to_plan(draft: Draft) -> PrivacyPlan:
    return PrivacyPlan(
        sql=draft.sql, table=(draft.private_tables or (draft.table.name,))[0],
        relation=draft.relation if draft.relation is not None else draft.table.name,
        tables=draft.tables or (draft.table.name,),
        private_tables=draft.private_tables or (draft.table.name,),
        privacy_unit=draft.table.privacy_unit, where=draft.where, keys=draft.keys,
        stats=draft.stats, sensitivities=draft.sensitivities, aggregates=draft.aggregates,
        contribution=draft.contribution, noise=draft.noise, selection=draft.selection,
        output=draft.output, columns=draft.columns,
        cost=Cost(epsilon=draft.epsilon, delta=draft.cost_delta),
        column_types=dict(draft.table.columns), column_bounds=dict(draft.table.bounds),
        row_work=draft.row_work, reads=draft.reads,
    )

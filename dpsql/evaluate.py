"""Utility reports for data owners: how far noisy answers fall from the bounded truth.

A data owner who may see the whole table can ask how useful a query would be
before publishing it: ``con.evaluate(sql, runs=100)`` releases it ``runs``
times with seeded noise (so NOT private, and charged to no budget) and compares
each cell with the exact *bounded* value — the answer with the same clamps and
contribution limits and no noise — reporting the mean absolute error, the mean
relative error, and how often the ``level`` confidence interval covered it.
Groups that partition selection hid count as not released.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

from dpsql.compile import CompiledQuery, seeded_salt
from dpsql.composed import Composed
from dpsql.errors import UnsupportedQueryError
from dpsql.grouping import run_bounded
from dpsql.mechanisms import Sampler
from dpsql.release import NoisyEngine, release
from dpsql.render import html_table
from dpsql.result import Result

if TYPE_CHECKING:
    from dpsql.backends import Backend


class Owned(Protocol):
    """What an evaluation needs of a connection (``dpsql.connection.Connection``): the
    owner's role, its compiler and its engine."""

    backend: Backend

    def require_owner(self, what: str) -> None:
        """Raise RoleError unless the connection is a data owner's."""

    def compile(self, query: str, *, epsilon: float | None = None,
                delta: float | None = None, quantile_ci: float | None = None
                ) -> CompiledQuery:
        """``query`` compiled against the catalog; no data read."""


@dataclass(frozen=True)
class ColumnUtility:
    """Errors of one aggregate column over every released cell of every run."""

    name: str
    mae: float
    relative_error: float
    coverage: float
    cells: int


@dataclass(frozen=True)
class UtilityReport:
    sql: str
    runs: int
    level: float
    released_share: float
    columns: tuple[ColumnUtility, ...]

    def _repr_html_(self) -> str:
        """The report for notebooks: one row per aggregate column."""
        rows = [[c.name, f"{c.mae:.4g}", f"{c.relative_error:.2%}", f"{c.coverage:.1%}",
                 str(c.cells)] for c in self.columns]
        return html_table(["column", "MAE", "relative error", f"{self.level:.0%} CI coverage",
                           "cells"], rows, str(self).splitlines()[0])

    def __str__(self) -> str:
        lines = [f"{self.runs} runs; {self.released_share:.1%} of true groups released"]
        lines += [f"  {c.name}: MAE {c.mae:.4g}, relative error {c.relative_error:.2%}, "
                  f"{self.level:.0%} CI coverage {c.coverage:.1%} ({c.cells} cells)"
                  for c in self.columns]
        return "\n".join(lines)


def truth(con: Owned, compiled: CompiledQuery | Composed, seed: int) -> Result:
    """The bounded answer without noise, for the same (seeded) choice of groups per unit.
    Owner role only."""
    con.require_owner("the noise-free answer")
    exact = run_bounded(con.backend, compiled, seeded_salt(seed))
    return release(compiled, exact, None, engine=NoisyEngine())


def evaluate_utility(con: Owned, query: str, *, runs: int, epsilon: float | None,
                     delta: float | None, level: float,
                     quantile_ci: float | None = None) -> UtilityReport:
    """See the module docstring. Owner role only."""
    con.require_owner("evaluate()")
    compiled = con.compile(query, epsilon=epsilon, delta=delta, quantile_ci=quantile_ci)
    if isinstance(compiled, Composed):
        raise UnsupportedQueryError(
            "evaluate() of ROLLUP, CUBE or GROUPING SETS, or of several releases in one "
            "statement, is not supported yet: evaluate each grouping set or part as its own "
            "query at its share of epsilon (explain() shows each)")
    plan, engine = compiled.plan, NoisyEngine()
    keys = [c.name for c in plan.columns if c.aggregate is None]
    aggregates = [c.name for c in plan.columns if c.aggregate is not None]
    errors = {name: [] for name in aggregates}
    relative = {name: [] for name in aggregates}
    covered = {name: [] for name in aggregates}
    released = total = 0
    for seed in range(runs):
        groups = con.backend.execute(compiled, salt=seeded_salt(seed))
        exact = {tuple(row[k] for k in keys): row
                 for row in release(compiled, groups, None, engine=engine).table.to_pylist()}
        noisy_result = release(compiled, groups, Sampler(seed), engine=engine)
        bounds = noisy_result.ci(level).to_pylist()
        total += len(exact)
        for row in bounds:
            expected = exact.get(tuple(row[k] for k in keys))
            if expected is None:
                continue
            released += 1
            for name in aggregates:
                diff = abs(row[name] - expected[name])
                errors[name].append(diff)
                relative[name].append(diff / max(abs(expected[name]), 1.0))
                lower, upper = row[f"{name}_lower"], row[f"{name}_upper"]
                if lower is not None:  # a quantile without quantile_ci has no interval
                    covered[name].append(lower <= expected[name] <= upper)
    columns = tuple(ColumnUtility(name, float(np.mean(errors[name] or [np.nan])),
                                  float(np.mean(relative[name] or [np.nan])),
                                  float(np.mean(covered[name] or [np.nan])), len(errors[name]))
                    for name in aggregates)
    return UtilityReport(sql=query, runs=runs, level=level,
                         released_share=released / total if total else 0.0, columns=columns)

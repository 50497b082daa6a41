"""The rewrite enforces the plan's sensitivity on adversarial data.

For every unit u of a hostile dataset we run the bounded query on D and on
D − u (same salt) and check what the privacy proof needs: every cell moves by
at most its L∞ bound, the normalised L1/L2 over all cells stay within the
plan's, and no more cells change than the plan says one unit can touch.
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest
from sqlglot import exp

from dpsql.compile import CompiledQuery
from dpsql.engines import DUCKDB
from dpsql.expr.nodes import SUM_BOUND, ExactSum
from tests.support import (
    BACKEND,
    LIMITS,
    QUERIES,
    assert_neighbours_within_plan,
    hostile_table,
    make_plan,
    run_bounded,
)

NEIGHBOUR_QUERIES = [
    *QUERIES,
    # At the default limits, counts alone choose each unit's group over its rows.
    "SELECT k, flag, COUNT(x), COUNT(DISTINCT pid) FROM t WHERE flag < 2 OR k IS NULL "
    "GROUP BY k, flag",
]


@pytest.mark.parametrize("limits", LIMITS, ids=lambda d: ",".join(f"{v}" for v in d.values()))
@pytest.mark.parametrize("sql", NEIGHBOUR_QUERIES)
def test_removing_any_unit_moves_cells_within_the_plan(sql, limits):
    assert_neighbours_within_plan(make_plan(sql, **limits), hostile_table())


def test_hostile_values_never_escape_the_bounds():
    plan = make_plan("SELECT k, SUM(x), AVG(x) FROM t GROUP BY k", max_rows_per_group=2,
                     max_groups_per_unit=12)
    out = run_bounded(hostile_table(), plan, salt="s")
    for cells in out.values():
        for statistic in plan.sensitivities:
            assert math.isfinite(cells[statistic.name])


def test_group_choice_does_not_depend_on_values():
    """Same units and keys, different values: the same (unit, group) pairs survive."""
    plan = make_plan("SELECT k, COUNT(DISTINCT pid), SUM(x) FROM t GROUP BY k",
                     max_groups_per_unit=2, max_rows_per_group=3)
    table = hostile_table()
    other = table.set_column(2, "x", pa.array(np.zeros(table.num_rows)))
    units = next(s.name for s in plan.stats if s.kind == "units")
    a = {k: v[units] for k, v in run_bounded(table, plan, salt="s").items()}
    b = {k: v[units] for k, v in run_bounded(other, plan, salt="s").items()}
    assert a == b


def test_fresh_salt_changes_which_groups_are_kept():
    plan = make_plan("SELECT k, COUNT(*) FROM t GROUP BY k", max_groups_per_unit=1)
    outputs = {repr(sorted(run_bounded(hostile_table(), plan, salt=s).items()))
               for s in ("a", "b", "c", "d")}
    assert len(outputs) > 1


BOUNDED_SUMS = [*QUERIES,
                "SELECT k, VAR_POP(x) FROM t GROUP BY k",
                "SELECT k, MEDIAN(x) FROM t GROUP BY k", "SELECT QUANTILE_CONT(x, 0.9) FROM t",
                "SELECT k, SUM(x, contribution_bounds_per_group => (-3, 20)), "
                "AVG(x, contribution_bounds_per_group => (0, 100)) FROM t GROUP BY k"]


@pytest.mark.parametrize("limits", LIMITS, ids=lambda d: ",".join(f"{v}" for v in d.values()))
@pytest.mark.parametrize("sql", BOUNDED_SUMS)
def test_every_bounded_exact_sum_adds_only_values_within_its_bound(sql, limits):
    """The Spark backend adds the values of an exact SUM with a bound (``SUM_BOUND``) in
    16-bit limbs of BIGINT, sized by that bound; a value beyond it would overflow a limb.
    Each such value is checked here on hostile data: DuckDB's error() fires on any
    value above its bound, so the query fails."""
    plan = make_plan(sql, **limits)
    compiled = CompiledQuery.of(plan)
    tree = compiled.bounded.ast.copy()
    sums = [node for node in tree.find_all(ExactSum) if SUM_BOUND in node.meta]
    assert sums, "no bounded sum to check"
    for node in sums:
        value = node.this
        beyond = exp.GT(this=exp.Abs(this=value.copy()),
                        expression=exp.Literal.number(node.meta[SUM_BOUND]))
        fail = exp.Anonymous(this="error", expressions=[exp.Literal.string("over its bound")])
        value.replace(exp.Case(ifs=[exp.If(this=beyond, true=fail)], default=value.copy()))
    BACKEND.load("t", hostile_table())
    BACKEND.run_sql(tree.sql(DUCKDB.dialect), compiled.parameters("s"))

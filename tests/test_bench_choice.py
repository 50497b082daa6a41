"""bench_choice builds each group-choice strategy that fits a query through dpsql's planner
(``choose.bounding``, ``rewrite(plan, engine, bounding)``), not by editing dpsql's SQL; the
strategies that keep the same pairs must give dpsql's bounded result row for row, so a
strategy that drifts from the others fails here before it skews a benchmark."""

from __future__ import annotations

import sys

import pytest

from dpsql.engines import ENGINES
from dpsql.rewrite import rewrite
from dpsql.rewrite.choose import bounding, choose
from tests.benchmarks import bench_choice
from tests.benchmarks.bench_matrix import QUERIES, Dataset
from tests.test_choose import QUERIES as PLANS
from tests.test_choose import plan


@pytest.mark.parametrize("g", [1, 3])
@pytest.mark.parametrize("query", sorted(QUERIES))
def test_the_strategies_that_fit_a_query_agree_with_dpsqls_choice(query, g):
    data = Dataset(3000, "most", g)
    con, _ = data.connect(str(g))
    compiled = con.compile(QUERIES[query][0], epsilon=1.0, delta=1e-6)
    candidates = bench_choice.strategies(compiled.plan, list(bench_choice.FITS))
    assert next(iter(candidates)) == compiled.bounding.strategy
    assert len(candidates) >= (1 if query == "median" else 2)
    bench_choice.checked(con, compiled, candidates, nobody_over=False)  # raises if they differ
    data.close()


@pytest.mark.parametrize(("sql", "limits", "strategy"), PLANS)
def test_the_chosen_strategy_given_by_name_is_the_chosen_one(sql, limits, strategy):
    for engine in ENGINES.values():
        analysed = plan(sql, limits)
        chosen = choose(analysed, engine)
        assert bounding(chosen.strategy, analysed, engine) == chosen
        assert rewrite(analysed, engine, chosen) == rewrite(analysed, engine)


def test_the_benchmark_runs(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["bench_choice", "--rows", "2000", "--groups", "1",
                                      "--shares", "half", "--repeats", "1"])
    bench_choice.main()
    table = capsys.readouterr().out.split("| rows |")[1]
    assert "first_group_of_rows (g=1) *" in table and "first_pair (g=1, packed)" in table

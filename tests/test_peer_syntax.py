"""The SQL of peer systems: ZetaSQL's WITH ANONYMIZATION and ANON_* aggregates, BigQuery's
group_selection_strategy, SmartNoise's VAR/STD and T-SQL's TOP (docs/sql.md).

Each older spelling must compile to the *same* bounded query as the syntax it stands for, so
that it inherits that syntax's privacy proof; the neighbour checks re-prove it on hostile data.
"""

from __future__ import annotations

import pytest

import dpsql
from dpsql.analysis import analyze
from dpsql.catalog import Catalog, TableInfo
from dpsql.compile import CompiledQuery
from dpsql.dialect import DIALECTS, dialect, parse_one
from tests.support import COLUMNS, assert_neighbours_within_plan, hostile_table


def catalog(**limits) -> Catalog:
    cat = Catalog()
    cat.add(TableInfo.private("t", columns=COLUMNS, privacy_unit="pid", bounds={"x": (-2, 10)},
                              public_keys={"flag": [0, 1, 2]}, **limits))
    return cat


def bounded_sql(sql: str, **limits) -> str:
    plan = analyze(sql, catalog(**limits), epsilon=1.0, delta=1e-6)
    return CompiledQuery.of(plan).bounded_sql()


# --- parsing -------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(DIALECTS))
def test_every_dialect_reads_the_older_syntax_and_prints_it_back(name):
    sql = ("SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-05, kappa = 2) k, "
           "ANON_COUNT(*), ANON_COUNT(x CLAMPED BETWEEN 0 AND 3), ANON_SUM(x + 1 CLAMPED "
           "BETWEEN -1 AND 5), ANON_AVG(x), ANON_VAR_POP(x CLAMPED BETWEEN 0 AND 1), "
           "ANON_STDDEV_POP(x), ANON_PERCENTILE_CONT(x, 0.9 CLAMPED BETWEEN 0 AND 8) "
           "FROM t GROUP BY k")
    ast = parse_one(sql, name)
    assert ast.args["hint"].args["kind"] == "ANONYMIZATION"
    assert ast.sql(dialect=dialect(name)) == sql
    kinds = [type(e).__mro__[2].__name__ for e in ast.expressions[1:]]
    assert kinds == ["Count", "Count", "Sum", "Avg", "VariancePop", "StddevPop",
                     "PercentileCont"]


@pytest.mark.parametrize("name", sorted(DIALECTS))
def test_every_dialect_reads_top_var_and_std(name):
    ast = parse_one("SELECT TOP 4 k, VAR(x), STD(x) FROM t GROUP BY k", name)
    assert ast.args["limit"].expression.this == "4"
    std = "StddevSamp" if name == "spark" else "StddevPop"
    assert [type(e).__name__ for e in ast.expressions[1:]] == ["VariancePop", std]


def test_top_is_still_a_column_name():
    assert parse_one("SELECT top, top + 1 FROM t").sql() == "SELECT top, top + 1 FROM t"


@pytest.mark.parametrize("sql, message", [
    ("SELECT ANON_SUM(x, y) FROM t", "ANON_SUM takes one expression"),
    ("SELECT ANON_SUM(x CLAMPED BETWEEN 0) FROM t", "CLAMPED BETWEEN <lower> AND <upper>"),
    ("SELECT ANON_PERCENTILE_CONT(x) FROM t", "ANON_PERCENTILE_CONT takes (expression, "),
    ("SELECT WITH ANONYMIZATION ANON_COUNT(*) FROM t", "expected OPTIONS"),
])
def test_malformed_older_syntax_is_a_parse_error(sql, message):
    with pytest.raises(dpsql.ParseError, match=message.replace("(", r"\(")):
        analyze(sql, catalog(), epsilon=1.0, delta=1e-6)


# --- the older spelling is the newer one ---------------------------------------------------

SAME = [
    ("SELECT WITH ANONYMIZATION OPTIONS (kappa = 2) k, ANON_COUNT(*) FROM t GROUP BY k",
     "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (max_groups_contributed = 2) k, COUNT(*) "
     "FROM t GROUP BY k"),
    ("SELECT k, ANON_COUNT(x CLAMPED BETWEEN 1 AND 3), ANON_SUM(x CLAMPED BETWEEN -1 AND 20), "
     "ANON_AVG(x CLAMPED BETWEEN 0 AND 4) FROM t GROUP BY k",
     "SELECT k, COUNT(x, contribution_bounds_per_group => (1, 3)), "
     "SUM(x, contribution_bounds_per_group => (-1, 20)), "
     "AVG(x, contribution_bounds_per_group => (0, 4)) FROM t GROUP BY k"),
    ("SELECT ANON_VAR_POP(x CLAMPED BETWEEN 0 AND 5), ANON_STDDEV_POP(x), "
     "ANON_PERCENTILE_CONT(x, 0.25 CLAMPED BETWEEN 1 AND 9) FROM t",
     "SELECT VAR_POP(x, contribution_bounds_per_row => (0, 5)), STDDEV_POP(x), "
     "PERCENTILE_CONT(x, 0.25, contribution_bounds_per_row => (1, 9)) FROM t"),
    ("SELECT TOP 3 flag, VAR(x), STD(x) FROM t GROUP BY flag ORDER BY flag",
     "SELECT flag, VAR_POP(x), STDDEV_POP(x) FROM t GROUP BY flag ORDER BY flag LIMIT 3"),
]


@pytest.mark.parametrize("older, newer", SAME)
def test_older_spelling_compiles_to_the_same_bounded_query(older, newer):
    assert bounded_sql(older, max_groups_per_unit=3) == bounded_sql(newer, max_groups_per_unit=3)


def test_kappa_sets_the_groups_per_unit():
    plan = analyze("SELECT WITH ANONYMIZATION OPTIONS (kappa = 5) k, ANON_COUNT(*) FROM t "
                   "GROUP BY k", catalog(max_groups_per_unit=2), epsilon=1.0, delta=1e-6)
    assert plan.contribution.max_groups_per_unit == 5


@pytest.mark.parametrize("sql", [
    "SELECT k, ANON_SUM(x CLAMPED BETWEEN -3 AND 20), ANON_COUNT(x CLAMPED BETWEEN 0 AND 2) "
    "FROM t GROUP BY k",
    "SELECT WITH ANONYMIZATION OPTIONS (kappa = 2) k, ANON_AVG(x CLAMPED BETWEEN 0 AND 8), "
    "ANON_VAR_POP(x CLAMPED BETWEEN -1 AND 4) FROM t GROUP BY k",
])
def test_removing_any_unit_moves_cells_within_the_plan(sql):
    plan = analyze(sql, catalog(max_groups_per_unit=3, max_rows_per_group=4), epsilon=1.0,
                   delta=1e-6)
    assert_neighbours_within_plan(plan, hostile_table(seed=2))


# --- refusals before any data is read ------------------------------------------------------

@pytest.mark.parametrize("sql, message", [
    ("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (group_selection_strategy = PUBLIC_GROUPS) k, "
     "COUNT(*) FROM t GROUP BY k", "GROUP BY k is not a public key"),
    ("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (kappa = 2) COUNT(*) FROM t",
     "older name of max_groups_contributed in WITH ANONYMIZATION"),
    ("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (min_privacy_units_per_group = 3, "
     "group_selection_strategy = PUBLIC_GROUPS) COUNT(*) FROM t",
     "ZetaSQL refuses the pair too"),
    ("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (k_threshold = 3) COUNT(*) FROM t",
     "older name of min_privacy_units_per_group in WITH ANONYMIZATION"),
    ("SELECT ANON_COUNT(x CLAMPED BETWEEN 0 AND 2.5) FROM t",
     "CLAMPED BETWEEN lo AND hi with integers"),
    ("SELECT ANON_SUM(x CLAMPED BETWEEN 0 AND pid) FROM t", "with number literals"),
    ("SELECT flag, COUNT(*) FROM t GROUP BY flag ORDER BY 2 LIMIT 1 WITH TIES",
     "WITH TIES is not supported"),
])
def test_refused_before_reading_data(sql, message):
    with pytest.raises(dpsql.UnsupportedQueryError, match=message):
        analyze(sql, catalog(), epsilon=1.0, delta=1e-6)


def test_a_floor_on_public_keys_selects_them_as_private_keys():
    """k_threshold with declared public keys only: the plan is the one of the same query with
    the key undeclared (private), selected with the floor, and so is its bounded SQL."""
    sql = "SELECT WITH ANONYMIZATION OPTIONS (k_threshold = 3) flag, COUNT(*) FROM t GROUP BY flag"
    private = Catalog()
    private.add(TableInfo.private("t", columns=COLUMNS, privacy_unit="pid",
                                  bounds={"x": (-2, 10)}))
    public = analyze(sql, catalog(), epsilon=1.0, delta=1e-6)
    undeclared = analyze(sql, private, epsilon=1.0, delta=1e-6)
    assert public.keys[0].domain is None and public.selection.min_units == 3
    assert (public.selection, public.sensitivities, public.noise) == (
        undeclared.selection, undeclared.sensitivities, undeclared.noise)
    assert CompiledQuery.of(public).bounded_sql() == CompiledQuery.of(undeclared).bounded_sql()


@pytest.mark.parametrize("keys", ["e", "flag, e"])
def test_a_floor_on_unnest_keys_moves_cells_within_the_plan(keys):
    """k_threshold with an UNNEST's elements as keys (public, so selected as private keys):
    on hostile data, removing any unit moves each statistic, the count of people the
    selection reads included, by at most its bound, in at most the planned cells."""
    plan = analyze("SELECT WITH ANONYMIZATION OPTIONS (k_threshold = 2, kappa = 4) "
                   f"{keys}, ANON_COUNT(*), ANON_SUM(x CLAMPED BETWEEN 0 AND 5) FROM t "
                   f"CROSS JOIN UNNEST([1, 2, 3]) AS e GROUP BY {keys}",
                   catalog(max_rows_per_group=3), epsilon=1.0, delta=1e-6)
    assert all(k.domain is None for k in plan.keys) and plan.selection.min_units == 2
    assert "units" in [s.kind for s in plan.stats]
    assert_neighbours_within_plan(plan, hostile_table(seed=3))


def test_public_groups_accepts_public_keys():
    plan = analyze("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (group_selection_strategy = "
                   "'PUBLIC_GROUPS') flag, COUNT(*) FROM t GROUP BY flag", catalog(),
                   epsilon=1.0, delta=0.0)
    assert plan.selection is None and [k.domain for k in plan.keys] == [(0, 1, 2)]

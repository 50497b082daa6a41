"""BigQuery/ZetaSQL DP syntax: the OPTIONS clause, named contribution bounds, input dialects.

The bound tests follow tests/test_rewrite_bounds.py: for every unit of a hostile table,
removing it moves each cell of the bounded query by at most the plan's bound.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pyarrow as pa
import pytest

import dpsql
from dpsql.accounting import Accountant
from dpsql.analysis import analyze
from dpsql.catalog import Catalog, TableInfo
from dpsql.compile import CompiledQuery
from dpsql.dialect import DIALECTS, parse_one
from dpsql.estimators import NoisyGroups, aggregate_values
from tests.support import BACKEND, assert_within_plan, hostile_table, run_bounded

DP = "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS"


def catalog(**limits) -> Catalog:
    cat = Catalog()
    columns = {"pid": "BIGINT", "k": "VARCHAR", "x": "DOUBLE", "flag": "BIGINT"}
    cat.add(TableInfo.private("t", columns=columns, privacy_unit="pid",
                              bounds={"x": (-2, 10)}, **limits))
    cat.add(TableInfo.private("free", columns=columns, privacy_unit="pid", **limits))
    return cat


def plan_of(sql: str, **limits):
    return analyze(sql, catalog(**limits), epsilon=1.0, delta=1e-6)


# --- parsing ---------------------------------------------------------------------------

@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_every_dialect_reads_the_clause_and_named_bounds(dialect):
    ast = parse_one(f"{DP} (epsilon = 1, delta = 1e-5, max_groups_contributed = 2, "
                    "privacy_unit_column = pid) k, "
                    "AVG(x, contribution_bounds_per_group => (0, 100)) FROM t GROUP BY k",
                    dialect)
    options = [o.sql() for o in ast.args["hint"].expressions]
    assert options == ["epsilon = 1", "delta = 1e-5", "max_groups_contributed = 2",
                       "privacy_unit_column = pid"]
    avg = ast.expressions[1]
    assert isinstance(avg, dpsql.dialect.exp.Avg)
    assert avg.sql() == "AVG(x, contribution_bounds_per_group => (0, 100))"


def test_named_bounds_stay_with_their_own_call():
    ast = parse_one("SELECT SUM(ABS(x), contribution_bounds_per_row => (0, 5)) "
                    "OVER (PARTITION BY ABS(k)), COUNT(*) FROM t")
    window = ast.expressions[0]
    assert window.this.sql() == "SUM(ABS(x), contribution_bounds_per_row => (0, 5))"
    assert sorted(a.sql() for a in window.find_all(dpsql.dialect.exp.Abs)) == ["ABS(k)", "ABS(x)"]
    assert ast.expressions[1].args.get("bounds") is None


def test_named_bounds_on_a_scalar_function_or_distinct_do_not_parse():
    with pytest.raises(dpsql.ParseError, match="named argument of aggregate"):
        analyze("SELECT COUNT(*) FROM t WHERE ABS(x, contribution_bounds_per_row => (0, 1)) > 0",
                catalog(), epsilon=1.0, delta=0.0)
    with pytest.raises(dpsql.ParseError, match="Expecting "):
        analyze("SELECT COUNT(DISTINCT pid, contribution_bounds_per_group => (0, 1)) FROM t",
                catalog(), epsilon=1.0, delta=0.0)


def test_unknown_dialect_is_refused():
    with pytest.raises(dpsql.ParseError, match="unknown SQL dialect 'oracle'"):
        dpsql.connect(dialect="oracle")
    con = dpsql.connect()
    with pytest.raises(dpsql.ParseError, match="dpsql reads 'duckdb', 'postgres'"):
        con.sql("SELECT 1", dialect="tsql")


# --- OPTIONS -----------------------------------------------------------------------------

@pytest.fixture
def con() -> dpsql.Connection:
    con = dpsql.connect(budget=dpsql.Budget(epsilon=10, delta=1e-3), seed=1)
    con.register("t", hostile_table(), privacy_unit="pid", bounds={"x": (-2, 10)},
                 max_groups_per_unit=2, max_rows_per_group=3)
    con.register("rows", hostile_table(), row_privacy=True, bounds={"x": (-2, 10)})
    return con


def test_options_set_the_cost_charged(con):
    con.sql(f"{DP} (epsilon = 0.25, delta = 1e-7) COUNT(*) FROM t")
    assert con.budget.spent.epsilon == pytest.approx(0.25)
    con.sql(f"{DP} (epsilon = 0.5) COUNT(*) FROM t", epsilon=0.5)
    assert con.budget.spent.epsilon == pytest.approx(0.75)


@pytest.mark.parametrize("call", [{"epsilon": 0.3}, {"delta": 1e-9}])
def test_options_conflicting_with_the_call_are_refused_before_spending(con, call):
    with pytest.raises(dpsql.PrivacyError, match="conflicts with"):
        con.sql(f"{DP} (epsilon = 0.25, delta = 1e-7) COUNT(*) FROM t", **call)
    assert con.budget.spent.epsilon == 0


def test_max_groups_contributed_replaces_the_catalog_limit(con):
    plan = con.explain(f"{DP} (max_groups_contributed = 5) k, COUNT(*) FROM t GROUP BY k",
                       delta=1e-6).to_dict()
    limits = plan["contribution_bounds"]
    assert limits["max_groups_per_unit"] == 5
    assert limits["sources"]["max_groups_per_unit"] == "query"
    assert plan["columns"][1]["l1_sensitivity"] == 5 * 3


def test_max_rows_contributed_bounds_rows_in_total(con):
    limits = con.explain(f"{DP} (max_rows_contributed = 4) k, COUNT(*) FROM t GROUP BY k",
                         delta=1e-6).to_dict()["contribution_bounds"]
    assert (limits["max_groups_per_unit"], limits["max_rows_per_group"],
            limits["max_rows_per_unit"]) == (4, 4, 4)


@pytest.mark.parametrize("options, message", [
    ("privacy_unit_column = flag", "is not the privacy unit of 't'"),
    ("privacy_unit_column = other.pid", "'other' is not a table in FROM"),
    ("max_groups_contributed = 0", "a positive integer literal"),
    ("max_groups_contributed = NULL", "would lift the bound"),
    ("max_groups_contributed = 2, max_rows_contributed = 3", "one of max_groups_contributed"),
    ("epsilon = 'one'", "a number literal"),
    ("kappa = 2", "kappa is not an option dpsql knows"),
    ("epsilon = 1, epsilon = 2", "epsilon is given twice"),
])
def test_bad_options_are_refused(con, options, message):
    with pytest.raises(dpsql.UnsupportedQueryError, match=message):
        con.sql(f"{DP} ({options}) COUNT(*) FROM t")
    assert con.budget.spent.epsilon == 0


def test_the_unit_may_be_named_with_the_table_alias(con):
    plan = con.explain(f"{DP} (privacy_unit_column = v.pid) COUNT(*) FROM t AS v").to_dict()
    assert plan["contribution_bounds"]["privacy_unit"] == "pid"


def test_row_level_tables_take_no_unit_options(con):
    for options in ("privacy_unit_column = pid", "max_groups_contributed = 2"):
        with pytest.raises(dpsql.UnsupportedQueryError, match="row-level privacy"):
            con.sql(f"{DP} ({options}) COUNT(*) FROM rows")


def test_a_clause_on_a_part_spends_that_parts_epsilon(con):
    """A DP clause on one branch of a UNION ALL is that part's own ε (several DP clauses per
    statement, docs/sql.md); the other parts share what is left of the statement's ε."""
    sql = f"SELECT COUNT(*) FROM t UNION ALL {DP} (epsilon = 1) COUNT(*) FROM t"
    with pytest.raises(dpsql.PrivacyError, match="leaves nothing"):
        con.sql(sql)  # the default ε is a tenth of 10: all of it taken by the clause
    res = con.sql(sql, epsilon=2)
    assert res.fetchall() and len(res.fetchall()) == 2 and res.cost.epsilon == 2


# --- named bounds: exact semantics on a small table --------------------------------------

SMALL = pa.table({
    "pid": pa.array([1, 1, 1, 2, 2, 3, 3], pa.int64()),
    "k": ["a", "a", "b", "a", "a", "a", "a"],
    "x": pa.array([10.0, 30.0, 5.0, 200.0, None, -4.0, float("nan")], pa.float64()),
    "flag": pa.array([0, 0, 0, 0, 0, 0, 0], pa.int64()),
})


def exact(sql: str, **limits) -> dict[str, float]:
    """Each aggregate of group 'a' without noise: the bounded query, then the release."""
    plan = plan_of(sql, max_groups_per_unit=2, **limits)
    BACKEND.load("free", SMALL)
    table = BACKEND.execute(CompiledQuery.of(plan), salt="s")
    row = table.column("k").to_pylist().index("a") if plan.keys else 0
    stats = {s.name: np.array([float(table.column(s.name)[row].as_py()) * s.quantum])
             for s in plan.stats}
    values = aggregate_values(plan, NoisyGroups(keys=table.select([]), stats=stats))
    return {a.sql: float(values[a.name][0]) for a in plan.aggregates}


def test_avg_per_group_is_the_mean_of_each_units_clamped_mean():
    sql = "SELECT k, AVG(x, contribution_bounds_per_group => (0, 100)) FROM free GROUP BY k"
    # Unit means in group a: 1 -> 20, 2 -> 200 clamped to 100, 3 -> -4 clamped to 0.
    assert exact(sql, max_rows_per_group=1) == {
        "AVG(x, contribution_bounds_per_group => (0, 100))": pytest.approx(40.0)}


def test_sum_and_count_per_group_clamp_each_units_partial():
    sql = ("SELECT k, SUM(x, contribution_bounds_per_group => (0, 25)), "
           "COUNT(*, contribution_bounds_per_group => (0, 1)), "
           "COUNT(x, contribution_bounds_per_group => (1, 5)) FROM free GROUP BY k")
    got = exact(sql)
    # Unit sums in a: 40 -> 25, 200 -> 25, -4 -> 0; rows 2, 2, 2 -> 1 each;
    # non-NULL, non-NaN values 2, 1, 1 -> within [1, 5].
    assert got == {"SUM(x, contribution_bounds_per_group => (0, 25))": pytest.approx(50.0),
                   "COUNT(*, contribution_bounds_per_group => (0, 1))": 3,
                   "COUNT(x, contribution_bounds_per_group => (1, 5))": 4}


def test_per_row_bounds_clamp_rows_and_keep_null_out():
    sql = ("SELECT k, SUM(x, contribution_bounds_per_row => (0, 20)), "
           "AVG(x, contribution_bounds_per_row => (0, 20)) FROM free GROUP BY k")
    got = exact(sql, max_rows_per_group=5)
    # Rows in a: 10, 20 (30), 20 (200), 0 (-4); NULL and NaN are left out.
    assert got["SUM(x, contribution_bounds_per_row => (0, 20))"] == pytest.approx(50.0)
    assert got["AVG(x, contribution_bounds_per_row => (0, 20))"] == pytest.approx(12.5)


def test_per_row_bounds_meet_the_catalog_bounds():
    plan = plan_of("SELECT SUM(x, contribution_bounds_per_row => (5, 50)) FROM t")
    assert (plan.aggregates[0].lo, plan.aggregates[0].hi) == (5, 10)


# --- named bounds: removing any unit moves cells within the plan --------------------------

BOUNDED = [
    "SELECT k, SUM(x, contribution_bounds_per_group => (-3, 20)) FROM free GROUP BY k",
    "SELECT k, AVG(x, contribution_bounds_per_group => (0, 8)) FROM free GROUP BY k",
    "SELECT k, COUNT(*, contribution_bounds_per_group => (1, 6)), "
    "COUNT(x, contribution_bounds_per_group => (0, 2)) FROM free GROUP BY k",
    "SELECT k, flag, SUM(x, contribution_bounds_per_group => (0, 1e6)), "
    "AVG(x * 2, contribution_bounds_per_group => (-5, 5)) FROM free GROUP BY k, flag",
    "SELECT SUM(x, contribution_bounds_per_row => (0, 4)), "
    "AVG(x, contribution_bounds_per_row => (-1, 1)), COUNT(*) FROM free",
    "SELECT k, SUM(x, contribution_bounds_per_group => (2, 9)) FROM t GROUP BY k",
    f"{DP} (max_groups_contributed = 5) k, COUNT(*), "
    "SUM(x, contribution_bounds_per_group => (0, 30)) FROM t GROUP BY k",
    f"{DP} (max_rows_contributed = 3) k, SUM(x), COUNT(x) FROM t GROUP BY k",
]
LIMITS = [
    {},
    {"max_groups_per_unit": 3, "max_rows_per_group": 4},
    {"max_groups_per_unit": 4, "max_rows_per_group": 5, "max_rows_per_unit": 7},
]


# Each query once with one set of limits by default; every combination in the slow run.
CASES = [pytest.param(sql, LIMITS[(i + j) % len(LIMITS)],
                      marks=() if j == 0 else pytest.mark.slow,
                      id=f"{i}-{'+'.join(map(str, LIMITS[(i + j) % len(LIMITS)].values()))}")
         for i, sql in enumerate(BOUNDED) for j in range(len(LIMITS))]


def bounded_cells(table: pa.Table, plan) -> dict[tuple, dict[str, float]]:
    BACKEND.load("free", table)
    return run_bounded(table, plan, salt="fixed")  # loads t


@pytest.mark.parametrize("sql, limits", CASES)
def test_removing_any_unit_moves_cells_within_the_plan(sql, limits):
    plan = plan_of(sql, **limits)
    table = hostile_table(seed=1)
    full = bounded_cells(table, plan)
    for unit in sorted({u for u in table.column("pid").to_pylist() if u is not None}):
        mask = pa.compute.fill_null(pa.compute.not_equal(table.column("pid"), unit), True)
        rest = bounded_cells(table.filter(mask), plan)
        assert_within_plan(plan, full, rest, unit)


def test_per_group_bound_is_the_cell_bound_whatever_the_rows():
    plan = plan_of("SELECT k, SUM(x, contribution_bounds_per_group => (0, 30)) FROM free "
                   "GROUP BY k", max_groups_per_unit=3, max_rows_per_group=4)
    statistic = plan.sensitivities[0]
    assert statistic.bound * plan.stats[0].quantum == 30
    assert (statistic.l1, statistic.l2) == (3, math.sqrt(3))


@pytest.mark.parametrize("sql, message", [
    ("SELECT COUNT(*, contribution_bounds_per_row => (0, 1)) FROM t", "per-row bounds do not"),
    ("SELECT COUNT(*, contribution_bounds_per_group => (0, 2.5)) FROM t", "with integers"),
    ("SELECT SUM(x, contribution_bounds_per_row => (0, 1), "
     "contribution_bounds_per_group => (0, 2)) FROM t", "one of contribution_bounds_per_row"),
    ("SELECT SUM(x, contribution_bounds_per_group => (5, 1)) FROM t", "not a finite range"),
    ("SELECT SUM(x, contribution_bounds_per_group => (0, 'a')) FROM t", "number literals"),
    ("SELECT SUM(x, contribution_bounds_per_row => (0, 1), "
     "contribution_bounds_per_row => (0, 2)) FROM t", "each named argument once"),
    ("SELECT MEDIAN(x, contribution_bounds_per_group => (0, 1)) FROM t", "A quantile ranks"),
    ("SELECT SUM(x) FROM free", "add the argument contribution_bounds_per_row"),
])
def test_misused_named_bounds_are_refused(sql, message):
    with pytest.raises(dpsql.UnsupportedQueryError, match=message):
        plan_of(sql)


# --- input dialects ----------------------------------------------------------------------

DIALECT_QUERIES = [
    ("bigquery", f"{DP} (epsilon = 1, delta = 1e-5, privacy_unit_column = pid) `k`, "
                 "SAFE_CAST(COUNT(*) AS FLOAT64) / 2 AS half, "
                 "SUM(x, contribution_bounds_per_group => (0, 20)) AS s "
                 "FROM `t` WHERE k != \"k1\" GROUP BY `k`",
     "SELECT k, TRY_CAST(COUNT(*) AS DOUBLE) / 2 AS half, "
     "SUM(x, contribution_bounds_per_group => (0, 20)) AS s FROM t WHERE k <> 'k1' GROUP BY k"),
    ("postgres", "SELECT k, COUNT(*)::DOUBLE PRECISION / 2 AS half FROM t "
                 "WHERE k ILIKE 'K1%' GROUP BY k",
     "SELECT k, CAST(COUNT(*) AS DOUBLE) / 2 AS half FROM t WHERE k ILIKE 'K1%' GROUP BY k"),
    ("spark", "SELECT `k`, IF(COUNT(*) > 10, 1, 0) AS big, AVG(x) AS m FROM t GROUP BY `k`",
     "SELECT k, CASE WHEN COUNT(*) > 10 THEN 1 ELSE 0 END AS big, AVG(x) AS m FROM t "
     "GROUP BY k"),
]


@pytest.mark.parametrize("dialect, query, duckdb_query", DIALECT_QUERIES,
                         ids=[d for d, _, _ in DIALECT_QUERIES])
def test_each_dialect_answers_like_the_same_query_in_duckdb(con, dialect, query, duckdb_query):
    theirs = con.sql(query, dialect=dialect, delta=1e-5, seed=3)
    ours = con.sql(duckdb_query, delta=1e-5, seed=3)
    assert theirs.fetchall() == ours.fetchall()
    assert con.explain(query, dialect=dialect, delta=1e-5).to_dict()["rewritten_sql"] == \
        con.explain(duckdb_query, delta=1e-5).to_dict()["rewritten_sql"]


def test_connection_default_dialect_and_cursor_parameters():
    con = dpsql.connect(budget=dpsql.Budget(epsilon=5, delta=1e-4), seed=2, dialect="bigquery")
    con.register("t", hostile_table(), privacy_unit="pid", bounds={"x": (-2, 10)})
    cursor = con.execute(f"{DP} (epsilon = 0.5, delta = 1e-6) COUNT(*) AS n FROM `t` "
                         "WHERE k = ?", ["k1"])
    assert cursor.description[0][0] == "n"
    assert con.budget.spent.epsilon == pytest.approx(0.5)
    assert con.sql('SELECT COUNT(*) AS n FROM t WHERE k = "k2"', epsilon=0.5).columns == ["n"]


# --- bounds left to dpsql ------------------------------------------------------------------

def people(n: int = 3000) -> pa.Table:
    rng = np.random.default_rng(5)
    return pa.table({"pid": np.arange(n), "k": rng.choice(["a", "b"], n),
                     "income": rng.lognormal(10, 1, n)})


def test_the_dp_syntax_leaves_missing_bounds_to_dpsql_within_the_query_budget():
    """ZetaSQL chooses a clamp itself when SUM or AVG has none; so does dpsql in that
    syntax, from a quarter of the query's ε (and half its δ), as for bounds="auto". The
    ε asked for in OPTIONS is what is spent, in all; plain SQL still asks for bounds."""
    con = dpsql.connect(budget=dpsql.Budget(epsilon=10, delta=1e-4), seed=3)
    con.register("p", people(), privacy_unit="pid", public_keys={"k": ["a", "b"]})
    sql = (f"{DP} (epsilon = 1, delta = 1e-6) k, SUM(income) AS s, AVG(income) AS a FROM p "
           "GROUP BY k")
    with pytest.raises(dpsql.BoundsNeeded, match="left to dpsql by the BigQuery DP syntax"):
        con.explain(sql)
    with pytest.raises(dpsql.UnsupportedQueryError, match="needs bounds"):
        con.sql("SELECT SUM(income) FROM p")
    with pytest.warns(dpsql.PrivacyWarning, match=r"p.income: bounds estimated as \[0, "):
        result = con.sql(sql)
    assert con.budget.spent.epsilon == pytest.approx(1.0)
    assert con.budget.spent.epsilon <= 1.0 and con.budget.spent.delta <= 1e-6
    lo, hi = con.catalog.get("p").bounds["income"]
    assert lo == 0 and 2**16 <= hi <= 2**19
    assert all(0 < mean < hi for mean in result.df()["a"])


# --- min_privacy_units_per_group -----------------------------------------------------------

def unfloored(method: str, delta: float):
    """A selection without a floor and its unit count's noise, for each method."""
    from dpsql.mechanisms import Noise, selection_threshold
    from dpsql.plan import Selection

    if method == "truncated_geometric":
        return Selection(method, 0.0, delta, 1, epsilon=0.7), None
    noise = Noise("laplace", 1 / 0.7) if method == "laplace_threshold" else Noise("gaussian", 3.0)
    return Selection(method, selection_threshold(noise, 1, delta), delta, 1), noise


def needed_delta(p: np.ndarray, epsilon: float) -> float:
    """The least δ with which every neighbouring pair (p(n), p(n + 1)) meets both DP
    constraints, on release and on no release, both ways (p(0) = 0: the group is absent)."""
    a, b = p[:-1], p[1:]
    e = math.exp(epsilon)
    return float(max(np.max(b - e * a), np.max(a - e * b), np.max((1 - a) - e * (1 - b)),
                     np.max((1 - b) - e * (1 - a)), 0.0))


@pytest.mark.parametrize("delta", [1e-6, 0.05])
@pytest.mark.parametrize("method", ["laplace_threshold", "gaussian_threshold",
                                    "truncated_geometric"])
def test_the_floor_of_people_keeps_the_guarantee_exactly(method, delta):
    """``min_privacy_units_per_group`` = m: P(released | exactly n people) is 0 below m and
    the unfloored chance at n − (m − 1) from m on. So every neighbouring pair of counts
    needs no more δ, at any ε, than the selection without the floor, whose guarantee it
    keeps: a group of m people in D and m − 1 in D′ is released in D as a new group of one
    person is (≤ δ′), never in D′. Without the floor (issue 35, point 8) the threshold
    methods shifted the *noisy* count, which passes whatever the group's size."""
    from dpsql.mechanisms.selection import split_delta

    base, noise = unfloored(method, delta)
    counts = np.arange(0, 400)
    plain = base.chance(counts, noise)
    assert plain[0] == 0 and plain[1] <= split_delta(delta, 1)
    if method != "gaussian_threshold":  # (0.7, δ′) per group; 1e-9: the floats' rounding
        assert needed_delta(plain, 0.7) <= split_delta(delta, 1) * (1 + 1e-9)
    for m in (2, 5, 50):
        floored = dataclasses.replace(base, min_units=m).chance(counts, noise)
        assert np.all(floored[:m] == 0)
        assert np.array_equal(floored[m:], plain[1:len(counts) - m + 1])
        for epsilon in (0.1, 0.7, 2.0):
            assert needed_delta(floored, epsilon) <= needed_delta(plain, epsilon)


FLOOR_QUERIES = {  # at δ = 0.05 the engine picks each selection method for one of these
    "gaussian_threshold": "epsilon = 1, delta = 0.05, min_privacy_units_per_group = 5) "
                          "k, COUNT(*) AS n",
    "laplace_threshold": "epsilon = 3, delta = 0.05, min_privacy_units_per_group = 5) "
                         "k, COUNT(*) AS n",
    "truncated_geometric": "epsilon = 1, delta = 0.05, min_privacy_units_per_group = 5) k",
}


@pytest.mark.parametrize("method", sorted(FLOOR_QUERIES))
def test_no_group_below_the_floor_is_ever_released(method):
    """Issue 35, point 8: at m = 5, δ = 0.05, 43 groups of 4 people were released in 150
    runs of a query that releases a count. Now none of 40 groups of 4 is, in 120 runs,
    while groups of 5, 10 and 50 people are released as often as explain() says."""
    sizes = [4] * 40 + [5] * 20 + [10] * 20 + [50]
    keys = [f"{size}_{group}" for group, size in enumerate(sizes) for _ in range(size)]
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1e9, delta=0.9), cache=False)
    con.register("t", pa.table({"pid": range(len(keys)), "k": keys}), privacy_unit="pid")
    sql = f"{DP} ({FLOOR_QUERIES[method]} FROM t GROUP BY k"
    selection = con.explain(sql).to_dict()["partition_selection"]
    curve = selection["release_probability"]
    assert selection["method"] == method and curve["1"] == curve["2"] == 0
    runs, released = 120, dict.fromkeys(sizes, 0)
    for seed in range(runs):
        con.budget = Accountant(dpsql.Budget(epsilon=1e9, delta=0.9))
        for key, *_ in con.sql(sql, seed=seed).fetchall():
            released[int(key.split("_")[0])] += 1
    assert released[4] == 0
    for size in (5, 10, 50):
        expected = runs * sizes.count(size) * curve[str(size)]
        assert abs(released[size] - expected) <= 5 * math.sqrt(expected + 1), (size, released)


@pytest.mark.parametrize("option", ["min_privacy_units_per_group = 41", "k_threshold = 41"])
def test_min_units_shift_the_release_curve(option):
    con = dpsql.connect(budget=dpsql.Budget(epsilon=50, delta=1e-3), seed=2)
    sizes = [5] * 5 + [60] * 60 + [300] * 300
    con.register("t", pa.table({"pid": list(range(len(sizes))),
                                "k": [f"g{v}" for v in sizes]}), privacy_unit="pid")
    kind = "ANONYMIZATION" if option.startswith("k_") else "DIFFERENTIAL_PRIVACY"
    count = "ANON_COUNT(*)" if kind == "ANONYMIZATION" else "COUNT(*)"
    shifted = (f"SELECT WITH {kind} OPTIONS (epsilon = 2, delta = 1e-5, {option}) k, "
               f"{count} AS n FROM t GROUP BY k")
    floor = option.replace("41", "1")  # the same selection of people, unshifted
    plain = f"SELECT WITH {kind} OPTIONS (epsilon = 2, delta = 1e-5, {floor}) k, {count} AS n " \
            "FROM t GROUP BY k"
    curve = con.explain(shifted).to_dict()["partition_selection"]["release_probability"]
    base = con.explain(plain).to_dict()["partition_selection"]["release_probability"]
    assert curve["50"] == pytest.approx(base["10"]) and curve["20"] == 0.0
    assert curve["100"] <= base["100"]
    assert {k for k, _ in con.sql(shifted).fetchall()} <= {"g60", "g300"}


def test_min_units_select_public_keys_as_private_ones():
    """With the floor, public keys are selected with it (as ZetaSQL selects every key without
    PUBLIC_GROUPS); a query without GROUP BY selects its one group."""
    con = dpsql.connect()
    con.register("t", pa.table({"pid": [1, 2], "k": ["a", "b"]}), privacy_unit="pid",
                 public_keys={"k": ["a", "b"]})
    keyed = con.explain(f"{DP} (min_privacy_units_per_group = 3) k, COUNT(*) FROM t GROUP BY k"
                        ).to_dict()["partition_selection"]
    assert keyed != "public" and keyed["min_units"] == 3
    selection = con.explain(f"{DP} (min_privacy_units_per_group = 3) COUNT(*) FROM t"
                            ).to_dict()["partition_selection"]
    assert selection["min_units"] == 3 and selection["max_groups_per_unit"] == 1


GLOBAL_FLOORS = {  # the engine picks each selection method for one of these
    "gaussian_threshold": "epsilon = 1, delta = 0.05, k_threshold = 5) ANON_SUM(x), ANON_AVG(x)",
    "laplace_threshold": "epsilon = 1, delta = 0.05, k_threshold = 5) COUNT(DISTINCT pid)",
    "truncated_geometric": "epsilon = 1, delta = 1e-6, k_threshold = 5) ANON_COUNT(*)",
}


@pytest.mark.parametrize("method", sorted(GLOBAL_FLOORS))
def test_a_global_floor_keeps_the_plans_guarantee_exactly(method):
    """``k_threshold = m`` on a query without GROUP BY selects its one group (g = 1):
    P(the row is released | n people), from the plan's own selection and unit-count noise,
    is 0 below m, and every neighbouring pair of counts (n, n + 1) needs no more δ than the
    plan charges at the ε its selection reads the count with: 1/t for a Laplace count,
    the truncated geometric's own ε, the query's ε for a Gaussian count (whose noise then
    holds δ/2 of it). A plan that releases the row whatever n is fails at n = 0."""
    plan = analyze(f"SELECT WITH ANONYMIZATION OPTIONS ({GLOBAL_FLOORS[method]} FROM t",
                   catalog())
    selection, m = plan.selection, 5
    assert plan.keys == () and selection.method == method and selection.min_units == m
    assert selection.max_groups_per_unit == 1
    units = next(s.name for s in plan.stats if s.kind == "units")
    noise = None if selection.truncated_geometric else plan.noise_for(units)
    chance = selection.chance(np.arange(0, 600), noise)
    epsilon = {"truncated_geometric": selection.epsilon,
               "laplace_threshold": 1 / noise.scale if noise else None,
               "gaussian_threshold": plan.cost.epsilon}[method]
    assert np.all(chance[:m] == 0) and chance[m] <= selection.delta
    assert chance[-1] > 0.99
    assert needed_delta(chance, epsilon) <= plan.cost.delta * (1 + 1e-9)
    assert plan.cost.delta <= 0.05


@pytest.mark.parametrize("people, released", [(4, False), (200, True)])
def test_a_global_floor_drops_the_row_of_too_few_people(people, released):
    """ZetaSQL's ``anonymization_k_threshold_eliminates_row``: the answer is empty when the
    one group fails the selection (always below the floor), else its one row."""
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1e9, delta=0.9), cache=False)
    con.register("t", pa.table({"pid": range(people), "x": [1.0] * people}),
                 privacy_unit="pid", bounds={"x": (0, 2)})
    sql = "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 5, delta = 1e-6, k_threshold = 5) " \
          "ANON_SUM(x), ANON_COUNT(*) FROM t"
    for seed in range(20):
        assert bool(con.sql(sql, seed=seed).fetchall()) is released
    assert con.budget.spent.delta == pytest.approx(20e-6)


def test_a_global_floor_needs_delta():
    with pytest.raises(dpsql.PrivacyError, match="one group, which needs delta > 0"):
        analyze("SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 0, k_threshold = 5) "
                "ANON_COUNT(*) FROM t", catalog())

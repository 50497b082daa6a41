"""Columns declared NOT NULL (``register(not_null=...)``): COUNT(x) of one is COUNT(*), so a
query asking COUNT(*) beside SUM(x) and AVG(y) draws one count for all three
(``_Collector.stat``, ``_Collector.finish``; docs/mechanisms.md §12).

The declaration is enforced, not trusted: a NULL read anyway counts as a row and as the middle
of the column's bounds. The plan then charges what its mechanisms use (``verify_cost``); the
guarantee on neighbouring databases, with a target whose rows break the declaration, is
audited in tests/privacy/test_audit_shared_count.py.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pyarrow as pa
import pytest

import dpsql
from dpsql.analysis import analyze
from dpsql.catalog import Catalog, TableInfo
from dpsql.errors import CatalogError
from tests.support import COLUMNS, LIMITS, assert_within_plan, hostile_table, run_bounded

UNLIMITED = dpsql.Budget(epsilon=1e9, delta=0.5)
QUERY = "SELECT k, COUNT(*) AS n, SUM(x) AS s, AVG(y) AS a FROM t GROUP BY k ORDER BY k"


def connection(not_null=("x", "y"), **options) -> dpsql.Connection:
    """Twelve people in two public groups; person 0 has NULLs (breaking the declaration) and
    values outside the bounds."""
    pid = [0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]
    k = ["a", "a", "a", "a", "a", "a", "a", "b", "b", "b", "b", "b", "b", "a", "b"]
    x = [None, 500.0, 3.0, 4.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 5.0, 1.0]
    y = [2.0, None, -9.0, 7.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 0.0]
    con = dpsql.connect(budget=UNLIMITED, **options)
    con.register("t", pa.table({"pid": pid, "k": k, "x": x, "y": y}), privacy_unit="pid",
                 bounds={"x": (0, 100), "y": (0, 10)}, public_keys={"k": ["a", "b"]},
                 max_rows_per_group=4, not_null=not_null)
    return con


def kinds(con: dpsql.Connection, sql: str = QUERY) -> list[str]:
    return [s.kind for s in con.compile(sql, epsilon=1.0).plan.stats]


def test_the_declaration_is_checked_and_case_insensitive():
    assert connection(not_null=["X", "y"]).catalog.get("t").not_null == {"x", "y"}
    with pytest.raises(CatalogError, match="not_null names 'z', not a column of 't'"):
        connection(not_null=["z"])


def test_a_toml_catalog_declares_it_too(tmp_path):
    (tmp_path / "t.csv").write_text("pid,x\n1,2\n2,\n")
    (tmp_path / "catalog.toml").write_text(
        '[tables.t]\nsource = "t.csv"\nprivacy_unit = "pid"\nnot_null = ["x"]\n')
    con = dpsql.connect(catalog=str(tmp_path / "catalog.toml"))
    assert con.catalog.get("t").not_null == {"x"}


def test_one_count_serves_count_star_sum_and_avg():
    assert kinds(connection()) == ["rows", "centered_sum", "centered_sum"]
    assert kinds(connection(not_null=())) == ["rows", "count", "centered_sum", "sum"]
    assert kinds(connection(not_null=("y",))) == ["rows", "centered_sum", "sum"]
    plan = connection().compile(QUERY, epsilon=1.0).plan
    by_name = {a.sql: a for a in plan.aggregates}
    assert by_name["COUNT(*)"].stats[0] == by_name["SUM(x)"].stats[0] == \
        by_name["AVG(y)"].stats[0]
    assert kinds(connection(), "SELECT COUNT(x) AS n, COUNT(*) AS m FROM t") == ["rows"]


def test_joins_and_expressions_keep_their_own_count():
    """Only a bare column of the declaring table is known never to be NULL: an expression
    (NULLIF) or a column read through a subquery keeps COUNT(x) apart."""
    con = connection()
    assert kinds(con, "SELECT COUNT(*) AS n, AVG(NULLIF(x, 3)) AS a FROM t") == \
        ["rows", "count", "centered_sum"]
    assert kinds(con, "SELECT COUNT(*) AS n, AVG(x) AS a FROM (SELECT pid, x FROM t) s") == \
        ["rows", "count", "centered_sum"]


def test_the_answers_are_the_bounded_ones_with_nulls_as_the_centre():
    """At a huge ε: a NULL x counts as the centre 50 and a NULL y as 5, and values are
    clamped to the bounds."""
    rows = connection().sql(QUERY, epsilon=1e8).fetchall()
    got = {k: (n, s, a) for k, n, s, a in rows}
    exact = connection(not_null=()).sql(
        "SELECT k, COUNT(*) AS n, SUM(LEAST(GREATEST(COALESCE(x, 50), 0), 100)) AS s, "
        "AVG(LEAST(GREATEST(COALESCE(y, 5), 0), 10)) AS a FROM t GROUP BY k ORDER BY k",
        epsilon=1e8).fetchall()
    for k, n, s, a in exact:
        assert got[k][0] == n
        assert got[k][1] == pytest.approx(s, abs=1e-3)
        assert got[k][2] == pytest.approx(a, abs=1e-6)


def test_the_plan_charges_what_its_mechanisms_use():
    for epsilon in (1.0, 0.3, 1 / 3, 2.9):
        con = connection()
        result = con.sql(QUERY, epsilon=epsilon)
        result.plan.verify_cost()
        assert sum(Fraction(p.epsilon) for p in result.plan.spend) <= Fraction(epsilon)
        assert con.budget.charges[-1].epsilon == epsilon


def test_explain_states_the_shared_noise():
    """Three statistics instead of four, each column one share of ε either way (split by
    column): COUNT's std is the same, and the SUM's is √(std_S² + 50²·std_N²) with the
    centred sum's bound c·(100 − 0)/2, √2·50 against the direct sum's 100."""
    def columns(con):
        return {c["name"]: c for c in con.explain(QUERY, epsilon=1.0).to_dict()["columns"]}

    shared, apart = columns(connection()), columns(connection(not_null=()))
    count, centred = shared["s"]["statistics"]
    assert centred["linf_sensitivity"] == 4 * 50
    assert shared["s"]["noise_std"] == pytest.approx(
        math.hypot(centred["noise_std"], 50 * count["noise_std"]), rel=1e-12)
    assert shared["n"]["noise_std"] == pytest.approx(apart["n"]["noise_std"], rel=1e-3)
    assert shared["s"]["noise_std"] == pytest.approx(apart["s"]["noise_std"] / math.sqrt(2),
                                                     rel=1e-3)


def test_the_intervals_cover_the_bounded_values():
    """Bonferroni intervals built from the statistics actually used (the shared count):
    over 300 seeded runs at ε = 0.5, at least 95 % cover each bounded value."""
    con = connection()
    exact = {k: (n, s, a) for k, n, s, a in con.sql(QUERY, epsilon=1e8).fetchall()}
    covered = {"n": 0, "s": 0, "a": 0}
    total = 0
    for seed in range(300):
        bounds = con.sql(QUERY, epsilon=0.5, seed=seed).ci(0.95).to_pydict()
        for i, key in enumerate(bounds["k"]):
            for j, name in enumerate(("n", "s", "a")):
                covered[name] += bounds[f"{name}_lower"][i] <= exact[key][j] + 1e-9 and \
                    exact[key][j] - 1e-9 <= bounds[f"{name}_upper"][i]
            total += 1
    assert all(c / total >= 0.95 for c in covered.values()), covered


PAIRS = "SELECT k, AVG(x) AS ax, CORR(x, y) AS c, VAR_POP(y) AS vy FROM t GROUP BY k ORDER BY k"


def test_corr_shares_its_count_sums_and_squares_with_avg_and_var():
    """Declared, CORR(x, y) reads AVG(x)'s count and centred sum and VAR(y)'s centred sum and
    sum of squares: 6 statistics instead of 11 (or 8 with x alone declared), and explain lists
    the shared statistics by name. ε is split by column (§12), so a shared statistic takes the
    portions of every column that reads it: none is noisier than undeclared, and the shared
    count is less noisy by more than half."""
    assert kinds(connection(not_null=()), PAIRS) == [
        "count", "centered_sum", "count", *["centered_sum"] * 5, "count", "centered_sum",
        "centered_sum"]
    assert kinds(connection(not_null=("x",)), PAIRS) == ["rows", "centered_sum", "count",
                                                        *["centered_sum"] * 5]
    assert kinds(connection(), PAIRS) == ["rows", *["centered_sum"] * 5]
    def statistics(con):
        columns = con.explain(PAIRS, epsilon=1.0).to_dict()["columns"]
        return {c["name"]: c["statistics"] for c in columns if c["name"] != "k"}

    shared, apart = statistics(connection()), statistics(connection(not_null=()))
    names = {column: [s["name"] for s in stats] for column, stats in shared.items()}
    n, sx, sy, sxx, _, _ = names["c"]  # in CORR(x, y) the role y is x, and x is y
    assert names["ax"] == [n, sy] and names["vy"] == [n, sx, sxx]
    for column, stats in shared.items():
        for mine, theirs in zip(stats, apart[column], strict=True):
            assert mine["noise_std"] <= theirs["noise_std"] * (1 + 1e-3)
        assert stats[0]["noise_std"] < apart[column][0]["noise_std"] / 2


def test_corr_of_declared_columns_is_the_bounded_answer():
    """Without NULLs in the data, declaring the columns changes the noise, not the answer."""
    clean = pa.table({"pid": list(range(12)), "k": ["a", "b"] * 6,
                      "x": [float(3 * i % 11) for i in range(12)],
                      "y": [float(i * i % 7) for i in range(12)]})

    def answers(not_null):
        con = dpsql.connect(budget=UNLIMITED)
        con.register("t", clean, privacy_unit="pid", bounds={"x": (0, 100), "y": (0, 10)},
                     public_keys={"k": ["a", "b"]}, not_null=not_null)
        return con.sql(PAIRS, epsilon=1e8).fetchall()

    for got, want in zip(answers(("x", "y")), answers(()), strict=True):
        assert got[0] == want[0]
        assert got[1:] == pytest.approx(want[1:], rel=1e-4)


@pytest.mark.parametrize("limits", LIMITS, ids=lambda d: ",".join(f"{v}" for v in d.values()))
def test_removing_any_unit_moves_the_shared_statistics_within_the_plan(limits):
    """The neighbour check with the declaration broken: NULL, NaN, ±inf and values far
    beyond the bounds in both declared columns. Six statistics serve the six aggregates (and
    the count of people selects the private keys); every released cell's statistic moves by
    at most its bound on removing any unit, L1 and L2 within the plan."""
    data = hostile_table()
    data = data.append_column("y", pa.array(data.column("x").to_pylist()[::-1], pa.float64()))
    catalog = Catalog()
    catalog.add(TableInfo.private("t", columns={**COLUMNS, "y": "DOUBLE"}, privacy_unit="pid",
                                  bounds={"x": (-2, 10), "y": (0, 4)}, not_null=("x", "y"),
                                  **limits))
    plan = analyze("SELECT k, COUNT(*), SUM(y), AVG(x), CORR(y, x), REGR_SLOPE(x, y), "
                   "STDDEV(y) FROM t GROUP BY k", catalog, epsilon=1.0, delta=1e-6)
    assert [s.kind for s in plan.stats] == ["rows", *["centered_sum"] * 5, "units"]
    full = run_bounded(data, plan, salt="fixed")
    for unit in sorted({u for u in data.column("pid").to_pylist() if u is not None}):
        mask = pa.compute.fill_null(pa.compute.not_equal(data.column("pid"), unit), True)
        assert_within_plan(plan, full, run_bounded(data.filter(mask), plan, salt="fixed"), unit)

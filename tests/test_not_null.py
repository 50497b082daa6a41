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
from dpsql.errors import CatalogError

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

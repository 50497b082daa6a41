"""End to end through dpsql.connect on real DuckDB."""

from __future__ import annotations

import json
import math

import duckdb
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import dpsql
from dpsql.datasets import pums_path
from dpsql.plan import STRATEGIES

BIG = dpsql.Budget(epsilon=1e9, delta=0.5)


def pums_con(**options) -> dpsql.Connection:
    con = dpsql.connect(budget=options.pop("budget", BIG), **options)
    con.register("pums", str(pums_path("PUMS_dup")), privacy_unit="pid",
                 bounds={"age": (0, 100), "income": (0, 500_000)}, max_rows_per_group=10,
                 max_groups_per_unit=10, public_keys={"sex": [0, 1]})
    return con


def exact(sql: str, path: str = "PUMS_dup") -> list[tuple]:
    return duckdb.sql(sql.replace("pums", f"read_csv_auto('{pums_path(path)}')")).fetchall()


def test_huge_epsilon_recovers_the_exact_answer_on_bounded_data():
    con = pums_con(seed=1)
    res = con.sql("SELECT sex, COUNT(*) AS n, SUM(age) AS s, AVG(age) AS a, "
                  "COUNT(DISTINCT pid) AS people FROM pums GROUP BY sex ORDER BY sex",
                  epsilon=1e7)
    truth = exact("SELECT sex, COUNT(*), SUM(age), AVG(age), COUNT(DISTINCT pid) FROM pums "
                  "GROUP BY sex ORDER BY sex")
    for got, want in zip(res.fetchall(), truth, strict=True):
        assert got[0] == want[0] and got[1] == want[1] and got[4] == want[4]
        assert got[2] == pytest.approx(want[2], abs=0.1)
        assert got[3] == pytest.approx(want[3], abs=1e-4)


@pytest.mark.parametrize("kind", ["path", "pandas", "polars", "arrow", "duckdb_table"])
def test_register_from_every_source_kind(kind, tmp_path):
    frame = pd.read_csv(pums_path("PUMS_dup"))
    sources = {
        "path": lambda: str(pums_path("PUMS_dup")),
        "pandas": lambda: frame,
        "polars": lambda: pl.from_pandas(frame),
        "arrow": lambda: pa.Table.from_pandas(frame),
    }
    if kind == "duckdb_table":
        raw = duckdb.connect(str(tmp_path / "db.duckdb"))
        raw.execute(f"CREATE TABLE people AS SELECT * FROM read_csv_auto('{pums_path()}')")
        con = dpsql.connect(raw, budget=BIG, seed=0)
        con.register("pums", "people", privacy_unit="pid", max_rows_per_group=10)
    else:
        con = dpsql.connect(budget=BIG, seed=0)
        con.register("pums", sources[kind](), privacy_unit="pid", max_rows_per_group=10)
    (n,), = con.sql("SELECT COUNT(*) FROM pums", epsilon=1e8).fetchall()
    assert n == 1948


def test_toml_catalog(tmp_path):
    (tmp_path / "catalog.toml").write_text(f"""
[tables.pums]
source = "{pums_path('PUMS_dup')}"
privacy_unit = "pid"
bounds = {{ age = [0, 100] }}
max_rows_per_group = 10
public_keys = {{ sex = [0, 1] }}
""")
    con = dpsql.connect(catalog=str(tmp_path / "catalog.toml"), budget=BIG, seed=0)
    res = con.sql("SELECT sex, AVG(age) AS a FROM pums GROUP BY sex", epsilon=1e8)
    assert sorted(r[0] for r in res.fetchall()) == [0, 1]
    assert con.explain("SELECT sex, AVG(age) FROM pums GROUP BY sex").to_dict()[
        "partition_selection"] == "public"


def test_public_keys_appear_even_when_empty():
    con = pums_con(seed=3)
    res = con.sql("SELECT sex, COUNT(*) AS n FROM pums WHERE age > 1000 GROUP BY sex",
                  epsilon=1.0)
    assert sorted(r[0] for r in res.fetchall()) == [0, 1]


def test_public_keys_from_a_public_table():
    con = dpsql.connect(budget=BIG, seed=0)
    con.register_public("sexes", pa.table({"sex": [0, 1, 2]}))
    con.register("pums", str(pums_path()), privacy_unit="pid", public_keys={"sex": "sexes"})
    res = con.sql("SELECT sex, COUNT(*) FROM pums GROUP BY sex", epsilon=1.0)
    assert sorted(r[0] for r in res.fetchall()) == [0, 1, 2]


def test_private_keys_hide_rare_groups_and_keep_common_ones():
    rows = [(u, "common") for u in range(500)] + [(1000, "rare")]
    table = pa.table({"pid": [r[0] for r in rows], "k": [r[1] for r in rows]})
    con = dpsql.connect(budget=BIG, seed=5)
    con.register("t", table, privacy_unit="pid")
    for seed in range(20):
        keys = {r[0] for r in con.sql("SELECT k, COUNT(*) FROM t GROUP BY k", epsilon=1.0,
                                      delta=1e-6, seed=seed).fetchall()}
        assert keys == {"common"}


def test_post_processing_order_limit_arithmetic_having():
    con = pums_con(seed=2)
    res = con.sql("SELECT educ, COUNT(*) AS n, COUNT(*) * 2 AS twice FROM pums GROUP BY educ "
                  "HAVING COUNT(*) > 5 ORDER BY n DESC LIMIT 3", epsilon=1e6, delta=1e-6)
    rows = res.fetchall()
    assert len(rows) == 3
    assert [r[1] for r in rows] == sorted((r[1] for r in rows), reverse=True)
    assert all(r[2] == 2 * r[1] for r in rows)
    assert res.ci().column_names == ["educ", "n", "twice", "n_lower", "n_upper"]


def test_nulls_nan_and_infinities_never_reach_the_output():
    values = [1.0, None, float("nan"), float("inf"), float("-inf"), 5.0]
    table = pa.table({"pid": [1, 2, 3, 4, 5, 6], "x": pa.array(values, pa.float64())})
    con = dpsql.connect(budget=BIG, seed=0)
    con.register("t", table, privacy_unit="pid", bounds={"x": (0, 10)})
    (count_x, total, mean, rows), = con.sql(
        "SELECT COUNT(x), SUM(x), AVG(x), COUNT(*) FROM t", epsilon=1e8).fetchall()
    # NULL and NaN are missing; +inf clamps to 10 and -inf to 0.
    assert (count_x, rows) == (4, 6)
    assert total == pytest.approx(16.0, abs=1e-3)
    assert mean == pytest.approx(4.0, abs=1e-3)


def test_seeded_results_are_reproducible_and_marked_not_private():
    a = pums_con(seed=11).sql("SELECT COUNT(*) FROM pums", epsilon=0.1)
    b = pums_con(seed=11).sql("SELECT COUNT(*) FROM pums", epsilon=0.1)
    c = pums_con().sql("SELECT COUNT(*) FROM pums", epsilon=0.1)
    assert a.fetchall() == b.fetchall()
    assert not a.private and c.private


def test_rows_come_out_in_key_order_whatever_order_the_engine_returns():
    """Without ORDER BY the released rows follow the groups' keys, never the engine's order
    (which can depend on the data) nor the exact statistics; seeded noise follows them too."""
    from dpsql.compile import seeded_salt
    from dpsql.mechanisms import Sampler
    from dpsql.release import add_noise, release_groups

    con = pums_con()
    compiled = con.compile("SELECT educ, COUNT(*) AS n, SUM(age) AS s FROM pums GROUP BY educ",
                           epsilon=50.0, delta=1e-6)
    plan, exact = compiled.plan, con.backend.execute(compiled, salt=seeded_salt(0))
    outputs = []
    for order in (np.arange(exact.num_rows), np.argsort(exact.column("__dp_s0").to_numpy())):
        groups = add_noise(plan, release_groups(plan, exact.take(pa.array(order))),
                           Sampler(seed=4))
        outputs.append((groups.keys.to_pylist(), {k: list(v) for k, v in groups.stats.items()}))
    assert outputs[0] == outputs[1]
    keys = [row["educ"] for row in outputs[0][0]]
    assert keys == sorted(keys) and len(keys) > 3


def test_enum_keys_are_released_like_strings():
    """DuckDB returns ENUM group keys dictionary-encoded; rows still come out in key order."""
    raw = duckdb.connect()
    raw.execute("CREATE TYPE kind AS ENUM ('x', 'y', 'z')")
    raw.execute("CREATE TABLE t AS SELECT range AS pid, "
                "(CASE WHEN range % 2 = 0 THEN 'y' ELSE 'x' END)::kind AS k FROM range(400)")
    con = dpsql.connect(raw, budget=BIG)
    con.register("public", "t", privacy_unit="pid", public_keys={"k": ["x", "y", "z"]})
    con.register("private", "t", privacy_unit="pid")
    sql = "SELECT k, COUNT(*) AS n FROM {} GROUP BY k"
    assert [r[0] for r in con.sql(sql.format("public"), seed=1).fetchall()] == ["x", "y", "z"]
    assert [r[0] for r in con.sql(sql.format("private"), epsilon=5, delta=1e-4, seed=1
                                  ).fetchall()] == ["x", "y"]


def test_result_formats():
    res = pums_con(seed=0).sql("SELECT sex, AVG(income) AS m FROM pums GROUP BY sex",
                               epsilon=1.0)
    assert list(res.df().columns) == ["sex", "m"]
    assert res.pl().columns == ["sex", "m"]
    assert res.arrow().num_rows == 2 and len(res.fetchall()) == 2
    assert "95% CIs" in repr(res)
    assert res.explain().to_dict()["columns"][1]["aggregate"] == "AVG(income)"


def test_explain_is_json_and_spends_nothing():
    con = pums_con()
    info = con.explain("SELECT educ, COUNT(*) AS n, SUM(income) FROM pums GROUP BY educ",
                       epsilon=0.5, delta=1e-7).to_dict()
    json.dumps(info)
    assert {"epsilon", "delta", "columns", "statistics_per_unit", "partition_selection",
            "rewritten_sql"} <= set(info)
    n = info["columns"][1]
    assert n["mechanism"] in ("laplace", "gaussian") and n["noise_std"] > 0
    assert {"name", "aggregate", "l1_sensitivity", "l2_sensitivity"} <= set(n)
    assert info["partition_selection"]["threshold"] > 1
    assert info["bounding"]["strategy"] in STRATEGIES and info["bounding"]["why"]
    assert info["bounding"]["engine"] == "duckdb"
    chances = list(info["partition_selection"]["release_probability"].values())
    assert chances[0] <= 1e-7 and chances == sorted(chances) and chances[-1] > 0.99
    assert con.budget.spent.epsilon == 0


def test_budget_is_charged_before_release_and_overdraw_is_refused():
    con = pums_con(budget=dpsql.Budget(epsilon=1.0, delta=1e-6))
    con.sql("SELECT COUNT(*) FROM pums", epsilon=0.75)
    assert con.budget.spent.epsilon == 0.75
    with pytest.raises(dpsql.BudgetExceededError, match="nothing was spent"):
        con.sql("SELECT COUNT(*) FROM pums", epsilon=0.5)
    assert con.budget.spent.epsilon == 0.75
    con.sql("SELECT COUNT(*) FROM pums", epsilon=0.25)
    assert con.budget.remaining.epsilon == 0


@pytest.mark.parametrize("epsilon,delta", [(0, 0), (-1, 0), (math.nan, 0), (math.inf, 0),
                                           (1, 1.0), (1, -1e-9), (1, math.nan)])
def test_invalid_privacy_parameters_are_refused(epsilon, delta):
    con = pums_con()
    with pytest.raises(dpsql.PrivacyError):
        con.sql("SELECT COUNT(*) FROM pums", epsilon=epsilon, delta=delta)
    assert con.budget.spent.epsilon == 0


def test_refused_queries_spend_nothing_and_failed_ones_are_charged(tmp_path):
    con = pums_con()
    with pytest.raises(dpsql.UnsupportedQueryError):
        con.sql("SELECT age FROM pums")
    path = tmp_path / "gone.parquet"
    pa.parquet.write_table(pa.table({"pid": [1], "x": [1]}), path)
    con.register("gone", str(path), privacy_unit="pid")
    path.unlink()
    assert con.budget.spent.epsilon == 0 and not con.budget.charges
    with pytest.raises(dpsql.ExecutionError, match="full cost was charged") as failure:
        con.sql("SELECT COUNT(*) FROM gone", epsilon=0.25)
    assert failure.value.__cause__ is None and failure.value.__suppress_context__
    (charge,) = con.budget.charges
    assert charge.epsilon == 0.25


def test_confidence_intervals_cover_at_least_the_nominal_level():
    con = pums_con(budget=BIG)
    truth = exact("SELECT COUNT(*), SUM(age) FROM pums")[0]
    hits = np.zeros(2)
    runs = 300
    for seed in range(runs):
        res = con.sql("SELECT COUNT(*) AS n, SUM(age) AS s FROM pums", epsilon=0.05, seed=seed)
        row = res.ci(0.9).to_pylist()[0]
        hits += [row["n_lower"] <= truth[0] <= row["n_upper"],
                 row["s_lower"] <= truth[1] <= row["s_upper"]]
    # Binomial(300, 0.9): 5 standard deviations below the mean is 0.815.
    assert (hits / runs >= 0.815).all(), hits / runs


@pytest.mark.parametrize("sql", [
    "SELECT Refurbished, COUNT(*) AS n FROM crashes GROUP BY Refurbished",
    "SELECT AVG(Temperature) AS t FROM crashes GROUP BY Refurbished",
    "SELECT Region, COUNT(DISTINCT DeviceID) AS n, MEDIAN(Temperature) AS m FROM crashes "
    "GROUP BY Region",
])
def test_columns_named_in_mixed_case_are_grouped_and_read_back(sql):
    """Engines name a bare column by its own spelling (``Refurbished``), not the bounded
    query's (``refurbished``): dpsql then failed after reading the data, charging the
    query in full, on every query grouped by such a column (found by tests/peers on
    SmartNoise's Telemetry.Crashes)."""
    table = pa.table({"DeviceID": [i % 40 for i in range(200)],
                      "Refurbished": [i % 3 == 0 for i in range(200)],
                      "Region": ["EMEA", "LATAM"] * 100,
                      "Temperature": [25.0 + i % 40 for i in range(200)]})
    con = dpsql.connect(budget=dpsql.Budget(epsilon=10.0, delta=1e-6), seed=1)
    con.register("crashes", table, privacy_unit="DeviceID",
                 bounds={"Temperature": (25.0, 65.0)},
                 public_keys={"Refurbished": [False, True], "Region": ["EMEA", "LATAM"]})
    result = con.sql(sql, epsilon=1.0)
    assert len(result.fetchall()) in (1, 2)
    assert con.budget.spent.epsilon == 1.0

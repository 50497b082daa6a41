"""``max_rows_per_unit="auto"``: the rows limit estimated privately by the first query on the
table, from its own budget (``Connection.estimate_limits``; audited on neighbouring
databases in tests/privacy/test_audit_auto_limits.py)."""

from __future__ import annotations

import warnings

import pyarrow as pa
import pytest

import dpsql
from dpsql.catalog import TableInfo

COUNT = "SELECT k, COUNT(*) AS n FROM v GROUP BY k"


def visits(rows_per_person: dict[int, int]) -> pa.Table:
    pids = [p for p, (rows, people) in enumerate(
        (r, n) for r, n in rows_per_person.items() for _ in range(n)) for _ in range(rows)]
    return pa.table({"pid": pids, "k": ["a" if p % 2 else "b" for p in pids]})


def connection(table: pa.Table, **limits) -> dpsql.Connection:
    con = dpsql.connect(budget=dpsql.Budget(epsilon=10.0, delta=1e-5), seed=4)
    con.register("v", table, privacy_unit="pid", public_keys={"k": ["a", "b"]},
                 **{"max_rows_per_unit": "auto", **limits})
    return con


def test_the_first_query_estimates_the_limit_from_its_own_budget_once():
    con = connection(visits({1: 600, 3: 900, 20: 30}))
    with pytest.warns(dpsql.PrivacyWarning, match=r"v.max_rows_per_unit estimated as 4"):
        first = con.sql(COUNT, epsilon=2.0, delta=1e-6)
    # the answer's cost is the statement's: the estimate (a quarter) and the count
    assert first.cost.epsilon == con.budget.spent.epsilon == 2.0
    info = con.catalog.get("v")
    assert (info.max_rows_per_unit, info.auto_limits) == (4, ())
    with warnings.catch_warnings():
        warnings.simplefilter("error", dpsql.PrivacyWarning)
        con.sql("SELECT COUNT(*) AS n FROM v", epsilon=1.0)
    assert con.budget.spent.epsilon == 3.0
    # with no per-group limit declared, the estimated rows limit caps rows per group too
    assert "L1=4 " in str(con.explain(COUNT))


def test_explain_says_the_limit_is_needed_and_nothing_is_spent():
    con = connection(visits({1: 100}))
    with pytest.raises(dpsql.BoundsNeeded, match=r"v.max_rows_per_unit, declared \"auto\""):
        con.explain(COUNT)
    with pytest.raises(dpsql.BudgetExceededError):
        con.sql(COUNT, epsilon=50.0, delta=1e-6)
    assert con.budget.spent.epsilon == 0 and con.catalog.get("v").auto_limits


def test_only_the_rows_limit_may_be_auto():
    columns = {"pid": "INT", "k": "VARCHAR"}
    for limit in ("max_groups_per_unit", "max_rows_per_group"):
        with pytest.raises(dpsql.CatalogError, match="suggest_bounds"):
            TableInfo.private("t", columns=columns, privacy_unit="pid", **{limit: "auto"})
    with pytest.raises(dpsql.CatalogError, match="positive integer"):
        TableInfo.private("t", columns=columns, privacy_unit="pid", max_rows_per_unit="many")
    row_level = TableInfo.private("t", columns=columns, row_privacy=True,
                                  max_rows_per_unit="auto")
    assert row_level.auto_limits == ()


def test_a_declared_group_limit_stays_and_a_toml_catalog_may_say_auto(tmp_path):
    path = tmp_path / "v.parquet"
    import pyarrow.parquet as pq

    pq.write_table(visits({1: 600, 3: 900}), path)
    catalog = tmp_path / "catalog.toml"
    catalog.write_text(f'[tables.v]\nsource = "{path}"\nprivacy_unit = "pid"\n'
                       'max_rows_per_unit = "auto"\nmax_rows_per_group = 1\n'
                       'public_keys = { k = ["a", "b"] }\n')
    con = dpsql.connect(catalog=str(catalog), budget=dpsql.Budget(epsilon=5.0, delta=1e-5),
                        seed=1)
    with pytest.warns(dpsql.PrivacyWarning):
        con.sql(COUNT, epsilon=2.0, delta=1e-6)
    info = con.catalog.get("v")
    assert (info.max_rows_per_unit, info.max_rows_per_group) == (4, 1)

"""``max_rows_per_unit="auto"``: the rows limit estimated privately by the first query on the
table, from its own budget (``Connection.estimate_limits``; audited on neighbouring
databases in tests/privacy/test_audit_auto_limits.py)."""

from __future__ import annotations

import warnings
from fractions import Fraction

import pyarrow as pa
import pytest

import dpsql
from dpsql.autobounds import noise_per_unit
from dpsql.catalog import TableInfo
from dpsql.suggest import limit_for_error

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


def priced(rows_per_person: dict[int, int], value=lambda pid: 100.0 + pid % 50) -> pa.Table:
    table = visits(rows_per_person)
    return table.append_column("x", pa.array([value(p) for p in table.column("pid").to_pylist()],
                                             pa.float64()))


def test_limit_and_bounds_are_estimated_together_and_charged_exactly():
    """A query needing the rows limit and a column's bounds pays one quarter of ε (half of δ)
    split evenly over three releases — people by rows, the column's values, and for an
    average or sum people by (rows, value) cells, whose public keys spend no δ —, all
    charged before the query reads any data, and the query the rest: the parts add up to
    the statement's (ε, δ) at most."""
    con = dpsql.connect(budget=dpsql.Budget(epsilon=10.0, delta=1e-5), seed=2)
    con.register("v", priced({1: 600, 3: 900, 20: 30}), privacy_unit="pid",
                 max_rows_per_unit="auto", bounds={"x": "auto"}, public_keys={"k": ["a", "b"]})
    with pytest.warns(dpsql.PrivacyWarning, match=r"max_rows_per_unit estimated as \d+, "
                      r"v.x in \[0, \d+\] with epsilon=0.166667, delta=1.66667e-07 each"):
        result = con.sql("SELECT k, AVG(x) AS a FROM v GROUP BY k", epsilon=2.0, delta=1e-6)
    charged = con.budget.charges
    each = Fraction(charged[0].epsilon)
    assert [Fraction(c.epsilon) for c in charged[:3]] == [each] * 3 and each <= Fraction(1, 6)
    assert sum(Fraction(c.epsilon) for c in charged) <= 2
    assert sum(Fraction(c.delta) for c in charged) <= Fraction(1e-6)
    assert [c.delta for c in charged[:3]] == [charged[0].delta] * 2 + [0.0]
    assert Fraction(charged[0].delta) <= Fraction(1e-6) / 6
    assert result.cost.epsilon == 2.0
    info = con.catalog.get("v")
    assert info.auto_limits == info.auto_bounds == ()
    assert 1 <= info.max_rows_per_unit <= 32 and 128 <= info.bounds["x"][1] <= 2048
    con.sql("SELECT k, AVG(x) AS a FROM v GROUP BY k", epsilon=1.0, delta=1e-6)
    assert len(con.budget.charges) == 5  # estimated once: the next query pays only itself


def test_a_hostile_person_cannot_move_the_choice_beyond_the_released_bins():
    """One person with 5,000 rows of 10¹² is in no released bin of either histogram (one
    person each), so the limit stays among the edges of everyone else's bins and the clamp
    within the tail those bins extrapolate (1,500 values in [64, 128) extrapolate to at most
    2^13: ``autobounds._tail``), whatever the person holds."""
    ordinary = {1: 600, 3: 900}
    hostile = priced({**ordinary, 5000: 1}, value=lambda pid: 1e12 if pid == 1500 else 100.0)
    for seed in range(3):
        con = dpsql.connect(budget=dpsql.Budget(epsilon=10.0, delta=1e-5), seed=seed)
        con.register("v", hostile, privacy_unit="pid", max_rows_per_unit="auto",
                     bounds={"x": "auto"})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", dpsql.PrivacyWarning)
            con.sql("SELECT SUM(x) FROM v", epsilon=1.0, delta=1e-6)
        info = con.catalog.get("v")
        assert info.max_rows_per_unit <= 4 and info.bounds["x"][1] <= 2.0**13


def test_averages_and_quantiles_get_a_smaller_limit_than_sums_and_counts():
    """Dropping rows biases a sum by what they hold, an average only by how they differ
    (``suggest.AVG_ROW_BIAS``): where the noise of 48 rows per person is worth a sum's and a
    count's loss of the heavy people's rows beyond, the average stops at 8."""
    people = [(1, 2000.0), (8, 1000.0), (64, 100.0)]
    values = {"x": [(128.0, 3100.0)]}
    noise = noise_per_unit(0.1, 1)
    assert limit_for_error(people, values, noise_per_row=noise)[0] == 48
    assert limit_for_error(people, noise_per_row=noise)[0] == 48
    assert limit_for_error(people, values, noise_per_row=noise, served=[("x", "avg")])[0] == 8
    # a median loses ranks as an average loses rows, and gets the bin that holds it
    assert limit_for_error(people, values, noise_per_row=noise, served=[("x", 0.5)]) == (
        8, {"x": (64.0, 128.0)}, {})


def test_a_count_beside_an_average_keeps_the_rows_it_would_lose():
    """The limit serves every statistic of the query: beside AVG(x), a COUNT(*) or a SUM of
    a column with declared bounds loses the heavy people's rows as a count does, so the
    limit stays where the count alone puts it (bench_utility's COUNT, SUM(age), AVG(cost)
    lost a third of its count to the average's limit), and the average keeps the rows that
    serve it alone as its own limit: each has its own share of ε."""
    people = [(1, 2000.0), (8, 1000.0), (64, 100.0)]
    values = {"x": [(128.0, 3100.0)]}
    noise = noise_per_unit(0.1, 1)
    both = [("", "count"), ("x", "avg")]
    alone = limit_for_error(people, values, noise_per_row=noise, served=[("x", "avg")])
    assert limit_for_error(people, values, noise_per_row=noise, served=both) == (
        48, alone[1], {"x": 8})
    # a column that a quantile also ranks keeps the query's rows (its histogram's)
    ranked = [*both, ("x", 0.5)]
    assert limit_for_error(people, values, noise_per_row=noise, served=ranked)[2] == {}
    table = visits({1: 600, 3: 900, 20: 30})
    table = table.append_column("x", pa.array([float(p % 50) for p in table["pid"].to_pylist()]))
    con = connection(table, bounds={"x": "auto"})
    with pytest.raises(dpsql.BoundsNeeded) as needed:
        con.explain("SELECT COUNT(*) AS n, AVG(x) AS a FROM v")
    assert set(needed.value.served) == {("v", "", "count"), ("v", "x", "avg")}
    assert needed.value.columns == (("v", "x"),)


def test_the_limit_minimises_the_error_it_models():
    """Exact, for a count: 100 people with 1 row and n people in the bin of 3 or 4 rows (half
    each), noise s per row of limit. Limit 1 drops 2.5 rows of each of the n, limit 3 half
    a row, limit 4 none: the errors are (2.5n)² + s², (0.5n)² + (3s)² and (4s)²."""
    for n, s in [(10.0, 6.0), (1.0, 2.0), (1.0, 0.15), (1.0, 0.3), (10.0, 0.5), (10.0, 2.0)]:
        errors = {1: (2.5 * n) ** 2 + s**2, 3: (0.5 * n) ** 2 + (3 * s) ** 2, 4: (4 * s) ** 2}
        chosen = limit_for_error([(1, 100.0), (4, n)], noise_per_row=s)[0]
        assert chosen == min(errors, key=errors.get), (n, s, errors)
    assert limit_for_error([], noise_per_row=1.0) == (1, {}, {})
    assert limit_for_error([(None, 5.0), (2, -3.0)], noise_per_row=1.0) == (1, {}, {})


def test_a_median_estimates_its_limit_and_a_range_around_it():
    """MEDIAN(x) with the limit and the bounds "auto": both chosen for the quantile, its bounds
    the released bins around the median (above 0 here), charged as any estimate."""
    con = dpsql.connect(budget=dpsql.Budget(epsilon=10.0, delta=1e-5), seed=6)
    table = priced({1: 600, 3: 900}, value=lambda pid: 2.0 ** (4 + pid % 8))
    con.register("v", table, privacy_unit="pid", max_rows_per_unit="auto", bounds={"x": "auto"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpsql.PrivacyWarning)
        ((median,),) = con.sql("SELECT MEDIAN(x) FROM v", epsilon=2.0, delta=1e-6).fetchall()
    info = con.catalog.get("v")
    lo, hi = info.bounds["x"]
    assert 0 < lo <= median <= hi < 2.0**12 and info.max_rows_per_unit in (1, 3, 4)
    assert [Fraction(c.epsilon) for c in con.budget.charges] == [Fraction(1, 4)] * 2 + [
        Fraction(3, 2)]

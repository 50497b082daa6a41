"""The group choice keeps a fair random subset of each unit's groups, for every kind of id.

When a unit has more groups than ``max_groups_per_unit`` allows, the bounded query keeps
the g groups that rank first under a keyed pseudo-random order (``dpsql.rewrite.digest``):
``unit_order`` for integer units, an MD5 per pair for the others. Privacy needs only that
the choice depends on the unit's own rows (the audits and the fuzzer check that); these
tests check the utility side: across many units that all have the same groups, each group
is kept about equally often, whatever the ids look like (sequential ids are where a linear
order of the ids alone failed) and for each salt, i.e. each query.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from scipy import stats
from sqlglot import exp

import dpsql
from dpsql.compile import CompiledQuery
from dpsql.engines import DUCKDB, SPARK
from dpsql.rewrite.choose import first_group_of_rows
from dpsql.rewrite.digest import integer_unit
from tests.support import BACKEND, hostile_table, make_plan, run_bounded, with_null_keys

UNITS = 6000
GROUPS = [f"g{i}" for i in range(20)]
SALTS = [f"salt-{i}" for i in range(30)]


def ids(kind: str) -> list:
    rng = np.random.default_rng(7)
    if kind == "sequential":
        return list(range(1, UNITS + 1))
    if kind == "spread":  # large, negative and extreme 64-bit ids
        spread = rng.choice(np.arange(-(2**62), 2**62, 2**45), UNITS - 2, replace=False)
        return [int(v) for v in spread] + [-(2**63), 2**63 - 1]
    return [f"person-{i}" for i in range(UNITS)]


def table(kind: str) -> pa.Table:
    units = ids(kind)
    pid = [u for u in units for _ in GROUPS]
    return pa.table({"pid": pid, "k": GROUPS * len(units), "x": [1.0] * len(pid),
                     "flag": [0] * len(pid)})


@pytest.mark.parametrize("g", [1, 3])
@pytest.mark.parametrize("kind", ["sequential", "spread", "text"])
def test_every_group_is_kept_about_equally_often(kind, g):
    unit_type = "VARCHAR" if kind == "text" else "BIGINT"
    assert integer_unit(unit_type) == (kind != "text")
    plan = make_plan("SELECT k, COUNT(*) FROM t GROUP BY k",
                     {"pid": unit_type, "k": "VARCHAR", "x": "DOUBLE", "flag": "BIGINT"},
                     max_groups_per_unit=g, max_rows_per_group=1)
    data = table(kind)
    expected = UNITS * g / len(GROUPS)
    # Keeping g of 8 without replacement varies less than a multinomial: χ² is conservative.
    limit = stats.chi2.isf(1e-4, len(GROUPS) - 1)
    for salt in SALTS:
        cells = run_bounded(data, plan, salt=salt)
        counts = [next(iter(cells[(group,)].values())) for group in GROUPS]
        assert sum(counts) == UNITS * g  # exactly g groups of every unit
        chi2 = sum((c - expected) ** 2 / expected for c in counts)
        assert chi2 < limit, (salt, counts)


def test_salts_choose_differently_and_one_salt_the_same_each_time():
    plan = make_plan("SELECT k, COUNT(*) FROM t GROUP BY k", max_groups_per_unit=1,
                     max_rows_per_group=1)
    data = table("sequential")
    first = run_bounded(data, plan, salt="one")
    assert run_bounded(data, plan, salt="one") == first
    assert run_bounded(data, plan, salt="two") != first


@pytest.mark.parametrize("g", [1, 2, 12])
def test_each_kept_pair_keeps_its_own_keys_null_and_multi_column_ones_too(g):
    """The choice ranks a group by its rank among the keys and gives the keys back by that
    rank after it (DuckDB): every unit keeps min(its groups, g) of its own pairs, with the
    keys they had, a NULL key included, and all of them when nobody is over the limit."""
    rng = np.random.default_rng(11)
    pool = [(k1, k2) for k1 in ("x", "y", None) for k2 in range(4)]
    rows, having = [], {group: 0 for group in pool}
    for unit in range(400):
        mine = [pool[i] for i in rng.choice(len(pool), int(rng.integers(1, 7)), replace=False)]
        for group in mine:
            having[group] += 1
            rows += [(unit, *group)] * int(rng.integers(1, 3))
    pid, k1, k2 = zip(*rows, strict=True)
    data = pa.table({"pid": pa.array(pid, pa.int64()), "k1": list(k1),
                     "k2": pa.array(k2, pa.int64()), "x": [1.0] * len(rows)})
    plan = make_plan("SELECT k1, k2, COUNT(DISTINCT pid) FROM t GROUP BY k1, k2",
                     {"pid": "BIGINT", "k1": "VARCHAR", "k2": "BIGINT", "x": "DOUBLE"},
                     max_groups_per_unit=g, max_rows_per_group=1)
    cells = run_bounded(data, plan, salt="s")
    kept = {group: next(iter(stat.values())) for group, stat in cells.items()}
    assert set(kept) <= set(pool)
    assert all(kept[group] <= having[group] for group in kept)
    groups_of = np.bincount([unit for unit, *_ in set(rows)])
    assert sum(kept.values()) == sum(min(n, g) for n in groups_of)
    if g == len(pool):
        assert kept == {group: float(n) for group, n in having.items() if n}


@pytest.mark.parametrize("public", [False, True])
@pytest.mark.parametrize("counts", ["COUNT(*), COUNT(x), COUNT(DISTINCT pid)",
                                    "COUNT(DISTINCT pid)"])
def test_counts_of_each_units_first_group_read_from_its_rows_are_its_first_pairs(counts,
                                                                                 public):
    """At one group per unit, counts alone find each unit's group by one aggregate over
    its rows (strategy ``first_group_of_rows``); beside a SUM, the pairs are aggregated
    first and the first pair taken. Both keep the same group of each unit and the same
    clamped counts (one row; one value if the pair has one), whatever the keys (NULL among
    them), the filter, the public domain and the salt. COUNT(DISTINCT pid) alone takes the
    rows' plan at c > 1 too."""
    c = 1 if "COUNT(*)" in counts else 3
    limits = {"max_rows_per_group": c}
    if public:
        limits["public_keys"] = {"k": [f"k{i}" for i in range(8)]}
    where = "WHERE flag < 2 OR k IS NULL"
    rows = make_plan(f"SELECT k, flag, {counts} FROM t {where} GROUP BY k, flag", **limits)
    pairs = make_plan(f"SELECT k, flag, {counts}, SUM(x) FROM t {where} GROUP BY k, flag",
                      **limits)
    assert first_group_of_rows(rows, DUCKDB) and not first_group_of_rows(pairs, DUCKDB)
    table = with_null_keys(hostile_table(seed=2))

    def cells(plan, salt: str) -> dict[tuple, dict]:
        names = {s.name: (s.kind, s.expr.sql() if s.expr else None) for s in plan.stats
                 if s.kind not in ("sum", "centered_sum")}  # the SUM's own
        return {key: {names[n]: v for n, v in stats.items() if n in names}
                for key, stats in run_bounded(table, plan, salt).items()}

    for salt in ("s", "t"):
        got = cells(rows, salt)
        assert len(got) > 5 and any(None in key for key in got) is not public
        assert got == cells(pairs, salt)
        if c == 1:  # some unit's first pair has rows but no value
            assert any(cell[("rows", None)] > cell[("count", "x")] for cell in got.values())


@pytest.mark.parametrize("g", [1, 2])
def test_public_keys_choose_the_pairs_the_same_keys_private_would_in_the_domain(g):
    """With every key public text, the codes are the domain's groups and the join to them
    drops the pairs outside it (``rewrite.pairs.domain_groups``); the pairs kept are the ones
    the private keys keep among the same groups: each unit's choice ranks its own groups
    alike, whichever groups the codes list. Rows outside the domain (another text, a NULL)
    are dropped before the choice, so they take no unit's place. Each unit adds its id to
    its groups, so a different pair kept shows; the keys released keep their type."""
    rng = np.random.default_rng(5)
    domain = {"k": ("a", "b", "c"), "m": ("1", "2", "3")}
    pool = [(k, m) for k in ("a", "b", "c", "z", None) for m in ("1", "2", "3", "9")]
    rows = []
    for unit in range(300):
        for i in rng.choice(len(pool), int(rng.integers(1, 8)), replace=False):
            rows += [(unit, *pool[i], float(unit % 11))] * int(rng.integers(1, 3))
    pid, k, m, x = zip(*rows, strict=True)
    data = pa.table({"pid": pa.array(pid, pa.int64()), "k": list(k), "m": list(m), "x": list(x)})
    columns = {"pid": "BIGINT", "k": "VARCHAR", "m": "VARCHAR", "x": "DOUBLE"}
    query = "SELECT k, m, COUNT(*), SUM(x), COUNT(DISTINCT pid) FROM t {} GROUP BY k, m"
    public = make_plan(query.format(""), columns, max_groups_per_unit=g,
                       max_rows_per_group=2, public_keys=domain)
    private = make_plan(query.format("WHERE k IN ('a', 'b', 'c') AND m IN ('1', '2', '3')"),
                        columns, max_groups_per_unit=g, max_rows_per_group=2)
    assert _codes(public).find(exp.Values)  # the codes are the domain's groups
    units = next(s.name for s in public.stats if s.kind == "units")
    for salt in ("s", "t"):
        chosen = run_bounded(data, public, salt=salt)
        assert chosen == run_bounded(data, private, salt=salt)
        in_domain = {(u, a, b) for u, a, b, _ in rows if a in domain["k"] and b in domain["m"]}
        groups_of = np.unique([u for u, *_ in in_domain], return_counts=True)[1]
        assert sum(cell[units] for cell in chosen.values()) == sum(np.minimum(groups_of, g))
    schema = BACKEND.execute(CompiledQuery.of(public), salt="s").schema  # t is loaded
    assert (schema.field("k").type, schema.field("m").type) == (pa.string(), pa.string())


@pytest.mark.parametrize("source", ["table", "parquet"])
def test_a_registered_tables_public_text_keys_are_coded_from_their_domain(source, tmp_path):
    """A registered table's text columns carry their width (``VARCHAR(1024)``); its public
    text keys still have their codes from the domain's values, reading no rows (the width
    once hid them from ``domain_groups``, and every registered table coded the distinct
    groups of its rows again: a second scan of the source)."""
    data = pa.table({"pid": pa.array([1, 2], pa.int64()), "region": ["east", "west"],
                     "x": [1.0, 2.0]})
    if source == "parquet":
        pq.write_table(data, tmp_path / "t.parquet")
        data = str(tmp_path / "t.parquet")
    con = dpsql.connect(budget=dpsql.Budget(epsilon=10.0, delta=1e-3), cache=False)
    con.register("t", data, privacy_unit="pid", bounds={"x": (0, 10)}, max_groups_per_unit=1,
                 public_keys={"region": ["east", "west", "north"]})
    compiled = con.compile("SELECT region, SUM(x) FROM t GROUP BY region", epsilon=1.0,
                           delta=1e-6)
    assert compiled.plan.column_types["region"].startswith("VARCHAR(")
    codes = next(cte for cte in compiled.bounded.ast.find_all(exp.CTE)
                 if cte.alias == "__dp_codes")
    assert codes.find(exp.Values) and not codes.find(exp.Distinct)
    con.close()


@pytest.mark.parametrize("types", [{"k": "VARCHAR", "n": "SMALLINT"}, {"k": "DATE"}])
def test_public_keys_not_all_text_take_the_codes_of_the_rows_groups(types):
    """An integer or a date key's literal is not of its column's type (an INTEGER, a cast
    text), and the keys released come from the codes: such domains code the distinct
    groups of the rows, kept by a semi-join with the domain, so the keys keep their type."""
    keys = ", ".join(types)
    values = {"VARCHAR": ("a", "b"), "SMALLINT": (1, 2),
              "DATE": (dt.date(2026, 1, 1), dt.date(2026, 1, 2))}
    domain = {name: values[kind] for name, kind in types.items()}
    plan = make_plan(f"SELECT {keys}, COUNT(*) FROM t GROUP BY {keys}",
                     {"pid": "BIGINT", "x": "DOUBLE", **types}, max_groups_per_unit=1,
                     public_keys=domain)
    codes = _codes(plan)
    assert codes.find(exp.Distinct)
    assert all(values.find_ancestor(exp.In) for values in codes.find_all(exp.Values))


def _codes(plan) -> exp.CTE:
    """The bounded query's codes CTE (the group choice's)."""
    return next(cte for cte in CompiledQuery.of(plan).bounded.ast.find_all(exp.CTE)
                if cte.alias == "__dp_codes")


@pytest.mark.parametrize("g", [1, 2])
@pytest.mark.parametrize(("source", "stored"), [
    ("(SELECT pid, k, x FROM t WHERE x >= 0) AS s", False),
    ("(SELECT pid, k, SUM(x) AS x FROM t GROUP BY pid, k) AS s", True),
])
def test_the_rows_are_coded_once_whatever_they_are_read_from(g, source, stored):
    """The codes and the pairs both read the rows (``first_pair``,
    ``first_pairs_by_window``): a query of one table's rows reads it twice, a source
    with a join, an aggregate or DISTINCT is computed once (the CTE ``__dp_records``).
    Either way the choice is the one the same rows make as a table."""
    def per_pair(rows: list[tuple]) -> list[tuple]:
        sums: dict[tuple, float] = {}
        for u, k, x in rows:
            sums[(u, k)] = sums.get((u, k), 0.0) + x
        return [(u, k, x) for (u, k), x in sums.items()]

    rng = np.random.default_rng(3)
    rows = [(int(u), f"g{int(k)}", float(x)) for u, k, x in
            zip(rng.integers(0, 200, 3000), rng.integers(0, 9, 3000),
                rng.integers(-1, 4, 3000), strict=True)]
    data = pa.table({"pid": pa.array([r[0] for r in rows], pa.int64()),
                     "k": [r[1] for r in rows], "x": [r[2] for r in rows]})
    columns = {"pid": "BIGINT", "k": "VARCHAR", "x": "DOUBLE"}
    query = "SELECT k, COUNT(*), SUM(x) FROM {} GROUP BY k"
    plan = make_plan(query.format(source), columns, max_groups_per_unit=g, max_rows_per_group=2)
    ctes = {cte.alias for cte in CompiledQuery.of(plan).bounded.ast.find_all(exp.CTE)}
    assert ("__dp_records" in ctes) == stored
    same = per_pair(rows) if stored else [r for r in rows if r[2] >= 0]
    as_table = pa.table({"pid": pa.array([r[0] for r in same], pa.int64()),
                         "k": [r[1] for r in same], "x": [r[2] for r in same]})
    direct = make_plan(query.format("t"), columns, max_groups_per_unit=g, max_rows_per_group=2)
    count = next(s.name for s in plan.stats if s.kind == "rows")  # SUM's quanta differ
    for salt in ("s", "t"):
        got, want = run_bounded(data, plan, salt), run_bounded(as_table, direct, salt)
        assert {k: v[count] for k, v in got.items()} == {k: v[count] for k, v in want.items()}
        assert got == want or stored


@pytest.mark.parametrize(("sql", "limits", "packs"), [
    ("SELECT k, flag, SUM(x), AVG(x), COUNT(x) FROM t WHERE flag < 2 OR k IS NULL "
     "GROUP BY k, flag", {"max_rows_per_group": 3}, 1),
    ("SELECT k, SUM(x), VARIANCE(x), COUNT(*) FROM t GROUP BY k", {}, 2),
    ("SELECT k, SUM(x), MEDIAN(x) FROM t GROUP BY k", {"max_rows_per_group": 2}, 1),
    ("SELECT k, COUNT(*), COUNT(x), SUM(x) FROM t GROUP BY k", {}, 1),
    ("SELECT k, SUM(x) FROM t GROUP BY k", {"public_keys": {"k": ["k0", "k1", "k3"]}}, 1),
])
def test_first_pairs_partials_read_out_of_their_packs_are_their_partials(sql, limits, packs):
    """At one group per unit DuckDB takes its first pair's partials packed into a few
    BIGINTs (``first_pair``, packed); Spark's SQL takes each partial by itself
    (``MIN_BY``) from pairs formed per (unit, keys). Run both in DuckDB: the same cells,
    with values at and beyond the bounds, NULL and NaN among them, a NULL key, a filter, a
    public domain, and two salts; with two packs, and a partial without a bound (a
    quantile's count of values) taken by itself beside them."""
    compiled = CompiledQuery.of(make_plan(sql, **limits))
    packed = compiled.bounded_sql()
    assert f"__dp_pack{packs - 1}" in packed and f"__dp_pack{packs}" not in packed
    assert "MIN(__dp_first) % 4294967296" in packed
    one_by_one = CompiledQuery.of(compiled.plan, SPARK).bounded.sql("duckdb")
    assert "__dp_pack" not in one_by_one
    BACKEND.load("t", with_null_keys(hostile_table(seed=4)))

    def cells(sql: str, salt: str) -> list[dict]:  # a histogram's buckets in any order
        rows = BACKEND.run_sql(sql, compiled.parameters(salt)).to_pylist()
        return sorted(({n: sorted(v, key=str) if isinstance(v, list) else v
                        for n, v in row.items()} for row in rows), key=str)

    for salt in ("s", "t"):
        got = cells(packed, salt)
        assert len(got) > 2
        assert got == cells(one_by_one, salt)


@pytest.mark.parametrize(("sql", "limits"), [
    ("SELECT k, flag, COUNT(*), SUM(x), AVG(x) FROM t WHERE flag < 2 OR k IS NULL "
     "GROUP BY k, flag", {"max_groups_per_unit": 2, "max_rows_per_group": 3}),
    ("SELECT k, COUNT(*), SUM(x) FROM t GROUP BY k",
     {"max_groups_per_unit": 2, "public_keys": {"k": ["k0", "k1", "k3", "k9"]}}),
    ("SELECT k, COUNT(*), SUM(x) FROM t GROUP BY k",
     {"max_groups_per_unit": 3, "max_rows_per_group": 2, "max_rows_per_unit": 4}),
    ("SELECT k, COUNT(*), SUM(LEAST(GREATEST(x, 0), 5)) FROM (SELECT pid, k, SUM(x) AS x "
     "FROM t GROUP BY pid, k) AS s GROUP BY k", {"max_groups_per_unit": 2}),
])
def test_pairs_aggregated_before_their_codes_are_the_pairs_of_the_coded_rows(sql, limits):
    """DuckDB aggregates the pairs per (unit, keys) and joins only the pairs to the groups'
    codes (``pairs.pairs_by_rank``): a pair's partials are computed from all its rows, so
    they are the partials of its rows coded first. Spark's form (pairs per (unit, keys),
    each hashing its own code, ranked by (order, keys)) is run in DuckDB beside it: the
    same cells at g > 1 on hostile data, with a NULL key and a filter, a text domain
    whose codes drop the pairs outside it, a total-rows cap, a source computed once, and
    two salts. (At g = 1 the packed test above compares the two forms.)"""
    compiled = CompiledQuery.of(make_plan(sql, **limits))
    assert "__dp_rank BETWEEN" in compiled.bounded_sql()
    pairs = next(cte for cte in compiled.bounded.ast.find_all(exp.CTE)
                 if cte.alias == "__dp_pairs").this
    assert pairs.find(exp.Group) and pairs.args["joins"]  # grouped by the keys, then joined
    in_rows = CompiledQuery.of(compiled.plan, SPARK).bounded.sql("duckdb")
    BACKEND.load("t", with_null_keys(hostile_table(seed=6)))

    def cells(sql: str, salt: str) -> list[dict]:
        return sorted(BACKEND.run_sql(sql, compiled.parameters(salt)).to_pylist(), key=str)

    for salt in ("s", "t"):
        got = cells(compiled.bounded_sql(), salt)
        assert len(got) > 2
        assert got == cells(in_rows, salt)

"""Public key domains filter whole (unit, group) pairs before the group cap.

The bounded query keeps only pairs whose keys are in the public domain, and it
does so before choosing at most ``max_groups_per_unit`` groups per unit: a
unit's groups outside the domain never take the place of groups inside it. So
for the same salt the bounded query over the whole table must equal the bounded
query (without public keys) over the rows whose keys are in the domain.
"""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import dpsql
from dpsql.analysis import analyze
from dpsql.catalog import Catalog, TableInfo
from tests.support import hostile_table, run_bounded

DOMAIN_K = [f"k{i}" for i in range(7)]  # the hostile table has k0..k11: some lie outside
DOMAIN_FLAG = [0, 2]

QUERIES = [
    "SELECT k, COUNT(*), SUM(x), AVG(x), COUNT(DISTINCT pid) FROM t GROUP BY k",
    "SELECT k, flag, SUM(x), COUNT(x) FROM t GROUP BY k, flag",
]
LIMITS = [
    {"max_groups_per_unit": 1, "max_rows_per_group": 2},
    {"max_groups_per_unit": 3, "max_rows_per_group": 4},
    {"max_groups_per_unit": 2, "max_rows_per_group": 3, "max_rows_per_unit": 4},
]


def make_plan(sql: str, public_keys: dict | None, **limits):
    catalog = Catalog()
    columns = {"pid": "BIGINT", "k": "VARCHAR", "x": "DOUBLE", "flag": "BIGINT"}
    catalog.add(TableInfo.private("t", columns=columns, privacy_unit="pid",
                                  bounds={"x": (-2, 10)}, public_keys=public_keys, **limits))
    return analyze(sql, catalog, epsilon=1.0, delta=1e-6)


def in_domain(table: pa.Table, public_keys: dict) -> pa.Table:
    mask = None
    for column, values in public_keys.items():
        inside = pc.is_in(table.column(column), value_set=pa.array(values))
        mask = inside if mask is None else pc.and_(mask, inside)
    return table.filter(mask)


@pytest.mark.parametrize("limits", LIMITS, ids=lambda d: ",".join(f"{v}" for v in d.values()))
@pytest.mark.parametrize("sql", QUERIES)
def test_out_of_domain_groups_are_dropped_before_the_cap(sql, limits):
    public_keys = {"k": DOMAIN_K} if "flag" not in sql else {"k": DOMAIN_K, "flag": DOMAIN_FLAG}
    public = make_plan(sql, public_keys, **limits)
    private = make_plan(sql, None, **limits)
    assert public.contribution.groups_per_unit == private.contribution.groups_per_unit
    table = hostile_table(seed=3)
    names = {s.name for s in public.sensitivities}  # without public keys, selection adds a count
    for salt in ("a", "b", "c"):
        expected = run_bounded(in_domain(table, public_keys), private, salt=salt)
        expected = {k: {n: v for n, v in cells.items() if n in names}
                    for k, cells in expected.items()}
        assert run_bounded(table, public, salt=salt) == expected


def test_the_hostile_table_has_units_that_need_the_order():
    """Units with more groups than the cap, some of them outside the domain."""
    table = hostile_table(seed=3).to_pylist()
    groups: dict[int, set[str]] = {}
    for row in table:
        groups.setdefault(row["pid"], set()).add(row["k"])
    assert any(len(g) > 3 and len(g - set(DOMAIN_K)) >= 3 and g & set(DOMAIN_K)
               for g in groups.values())


def typed_table() -> pa.Table:
    """The hostile table with keys of other types: a date, a timestamp, a boolean and
    BIGINTs that a double cannot tell apart (2⁶⁰ + 1 and 2⁶⁰ + 2)."""
    table = hostile_table(seed=3)
    digit = [int(k[1:]) for k in table.column("k").to_pylist()]
    return table.append_column("d", pa.array([dt.date(2024, 1, 1 + i) for i in digit])) \
        .append_column("ts", pa.array([dt.datetime(2024, 1, 1, i, 30) for i in digit],
                                      pa.timestamp("us"))) \
        .append_column("b", pa.array([i % 2 == 0 for i in digit])) \
        .append_column("big", pa.array([2**60 + i for i in digit], pa.int64()))


TYPED_DOMAINS = {
    "d": [dt.date(2024, 1, 2), dt.date(2024, 1, 5), dt.date(2030, 1, 1)],
    "ts": [dt.datetime(2024, 1, 1, 0, 30), dt.datetime(2024, 1, 1, 7, 30)],
    "b": [True],
    "big": [2**60 + 1, 2**60 + 3],
}


@pytest.mark.parametrize("key", sorted(TYPED_DOMAINS))
def test_public_dates_timestamps_booleans_and_big_integers_keep_their_domain(key):
    """A public domain of dates, timestamps, booleans or large integers is written as
    literals of the column's type (``rewrite.frame.domain_values``): the bounded query keeps
    exactly the rows of its values, as the same query without public keys over those rows
    alone. (A BIGINT written as a double would keep 2⁶⁰ + 2 with 2⁶⁰ + 1.)"""
    columns = {"pid": "BIGINT", "k": "VARCHAR", "x": "DOUBLE", "flag": "BIGINT", "d": "DATE",
               "ts": "TIMESTAMP", "b": "BOOLEAN", "big": "BIGINT"}
    sql = f"SELECT {key}, COUNT(*), SUM(x) FROM t GROUP BY {key}"

    def plan(public_keys):
        catalog = Catalog()
        catalog.add(TableInfo.private("t", columns=columns, privacy_unit="pid",
                                      bounds={"x": (-2, 10)}, public_keys=public_keys,
                                      max_groups_per_unit=1, max_rows_per_group=2))
        return analyze(sql, catalog, epsilon=1.0, delta=1e-6)

    table = typed_table()
    public = plan({key: TYPED_DOMAINS[key]})
    names = {s.name for s in public.sensitivities}
    inside = table.filter(pc.is_in(table.column(key), value_set=pa.array(
        TYPED_DOMAINS[key], table.schema.field(key).type)))
    expected = run_bounded(inside, plan(None), salt="s")
    expected = {k: {n: v for n, v in cells.items() if n in names} for k, cells in expected.items()}
    assert expected and set(expected) <= {(v,) for v in TYPED_DOMAINS[key]}
    assert run_bounded(table, public, salt="s") == expected


def test_public_dates_from_a_public_table_are_released_each_once():
    """A public table's DATE column lists the domain; every date of it is released, the
    dates without rows too, and a text like '2024-01-02' is refused before any query."""
    con = dpsql.connect(budget=dpsql.Budget(epsilon=100, delta=1e-5))
    con.register_public("days", pa.table({"d": pa.array(
        [dt.date(2024, 1, 2), dt.date(2024, 1, 2), dt.date(2030, 1, 1)])}))
    con.register("t", typed_table(), privacy_unit="pid", public_keys={"d": "days"})
    got = con.sql("SELECT d, COUNT(*) FROM t GROUP BY d", epsilon=10.0).df()
    assert list(got["d"]) == [dt.date(2024, 1, 2), dt.date(2030, 1, 1)]
    with pytest.raises(dpsql.CatalogError, match=r"are not date like the column \(DATE\)"):
        con.register("u", typed_table(), privacy_unit="pid", public_keys={"d": ["2024-01-02"]})
    with pytest.raises(dpsql.CatalogError, match="has no public values dpsql can list"):
        con.register("u", typed_table().append_column("t", pa.array(
            [dt.time(9)] * typed_table().num_rows)), privacy_unit="pid",
            public_keys={"t": [dt.time(9)]})

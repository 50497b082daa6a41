"""Public key domains filter whole (unit, group) pairs before the group cap.

The bounded query keeps only pairs whose keys are in the public domain, and it
does so before choosing at most ``max_groups_per_unit`` groups per unit: a
unit's groups outside the domain never take the place of groups inside it. So
for the same salt the bounded query over the whole table must equal the bounded
query (without public keys) over the rows whose keys are in the domain.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest

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

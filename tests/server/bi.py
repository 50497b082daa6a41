"""A catalog with the column types BI tools filter on (dates, timestamps, text, booleans,
decimals), for the tests of what BI tools send (test_bi_clients.py)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

VISITS = """
[tables.visits]
source = "visits.parquet"
privacy_unit = "patient_id"
bounds = { cost = [0, 2000], age = [0, 100] }
max_groups_per_unit = 3
max_rows_per_group = 4
public_keys = { insured = [false, true] }
"""


def visits(rows: int = 2000):
    """Synthetic visits with a TIMESTAMP, a BOOLEAN and a DECIMAL column besides
    :func:`dpsql.datasets.visits`' DATE and text."""
    import pyarrow as pa

    from dpsql.datasets import visits as base

    table = base(rows, seed=7)
    days = table["visit_date"].to_pylist()
    times = [dt.datetime.combine(day, dt.time(8 + i % 10, 15)) for i, day in enumerate(days)]
    cost = [Decimal(str(round(c, 2))) for c in table["cost"].to_pylist()]
    return table.set_column(table.schema.get_field_index("cost"), "cost",
                            pa.array(cost, pa.decimal128(10, 2))) \
        .append_column("visit_time", pa.array(times, pa.timestamp("us"))) \
        .append_column("insured", pa.array([i % 3 != 0 for i in range(rows)]))


def bi_catalog(folder: Path) -> Path:
    import pyarrow.parquet as pq

    pq.write_table(visits(), folder / "visits.parquet")
    catalog = folder / "catalog.toml"
    catalog.write_text(VISITS)
    return catalog

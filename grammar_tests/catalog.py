"""The fixed catalog every grammar case runs against, on any backend.

- ``visits``: 2,000 synthetic visits; unit patient_id; cost in [0, 2000], age in
  [0, 100]; 3 groups/unit, 4 rows/group; region is a public key (8 values).
- ``checkups``: the same rows as ``visits`` with the same limits, cost and age declared
  NOT NULL (they hold none): their counts and sums are shared (docs/mechanisms.md §12–13).
- ``claims``: the same rows with 4 groups/unit, 3 rows/group, 5 rows/unit, cost in
  [0, 1000]; public keys region (read from ``regions``) and specialty (2 values).
- ``pums``: PUMS_dup.csv; unit pid; 2 rows/group, default 1 group/unit; sex public.
- ``people``: PUMS.csv with row-level privacy (one row = one person).
- ``regions``: a public table (lookups and public key lists only).
- ``specialties``: a public lookup: specialty (unique), department (2 values), base_fee.
- ``patients``: 1,000 people, one row each; unit patient_id (shared with visits);
  sex public (f, m); weight in [30, 150]; default limits.
- ``readings``: 300 readings, 2 per patient_id, 4 rows/group; value in [0, 10], with NaN,
  NULL, ±inf and values beyond the bounds (``readings``).
"""

from __future__ import annotations

import math

import pyarrow as pa

import dpsql
from dpsql.datasets import REGIONS, SPECIALTIES, pums_path, visits


def readings() -> pa.Table:
    """Values from -1 to 13.95 in steps of 0.05; every 5th NaN, every 7th NULL, two ±inf."""
    values = [math.nan if i % 5 == 0 else None if i % 7 == 0 else -1 + 0.05 * i
              for i in range(300)]
    values[11], values[13] = math.inf, -math.inf
    return pa.table({"patient_id": pa.array([i // 2 for i in range(300)], pa.int64()),
                     "value": pa.array(values, pa.float64())})


def register_tables(con: dpsql.Connection) -> dpsql.Connection:
    """Register the corpus tables on ``con`` (the case files' notes restate these limits)."""
    con.register_public("regions", pa.table({"region": list(REGIONS)}))
    con.register_public("specialties", pa.table({
        "specialty": list(SPECIALTIES),
        "department": ["surgery" if i % 3 == 0 else "medicine" for i in range(len(SPECIALTIES))],
        "base_fee": [float(50 + 10 * (i % 7)) for i in range(len(SPECIALTIES))]}))
    con.register("patients", pa.table({
        "patient_id": pa.array(range(1, 1001), pa.int64()),
        "sex": ["f" if i % 2 else "m" for i in range(1000)],
        "weight": pa.array([40.0 + (i * 37) % 90 for i in range(1000)])}),
        privacy_unit="patient_id", bounds={"weight": (30, 150)}, public_keys={"sex": ["f", "m"]})
    data = visits(2000, seed=0)
    con.register("visits", data, privacy_unit="patient_id",
                 bounds={"cost": (0, 2000), "age": (0, 100)}, max_groups_per_unit=3,
                 max_rows_per_group=4, public_keys={"region": list(REGIONS)})
    con.register("checkups", data, privacy_unit="patient_id",
                 bounds={"cost": (0, 2000), "age": (0, 100)}, max_groups_per_unit=3,
                 max_rows_per_group=4, public_keys={"region": list(REGIONS)},
                 not_null=["cost", "age"])
    con.register("claims", data, privacy_unit="patient_id", bounds={"cost": (0, 1000)},
                 max_groups_per_unit=4, max_rows_per_group=3, max_rows_per_unit=5,
                 public_keys={"region": "regions", "specialty": ["cardiology", "oncology"]})
    con.register("stays", data, privacy_unit="patient_id", max_rows_per_unit=3,
                 public_keys={"region": list(REGIONS)})
    con.register("pums", str(pums_path("PUMS_dup")), privacy_unit="pid",
                 bounds={"age": (0, 100), "income": (0, 500_000), "educ": (1, 16)},
                 max_rows_per_group=2, public_keys={"sex": [0, 1]})
    con.register("readings", readings(), privacy_unit="patient_id", bounds={"value": (0, 10)},
                 max_rows_per_group=4)
    con.register("people", str(pums_path("PUMS")), row_privacy=True,
                 bounds={"age": (0, 100), "income": (0, 500_000)})
    return con


def connect(**options) -> dpsql.Connection:
    """A connection with the corpus tables, a huge budget, seed 0 and ε = 1, δ = 1e-6."""
    return register_tables(dpsql.connect(budget=dpsql.Budget(epsilon=1e9, delta=0.5), seed=0,
                                         default_epsilon=1.0, default_delta=1e-6, **options))

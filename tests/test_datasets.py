"""The bundled PUMS files load, and the synthetic visits table has the promised shape."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import dpsql
from dpsql.datasets import (
    DATASETS_DIR,
    REGIONS,
    SPECIALTIES,
    VISITS_SCHEMA,
    pums_path,
    visits,
    write_visits,
)

REPO = Path(__file__).resolve().parents[1]
PUMS_COLUMNS = ["age", "sex", "educ", "race", "income", "married"]


@pytest.fixture(scope="module")
def table() -> pa.Table:
    return visits(200_000, seed=42)


@pytest.fixture(scope="module")
def per_patient(table: pa.Table) -> dict[str, np.ndarray]:
    con = duckdb.connect()
    con.register("visits", table)
    rows = con.sql(
        "SELECT count(*) AS n, count(DISTINCT specialty) AS specialties,"
        " count(DISTINCT age) AS ages, count(DISTINCT region) AS regions"
        " FROM visits GROUP BY patient_id"
    ).fetchnumpy()
    return {k: np.asarray(v) for k, v in rows.items()}


@pytest.mark.parametrize(
    ("name", "n_rows", "has_pid"),
    [
        ("PUMS", 1000, False),
        ("PUMS_pid", 1000, True),
        ("PUMS_dup", 1948, True),
        ("PUMS_null", 1948, True),
    ],
)
def test_pums_loads_with_duckdb(name: str, n_rows: int, has_pid: bool) -> None:
    rel = duckdb.connect().read_csv(str(pums_path(name)))
    assert rel.columns == PUMS_COLUMNS + (["pid"] if has_pid else [])
    assert rel.aggregate("count(*)").fetchall() == [(n_rows,)]


def test_pums_path_default_and_errors() -> None:
    assert pums_path() == REPO / "datasets" / "PUMS_dup.csv" == DATASETS_DIR / "PUMS_dup.csv"
    assert pums_path("PUMS.csv") == pums_path("PUMS")
    with pytest.raises(dpsql.CatalogError, match=r"'census'.*available: PUMS, PUMS_dup"):
        pums_path("census")


def test_schema_and_exact_row_count() -> None:
    for n in (0, 1, 7, 12_345):
        t = visits(n, seed=n)
        assert t.schema == VISITS_SCHEMA
        assert t.num_rows == n
    assert [str(f.type) for f in VISITS_SCHEMA] == [
        "int64",
        "string",
        "int32",
        "double",
        "date32[day]",
        "string",
    ]


def test_invalid_arguments() -> None:
    with pytest.raises(dpsql.ProgrammingError, match="n_rows"):
        visits(-1)
    with pytest.raises(dpsql.ProgrammingError, match="rows_per_patient"):
        visits(10, rows_per_patient=0.5)


def test_deterministic_by_seed() -> None:
    assert visits(5_000, seed=3).equals(visits(5_000, seed=3))
    assert not visits(5_000, seed=3).equals(visits(5_000, seed=4))


def test_value_ranges(table: pa.Table) -> None:
    assert table.column("patient_id").null_count == 0
    assert pc.min(table.column("patient_id")).as_py() >= 1
    ages = pc.min_max(table.column("age")).as_py()
    assert ages["min"] >= 0 and ages["max"] <= 100
    dates = pc.min_max(table.column("visit_date")).as_py()
    assert str(dates["min"]) >= "2020-01-01" and str(dates["max"]) <= "2025-12-31"
    assert set(pc.unique(table.column("region")).to_pylist()) == set(REGIONS)
    cost = table.column("cost").to_numpy()
    assert (cost > 0).all()
    assert np.mean((cost >= 20) & (cost <= 2000)) > 0.9
    assert (cost > 10_000).sum() >= 50  # outliers, so clamping matters


def test_specialties_are_skewed(table: pa.Table) -> None:
    counts = pc.value_counts(table.column("specialty")).field("counts").to_numpy()
    assert len(SPECIALTIES) == len(set(SPECIALTIES)) == 50
    assert len(counts) >= 48
    assert counts.max() > 20 * np.median(counts)


def test_several_rows_per_patient(per_patient: dict[str, np.ndarray]) -> None:
    n = per_patient["n"]
    assert 4.5 < n.mean() < 5.5
    assert (n >= 50).any()
    assert (per_patient["ages"] == 1).all() and (per_patient["regions"] == 1).all()


def test_few_specialties_per_patient(per_patient: dict[str, np.ndarray]) -> None:
    distinct = per_patient["specialties"]
    assert (distinct > 1).mean() > 0.2
    assert distinct.mean() < 2.5


def test_rows_per_patient_option() -> None:
    t = visits(20_000, seed=1, rows_per_patient=2.0)
    assert 1.8 < t.num_rows / len(pc.unique(t.column("patient_id"))) < 2.2
    t = visits(100, seed=1, rows_per_patient=1.0)
    assert len(pc.unique(t.column("patient_id"))) == 100


def test_one_million_rows_is_fast() -> None:
    visits(1_000, seed=0)  # warm up imports and allocator
    start = time.perf_counter()
    t = visits(1_000_000, seed=0)
    elapsed = time.perf_counter() - start
    print(f"visits(1_000_000): {elapsed:.2f} s, {t.nbytes / 1e6:.0f} MB")
    assert t.num_rows == 1_000_000
    assert elapsed < 3.0


def test_write_visits_and_cli(tmp_path: Path) -> None:
    out = write_visits(tmp_path / "a.parquet", 1_000, seed=5)
    assert pq.read_table(out).equals(visits(1_000, seed=5))
    cli_out = tmp_path / "b.parquet"
    subprocess.run(
        [sys.executable, "-m", "dpsql.datasets", "visits", "1000", str(cli_out), "--seed", "5"],
        cwd=REPO,
        check=True,
        capture_output=True,
    )
    assert pq.read_table(cli_out).equals(visits(1_000, seed=5))


def test_cli_help_has_example() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "dpsql.datasets", "visits", "--help"],
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
    )
    assert "example: python -m dpsql.datasets visits" in result.stdout

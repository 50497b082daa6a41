"""Datasets for tests, examples and benchmarks: the bundled PUMS CSVs and a synthetic generator.

The PUMS files live in the repository's top-level ``datasets/`` folder (see its
README for provenance). :func:`visits` builds a synthetic table of hospital
visits at any size, shaped like the data dpsql is for: several rows per patient
(the privacy unit), skewed categories, a few patients with many rows, and
heavy-tailed costs whose outliers make clamping matter.

>>> pums_path("PUMS").name
'PUMS.csv'
>>> visits(1_000, seed=7).num_rows
1000

From the shell::

    python -m dpsql.datasets visits 10000000 visits.parquet --seed 0
"""

from __future__ import annotations

import argparse
import datetime as dt
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from dpsql.errors import CatalogError, ProgrammingError

DATASETS_DIR: Path = Path(__file__).resolve().parents[1] / "datasets"

# fmt: off
SPECIALTIES: tuple[str, ...] = (
    "general practice", "emergency medicine", "internal medicine", "pediatrics",
    "cardiology", "orthopedics", "dermatology", "obstetrics", "gynecology", "radiology",
    "psychiatry", "ophthalmology", "neurology", "gastroenterology", "oncology",
    "pulmonology", "endocrinology", "urology", "otolaryngology", "physical therapy",
    "nephrology", "rheumatology", "allergy and immunology", "infectious disease",
    "hematology", "general surgery", "anesthesiology", "sports medicine", "geriatrics",
    "podiatry", "psychology", "pain medicine", "sleep medicine", "plastic surgery",
    "vascular surgery", "neurosurgery", "cardiothoracic surgery", "colorectal surgery",
    "hepatology", "neonatology", "nuclear medicine", "palliative care",
    "occupational medicine", "medical genetics", "pediatric cardiology",
    "pediatric oncology", "transplant surgery", "toxicology", "tropical medicine",
    "hyperbaric medicine",
)
# fmt: on
"""The 50 specialty names, most common first (their frequencies follow a Zipf law)."""

# fmt: off
REGIONS: tuple[str, ...] = (
    "pacific", "south atlantic", "mid atlantic", "east north central",
    "west south central", "mountain", "west north central", "new england",
)
# fmt: on
"""The 8 region names, most common first."""

FIRST_DAY = dt.date(2020, 1, 1)
LAST_DAY = dt.date(2025, 12, 31)

VISITS_SCHEMA = pa.schema(
    [
        ("patient_id", pa.int64()),
        ("specialty", pa.string()),
        ("age", pa.int32()),
        ("cost", pa.float64()),
        ("visit_date", pa.date32()),
        ("region", pa.string()),
    ]
)

# Shape parameters of the generator; see the `visits` docstring for what each does.
_ZIPF_EXPONENT = 1.2
_ROWS_PER_PATIENT_DISPERSION = 0.5
_HOME_SPECIALTY_WEIGHTS = np.array([0.75, 0.18, 0.07])
_STRAY_VISIT_RATE = 0.03
_OUTLIER_RATE = 0.001
_LUT_SIZE = 2**16


def pums_path(name: str = "PUMS_dup") -> Path:
    """Path to a bundled PUMS CSV: ``PUMS``, ``PUMS_pid``, ``PUMS_dup`` or ``PUMS_null``.

    >>> pums_path().relative_to(DATASETS_DIR).as_posix()
    'PUMS_dup.csv'
    >>> pums_path("nope")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpsql.errors.CatalogError: no dataset 'nope' ...; available: PUMS, PUMS_dup, PUMS_null, PUMS_pid
    """
    path = DATASETS_DIR / f"{name.removesuffix('.csv')}.csv"
    if not path.is_file():
        available = ", ".join(sorted(p.stem for p in DATASETS_DIR.glob("*.csv")))
        raise CatalogError(
            f"no dataset {name!r} in {DATASETS_DIR}; available: {available or '(none)'}"
        )
    return path


def _zipf_weights(n: int, exponent: float) -> np.ndarray:
    weights = 1.0 / np.arange(1, n + 1) ** exponent
    return weights / weights.sum()


def _categorical(rng: np.random.Generator, weights: np.ndarray, size: int) -> np.ndarray:
    """Category codes (int8) drawn with the given weights, via a 2**16-entry lookup table.

    Several times faster than ``rng.choice(..., p=weights)``; each weight is
    rounded to a multiple of 2**-16, which is immaterial for synthetic data.
    """
    grid = (np.arange(_LUT_SIZE) + 0.5) / _LUT_SIZE
    table = np.searchsorted(np.cumsum(weights), grid * weights.sum()).astype(np.int8)
    return table[rng.integers(0, _LUT_SIZE, size=size, dtype=np.uint16)]


def _rows_per_patient(rng: np.random.Generator, n_rows: int, mean: float) -> np.ndarray:
    """Counts >= 1 with the given mean and a long right tail, summing to exactly `n_rows`.

    ``1 + NegativeBinomial(r, p)`` has mean ``1 + r(1-p)/p``; a small ``r``
    makes it overdispersed, so most patients have a few rows and some 50+.
    """
    r = _ROWS_PER_PATIENT_DISPERSION
    p = r / (r + mean - 1.0)
    batch = int(n_rows / mean * 1.05) + 16
    counts = 1 + rng.negative_binomial(r, p, size=batch)
    while counts.sum() < n_rows:
        counts = np.concatenate([counts, 1 + rng.negative_binomial(r, p, size=batch)])
    ends = np.cumsum(counts)
    n_patients = int(np.searchsorted(ends, n_rows)) + 1
    counts = counts[:n_patients]
    counts[-1] -= ends[n_patients - 1] - n_rows
    return counts


def _strings(names: Sequence[str], codes: np.ndarray) -> pa.Array:
    """A plain (not dictionary-encoded) string column: ``names[codes]``."""
    encoded = pa.DictionaryArray.from_arrays(pa.array(codes), pa.array(names, pa.string()))
    return encoded.cast(pa.string())


def visits(n_rows: int, *, seed: int = 0, rows_per_patient: float = 5.0) -> pa.Table:
    """A synthetic table of `n_rows` hospital visits; the same `seed` gives the same table.

    Each patient (``patient_id``, the natural privacy unit) has
    ``1 + NegativeBinomial(0.5, p)`` rows, with ``p`` set so the mean is
    `rows_per_patient`: most patients have a handful of rows, a few have 50+.
    A patient has a fixed ``age`` (0–100) and ``region`` (8 values), and three
    "home" specialties drawn from a Zipf law over :data:`SPECIALTIES`
    (exponent 1.2, so the top specialty is ~50x more frequent than the median
    one); each visit goes to a home specialty (weights 0.75/0.18/0.07) or, with
    probability 0.03, to any specialty. ``cost`` is lognormal (median ~150,
    scaled per specialty) with 0.1% outliers of 10,000+; ``visit_date`` is
    uniform over 2020-01-01..2025-12-31. Rows are grouped by patient.

    >>> t = visits(10, seed=1)
    >>> t.schema == VISITS_SCHEMA
    True
    >>> t.num_rows, t.column("age").type, t.column("specialty").type
    (10, DataType(int32), DataType(string))
    """
    if n_rows < 0:
        raise ProgrammingError(f"n_rows must be >= 0, got {n_rows}")
    if not rows_per_patient >= 1.0:
        raise ProgrammingError(f"rows_per_patient must be >= 1, got {rows_per_patient}")
    if n_rows == 0:
        return VISITS_SCHEMA.empty_table()
    rng = np.random.default_rng(seed)
    counts = _rows_per_patient(rng, n_rows, rows_per_patient)
    n_patients = len(counts)

    n_spec = len(SPECIALTIES)
    spec_weights = _zipf_weights(n_spec, _ZIPF_EXPONENT)
    home = _categorical(rng, spec_weights, n_patients * 3)
    first_home = np.repeat(np.arange(0, n_patients * 3, 3, dtype=np.int32), counts)
    specialty = home[first_home + _categorical(rng, _HOME_SPECIALTY_WEIGHTS, n_rows)]
    stray = rng.random(n_rows, dtype=np.float32) < _STRAY_VISIT_RATE
    specialty[stray] = _categorical(rng, spec_weights, int(stray.sum()))

    age = np.clip(np.rint(rng.normal(48.0, 22.0, n_patients)), 0, 100).astype(np.int32)
    region = _categorical(rng, _zipf_weights(len(REGIONS), 0.7), n_patients)

    cost_scale = 150.0 * np.exp(rng.normal(0.0, 0.5, n_spec))
    cost = cost_scale[specialty] * np.exp(rng.standard_normal(n_rows, dtype=np.float32))
    outlier = rng.random(n_rows, dtype=np.float32) < _OUTLIER_RATE
    cost[outlier] = 10_000.0 * (1.0 + rng.pareto(2.0, int(outlier.sum())))

    first_day = (FIRST_DAY - dt.date(1970, 1, 1)).days
    n_days = (LAST_DAY - FIRST_DAY).days + 1
    day = rng.integers(first_day, first_day + n_days, size=n_rows, dtype=np.int32)
    columns = [
        pa.array(np.repeat(np.arange(1, n_patients + 1, dtype=np.int64), counts)),
        _strings(SPECIALTIES, specialty),
        pa.array(np.repeat(age, counts)),
        pa.array(np.round(cost, 2, out=cost)),
        pa.array(day).cast(pa.date32()),
        _strings(REGIONS, np.repeat(region, counts)),
    ]
    return pa.Table.from_arrays(columns, schema=VISITS_SCHEMA)


def write_visits(path: str | Path, n_rows: int, *, seed: int = 0) -> Path:
    """Write :func:`visits` ``(n_rows, seed=seed)`` to a Parquet file and return its path.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     out = write_visits(Path(d) / "v.parquet", 100, seed=3)
    ...     pq.read_table(out).num_rows
    100
    """
    path = Path(path)
    pq.write_table(visits(n_rows, seed=seed), path)
    return path


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: ``python -m dpsql.datasets visits N OUT.parquet [--seed S]``."""
    parser = argparse.ArgumentParser(
        prog="python -m dpsql.datasets",
        description="Generate synthetic datasets for dpsql tests and benchmarks.",
        epilog="example: python -m dpsql.datasets visits 1000000 visits.parquet --seed 0",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    cmd = commands.add_parser(
        "visits",
        help="write a synthetic hospital-visits table to Parquet",
        epilog="example: python -m dpsql.datasets visits 1000000 visits.parquet",
    )
    cmd.add_argument("n_rows", type=int, help="number of rows to generate")
    cmd.add_argument("out", type=Path, help="output Parquet file")
    cmd.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    args = parser.parse_args(argv)
    out = write_visits(args.out, args.n_rows, seed=args.seed)
    print(f"wrote {args.n_rows} rows to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

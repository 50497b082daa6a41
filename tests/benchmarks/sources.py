"""The generated tables (limits_data.py) in the forms users register them in.

bench_matrix.py measures dpsql over each SOURCES form, registered as a user would: a DuckDB
table by its name, and a file by its path (``con.register("t", "events.parquet", ...)``),
for a glob the glob string (dpsql's DuckDB backend hands it to ``read_parquet``, Spark's to
``spark.read.parquet``). Files are written once into a folder and reused when present:

- ``limits_{rows}_{g}_{share}_wide.parquet``, written from limits_data.blocks (row groups
  of 1M rows), from which the other files are copied, row for row in the same order;
- ``limits_{rows}_{g}_{share}_wide.csv``, with a header, written by DuckDB's ``COPY``;
- ``limits_{rows}_{g}_{share}_wide_parts/part-{i}.parquet``, PARTS files of consecutive
  rows, registered as ``.../part-*.parquet``.

Each is written under a temporary name and renamed when complete, so an interrupted run
leaves no half file to be reused.

>>> files = Files(Path("/data"), 1000, 3, "half", 0.5)
>>> files.path("glob")
'/data/limits_1000_3_half_wide_parts/part-*.parquet'
>>> scan("csv", files.path("csv"))
"read_csv_auto('/data/limits_1000_3_half_wide.csv')"
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow.parquet as pq

from tests.benchmarks import limits_data

SOURCES = ("table", "parquet", "csv", "glob")
"""A DuckDB table in memory, one Parquet file, one CSV file, a glob of PARTS Parquet files."""
PARTS = 8
READERS = {"parquet": "read_parquet", "glob": "read_parquet", "csv": "read_csv_auto"}
"""The DuckDB reader of each file form: the ones dpsql's DuckDB backend picks by suffix
(dpsql/backends/duckdb.py, FILE_READERS)."""


@dataclass(frozen=True)
class Files:
    """The files of one generated table (rows, group limit g, share over it)."""

    folder: Path
    rows: int
    groups: int
    share: str
    over: float

    @property
    def stem(self) -> Path:
        return self.folder / f"limits_{self.rows}_{self.groups}_{self.share}_wide"

    def path(self, source: str) -> str:
        """What a user registers for ``source``: a file's path, or the glob of the parts."""
        if source == "glob":
            return str(self._parts() / "part-*.parquet")
        if source in ("parquet", "csv"):
            return str(self.stem.with_suffix(f".{source}"))
        raise ValueError(f"{source!r} is not a file form; the file forms are "
                         f"{', '.join(READERS)}")

    def written(self, source: str) -> str:
        """``path(source)``, after writing its file(s) if they are missing."""
        parquet = self.stem.with_suffix(".parquet")
        if not parquet.exists():
            partial = parquet.with_suffix(".parquet.partial")
            limits_data.write_parquet(partial, self.rows, groups=self.groups, over=self.over)
            partial.rename(parquet)
        if source == "csv" and not self.stem.with_suffix(".csv").exists():
            _copy_csv(parquet, self.stem.with_suffix(".csv"))
        if source == "glob" and not self._parts().exists():
            _split(parquet, self._parts(), self.rows)
        return self.path(source)

    def _parts(self) -> Path:
        return self.stem.with_name(self.stem.name + "_parts")


def scan(source: str, path: str) -> str:
    """How plain DuckDB SQL reads the file(s) at ``path`` (the reader dpsql picks)."""
    return f"{READERS[source]}('{path}')"


def _copy_csv(parquet: Path, csv: Path) -> None:
    """The Parquet file as CSV with a header, its rows in the same order."""
    partial = csv.with_suffix(".csv.partial")
    duckdb.connect().execute(f"COPY (SELECT * FROM read_parquet('{parquet}')) TO '{partial}' "
                             "(FORMAT csv, HEADER)")
    partial.rename(csv)


def _split(parquet: Path, folder: Path, rows: int) -> None:
    """The Parquet file as PARTS files of consecutive rows (the last may be shorter)."""
    partial = folder.with_name(folder.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    per_part = -(-rows // PARTS)
    writer, written = None, 0
    for batch in pq.ParquetFile(parquet).iter_batches(batch_size=1_000_000):
        while batch.num_rows:
            if written % per_part == 0:
                if writer is not None:
                    writer.close()
                writer = pq.ParquetWriter(partial / f"part-{written // per_part}.parquet",
                                          batch.schema)
            take = min(batch.num_rows, per_part - written % per_part)
            writer.write_batch(batch.slice(0, take))
            batch, written = batch.slice(take), written + take
    if writer is not None:
        writer.close()
    partial.rename(folder)

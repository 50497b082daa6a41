"""Synthetic event tables with a controlled share of people over a group limit.

Used by bench_matrix.py and bench_choice.py; also a command line that writes Parquet::

    .venv/bin/python -m tests.benchmarks.limits_data 100000000 /tmp/bench14/t.parquet \
        --groups 3 --over 0.5

Each person (``pid``, the privacy unit) touches ``k`` distinct groups (``grp``, 50 names
with Zipf popularity, exponent 1.1). A share ``over`` of people, drawn at random, have
``k = g + 1 + NegBin(1, mean 2)`` groups (capped at 50), so they exceed the limit ``g``;
everyone else has ``1 ≤ k ≤ g`` with ``P(k) ∝ 1/k``. Which groups: ``k`` distinct draws
from the Zipf weights (an exponential race). Rows per person: ``k`` plus a heavy-tailed
``NegBin(0.5, mean 3)`` extra (most people a few rows, some 50+), spread over their groups
with a skew toward the first group drawn, so per-group row limits bind for some people too.
``v`` is lognormal (median ≈ 150) with 0.1 % outliers of 10,000+. Person ids are a random
permutation and rows are shuffled within blocks of at most 10M rows, so neither the unit
nor the group column arrives sorted (an event log in time order looks like this).

Beside these three columns each row carries PADDING, columns no benchmark query reads, so
that reading only the columns a query needs matters as it does in real files: three texts
of 40 characters (four 10-character pieces drawn from a pool of 4,096: too varied for a
Parquet dictionary, and Snappy shrinks them about 1.5×, where it leaves random letters as
they are) and two doubles; in Parquet they are about 93 % of the file. They come from a
generator of their own, so ``pid``, ``grp`` and ``v`` are those of the data without them.

The parameters say what was asked for; :func:`describe` measures what the data holds
(share of people over each limit, rows and groups per person), and the benchmark prints
that, not the parameters.

>>> t = table(10_000, groups=3, over=0.5, seed=1)
>>> t.num_rows, t.schema.names
(10000, ['pid', 'grp', 'v', 'text1', 'text2', 'text3', 'num1', 'num2'])
>>> {len(text) for text in t.column("text1").to_pylist()}
{40}
>>> shape = describe(t, limits=(3,))
>>> 0.4 < shape["over_3"] < 0.6
True
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Sequence
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from dpsql.datasets import SPECIALTIES

GROUPS: tuple[str, ...] = SPECIALTIES
"""The 50 group names (strings of 7–22 characters), most popular first."""
CORE = pa.schema([("pid", pa.int64()), ("grp", pa.string()), ("v", pa.float64())])
"""The columns the benchmark queries read."""
PADDING = pa.schema([("text1", pa.string()), ("text2", pa.string()), ("text3", pa.string()),
                     ("num1", pa.float64()), ("num2", pa.float64())])
"""The columns no benchmark query reads (see the module docstring)."""
SCHEMA = pa.schema([*CORE, *PADDING])
BLOCK_ROWS = 10_000_000
"""Rows are generated, shuffled and written in blocks of at most this many rows."""
_ZIPF = 1.1
_EXTRA_MEAN = 3.0
_EXTRA_DISPERSION = 0.5
_OVER_EXTRA_MEAN = 2.0
_CHUNK = 200_000  # people per exponential race (50 floats each)
_PIECES = np.random.default_rng(0).integers(ord("a"), ord("z") + 1, (4096, 10), np.uint8)
_PIECES[:, -1] = ord(" ")
_PIECES_PER_TEXT = 4


def _negbin(rng: np.random.Generator, r: float, mean: float, size: int) -> np.ndarray:
    return rng.negative_binomial(r, r / (r + mean), size=size) if mean > 0 else np.zeros(size)


def _groups_per_person(rng: np.random.Generator, size: int, g: int, over: float) -> np.ndarray:
    n = len(GROUPS)
    under_p = 1.0 / np.arange(1, min(g, n) + 1)
    k = rng.choice(np.arange(1, len(under_p) + 1), size=size, p=under_p / under_p.sum())
    if g < n:
        heavy = rng.random(size) < over
        extra = _negbin(rng, 1.0, _OVER_EXTRA_MEAN, int(heavy.sum()))
        k[heavy] = np.minimum(g + 1 + extra, n)
    return k.astype(np.int64)


def _chosen_groups(rng: np.random.Generator, people: int) -> np.ndarray:
    """Per person, all 50 group codes in the order of an exponential race on Zipf weights.

    The first k entries of a row are k distinct groups drawn without replacement.
    """
    weights = 1.0 / np.arange(1, len(GROUPS) + 1) ** _ZIPF
    out = np.empty((people, len(GROUPS)), dtype=np.int8)
    for start in range(0, people, _CHUNK):
        stop = min(start + _CHUNK, people)
        race = rng.exponential(size=(stop - start, len(GROUPS))).astype(np.float32) / weights
        out[start:stop] = np.argsort(race, axis=1).astype(np.int8)
    return out


def _block(rng: np.random.Generator, rows: int, g: int, over: float,
           first_id: int) -> tuple[pa.Table, int]:
    """One shuffled block of exactly ``rows`` rows; returns it and the number of people."""
    mean = 1.0 + _EXTRA_MEAN + (g + 1 + _OVER_EXTRA_MEAN) * over
    ks, extras, total = [], [], 0
    while total < rows:
        size = int((rows - total) / mean * 1.1) + 16
        k = _groups_per_person(rng, size, g, over)
        extra = _negbin(rng, _EXTRA_DISPERSION, _EXTRA_MEAN, size).astype(np.int64)
        ks.append(k)
        extras.append(extra)
        total += int((k + extra).sum())
    k, extra = np.concatenate(ks), np.concatenate(extras)
    counts = k + extra
    ends = np.cumsum(counts)
    people = int(np.searchsorted(ends, rows)) + 1
    k, counts = k[:people], counts[:people]
    counts[-1] -= int(ends[people - 1]) - rows
    k[-1] = min(k[-1], counts[-1])
    person = np.repeat(np.arange(people), counts)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    position = np.arange(rows) - starts[person]
    kk = k[person]
    skewed = (kk * rng.random(rows) ** 2).astype(np.int64)
    slot = np.where(position < kk, position, skewed)
    grp = _chosen_groups(rng, people)[person, slot]
    v = np.exp(rng.normal(np.log(150.0), 1.0, rows))
    outlier = rng.random(rows) < 0.001
    v[outlier] = 10_000.0 * (1.0 + rng.pareto(2.0, int(outlier.sum())))
    pid = (rng.permutation(people) + first_id + 1)[person]
    order = rng.permutation(rows)
    names = pa.array(GROUPS, pa.string())
    columns = [pa.array(pid[order]),
               pa.DictionaryArray.from_arrays(pa.array(grp[order]), names).cast(pa.string()),
               pa.array(np.round(v[order], 2))]
    return pa.Table.from_arrays(columns, schema=CORE), people


def _text(rng: np.random.Generator, rows: int) -> pa.Array:
    """``rows`` texts of four pieces of _PIECES each, built as Arrow buffers."""
    width = _PIECES.shape[1] * _PIECES_PER_TEXT
    chars = _PIECES[rng.integers(0, len(_PIECES), (rows, _PIECES_PER_TEXT))]
    offsets = np.arange(0, rows * width + 1, width, dtype=np.int64)
    return pa.LargeStringArray.from_buffers(
        rows, pa.py_buffer(offsets), pa.py_buffer(chars.tobytes())).cast(pa.string())


def _padding(rng: np.random.Generator, rows: int) -> list[pa.Array]:
    """The PADDING columns of ``rows`` rows."""
    texts = [_text(rng, rows) for _ in range(3)]
    return texts + [pa.array(np.round(rng.normal(0.0, 100.0, rows), 4)) for _ in range(2)]


def blocks(rows: int, *, groups: int, over: float, seed: int = 0) -> Iterator[pa.Table]:
    """The table of ``rows`` rows in shuffled blocks of at most BLOCK_ROWS rows."""
    if not 0.0 <= over <= 1.0:
        raise ValueError(f"over must be a share in [0, 1], got {over}")
    rng = np.random.default_rng([seed, groups, int(over * 1000)])
    padding = np.random.default_rng([seed, groups, int(over * 1000), 1])
    first_id = 0
    for start in range(0, rows, BLOCK_ROWS):
        block, people = _block(rng, min(BLOCK_ROWS, rows - start), groups, over, first_id)
        first_id += people
        yield pa.Table.from_arrays(block.columns + _padding(padding, block.num_rows),
                                   schema=SCHEMA)


def table(rows: int, *, groups: int, over: float, seed: int = 0) -> pa.Table:
    """The whole table in memory (see the module docstring for its shape)."""
    return pa.concat_tables(blocks(rows, groups=groups, over=over, seed=seed))


def write_parquet(path: str | Path, rows: int, *, groups: int, over: float,
                  seed: int = 0) -> Path:
    """Write the table to Parquet block by block (memory stays at one block)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with pq.ParquetWriter(path, SCHEMA) as writer:
        for block in blocks(rows, groups=groups, over=over, seed=seed):
            writer.write_table(block, row_group_size=1_000_000)
    return path


def describe(source: pa.Table | str, limits: Sequence[int] = (1, 3, 8),
             con: duckdb.DuckDBPyConnection | None = None) -> dict[str, float]:
    """Measured shape: people, rows and groups per person, share of people over each limit.

    ``source`` is an Arrow table or the name of a table (or a ``read_parquet(...)``) in ``con``.
    """
    con = con or duckdb.connect()
    if isinstance(source, pa.Table):
        con.register("__shape", source)
        source = "__shape"
    over = ", ".join(f"avg((groups > {g})::DOUBLE) AS over_{g}" for g in limits)
    sql = (f"SELECT count(*) AS people, avg(rows) AS rows_per_person, "
           f"max(rows) AS max_rows, avg(groups) AS groups_per_person, {over} FROM "
           f"(SELECT pid, count(*) AS rows, count(DISTINCT grp) AS groups FROM {source} "
           f"GROUP BY pid)")
    result = con.execute(sql)
    names = [d[0] for d in result.description]
    return dict(zip(names, result.fetchall()[0], strict=True))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("rows", type=int)
    parser.add_argument("out", type=Path)
    parser.add_argument("--groups", type=int, required=True, help="the group limit g")
    parser.add_argument("--over", type=float, required=True,
                        help="share of people with more than g groups")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    path = write_parquet(args.out, args.rows, groups=args.groups, over=args.over,
                         seed=args.seed)
    print(path, describe(f"read_parquet('{path}')"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

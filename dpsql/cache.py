"""Answer cache: the same question with the same parameters gets the same noisy answer.

Re-asking a query would otherwise draw fresh noise and let an analyst average
it away while paying for every draw; answering from the cache costs nothing
and reveals nothing new. The key covers everything the answer depends on: the
analyst, the sources' fingerprints and the compiled query's whole release plan
(``CompiledQuery.release_digest``: every field of the plan, the bounded query and
the accounting events — partition selection and ``min_privacy_units_per_group``,
bounds, the ε and δ of each mechanism, the noise, quantile levels, the query
after the noise). Seeded (not private) answers are never cached.

>>> store = MemoryCache()
>>> store.put("k", b"v"), store.put("k", b"w"), store.get("k"), store.get("other")
(b'v', b'v', b'v', None)
"""

from __future__ import annotations

import glob
import hashlib
import io
import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISDIR
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import pyarrow as pa

from dpsql.accounting.values import Cost
from dpsql.arrays import from_numpy, to_numpy
from dpsql.backends import files
from dpsql.canonical import text
from dpsql.estimators import NoisyGroups
from dpsql.result import Result

if TYPE_CHECKING:
    from dpsql.compile import CompiledQuery


class AnswerStore(Protocol):
    scope: object
    """What identifies the store in this process: statements asking one question of one
    store are answered one at a time (``dpsql.statements.Statements.asking``)."""

    def get(self, key: str) -> bytes | None: ...

    def put(self, key: str, value: bytes) -> bytes:
        """Keep ``value`` unless an answer is kept under ``key`` already; the kept one."""


class MemoryCache:
    """An in-process cache (a connection without a ledger file)."""

    def __init__(self) -> None:
        self._answers: dict[str, bytes] = {}
        self.scope = id(self)

    def get(self, key: str) -> bytes | None:
        return self._answers.get(key)

    def put(self, key: str, value: bytes) -> bytes:
        return self._answers.setdefault(key, value)


class LedgerCache:
    """The cache table of a durable ledger, shared by every process using the file."""

    def __init__(self, ledger) -> None:
        self.ledger = ledger
        self.scope = ledger.where

    def get(self, key: str) -> bytes | None:
        return self.ledger.cache_get(key)

    def put(self, key: str, value: bytes) -> bytes:
        return self.ledger.cache_put(key, value)


@dataclass(frozen=True)
class Registered:
    """A Python object registered as a source, named by a token drawn at registration: an
    ``id()`` is reused once its object is freed, and another process's object at the same
    address is other data, so neither may find this registration's cached answers."""

    token: str = field(default_factory=lambda: secrets.token_hex(16))


def fingerprint(source: Any) -> str:
    """What identifies a source's content across processes, from file metadata alone (no
    file is opened: one ``stat`` per file): a file by its path, size and modification time;
    a glob or a folder by the sorted files it matches (a folder's, in every sub-folder), each
    with its size and modification time, hashed; a table by its name; a Python object by the
    token of its registration (``Registered``). Taken when a question is asked: a Parquet
    file or glob is read then, not when registered, so a file added, removed or rewritten
    behind a name makes a new question.

    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> before = fingerprint(str(folder / "part-*.parquet"))
    >>> before == fingerprint(str(folder / "part-*.parquet")), before.startswith("glob:")
    (True, True)
    >>> _ = (folder / "part-1.parquet").write_bytes(b"PAR1")
    >>> fingerprint(str(folder / "part-*.parquet")) == before
    False
    """
    if isinstance(source, Registered):
        return f"object:{source.token}"
    if not isinstance(source, str | Path):
        return f"object:{id(source)}"
    path = Path(source)
    if path.is_dir():
        return _files("folder", path, [str(path)])
    if path.exists():
        stat = path.stat()
        return f"file:{path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"
    if glob.has_magic(str(source)):
        return _files("glob", path, files.matches(str(source)))
    return f"table:{source}"


def _files(kind: str, where: Path, paths: list[str]) -> str:
    """``kind:where:count:hash`` of the files at ``paths`` (folders walked), sorted."""
    stamps = sorted(_stamps(paths))
    digest = hashlib.sha256("\n".join(stamps).encode()).hexdigest()
    return f"{kind}:{os.path.abspath(where)}:{len(stamps)}:{digest}"


def _stamps(paths: list[str]) -> Iterator[str]:
    """``path:size:mtime`` of each file, a folder's files in its place (one ``stat`` each); a
    file gone since it was listed is marked so."""
    for path in paths:
        try:
            stat = os.stat(path)
        except FileNotFoundError:
            yield f"{os.path.abspath(path)}:gone"
            continue
        if S_ISDIR(stat.st_mode):
            for folder, _, names in os.walk(path):
                yield from _stamps([os.path.join(folder, name) for name in names])
        else:
            yield f"{os.path.abspath(path)}:{stat.st_size}:{stat.st_mtime_ns}"


def answer_key(*, analyst: str, compiled: CompiledQuery, sources: str) -> str:
    """A stable hash of everything a noisy answer depends on: who asks, the data
    (``sources``, the tables' fingerprints) and what the compiled query releases."""
    key = text([analyst, sources, compiled.release_digest])
    return hashlib.sha256(key.encode()).hexdigest()


def _ipc(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


def _table(data: bytes) -> pa.Table:
    return pa.ipc.open_stream(pa.py_buffer(data)).read_all()


def dump(result: Result) -> bytes:
    """Serialise a released answer (noisy values only) for the cache."""
    stats = pa.table({name: from_numpy(values) for name, values in result.groups.stats.items()})
    quantiles = pa.table({name: from_numpy(values)
                          for name, values in result.groups.quantiles.items()})
    parts = {"table": _ipc(result.table), "keys": _ipc(result.groups.keys),
             "stats": _ipc(stats), "quantiles": _ipc(quantiles),
             "rows": _ipc(pa.table({"rows": from_numpy(result.rows)}))}
    sink = io.BytesIO()
    np.savez(sink, **{k: np.frombuffer(v, dtype=np.uint8) for k, v in parts.items()})
    return sink.getvalue()


def load(data: bytes, compiled: CompiledQuery) -> Result:
    """Rebuild a cached answer to ``compiled``; its cost is zero (it was paid for when first
    released)."""
    parts = np.load(io.BytesIO(data))
    stats = _table(parts["stats"].tobytes())
    quantiles = _table(parts["quantiles"].tobytes())
    groups = NoisyGroups(keys=_table(parts["keys"].tobytes()),
                         stats={n: to_numpy(stats.column(n)) for n in stats.column_names},
                         quantiles={n: to_numpy(quantiles.column(n))
                                    for n in quantiles.column_names})
    rows = to_numpy(_table(parts["rows"].tobytes()).column("rows"))
    return Result(table=_table(parts["table"].tobytes()), plan=compiled.plan, groups=groups,
                  rows=rows, cost=Cost(0.0, 0.0), private=True, engine=compiled.bounded.engine)

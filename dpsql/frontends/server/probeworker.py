"""The metadata database in a process of its own, under a hard memory ceiling.

DuckDB's ``memory_limit`` counts what its buffer manager holds (hash tables, sorts,
aggregate states), not the strings an expression builds row by row: in a 64 MiB database
``SELECT x || c.proname FROM (SELECT string_agg(...) AS x ...) t, pg_catalog.pg_proc c``
reached 3 GB. So tools' catalog probes run in a child process whose data segment is capped
(``RLIMIT_DATA``): an allocation past the ceiling fails inside DuckDB, as an out-of-memory
error of that probe, and should the child die anyway, the next probe starts a new one. The
server and its sessions never share its memory.

The child is this file run as a script (``python -I probeworker.py``): it imports only the
standard library, DuckDB and pyarrow. Frames go both ways on its stdin and stdout: a 4-byte
length, a kind byte, a 4-byte request id, then the payload.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import resource
import struct
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import duckdb
import pyarrow as pa

SETUP, QUERY, INTERRUPT = b"S", b"Q", b"I"
"""Kinds the server sends: the database's set-up (JSON), a probe (SQL), an interrupt."""
READY, TABLE, ERROR, TOO_LARGE, NO_MEMORY = b"R", b"T", b"E", b"L", b"M"
"""Kinds the child answers: ready, a result (Arrow IPC), or why there is none."""
HEADER = struct.Struct("!IcI")
BATCH_ROWS = 4096
GRACE = 2.0
"""Seconds past its time limit a probe may take before the child is killed."""


class ProbeFailed(Exception):
    """A probe the child did not answer: ``kind`` says why (ERROR, TOO_LARGE, NO_MEMORY)."""

    def __init__(self, kind: bytes, text: str) -> None:
        super().__init__(text)
        self.kind = kind


def _send(out: BinaryIO, lock: threading.Lock, kind: bytes, request: int,
          payload: bytes) -> None:
    with lock:
        out.write(HEADER.pack(len(payload) + 5, kind, request) + payload)
        out.flush()


def _read(stream: BinaryIO) -> tuple[bytes, int, bytes] | None:
    """The next frame, or None once the other side has gone."""
    head = stream.read(HEADER.size)
    if len(head) < HEADER.size:
        return None
    length, kind, request = HEADER.unpack(head)
    payload = stream.read(length - 5)
    return (kind, request, payload) if len(payload) == length - 5 else None


@dataclass(frozen=True)
class Limits:
    """What the child enforces: its data ceiling, DuckDB's own limit, time and result size."""

    ceiling_mib: int
    memory_limit_mib: int
    timeout: float
    max_rows: int
    max_bytes: int
    threads: int


@dataclass
class _Pending:
    done: threading.Event = field(default_factory=threading.Event)
    kind: bytes = b""
    payload: bytes = b""


class _Child:
    """One child process, its reader thread and the probes waiting for it."""

    def __init__(self, setup: dict) -> None:
        self.process = subprocess.Popen([sys.executable, "-I", str(Path(__file__))],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self._lock = threading.Lock()
        self._pending: dict[int, _Pending] = {0: _Pending()}
        _send(self.process.stdin, self._lock, SETUP, 0, json.dumps(setup).encode())
        threading.Thread(target=self._answers, daemon=True, name="dpsql-probes").start()
        if not self._pending[0].done.wait(60) or self._pending[0].kind != READY:
            self.kill()
            raise ProbeFailed(ERROR, "the catalog query process did not start: "
                              + self._pending[0].payload.decode(errors="replace"))

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def _answers(self) -> None:
        while (frame := _read(self.process.stdout)) is not None:
            kind, request, payload = frame
            pending = self._pending.get(request)
            if pending is not None:
                pending.kind, pending.payload = kind, payload
                pending.done.set()
        for pending in list(self._pending.values()):  # the child is gone: nobody waits on
            if not pending.done.is_set():
                pending.kind, pending.payload = ERROR, b"the catalog query process ended"
                pending.done.set()

    def ask(self, request: int, sql: str) -> _Pending:
        pending = self._pending[request] = _Pending()
        try:
            _send(self.process.stdin, self._lock, QUERY, request, sql.encode())
        except OSError:
            pending.kind, pending.payload = ERROR, b"the catalog query process ended"
            pending.done.set()
        return pending

    def forget(self, request: int) -> None:
        self._pending.pop(request, None)

    def interrupt(self, request: int) -> None:
        with contextlib.suppress(OSError):
            _send(self.process.stdin, self._lock, INTERRUPT, request, b"")

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()


class ProbeWorker:
    """The server's end: starts the child (again after it died) and waits for its answers.

    Safe to share between threads; each session asks through its own :class:`ProbeCursor`.
    """

    def __init__(self, statements: list[str], cursor_statements: list[str],
                 limits: Limits) -> None:
        self.limits = limits
        self._setup = {"statements": statements, "cursor": cursor_statements,
                       "limits": limits.__dict__}
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._child = _Child(self._setup)

    def child(self) -> tuple[_Child, int]:
        """The running child (a new one if the last has died) and a new request id."""
        with self._lock:
            if not self._child.alive:
                self._child = _Child(self._setup)
            return self._child, next(self._ids)

    def wait(self, child: _Child, request: int, pending: _Pending) -> pa.Table:
        """The answer to ``request``. One that has not come by the time limit (and the
        grace) is interrupted, which the child answers at once, even for a probe still
        waiting for a thread; a child that does not answer that either is killed."""
        if not pending.done.wait(self.limits.timeout + GRACE):
            child.interrupt(request)
            if not pending.done.wait(GRACE):
                child.kill()  # stuck inside DuckDB: only a new child will do
                raise ProbeFailed(ERROR, "the catalog query did not stop at its time limit")
        if pending.kind != TABLE:
            raise ProbeFailed(pending.kind, pending.payload.decode(errors="replace"))
        return pa.ipc.open_stream(pending.payload).read_all()

    @property
    def pid(self) -> int:
        """The child's process id."""
        return self._child.process.pid

    def close(self) -> None:
        with self._lock:
            if self._child.alive:
                self._child.process.stdin.close()  # the child sees the end and leaves
                try:
                    self._child.process.wait(5)
                except subprocess.TimeoutExpired:
                    self._child.kill()


class ProbeCursor:
    """One session's way to the child: what it runs there can be interrupted."""

    def __init__(self, worker: ProbeWorker) -> None:
        self.worker = worker
        self._running: tuple[_Child, int] | None = None

    def run(self, sql: str) -> pa.Table:
        """The result of ``sql``; :class:`ProbeFailed` when the child gives none."""
        child, request = self.worker.child()
        self._running = (child, request)
        try:
            return self.worker.wait(child, request, child.ask(request, sql))
        finally:
            self._running = None
            child.forget(request)

    def interrupt(self) -> None:
        """Interrupt this session's probe, if one is running (from another thread)."""
        running = self._running
        if running is not None:
            running[0].interrupt(running[1])

    def close(self) -> None:
        self.interrupt()


# The child's side.


class TooLarge(Exception):
    """The result passed the row or byte limit."""


def _bounded(reader: pa.RecordBatchReader, limits: Limits) -> pa.Table:
    """The whole result, or TooLarge as soon as it passes the limits (no more is read)."""
    batches, rows, size = [], 0, 0
    for batch in reader:
        rows, size = rows + batch.num_rows, size + batch.nbytes
        if rows > limits.max_rows or size > limits.max_bytes:
            raise TooLarge(f"passed {limits.max_rows:,} rows or "
                           f"{limits.max_bytes // 2**20} MiB")
        batches.append(batch)
    return pa.Table.from_batches(batches, schema=reader.schema)


def _ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


class _Database:
    """The child's metadata database and the probes running on it."""

    def __init__(self, setup: dict, out: BinaryIO) -> None:
        self.limits = Limits(**setup["limits"])
        self.con = duckdb.connect(config={"threads": 1, "temp_directory": "",
                                          "memory_limit": f"{self.limits.memory_limit_mib}MiB"})
        for statement in setup["statements"]:
            self.con.execute(statement)
        self.cursor_statements = setup["cursor"]
        self.out, self.out_lock = out, threading.Lock()
        self.lock = threading.Lock()
        self.queued: set[int] = set()
        self.running: dict[int, duckdb.DuckDBPyConnection] = {}
        ceiling = self.limits.ceiling_mib * 2**20
        resource.setrlimit(resource.RLIMIT_DATA, (ceiling, ceiling))

    def send(self, kind: bytes, request: int, payload: bytes) -> None:
        _send(self.out, self.out_lock, kind, request, payload)

    def submit(self, pool: ThreadPoolExecutor, request: int, sql: str) -> None:
        with self.lock:
            self.queued.add(request)
        pool.submit(self.answer, request, sql)

    def interrupt(self, request: int) -> None:
        """Interrupt a running probe; one still waiting for a thread is answered now (the
        server stopped waiting for it) and skipped when its turn comes."""
        with self.lock:
            cursor = self.running.get(request)
            if request in self.queued:
                self.queued.discard(request)
                self.send(ERROR, request, b"catalog queries are busy: it did not start in "
                          b"time, try again")
        if cursor is not None:
            cursor.interrupt()

    def answer(self, request: int, sql: str) -> None:
        with self.lock:
            if request not in self.queued:
                return  # interrupted while it waited
            self.queued.discard(request)
            cursor = self.running[request] = self.con.cursor()
        timer = threading.Timer(self.limits.timeout, cursor.interrupt)
        timer.start()
        try:
            self.send(*self._run(cursor, request, sql))
        finally:
            timer.cancel()
            with self.lock:
                self.running.pop(request, None)
            cursor.close()

    def _run(self, cursor: duckdb.DuckDBPyConnection, request: int,
             sql: str) -> tuple[bytes, int, bytes]:
        try:
            for statement in self.cursor_statements:
                cursor.execute(statement)
            reader = cursor.sql(sql).to_arrow_reader(BATCH_ROWS)
            try:
                return TABLE, request, _ipc(_bounded(reader, self.limits))
            finally:
                reader.close()
        except TooLarge as error:
            return TOO_LARGE, request, str(error).encode()
        except (duckdb.OutOfMemoryException, MemoryError):
            return NO_MEMORY, request, b"out of memory"
        except Exception as error:
            return ERROR, request, str(error).encode(errors="replace")


def _serve(stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Answer frames until the server closes stdin; then interrupt what still runs."""
    first = _read(stdin)
    if first is None or first[0] != SETUP:
        return
    database = _Database(json.loads(first[2]), stdout)
    database.send(READY, 0, b"")
    pool = ThreadPoolExecutor(database.limits.threads)
    while (frame := _read(stdin)) is not None:
        kind, request, payload = frame
        if kind == QUERY:
            database.submit(pool, request, payload.decode())
        elif kind == INTERRUPT:
            database.interrupt(request)
    pool.shutdown(wait=False, cancel_futures=True)
    for request in list(database.running):
        database.interrupt(request)


if __name__ == "__main__":
    # Frames go to a copy of stdout; whatever else prints lands on stderr, not in a frame.
    protocol = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    _serve(sys.stdin.buffer, protocol)

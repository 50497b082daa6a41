"""The probe process: the metadata database under a hard memory ceiling, answering frames.

Run as a script (``python -P probechild.py``) by :mod:`.probeworker`, it imports only the
standard library, DuckDB and pyarrow. Frames go both ways on its stdin and stdout: a 4-byte
length, a kind byte, a 4-byte request id, then the payload. The first frame sets the
database up (its statements, then ``RLIMIT_DATA``); each later one is a probe (SQL) or an
interrupt. Probes run on a fixed set of threads, each interrupted past the time limit, and
their answers are Arrow IPC streams cut off past a row or byte limit.
"""

from __future__ import annotations

import json
import os
import queue
import resource
import struct
import sys
import threading
import time
from dataclasses import dataclass
from typing import BinaryIO

import duckdb
import pyarrow as pa

SETUP, QUERY, INTERRUPT = b"S", b"Q", b"I"
"""Kinds the server sends: the database's set-up (JSON), a probe (SQL), an interrupt."""
READY, TABLE, ERROR, TOO_LARGE, NO_MEMORY = b"R", b"T", b"E", b"L", b"M"
"""Kinds the child answers: ready, a result (Arrow IPC), or why there is none."""
HEADER = struct.Struct("!IcI")
BATCH_ROWS = 4096
WATCH = 0.05
"""Seconds between the child's looks for probes past their time limit."""


def send(out: BinaryIO, lock: threading.Lock, kind: bytes, request: int,
         payload: bytes) -> None:
    """Write one frame (whole, under ``lock``)."""
    with lock:
        out.write(HEADER.pack(len(payload) + 5, kind, request) + payload)
        out.flush()


def read(stream: BinaryIO) -> tuple[bytes, int, bytes] | None:
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
        # No thread of DuckDB's own: a probe runs on the thread that asks, and DuckDB's
        # async I/O threads (eight by default, for files it may not read) would each map a
        # stack that counts against the ceiling.
        self.con = duckdb.connect(config={
            "threads": 1, "async_threads": 0, "temp_directory": "",
            "memory_limit": f"{self.limits.memory_limit_mib}MiB"})
        for statement in setup["statements"]:
            self.con.execute(statement)
        self.cursor_statements = setup["cursor"]
        self.out, self.out_lock = out, threading.Lock()
        self.lock = threading.Lock()
        self.queued: set[int] = set()
        self.running: dict[int, tuple[duckdb.DuckDBPyConnection, float]] = {}
        self.work: queue.SimpleQueue = queue.SimpleQueue()
        # Every thread is made now, before the ceiling: a new thread's stack would count
        # against it, and be refused while a probe holds the memory.
        for _ in range(self.limits.threads):
            threading.Thread(target=self._take, daemon=True).start()
        threading.Thread(target=self._watch, daemon=True).start()
        ceiling = self.limits.ceiling_mib * 2**20
        resource.setrlimit(resource.RLIMIT_DATA, (ceiling, ceiling))

    def send(self, kind: bytes, request: int, payload: bytes) -> None:
        send(self.out, self.out_lock, kind, request, payload)

    def submit(self, request: int, sql: str) -> None:
        with self.lock:
            self.queued.add(request)
        self.work.put((request, sql))

    def _take(self) -> None:
        """A thread answering probes in turn."""
        while True:
            request, sql = self.work.get()
            try:
                self.answer(request, sql)
            except Exception as error:  # the thread goes on, whatever one probe did
                self.send(NO_MEMORY if isinstance(error, MemoryError) else ERROR, request,
                          str(error).encode(errors="replace"))

    def _watch(self) -> None:
        """Interrupt the probes that have run for longer than the time limit."""
        while True:
            time.sleep(WATCH)
            now = time.monotonic()
            with self.lock:
                late = [c for c, began in self.running.values()
                        if now - began > self.limits.timeout]
            for cursor in late:
                cursor.interrupt()

    def interrupt(self, request: int) -> None:
        """Interrupt a running probe; one still waiting for a thread is answered now (the
        server stopped waiting for it) and skipped when its turn comes."""
        with self.lock:
            cursor = self.running.get(request, (None,))[0]
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
            cursor = self.con.cursor()
            self.running[request] = (cursor, time.monotonic())
        try:
            self.send(*self._run(cursor, request, sql))
        finally:
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
    first = read(stdin)
    if first is None or first[0] != SETUP:
        return
    database = _Database(json.loads(first[2]), stdout)
    database.send(READY, 0, b"")
    while (frame := read(stdin)) is not None:
        kind, request, payload = frame
        if kind == QUERY:
            database.submit(request, payload.decode())
        elif kind == INTERRUPT:
            database.interrupt(request)
    for request in list(database.running):
        database.interrupt(request)


if __name__ == "__main__":
    # Frames go to a copy of stdout; whatever else prints lands on stderr, not in a frame.
    protocol = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    _serve(sys.stdin.buffer, protocol)

"""The metadata database in a process of its own, under a hard memory ceiling.

DuckDB's ``memory_limit`` counts what its buffer manager holds (hash tables, sorts,
aggregate states), not the strings an expression builds row by row: in a 64 MiB database
``SELECT x || c.proname FROM (SELECT string_agg(...) AS x ...) t, pg_catalog.pg_proc c``
reached 3 GB. So tools' catalog probes run in a child process (:mod:`.probechild`) whose
data is capped (``RLIMIT_DATA``): an allocation past the ceiling fails inside DuckDB, as an
out-of-memory error of that probe. The server and its sessions never share its memory.

A child that ran out of memory keeps the address space its allocator took, so it is
retired: the next probe starts a new child, and the old one leaves once its last probe is
answered. A child that died, or would not stop a probe, is replaced the same way.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from dpsql.frontends.server.probechild import (
    ERROR,
    INTERRUPT,
    NO_MEMORY,
    QUERY,
    READY,
    SETUP,
    TABLE,
    Limits,
    read,
    send,
)

GRACE = 2.0
"""Seconds past its time limit a probe may take before the child is killed."""
CHILD = Path(__file__).with_name("probechild.py")
QUIET_ALLOCATORS = {"ARROW_DEFAULT_MEMORY_POOL": "system", "OPENBLAS_NUM_THREADS": "1",
                    "MALLOC_ARENA_MAX": "2"}
"""The child's environment besides the server's. ``RLIMIT_DATA`` counts the address space
a process maps writable, used or not, so the child keeps its reservations small: pyarrow's
mimalloc maps up to 1 GiB at its first allocation (it answered every probe's IPC stream),
NumPy's OpenBLAS a buffer per thread, and glibc an arena per thread that allocates. With
them (and DuckDB's eight async threads, :mod:`.probechild`) the child mapped 280 MiB at rest
and a column listing on a thread it had not used yet could pass the 448 MiB ceiling; now
it maps 170 MiB at rest and about 210 MiB after probes on every thread."""


class ProbeFailed(Exception):
    """A probe the child did not answer: ``kind`` says why (ERROR, TOO_LARGE, NO_MEMORY)."""

    def __init__(self, kind: bytes, text: str) -> None:
        super().__init__(text)
        self.kind = kind


@dataclass
class _Pending:
    done: threading.Event = field(default_factory=threading.Event)
    kind: bytes = b""
    payload: bytes = b""

    def answer(self, kind: bytes, payload: bytes) -> None:
        self.kind, self.payload = kind, payload
        self.done.set()


GONE = b"the catalog query process ended"


class _Child:
    """One child process, its reader thread and the probes waiting for it."""

    def __init__(self, setup: dict) -> None:
        # -P: the child's folder is not put first on its path (this package's types.py
        # would shadow the standard library's); PYTHONPATH and user site-packages still are.
        self.process = subprocess.Popen([sys.executable, "-P", str(CHILD)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        env={**os.environ, **QUIET_ALLOCATORS})
        self._lock = threading.Lock()
        self.pending: dict[int, _Pending] = {}
        self.retiring = False
        self._ready = _Pending()
        send(self.process.stdin, self._lock, SETUP, 0, json.dumps(setup).encode())
        threading.Thread(target=self._answers, daemon=True, name="dpsql-probes").start()
        if not self._ready.done.wait(60) or self._ready.kind != READY:
            self.kill()
            raise ProbeFailed(ERROR, "the catalog query process did not start: "
                              + self._ready.payload.decode(errors="replace"))

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def _answers(self) -> None:
        while (frame := read(self.process.stdout)) is not None:
            kind, request, payload = frame
            pending = self._ready if request == 0 else self.pending.get(request)
            if pending is not None:
                pending.answer(kind, payload)
        for pending in [self._ready, *list(self.pending.values())]:  # gone: wake them
            if not pending.done.is_set():
                pending.answer(ERROR, GONE)
        self.process.stdout.close()
        self.process.wait()

    def ask(self, request: int, sql: str) -> _Pending:
        pending = self.pending[request] = _Pending()
        try:
            send(self.process.stdin, self._lock, QUERY, request, sql.encode())
        except OSError:
            pending.answer(ERROR, GONE)
        return pending

    def interrupt(self, request: int) -> None:
        with contextlib.suppress(OSError):
            send(self.process.stdin, self._lock, INTERRUPT, request, b"")

    def leave(self) -> None:
        """Close the child's input: it interrupts what still runs and exits."""
        with contextlib.suppress(OSError), self._lock:
            self.process.stdin.close()

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()


class ProbeWorker:
    """The server's end: keeps a child running and sends it probes (safe to share between
    threads; each session asks through its own :class:`ProbeCursor`)."""

    def __init__(self, statements: list[str], cursor_statements: list[str],
                 limits: Limits) -> None:
        self.limits = limits
        self._setup = {"statements": statements, "cursor": cursor_statements,
                       "limits": limits.__dict__}
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._child = _Child(self._setup)

    def ask(self, sql: str) -> tuple[_Child, int, _Pending]:
        """Send ``sql`` to the current child, a new one if it died or is retiring."""
        with self._lock:
            if self._child.retiring or not self._child.alive:
                old, self._child = self._child, _Child(self._setup)
                if not old.pending:
                    old.leave()
            request = next(self._ids)
            return self._child, request, self._child.ask(request, sql)

    def done(self, child: _Child, request: int) -> None:
        """``request`` needs no answer any more; a retired child with none left leaves."""
        with self._lock:
            child.pending.pop(request, None)
            if child is not self._child and not child.pending:
                child.leave()

    def wait(self, child: _Child, request: int, pending: _Pending) -> pa.Table:
        """The answer to ``request``. One that has not come by the time limit (and the
        grace) is interrupted, which the child answers at once, even for a probe still
        waiting for a thread; a child that does not answer that either is killed."""
        if not pending.done.wait(self.limits.timeout + GRACE):
            child.interrupt(request)
            if not pending.done.wait(GRACE):
                child.kill()  # stuck inside DuckDB: only a new child will do
                raise ProbeFailed(ERROR, "the catalog query did not stop at its time limit")
        if pending.kind == NO_MEMORY:
            child.retiring = True  # its allocator keeps the address space the probe took
        if pending.kind != TABLE:
            raise ProbeFailed(pending.kind, pending.payload.decode(errors="replace"))
        return pa.ipc.open_stream(pending.payload).read_all()

    @property
    def pid(self) -> int:
        """The current child's process id."""
        return self._child.process.pid

    def close(self) -> None:
        with self._lock:
            self._child.leave()
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
        child, request, pending = self.worker.ask(sql)
        self._running = (child, request)
        try:
            return self.worker.wait(child, request, pending)
        finally:
            self._running = None
            self.worker.done(child, request)

    def interrupt(self) -> None:
        """Interrupt this session's probe, if one is running (from another thread)."""
        running = self._running
        if running is not None:
            running[0].interrupt(running[1])

    def close(self) -> None:
        self.interrupt()

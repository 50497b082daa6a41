"""The durable ledger across real processes: racing spenders, and SIGKILL at random moments,
against a SQLite file and against a PostgreSQL database (``ledger_url``).

Workers are forked from a multiprocessing forkserver that has already imported dpsql, so
each one starts in milliseconds instead of re-importing the whole package for a second.
"""

from __future__ import annotations

import json
import multiprocessing
import random
import sqlite3
import time
from pathlib import Path

import pytest

from dpsql.accounting.ledger import Ledger
from dpsql.accounting.store import is_url
from dpsql.exact import as_fraction
from tests.ledger_workers import workers


@pytest.fixture(scope="module")
def ctx() -> multiprocessing.context.BaseContext:
    context = multiprocessing.get_context("forkserver")
    # The driver too, where installed (the forkserver skips a module it cannot import).
    context.set_forkserver_preload(["dpsql.accounting.ledger", "tests.ledger_workers.workers",
                                    "dpsql.accounting.postgres_store", "psycopg",
                                    "psycopg_pool"])
    return context


def messages(reader) -> list[bytes]:
    """Everything the worker sent before it exited or was killed."""
    received = []
    while True:
        try:
            received.append(reader.recv_bytes())
        except (EOFError, OSError):
            return received


def integrity(path: str) -> str:
    """SQLite's own check of the file ("ok"); a PostgreSQL ledger is the server's to keep."""
    if is_url(path):
        return "ok"
    raw = sqlite3.connect(path)
    try:
        return raw.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        raw.close()


def exists(path: str) -> bool:
    """Whether the ledger was created (a kill before that leaves no file; a database is
    there from the start)."""
    return is_url(path) or Path(path).exists()


def test_racing_processes_spend_exactly_the_budget(ctx, ledger_url):
    path, start = ledger_url, ctx.Event()
    runs = []
    for _ in range(4):  # they also race to create the file and its schema
        reader, writer = ctx.Pipe(duplex=False)
        process = ctx.Process(target=workers.charge_many,
                              args=(path, 1.0, 50, 0.01, start, writer))
        process.start()
        writer.close()
        runs.append((process, reader))
    start.set()
    reports = []
    for process, reader in runs:
        reports += [json.loads(m) for m in messages(reader)]
        process.join(60)
        assert process.exitcode == 0, reports
    assert all("error" not in r for r in reports) and len(reports) == 4
    assert sum(r["accepted"] for r in reports) == 100
    assert sum(r["refused"] for r in reports) == 100
    with Ledger(path, budget=None, analyst="shared") as ledger:
        history = ledger.history()
    assert len(history) == 100
    assert sum(as_fraction(h["epsilon"]) for h in history) == 1
    assert integrity(path) == "ok"


def test_sigkill_never_leaves_a_release_without_its_charge(ctx, ledger_url):
    """Even iterations are killed a random time after the start (often while the ledger
    opens: schema creation, WAL recovery), odd ones a random time into charging."""
    path, rng = ledger_url, random.Random(20240607)
    released_total = 0
    for iteration in range(30):
        reader, writer = ctx.Pipe(duplex=False)
        process = ctx.Process(target=workers.release_until_killed, args=(path, writer))
        process.start()
        writer.close()
        if iteration % 2:
            assert reader.recv_bytes() == b"READY"
        time.sleep(rng.uniform(0.0, 0.08))
        process.kill()
        released = [m.decode().split() for m in messages(reader) if m != b"READY"]
        process.join(10)
        assert process.exitcode == -9  # killed, not crashed on its own
        if not exists(path):
            continue
        assert integrity(path) == "ok"
        # the budget too: a kill before the worker's first commit leaves none stored
        with Ledger(path, budget=workers.CRASH_BUDGET, analyst="crash") as ledger:
            recorded = {c.id: c.query for c in ledger.charges}
            ledger.charge(0.001, 0.0, query="after the kill")  # no stale lock is left
        for word, charge_id, token in released:
            assert word == "RELEASED" and recorded[int(charge_id)].endswith(token)
        released_total += len(released)
    assert released_total > 30  # the kills did land while the workers were charging

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
from tests.postgres import connect_raw


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


def answers_and_charges(path: str) -> tuple[dict[str, bytes], set[str], set[str]]:
    """The stored answers by question, the questions charged, the questions held."""
    raw = connect_raw(path)
    try:
        answers = {key: bytes(result) for key, result in
                   raw.execute("SELECT key, result FROM cache").fetchall()}
        charged = {query.rsplit(" ", 1)[1] for (query,) in
                   raw.execute("SELECT query FROM charges WHERE analyst = 'answers'")}
        held = {key for (key,) in raw.execute("SELECT key FROM holds").fetchall()}
    finally:
        raw.close()
    return answers, charged, held


def start_answering(ctx, path: str, stop: str | None):
    reader, writer = ctx.Pipe(duplex=False)
    process = ctx.Process(target=workers.answer_until_killed, args=(path, stop, writer))
    process.start()
    writer.close()
    assert reader.recv_bytes() == b"READY"
    return process, reader


@pytest.mark.parametrize("stop", workers.STOPS)
def test_a_charge_and_its_answer_commit_together(ctx, ledger_url, stop):
    """Killed with its hold committed, or its charge and answer written but not committed,
    a process leaves neither the charge nor the answer, and its hold, which keeps the cost
    spent, is taken over by the next asker at no further cost; killed after the commit, it
    leaves both."""
    process, reader = start_answering(ctx, ledger_url, stop)
    token = reader.recv_bytes().decode().split()[1]
    if stop != "held":
        assert reader.recv_bytes() == (b"WRITTEN" if stop == "written"
                                       else f"SETTLED {token}".encode())
    process.kill()
    process.join(10)
    assert process.exitcode == -9
    answers, charged, held = answers_and_charges(ledger_url)
    with Ledger(ledger_url, budget=workers.CRASH_BUDGET, analyst="answers") as ledger:
        if stop == "settled":
            assert (answers, charged, held) == ({token: f"answer {token}".encode()},
                                                {token}, set())
            assert ledger.hold(token, workers.ANSWER_COST, 0.0) == answers[token]
            return
        assert (answers, charged, held) == ({}, set(), {token})
        assert ledger.spent.epsilon == workers.ANSWER_COST  # the hold counts
        assert ledger.hold(token, workers.ANSWER_COST, 0.0) is None  # taken over
        assert ledger.spent.epsilon == workers.ANSWER_COST
        ledger.settle(token, workers.ANSWER_COST, 0.0, query=f"SELECT 1 -- {token}",
                      answer=b"asked again")
        assert ledger.spent.epsilon == workers.ANSWER_COST and len(ledger.charges) == 1
    assert answers_and_charges(ledger_url) == ({token: b"asked again"}, {token}, set())


def test_sigkill_at_random_leaves_each_answer_with_its_charge(ctx, ledger_url):
    rng, settled = random.Random(20261205), set()
    for kills in range(1, 13):
        process, reader = start_answering(ctx, ledger_url, None)
        time.sleep(rng.uniform(0.0, 0.1))
        process.kill()
        settled |= {m.decode().split()[1] for m in messages(reader)
                    if m.startswith(b"SETTLED")}
        process.join(10)
        assert process.exitcode == -9
        answers, charged, held = answers_and_charges(ledger_url)
        assert set(answers) == charged and settled <= charged
        assert len(held) <= kills and not held & charged  # one hold per kill at most
        with Ledger(ledger_url, budget=None, analyst="answers") as ledger:
            spent = len(charged) + len(held)
            assert ledger.spent.epsilon == pytest.approx(spent * workers.ANSWER_COST)
    assert len(settled) > 12


def test_a_question_held_by_a_live_process_is_waited_for(ctx, ledger_url):
    def ask() -> bytes:
        reader, writer = ctx.Pipe(duplex=False)
        process = ctx.Process(target=workers.hold_once, args=(ledger_url, "q", writer))
        process.start()
        writer.close()
        process.join(30)
        return reader.recv_bytes()

    with Ledger(ledger_url, budget=workers.CRASH_BUDGET, analyst="answers") as ledger:
        assert ledger.hold("q", workers.ANSWER_COST, 0.0) is None
        assert ask() == b"BUSY"
        ledger.settle("q", workers.ANSWER_COST, 0.0, query="SELECT 1 -- q", answer=b"42")
        assert ask() == b"42"
        assert len(ledger.charges) == 1

"""Targets of the ledger's multi-process tests: each runs in its own process.

Results travel back over a one-way multiprocessing pipe. Every message is one small
``send_bytes`` (a single ``write`` below PIPE_BUF), so a SIGKILL cannot cut one in half.
"""

from __future__ import annotations

import json
import secrets
import time
import traceback
from multiprocessing.connection import Connection
from multiprocessing.synchronize import Event

from dpsql.accounting import Budget
from dpsql.accounting.ledger import Ledger
from dpsql.errors import BudgetExceededError

CRASH_BUDGET = Budget(epsilon=1e6)


def charge_many(path: str, total: float, attempts: int, epsilon: float, start: Event,
                out: Connection) -> None:
    """Open the ledger, wait for the starting gun, try ``attempts`` charges; report counts."""
    try:
        with Ledger(path, budget=Budget(epsilon=total), analyst="shared") as ledger:
            start.wait()
            accepted = refused = 0
            for i in range(attempts):
                try:
                    ledger.charge(epsilon, 0.0, query=f"SELECT {i}", dataset="visits")
                except BudgetExceededError:
                    refused += 1
                else:
                    accepted += 1
        out.send_bytes(json.dumps({"accepted": accepted, "refused": refused}).encode())
    except BaseException:
        out.send_bytes(json.dumps({"error": traceback.format_exc()}).encode())
        raise


def release_until_killed(path: str, out: Connection) -> None:
    """Charge, then "release" (report) the answer only after ``charge`` returned; forever."""
    ledger = Ledger(path, budget=CRASH_BUDGET, analyst="crash")
    out.send_bytes(b"READY")
    while True:
        token = secrets.token_hex(8)
        record = ledger.charge(0.001, 0.0, query=f"SELECT COUNT(*) FROM t -- {token}")
        out.send_bytes(f"RELEASED {record.id} {token}".encode())


ANSWER_COST = 0.001
STOPS = ("held", "written", "settled")
"""Where ``answer_until_killed`` may stop and wait to be killed: its hold committed (the
engine "running"), its charge and answer written but not committed, both committed."""


def answer_until_killed(path: str, stop: str | None, out: Connection) -> None:
    """Answer fresh questions as the server does (hold, "engine", settle with the answer),
    reporting each step; with ``stop``, wait there to be killed, at the first question."""
    ledger = Ledger(path, budget=CRASH_BUDGET, analyst="answers")
    run = ledger._store.run
    settling = []

    def pausing(body, mode="read", **options):
        def then_wait(db):
            result = body(db)
            if settling and stop == "written":
                out.send_bytes(b"WRITTEN")
                time.sleep(600)
            return result

        return run(then_wait, mode, **options)

    ledger._store.run = pausing
    out.send_bytes(b"READY")
    while True:
        token = secrets.token_hex(8)
        assert ledger.hold(token, ANSWER_COST, 0.0) is None
        out.send_bytes(f"HELD {token}".encode())
        if stop == "held":
            time.sleep(600)
        settling.append(token)
        ledger.settle(token, ANSWER_COST, 0.0, query=f"SELECT 1 -- {token}",
                      answer=f"answer {token}".encode())
        settling.clear()
        out.send_bytes(f"SETTLED {token}".encode())
        if stop == "settled":
            time.sleep(600)


def hold_once(path: str, key: str, out: Connection) -> None:
    """Ask for the question ``key`` once: report BUSY, the stored answer, or HELD."""
    from dpsql.accounting.ledger import QuestionBusy

    with Ledger(path, budget=CRASH_BUDGET, analyst="answers") as ledger:
        try:
            answer = ledger.hold(key, ANSWER_COST, 0.0)
        except QuestionBusy:
            answer = b"BUSY"
        out.send_bytes(b"HELD" if answer is None else answer)

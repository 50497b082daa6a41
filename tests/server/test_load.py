"""Load and soak on loopback, bounded in count and time: many analysts and connections at
once against real ``dpsql serve`` processes. Nothing overdraws, nothing fails but budget
refusals, and the server's memory settles."""

from __future__ import annotations

import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest

from dpsql.accounting.ledger import Ledger
from dpsql.accounting.users import Users
from dpsql.accounting.values import Budget
from dpsql.frontends.server.auth import make_verifier
from tests.server.conftest import PASSWORD, write_catalog
from tests.server.processes import ServeProcess, integrity

QUERY = "SELECT COUNT(*) AS n FROM pums WHERE age > %s AND income > %s"


def add_users(ledger, budgets: dict[str, float]) -> None:
    """Pure ε budgets: basic composition is then the only filter, so counts are exact."""
    with Users(ledger) as users:
        for name, epsilon in budgets.items():
            users.add(name, make_verifier(PASSWORD), Budget(epsilon=epsilon))


def session(server: ServeProcess, user: str, asks: list[int], epsilon: float) -> Counter:
    """One connection asking distinct questions; the outcomes by SQLSTATE ('ok')."""
    outcomes: Counter = Counter()
    with psycopg.connect(host=server.host, port=server.port, user=user, password=PASSWORD,
                         dbname="dpsql", autocommit=True, connect_timeout=30) as con:
        con.execute(f"SET dpsql.epsilon = {epsilon}")
        for n in asks:
            try:
                con.execute(QUERY, [n % 90, n]).fetchall()
            except psycopg.Error as error:
                outcomes[error.sqlstate or type(error).__name__] += 1
            else:
                outcomes["ok"] += 1
    return outcomes


def spent(ledger, user: str) -> float:
    with Ledger(ledger, budget=None, analyst=user) as book:
        return book.spent.epsilon


def test_two_server_processes_on_one_ledger_never_overdraw(tmp_path):
    ledger = tmp_path / "ledger.db"
    add_users(ledger, {"shared": 5.0})
    catalog = write_catalog(tmp_path)
    with ServeProcess(catalog, ledger, log=tmp_path / "a") as one, \
            ServeProcess(catalog, ledger, log=tmp_path / "b") as two, \
            ThreadPoolExecutor(16) as pool:
        outcomes = sum(pool.map(lambda i: session((one, two)[i % 2], "shared",
                                                  list(range(i * 100, i * 100 + 4)), 0.25),
                                range(16)), Counter())
    assert outcomes == Counter({"ok": 20, "53DP1": 44})  # 64 asked, exactly 5 / 0.25 answered
    assert spent(ledger, "shared") == 5.0 and integrity(ledger) == "ok"


@pytest.mark.slow
def test_soak_16_clients_reconnecting_for_a_minute_at_most(tmp_path):
    """16 clients, each connecting once a round and asking ASKS new questions: 12 share four
    well-funded analysts, 4 share one analyst whose budget runs out. Up to ROUNDS rounds
    within a minute; the server's memory is read after each."""
    rounds, asks, deadline = 8, 4, time.monotonic() + 60
    ledger = tmp_path / "ledger.db"
    add_users(ledger, {**{f"rich{i}": 1000.0 for i in range(4)}, "tight": 3.0})
    users = [f"rich{i % 4}" for i in range(12)] + ["tight"] * 4
    memory, totals = [], Counter()
    with ServeProcess(write_catalog(tmp_path), ledger, log=tmp_path / "serve") as server, \
            ThreadPoolExecutor(16) as pool:
        for round_ in range(rounds):
            if time.monotonic() > deadline:
                break
            first = round_ * 16 * asks
            totals += sum(pool.map(
                lambda c, first=first: session(server, users[c], list(range(
                    first + c * asks, first + (c + 1) * asks)), 0.1),
                range(16)), Counter())
            memory.append(server.rss_mib())
        errors = server.errors.read_text()
    done = len(memory)
    assert done >= 4, f"only {done} rounds in a minute"
    assert totals["ok"] + totals["53DP1"] == 16 * asks * done, totals  # nothing else failed
    assert totals["53DP1"] == 4 * asks * done - 30  # 'tight' answered exactly 3 / 0.1 times
    assert spent(ledger, "tight") == 3.0
    assert "Traceback" not in errors and integrity(ledger) == "ok"
    # 128 sessions come and go: a per-session leak would climb round after round, while
    # the allocator's ups and downs stay within a few tens of MiB.
    assert max(memory[-3:]) < max(memory[:3]) + 64, f"MiB after each round: {memory}"

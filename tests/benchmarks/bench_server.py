"""What ``dpsql serve`` adds to small private queries: latency from one client and from 16
concurrent clients, against the same queries asked in process.

Run on purpose (not part of the default test run)::

    .venv/bin/python -m tests.benchmarks.bench_server --queries 1000 --clients 16

Every query is a distinct small private query (``COUNT(*)`` over the PUMS sample with a new
``WHERE`` each time, so no answer comes from the cache) on an analyst-role connection with a
durable ledger, asked four ways:

- in process, one client: ``con.sql``;
- ``dpsql serve`` (its own process, started with ``python -m dpsql serve``), one psycopg
  client on loopback (extended protocol, bound parameters);
- in process, N threads, each with its own connection, sharing the queries;
- ``dpsql serve``, N psycopg clients in threads, sharing the queries.

The one-client pair alternates query by query, and the N-client pair alternates in halves,
so both sides of a pair see the same machine (the load of a shared machine moves). It
prints p50 and p99 of each query's latency, the throughput, the server's overhead at the
median with one client (target: at most 5 ms), the throughput ratio with N clients, the
machine's cores and load average.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import psycopg

import dpsql
from dpsql.accounting.users import Users
from dpsql.datasets import pums_path
from dpsql.frontends.server.auth import make_verifier
from tests.server.processes import ServeProcess

CATALOG = f"""[tables.pums]
source = "{pums_path('PUMS_dup')}"
privacy_unit = "pid"
bounds = {{ age = [0, 100], income = [0, 500000] }}
max_rows_per_group = 2
"""
QUERY = "SELECT COUNT(*) AS n FROM pums WHERE age > {} AND income > {}"
PARAMETERISED = "SELECT COUNT(*) AS n FROM pums WHERE age > %s AND income > %s"
EPSILON = 0.01
PASSWORD = "benchmark password"


def timed(ask: Callable[[int], object], numbers: list[int], out: list[float]) -> None:
    for n in numbers:
        began = time.perf_counter()
        ask(n)
        out.append(time.perf_counter() - began)


def concurrently(clients: int, numbers: list[int],
                 client: Callable[[list[int], list[float]], None]) -> tuple[list[float], float]:
    """Run ``client(share, times)`` in ``clients`` threads; all latencies and the wall time."""
    shares = [numbers[i::clients] for i in range(clients)]
    times: list[list[float]] = [[] for _ in range(clients)]
    threads = [threading.Thread(target=client, args=(s, t)) for s, t in zip(shares, times,
                                                                           strict=True)]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [t for ts in times for t in ts], time.perf_counter() - began


class InProcess:
    """A client asking ``con.sql`` on its own analyst-role connection."""

    def __init__(self, catalog: Path, ledger: Path) -> None:
        self.con = dpsql.connect(catalog=catalog, ledger=ledger, analyst="local",
                                 role="analyst")

    def ask(self, n: int) -> None:
        self.con.sql(QUERY.format(n % 90, n), epsilon=EPSILON).fetchall()

    def close(self) -> None:
        self.con.close()


class Served:
    """A psycopg client of ``dpsql serve``."""

    def __init__(self, server: ServeProcess) -> None:
        self.con = psycopg.connect(host=server.host, port=server.port, user="bench",
                                   password=PASSWORD, dbname="dpsql", autocommit=True)
        self.con.execute(f"SET dpsql.epsilon = {EPSILON}")

    def ask(self, n: int) -> None:
        self.con.execute(PARAMETERISED, [n % 90, n]).fetchall()

    def close(self) -> None:
        self.con.close()


def alternating(clients: tuple, numbers: list[int]) -> list[list[float]]:
    """One query of each client in turn; each client's latencies."""
    times: list[list[float]] = [[] for _ in clients]
    for n in numbers:
        for client, out in zip(clients, times, strict=True):
            timed(client.ask, [n], out)
    return times


def threads(make: Callable[[], object], clients: int,
            numbers: list[int]) -> tuple[list[float], float]:
    def client(share: list[int], times: list[float]) -> None:
        asker = make()
        try:
            timed(asker.ask, share, times)
        finally:
            asker.close()
    return concurrently(clients, numbers, client)


def line(label: str, times: list[float], wall: float) -> str:
    ordered = sorted(times)
    p50 = statistics.median(ordered)
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    return (f"{label:<34} p50 {p50 * 1e3:7.2f} ms   p99 {p99 * 1e3:7.2f} ms   "
            f"{len(times) / wall:6.1f} queries/s")


def main(queries: int, clients: int) -> None:
    folder = Path(tempfile.mkdtemp())
    catalog, ledger = folder / "catalog.toml", folder / "ledger.db"
    catalog.write_text(CATALOG)
    budget = dpsql.Budget(epsilon=10 * queries * EPSILON + 1)
    with Users(ledger) as users:
        users.add("bench", make_verifier(PASSWORD), budget)
        users.add("local", make_verifier(PASSWORD), budget)
    load = os.getloadavg()
    numbers = [10_000 * (i + 1) for i in range(queries)]  # two analysts: two answer caches
    with ServeProcess(catalog, ledger, log=folder / "serve") as server:
        pair = (InProcess(catalog, ledger), Served(server))
        local, remote = alternating(pair, numbers)
        for client in pair:
            client.close()
        rows = [("in process, 1 client", local, sum(local)),
                ("dpsql serve, 1 client", remote, sum(remote))]
        many = {"in process": ([], 0.0), "dpsql serve": ([], 0.0)}
        for half in range(2):
            share = [10_000 * queries * (half + 2) + 10 * i + 5 for i in range(queries // 2)]
            for label, make in (("in process", lambda: InProcess(catalog, ledger)),
                                ("dpsql serve", lambda: Served(server))):
                times, wall = threads(make, clients, share)
                many[label] = (many[label][0] + times, many[label][1] + wall)
        rows += [(f"{label}, {clients} clients", times, wall)
                 for label, (times, wall) in many.items()]
        server.stop()
    load = tuple(round(max(a, b), 1) for a, b in zip(load, os.getloadavg(), strict=True))
    print(f"{queries} distinct small private queries per line, loopback, {os.cpu_count()} "
          f"cores, load average (1/5/15 min, the larger of start and end) {load}")
    for label, times, wall in rows:
        print(line(label, times, wall))
    one = [statistics.median(t) for _, t, _ in rows[:2]]
    rates = [len(t) / wall for _, t, wall in rows[2:]]
    print(f"server overhead at the median with 1 client: {(one[1] - one[0]) * 1e3:.2f} ms; "
          f"with {clients} clients (queueing for the cores sets their latency) the server's "
          f"throughput is {rates[1] / rates[0]:.2f}x in process")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=1000, help="queries per line")
    parser.add_argument("--clients", type=int, default=16, help="concurrent clients")
    arguments = parser.parse_args()
    main(arguments.queries, arguments.clients)

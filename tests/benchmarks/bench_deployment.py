"""The figures of docs/deployment.md: one PostgreSQL ledger, one ``dpsql serve`` against two.

Run on purpose (not part of the default test run; it starts a throwaway PostgreSQL cluster
as ``tests/postgres.py`` does, so it needs Debian's ``postgresql`` package)::

    .venv/bin/python -m tests.benchmarks.bench_deployment --queries 400 --clients 16

It measures, on this machine:

- **the ledger alone**: charges per second that N threads of one process commit to the
  PostgreSQL ledger (``Ledger.charge``: lock the scopes, sum, check, insert, commit), each
  thread its own analyst, then all on one analyst (every charge waits for the one before),
  each Ledger warmed first; and what a new Ledger's first sum of a long history costs;
  and questions per second paid the server's way (``hold`` then ``settle`` with a stored
  answer: two transactions);
- **servers**: ``--clients`` psycopg clients asking ``--queries`` distinct small private
  queries (a new ``WHERE`` each, so none is answered from the cache), spread over one
  ``dpsql serve`` and then over two, every server on the same ledger: throughput, and p50
  and p99 of each query's latency.

The cluster keeps ``fsync`` and ``synchronous_commit`` on (unlike the tests' cluster): a
charge's commit waits for its WAL flush, as in production. ``--no-fsync`` turns them off,
to see what the ledger's own work costs apart from the disk (never run a ledger so).
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

from dpsql.accounting.ledger import Ledger
from dpsql.accounting.users import Users
from dpsql.accounting.values import Budget
from dpsql.frontends.server.auth import make_verifier
from tests.benchmarks.bench_server import CATALOG, PARAMETERISED, PASSWORD
from tests.postgres import create_database, running_cluster
from tests.server.processes import ServeProcess

EPSILON = 0.01
BIG = Budget(epsilon=1e9)


def charges_per_second(url: str, threads: int, seconds: float, *, shared: bool,
                       answered: bool) -> float:
    """Spends committed per second by ``threads`` threads, each with its own Ledger (of one
    analyst, or of its own); ``answered``: the server's hold then settle with an answer."""
    ledgers = [Ledger(url, budget=BIG, analyst="shared" if shared else f"analyst{i}")
               for i in range(threads)]
    for ledger in ledgers:  # each sums its analyst's history once, before the clock starts
        _ = ledger.spent
    counts = [0] * threads
    stop = time.perf_counter() + seconds

    def spend(i: int) -> None:
        ledger = ledgers[i]
        while time.perf_counter() < stop:
            key = f"{i}:{counts[i]}:{time.perf_counter_ns()}"
            if answered:
                ledger.hold(key, EPSILON, 0.0)
                ledger.settle(key, EPSILON, 0.0, query=key, answer=b"x" * 600)
            else:
                ledger.charge(EPSILON, 0.0, query=key)
            counts[i] += 1

    began = time.perf_counter()
    workers = [threading.Thread(target=spend, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    wall = time.perf_counter() - began
    for ledger in ledgers:
        ledger.close()
    return sum(counts) / wall


def serve(servers: list[ServeProcess], clients: int, numbers: list[int]
          ) -> tuple[list[float], float]:
    """``clients`` psycopg clients, client i on server i mod len(servers), sharing
    ``numbers``; every latency and the wall time."""
    shares = [numbers[i::clients] for i in range(clients)]
    times: list[list[float]] = [[] for _ in range(clients)]

    def client(i: int) -> None:
        server = servers[i % len(servers)]
        with psycopg.connect(host=server.host, port=server.port, user=f"bench{i}",
                             password=PASSWORD, dbname="dpsql", autocommit=True) as con:
            con.execute(f"SET dpsql.epsilon = {EPSILON}")
            for n in shares[i]:
                began = time.perf_counter()
                con.execute(PARAMETERISED, [n % 90, n]).fetchall()
                times[i].append(time.perf_counter() - began)

    return timed_threads(clients, client, times)


def timed_threads(count: int, body: Callable[[int], None],
                  times: list[list[float]]) -> tuple[list[float], float]:
    began = time.perf_counter()
    workers = [threading.Thread(target=body, args=(i,)) for i in range(count)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return [t for ts in times for t in ts], time.perf_counter() - began


def line(label: str, times: list[float], wall: float) -> str:
    ordered = sorted(times)
    p50 = statistics.median(ordered)
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    return (f"{label:<28} p50 {p50 * 1e3:7.1f} ms   p99 {p99 * 1e3:7.1f} ms   "
            f"{len(times) / wall:6.1f} queries/s")


def main(queries: int, clients: int, seconds: float, durable: bool) -> None:
    folder = Path(tempfile.mkdtemp())
    catalog = folder / "catalog.toml"
    catalog.write_text(CATALOG)
    load = os.getloadavg()
    with running_cluster(durable=durable) as cluster:
        url = create_database(cluster, "ledger")
        print(f"PostgreSQL ledger (fsync {'on' if durable else 'off'}), {os.cpu_count()} "
              "cores")
        for threads in (1, 4, 16):
            for shared in (False, True):
                for answered in (False, True):
                    rate = charges_per_second(url, threads, seconds, shared=shared,
                                              answered=answered)
                    who = "one analyst" if shared else "an analyst each"
                    what = "hold + settle" if answered else "charge"
                    print(f"  {threads:2d} threads, {who:<15} {what:<13} {rate:7.0f} /s")
        with Ledger(url, budget=BIG, analyst="shared") as cold:
            history = len(cold.charges)
            began = time.perf_counter()
            _ = cold.spent
        print(f"  a new Ledger's first sum of an analyst's {history} charges: "
              f"{(time.perf_counter() - began) * 1e3:.0f} ms (then only newer charges are read)")
        with Users(url) as users:
            for i in range(clients):
                users.add(f"bench{i}", make_verifier(PASSWORD), BIG)
        rows = []
        with ServeProcess(catalog, url, log=folder / "a") as one, \
                ServeProcess(catalog, url, log=folder / "b") as two:
            for round_, servers in enumerate(([one], [one, two], [one], [one, two])):
                numbers = [1_000_000 * (round_ + 1) + i for i in range(queries)]
                rows.append((len(servers), *serve(servers, clients, numbers)))
    load = tuple(round(max(a, b), 1) for a, b in zip(load, os.getloadavg(), strict=True))
    print(f"{clients} clients, {queries} distinct small private queries per round, rounds "
          f"alternate 1 and 2 servers; load average (1/5/15 min) {load}")
    for count in (1, 2):
        times = [t for n, ts, _ in rows if n == count for t in ts]
        wall = sum(w for n, _, w in rows if n == count)
        print(line(f"{count} server{'s' * (count > 1)}, {clients} clients", times, wall))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=400, help="queries per round")
    parser.add_argument("--clients", type=int, default=16, help="concurrent clients")
    parser.add_argument("--seconds", type=float, default=5.0,
                        help="seconds per ledger measurement")
    parser.add_argument("--no-fsync", dest="durable", action="store_false",
                        help="the cluster without fsync and synchronous commits")
    arguments = parser.parse_args()
    main(arguments.queries, arguments.clients, arguments.seconds, arguments.durable)

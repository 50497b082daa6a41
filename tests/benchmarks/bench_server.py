"""What ``dpsql serve`` adds to a small private query: psycopg round trip against ``con.sql``.

Run on purpose (not part of the default test run)::

    .venv/bin/python tests/benchmarks/bench_server.py --queries 300

Both sides answer the same series of distinct small queries (``COUNT(*)`` over the PUMS
sample with a different ``WHERE age > n`` each time, so no answer comes from the cache) on
an analyst-role connection with a durable ledger: in process through ``con.sql``, and
through the server on loopback with psycopg (extended protocol, a bound parameter). It
prints p50 and p99 of each, their ratio, and the server's overhead per query in ms
(target: at most 5 ms).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import psycopg

import dpsql
from dpsql.accounting.users import Users
from dpsql.datasets import pums_path
from dpsql.frontends.server import Server, ServerConfig
from dpsql.frontends.server.auth import make_verifier

CATALOG = f"""[tables.pums]
source = "{pums_path('PUMS_dup')}"
privacy_unit = "pid"
bounds = {{ age = [0, 100], income = [0, 500000] }}
max_rows_per_group = 2
"""
QUERY = "SELECT COUNT(*) AS n FROM pums WHERE age > {}"
EPSILON = 0.01


def timed(run, queries: int) -> list[float]:
    times = []
    for i in range(queries):
        began = time.perf_counter()
        run(i)
        times.append(time.perf_counter() - began)
    return times


def summary(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


def main(queries: int) -> None:
    folder = Path(tempfile.mkdtemp())
    catalog, ledger = folder / "catalog.toml", folder / "ledger.db"
    catalog.write_text(CATALOG)
    budget = dpsql.Budget(epsilon=10 * queries * EPSILON + 1, delta=1e-6)
    with Users(ledger) as users:
        users.add("bench", make_verifier("benchmark password"), budget)
    con = dpsql.connect(catalog=catalog, ledger=ledger, analyst="local", role="analyst",
                        budget=budget)
    local = timed(lambda i: con.sql(QUERY.format(i % 90 + 10_000 * (i + 1)),
                                    epsilon=EPSILON).fetchall(), queries)
    with Server(ServerConfig(catalog=catalog, ledger=ledger, port=0)) as server:
        host, port = server.address
        with psycopg.connect(host=host, port=port, user="bench", password="benchmark password",
                             dbname="dpsql", autocommit=True) as client:
            client.execute(f"SET dpsql.epsilon = {EPSILON}")
            remote = timed(lambda i: client.execute(
                "SELECT COUNT(*) AS n FROM pums WHERE age > %s",
                [i % 90 + 10_000 * (i + 1)]).fetchall(), queries)
    con.close()
    (lp50, lp99), (rp50, rp99) = summary(local), summary(remote)
    print(f"{queries} distinct small private queries, one client, loopback")
    print(f"in process (con.sql):   p50 {lp50 * 1e3:6.2f} ms   p99 {lp99 * 1e3:6.2f} ms")
    print(f"dpsql serve (psycopg):  p50 {rp50 * 1e3:6.2f} ms   p99 {rp99 * 1e3:6.2f} ms")
    print(f"ratio {rp50 / lp50:.2f}x; server overhead per query {(rp50 - lp50) * 1e3:.2f} ms "
          "(p50)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=300, help="queries per side")
    main(parser.parse_args().queries)

"""Catalog probes cost the server bounded work: a list of functions checked before they run,
a capped answer, and a process of their own whose memory has a hard ceiling."""

from __future__ import annotations

import os
import signal
import time

import psycopg
import pytest

from dpsql.frontends.server.limits import PROBE_PROCESS
from tests.server.conftest import PASSWORD, write_catalog
from tests.server.processes import Peaks, ServeProcess, add_users

BIG = "y" * 200_000
REFUSED = [
    ("SELECT repeat('x', 600000000)", "0A000", "may not call repeat"),
    ("SELECT repeat('x', 1e9)", "0A000", "may not call repeat"),
    ("SELECT length(repeat(c.relname, 100000000)) FROM pg_catalog.pg_class c", "0A000",
     "may not call repeat"),
    ("SELECT lpad('x', 1000000000)", "54000", "width must be a literal number"),
    ("SELECT rpad(c.relname, c.relnatts * 1000000, 'x') FROM pg_catalog.pg_class c", "54000",
     "width must be a literal number"),
    ("SELECT replace(replace('aaaa', 'a', 'aaaa'), 'a', 'aaaa')", "54000", "may not be nested"),
    (f"SELECT replace(c.relname, 'a', '{'a' * 100}') FROM pg_catalog.pg_class c", "54000",
     "bytes longer than"),
    ("SELECT regexp_replace(c.relname, '', 'xxxx', 'g') FROM pg_catalog.pg_class c", "0A000",
     "may not call regexp_replace"),
    ("SELECT format('%1000000000s', 'x')", "0A000", "may not call format"),
    ("SELECT printf('%1000000000s', 'x')", "0A000", "may not call printf"),
    ("SELECT range(1000000000)", "0A000", "may not call range"),
    ("SELECT string_agg(x::text, '') FROM pg_catalog.generate_series(1, 1000000000) x",
     "54000", "at most 2,000 numbers"),
    ("SELECT COUNT(*) FROM pg_catalog.generate_series(1, 2000) a, "
     "pg_catalog.generate_series(1, 2000) b", "54000", "one generate_series at most"),
    ("SELECT c.relname FROM pg_catalog.pg_class c WHERE c.relname ~ (c.relname || '.*')",
     "54000", "must be a literal string"),
    ("SELECT regexp_matches(c.relname, c.relname) FROM pg_catalog.pg_class c", "54000",
     "must be a literal string"),
]


@pytest.mark.parametrize(("sql", "state", "says"), REFUSED)
def test_probes_that_build_large_values_or_long_work_are_refused_before_they_run(
        served, sql, state, says):
    user = served.new_user()
    with served.connect(user) as con:
        began = time.monotonic()
        with pytest.raises(psycopg.Error) as caught:
            con.execute(sql)
        assert caught.value.sqlstate == state, str(caught.value)
        assert says in str(caught.value) and time.monotonic() - began < 2
        assert con.execute("SHOW dpsql.budget").fetchone()[1] == 0


def test_a_recursive_probe_is_refused(served):
    user = served.new_user()
    with served.connect(user) as con, pytest.raises(psycopg.Error) as caught:
        con.execute("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
                    "SELECT COUNT(*) FROM r")
    assert caught.value.sqlstate in ("0A000", "42P01", "42601"), str(caught.value)


def test_a_probe_answer_is_cut_off_past_its_row_limit(served):
    """11 million rows of a catalog join: refused with 54000 after 100,000, not sent."""
    user = served.new_user()
    with served.connect(user) as con:
        began = time.monotonic()
        with pytest.raises(psycopg.Error) as caught:
            con.execute("SELECT a.proname, b.proname FROM pg_catalog.pg_proc a, "
                        "pg_catalog.pg_proc b")
        assert caught.value.sqlstate == "54000" and "100,000 rows" in str(caught.value)
        assert time.monotonic() - began < 5
        assert len(con.execute("SELECT proname FROM pg_catalog.pg_proc").fetchall()) > 1000


MEMORY_BOMBS = [
    # an aggregate's 1.3 MB string copied into each row of a join: 4 GB unbounded
    "SELECT max(length(x || c.proname)) FROM (SELECT string_agg(a.proname, ',') AS x FROM "
    "pg_catalog.pg_proc a, pg_catalog.pg_proc b WHERE b.oid % 100 = 0) t, pg_catalog.pg_proc c",
    # a 200 kB literal in each of 11 million rows
    f"SELECT max(length(a.proname || '{BIG}')) FROM pg_catalog.pg_proc a, pg_catalog.pg_proc b",
    # a 200 kB separator, seven times a row
    f"SELECT max(length(concat_ws('{BIG}', a.proname, a.proname, a.proname, a.proname, "
    "a.proname, a.proname, a.proname, a.proname))) FROM pg_catalog.pg_proc a, "
    "pg_catalog.pg_proc b",
]


def test_probes_that_pass_the_list_stay_under_the_probe_process_ceiling(tmp_path):
    """DuckDB does not count the strings an expression builds row by row (each of these took
    GBs in the server before); the probe process's ceiling does, and the server is spared."""
    ledger = tmp_path / "ledger.db"
    add_users(ledger, {"alice": 10.0})
    with ServeProcess(write_catalog(tmp_path), ledger, log=tmp_path / "serve") as server, \
            psycopg.connect(host=server.host, port=server.port, user="alice",
                            password=PASSWORD, dbname="dpsql", autocommit=True) as con:
        idle = server.rss_mib()
        with Peaks(server.pid) as peaks:
            for sql in MEMORY_BOMBS:
                with pytest.raises(psycopg.Error) as caught:
                    con.execute(sql)
                assert caught.value.sqlstate in ("54000", "0A000"), str(caught.value)
            assert con.execute("SELECT COUNT(*) FROM pg_catalog.pg_class").fetchone()[0] > 0
        assert peaks.server < idle + 64
        assert 0 < peaks.probe < PROBE_PROCESS, peaks.probes


def test_a_probe_process_that_died_is_replaced(served):
    user = served.new_user()
    with served.connect(user) as con:
        os.kill(served.server.metadata.worker.pid, signal.SIGKILL)
        time.sleep(0.2)
        assert con.execute("SELECT c.relname FROM pg_catalog.pg_class c WHERE "
                           "c.relname = 'pums'").fetchone() == ("pums",)


COLUMNS_OF_A_TABLE = (
    "SELECT a.attname, (SELECT t.typname FROM pg_catalog.pg_type t WHERE t.oid = a.atttypid) "
    "FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_class c ON a.attrelid = c.oid "
    "WHERE c.relname = 'pums' AND a.attnum > 0 ORDER BY a.attnum")
"""A column listing with a correlated subquery per column, as SQLAlchemy's reflection sends."""


def test_probes_on_every_thread_leave_the_ceiling_to_what_probes_use(served):
    """``RLIMIT_DATA`` counts address space mapped writable, used or not: with pyarrow's
    mimalloc and DuckDB's eight async threads the child mapped 280 MiB at rest and a column
    listing on a fresh thread could pass 448 MiB. Probes on every thread at once all answer,
    and the child still maps under 60 % of its ceiling (208–237 MiB measured, as the
    environment's libraries vary; 280 at rest before)."""
    from concurrent.futures import ThreadPoolExecutor

    from dpsql.frontends.server.metadata import PROBE_CEILING, PROBE_THREADS
    from tests.server.processes import status_mib

    user = served.new_user()

    def columns(_: int) -> int:
        with served.connect(user) as con:
            return len(con.execute(COLUMNS_OF_A_TABLE).fetchall())

    with ThreadPoolExecutor(PROBE_THREADS) as pool:
        answers = list(pool.map(columns, range(4 * PROBE_THREADS)))
    assert len(set(answers)) == 1 and answers[0] > 0
    mapped = status_mib(served.server.metadata.worker.pid, "VmData")
    assert mapped < PROBE_CEILING * 0.6, f"VmData {mapped:.0f} MiB"

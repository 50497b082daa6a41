"""The server is the analyst's only way in: budgets per analyst, and no raw row by any route."""

from __future__ import annotations

import time

import psycopg
import pytest

from dpsql.datasets import pums_path

RAW = pums_path("PUMS_dup")
ROUTES = [
    "SELECT * FROM pums",
    "SELECT pid, income FROM pums",
    "SELECT income FROM pums WHERE pid = 1",
    "COPY pums TO STDOUT",
    "COPY (SELECT * FROM pums) TO '/tmp/dpsql-stolen.csv'",
    "SELECT pg_read_file('/etc/passwd')",
    f"SELECT * FROM read_csv('{RAW}')",
    f"SELECT COUNT(*) FROM read_csv('{RAW}')",
    f"SELECT c.relname, r.* FROM pg_catalog.pg_class c, read_csv('{RAW}') r",
    "SELECT * FROM pg_catalog.pg_class c JOIN pums p ON TRUE",
    f"ATTACH '{RAW}' AS stolen",
    "PRAGMA table_info('pums')",
    "CREATE TABLE copy AS SELECT * FROM pums",
    "INSERT INTO pums VALUES (1, 1, 1, 1, 1, 1, 1)",
    "SET enable_external_access = true",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
    "SELECT n FROM r, pg_catalog.pg_class",
    "SELECT * FROM pums; SELECT COUNT(*) FROM pums",  # a batch stops at its first error
    f"SELECT * FROM pg_catalog.unnest((SELECT list(column0) FROM read_csv('{RAW}')))",
    "SELECT x FROM pg_catalog.generate_series(1, 3) x, pums",
    "SELECT * FROM pg_catalog.unnest((SELECT list(income) FROM pums))",
    "SELECT c.relname FROM pg_catalog.pg_class c, LATERAL (SELECT COUNT(*) FROM pums) p",
]


def budget(con) -> tuple[float, float]:
    spent, left = con.execute("SHOW dpsql.budget").fetchone()[1:3]
    return spent, left


def test_two_analysts_have_separate_budgets_and_connections_share_one(served):
    alice, bob = served.new_user(epsilon=3), served.new_user(epsilon=2)
    with served.connect(alice) as a1, served.connect(alice) as a2, served.connect(bob) as b:
        for con in (a1, a2, b):
            con.execute("SET dpsql.epsilon = 1")
        a1.execute("SELECT COUNT(*) AS n FROM pums")
        a2.execute("SELECT COUNT(*) AS n FROM pums WHERE age > 30")
        assert budget(a1) == budget(a2) == (2.0, 1.0)
        assert budget(b) == (0.0, 2.0)
        b.execute("SELECT COUNT(*) AS n FROM pums")  # bob's first ask: charged to bob
        assert budget(b) == (1.0, 1.0) and budget(a1) == (2.0, 1.0)


@pytest.mark.parametrize("sql", ROUTES)
def test_no_route_reads_raw_rows_and_refusals_spend_nothing(served, sql):
    user = served.new_user()
    with served.connect(user) as con:
        try:
            rows = con.execute(sql).fetchall()
        except psycopg.Error as error:
            text = str(error)
            assert "Traceback" not in text
            assert "17000" not in text and "59,1,9" not in text  # no value of the data
        else:
            pytest.fail(f"{sql!r} was answered: {rows[:3]}")
        assert budget(con)[0] == 0


def test_settings_answer_postgresqls_values_not_the_engines(served):
    """``current_setting`` answers from PostgreSQL's fixed list (drivers read a few), never
    the engine's own settings (its home directory, memory, threads)."""
    with served.connect(served.new_user()) as con:
        assert con.execute("SELECT current_setting('home_directory')").fetchall() == [(None,)]
        assert con.execute("SELECT current_setting('memory_limit')").fetchall() == [(None,)]
        assert budget(con)[0] == 0


def test_a_runaway_catalog_probe_is_stopped_by_its_time_limit(served):
    """A join of catalog relations may work for long (a test on each of 3,327³ rows): the
    limit stops it."""
    user = served.new_user()
    with served.connect(user) as con:
        began = time.monotonic()
        with pytest.raises(psycopg.Error) as caught:
            con.execute("SELECT COUNT(*) FROM pg_catalog.pg_proc a, pg_catalog.pg_proc b, "
                        "pg_catalog.pg_proc c WHERE (a.oid * b.oid + c.oid) % 7 = 3")
        assert caught.value.sqlstate == "0A000" and time.monotonic() - began < 30
        assert con.execute("SELECT 1").fetchone() == (1,)


def test_catalog_probes_see_names_and_types_only(served):
    user = served.new_user()
    with served.connect(user) as con:
        columns = con.execute("SELECT column_name, data_type FROM information_schema.columns "
                              "WHERE table_name = 'pums' ORDER BY ordinal_position").fetchall()
        assert ("income", "BIGINT") in columns
        assert con.execute("SELECT COUNT(*) FROM information_schema.columns "
                           "WHERE table_name = 'pums'").fetchone() == (7,)
        rows = con.execute("SELECT reltuples FROM pg_catalog.pg_class "
                           "WHERE relname = 'pums'").fetchall()
        assert rows in ([], [(0,)], [(0.0,)])  # the metadata database holds no rows


def test_an_analyst_spends_their_own_budget_not_the_catalogs(tmp_path):
    """The catalog's [budget] is for connect() and the CLI; on the server each analyst's
    budget (``dpsql users add``) holds, whatever the catalog declares."""
    from tests.server.conftest import start, write_catalog

    catalog = write_catalog(tmp_path)
    catalog.write_text("[budget]\nepsilon = 100\n\n" + catalog.read_text())
    running = start(tmp_path, catalog=catalog)
    try:
        user = running.new_user(epsilon=1.5)
        with running.connect(user) as con:
            assert budget(con) == (0.0, 1.5)
            con.execute("SET dpsql.epsilon = 1")
            con.execute("SELECT COUNT(*) FROM pums")
            with pytest.raises(psycopg.Error, match="budget"):
                con.execute("SELECT AVG(age) FROM pums")
            assert budget(con) == (1.0, 0.5)
    finally:
        running.server.close()

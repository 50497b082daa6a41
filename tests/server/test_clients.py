"""The real psql and pgJDBC (through a small Java program) against ``dpsql serve``.

``.ci/run`` installs both (Debian's postgresql-client and libpostgresql-jdbc-java); where
they are missing the tests say so and skip.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.server.conftest import PASSWORD

PSQL = shutil.which("psql")
JAVA = shutil.which("java")
JDBC_JAR = Path("/usr/share/java/postgresql.jar")
HERE = Path(__file__).resolve().parent


def psql(served, user: str, *commands: str, password: str = PASSWORD):
    args = [PSQL, "-X", "-h", served.host, "-p", str(served.port), "-U", user, "-d", "dpsql",
            "-v", "ON_ERROR_STOP=1", "--no-psqlrc", "-q", "-A", "-F", "|", "-t"]
    for command in commands:
        args += ["-c", command]
    env = {**os.environ, "PGPASSWORD": password, "PGCONNECT_TIMEOUT": "10"}
    return subprocess.run(args, capture_output=True, text=True, timeout=60, env=env)


@pytest.mark.skipif(PSQL is None, reason="psql is not installed (apt-get install "
                    "postgresql-client; .ci/run does)")
def test_psql_runs_private_queries_settings_and_lists_tables(served):
    user = served.new_user(epsilon=2)
    done = psql(served, user, "SET dpsql.epsilon = 0.5",
                "SELECT sex, COUNT(*) AS n FROM pums GROUP BY sex ORDER BY sex",
                "SHOW dpsql.budget", r"\dt")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split()
    assert lines[0].startswith("0|") and lines[1].startswith("1|")
    assert lines[2].startswith("2|0.5|1.5|")  # total, spent, remaining ε
    assert "public|pums|table|dpsql" in lines


@pytest.mark.skipif(PSQL is None, reason="psql is not installed (apt-get install "
                    "postgresql-client; .ci/run does)")
def test_psql_describes_tables_from_public_metadata(served):
    user = served.new_user()
    done = psql(served, user, r"\d pums", r"\d+ pums", r"\d", r"\dt+", r"\l", r"\du")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:7] == [f"{c}|bigint|||" for c in
                         ("age", "sex", "educ", "race", "income", "married", "pid")]
    assert "income|bigint||||plain|||" in lines  # \d+ as PostgreSQL 15 shows it
    assert "public|pums|table|dpsql" in lines  # \d lists the catalog's tables only
    assert sum(line.startswith("public|") for line in lines) == 2  # in \d and in \dt+
    assert any(line.startswith("dpsql|dpsql|UTF8|") for line in lines)  # \l: one database
    assert spent(served, user) == 0


def spent(served, user: str) -> float:
    with served.connect(user) as con:
        return con.execute("SHOW dpsql.budget").fetchone()[1]


@pytest.mark.skipif(PSQL is None, reason="psql is not installed (apt-get install "
                    "postgresql-client; .ci/run does)")
def test_psql_shows_refusals_and_login_failures(served):
    user = served.new_user()
    refused = psql(served, user, "SELECT * FROM pums")
    assert refused.returncode != 0 and "not supported" in refused.stderr
    assert "Traceback" not in refused.stderr
    wrong = psql(served, user, "SELECT 1", password="not the password")
    assert wrong.returncode != 0 and "password authentication failed" in wrong.stderr


@pytest.mark.skipif(JAVA is None or not JDBC_JAR.exists(),
                    reason="java or pgJDBC is missing (apt-get install "
                    "libpostgresql-jdbc-java; .ci/run does)")
def test_pgjdbc_queries_prepared_statements_and_metadata(served):
    user = served.new_user(epsilon=2)
    url = f"jdbc:postgresql://{served.host}:{served.port}/dpsql"
    done = subprocess.run([JAVA, "-cp", str(JDBC_JAR), str(HERE / "JdbcProbe.java"), url, user,
                           PASSWORD], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout.splitlines()
    assert "types int8 int8" in out
    assert "array _float8 [0.5, 2.0, null]" in out  # float8[], as APPROX_QUANTILES sends
    assert sum(line.startswith("row ") for line in out) == 2
    assert any(line.startswith("prepared ") for line in out)
    assert "refused 0A000" in out and "budget 53DP1" in out
    assert "table pums" in out and "column income int8" in out and "schema public" in out


@pytest.mark.skipif(PSQL is None, reason="psql is not installed (apt-get install "
                    "postgresql-client; .ci/run does)")
def test_psql_show_tables_and_describe_answer_from_the_catalog_for_free(served):
    user = served.new_user()
    done = psql(served, user, "SHOW TABLES", "DESCRIBE pums")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert any(line.startswith("pums|private|pid|") for line in lines), lines
    assert any(line.startswith("pid|") and "privacy unit" in line for line in lines), lines
    assert spent(served, user) == 0


@pytest.mark.skipif(PSQL is None, reason="psql is not installed (apt-get install "
                    "postgresql-client; .ci/run does)")
def test_psql_hears_which_limits_were_left_to_the_defaults(served):
    """A result bounded by limits nobody declared says so, as a NOTICE on psql's stderr."""
    user = served.new_user(epsilon=2)
    grouped = psql(served, user, "SELECT sex, COUNT(*) AS n FROM pums GROUP BY sex")
    assert grouped.returncode == 0, grouped.stderr
    assert "NOTICE:  bounded by default limits (max_groups_per_unit=1)" in grouped.stderr
    total = psql(served, user, "SELECT COUNT(*) AS n FROM pums")  # rows per group declared
    assert total.returncode == 0 and "default limits" not in total.stderr, total.stderr
    assert total.stderr.startswith("NOTICE:  cost ε="), total.stderr  # what it cost, alone

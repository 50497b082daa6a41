"""What BI tools send ``dpsql serve``, through the drivers they use: pgJDBC (DBeaver,
Metabase), SQLAlchemy's postgresql dialect on psycopg (Superset, pandas), psqlODBC through
unixODBC and pyodbc (Excel, Tableau), and pgcli.

Each client runs a private query with the parameters its tool binds, and the catalog calls
its tool makes to show tables and columns; the catalog calls are answered from public
metadata only, free. ``.ci/run`` installs the clients; where one is missing its tests say
so and skip.
"""

from __future__ import annotations

import os
import pty
import select
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

from tests.server.conftest import PASSWORD

JAVA = shutil.which("java")
JDBC_JAR = Path("/usr/share/java/postgresql.jar")
HERE = Path(__file__).resolve().parent
COLUMNS = ["patient_id", "specialty", "age", "cost", "visit_date", "region", "visit_time",
           "insured"]
TYPES = ["BIGINT", "VARCHAR", "INTEGER", "NUMERIC(10, 2)", "DATE", "VARCHAR", "TIMESTAMP",
         "BOOLEAN"]
"""The columns' types as SQLAlchemy reflects them, from PostgreSQL's type names."""


def spent(served, user: str) -> float:
    with served.connect(user) as con:
        return con.execute("SHOW dpsql.budget").fetchone()[1]


def jdbc_lines(served, user: str) -> dict[str, str]:
    """BiProbe.java's lines, by the name of what it tried."""
    url = f"jdbc:postgresql://{served.host}:{served.port}/dpsql"
    done = subprocess.run([JAVA, "-cp", str(JDBC_JAR), str(HERE / "BiProbe.java"), url, user,
                           PASSWORD], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = {}
    for line in done.stdout.splitlines():
        name, _, rest = line.partition(" ok ") if " ok " in line else line.partition(" error ")
        lines[name] = ("ok " if " ok " in line else "error ") + rest
    return lines


SETTERS = ["setDate", "setTimestamp", "setObject(LocalDate)", "setObject(LocalDateTime)",
           "setObject(OffsetDateTime)", "setBigDecimal", "setLong", "setInt", "setDouble",
           "setString", "setBoolean", "setNull"]
METADATA = ["getTables", "getColumns", "getPrimaryKeys", "getImportedKeys", "getExportedKeys",
            "getIndexInfo", "getTypeInfo", "getSchemas", "getCatalogs", "getTableTypes",
            "getFunctions", "getProcedures"]


@pytest.mark.skipif(JAVA is None or not JDBC_JAR.exists(),
                    reason="java or pgJDBC is missing (apt-get install "
                    "libpostgresql-jdbc-java; .ci/run does)")
def test_pgjdbc_binds_what_bi_tools_bind_and_browses_the_catalog(bi_served):
    user = bi_served.new_user(epsilon=20)
    lines = jdbc_lines(bi_served, user)
    for name in SETTERS:
        assert lines[name].startswith("ok 1 "), (name, lines[name])
    assert lines["setDate"] == lines["setObject(LocalDate)"]  # bound alike: one answer
    for name in ("bad text date", "bad cast date"):
        assert lines[name].startswith("error 22007 ERROR: parameter $1 ("), lines[name]
        assert "write YYYY-MM-DD" in lines[name]
    assert lines["bad number"].startswith("error 22P02 ERROR: parameter $1 ('70000')")
    for name in METADATA:
        assert lines[name].startswith("ok "), (name, lines[name])
    assert lines["getTables"].startswith("ok 1 null|public|visits|TABLE")
    assert lines["getColumns"].startswith("ok 8 null|public|visits|patient_id|")
    assert lines["getPrimaryKeys"] == "ok 0 "  # dpsql's tables have no keys or indexes
    assert int(lines["getTypeInfo"].split()[1]) > 10


def sqlalchemy_engine(served, user: str):
    sqlalchemy = pytest.importorskip("sqlalchemy", reason="needs the sqlalchemy extra: pip "
                                     "install 'dpsql[sqlalchemy]'")
    return sqlalchemy.create_engine(
        f"postgresql+psycopg://{user}:{PASSWORD.replace(' ', '%20')}@{served.host}:"
        f"{served.port}/dpsql")


def test_sqlalchemy_inspector_reflects_keys_and_indexes_for_free(bi_served):
    from sqlalchemy import inspect

    user = bi_served.new_user()
    engine = sqlalchemy_engine(bi_served, user)
    inspector = inspect(engine)
    assert inspector.get_table_names() == ["visits"]
    assert inspector.get_schema_names() == ["public"]
    assert inspector.has_table("visits")
    assert inspector.get_pk_constraint("visits")["constrained_columns"] == []
    assert inspector.get_foreign_keys("visits") == []
    assert inspector.get_indexes("visits") == []
    assert inspector.get_unique_constraints("visits") == []
    assert inspector.get_table_comment("visits") == {"text": None}
    engine.dispose()
    assert spent(bi_served, user) == 0


def test_sqlalchemy_reflects_columns_and_autoloads_tables(bi_served):
    from sqlalchemy import MetaData, Table, inspect

    engine = sqlalchemy_engine(bi_served, bi_served.new_user())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Did not recognize type 'int8'": DuckDB's names
        columns = inspect(engine).get_columns("visits")
    assert [c["name"] for c in columns] == COLUMNS
    assert [str(c["type"]) for c in columns] == TYPES
    table = Table("visits", MetaData(), autoload_with=engine)
    assert [c.name for c in table.columns] == COLUMNS
    engine.dispose()


def test_pandas_read_sql_binds_a_date_through_sqlalchemy(bi_served):
    pd = pytest.importorskip("pandas", reason="needs the pandas extra: pip install "
                             "'dpsql[pandas]'")
    from sqlalchemy import text

    engine = sqlalchemy_engine(bi_served, bi_served.new_user())
    frame = pd.read_sql(text("SELECT insured, COUNT(*) AS n FROM visits WHERE visit_date >= "
                             ":since GROUP BY insured ORDER BY insured"), engine,
                        params={"since": "2024-01-01"})
    assert list(frame.columns) == ["insured", "n"] and frame["insured"].tolist() == [False, True]
    engine.dispose()


ODBC_DRIVER = Path("/usr/lib/x86_64-linux-gnu/odbc/psqlodbcw.so")


@pytest.mark.skipif(not ODBC_DRIVER.exists(), reason="psqlODBC is missing (apt-get install "
                    "odbc-postgresql unixodbc; .ci/run does)")
def test_psqlodbc_through_unixodbc_queries_and_lists_tables_and_columns(bi_served):
    pyodbc = pytest.importorskip("pyodbc", reason="needs the clients extra: pip install "
                                 "'dpsql[clients]'")
    user = bi_served.new_user()
    con = pyodbc.connect(odbc_string(bi_served, user), autocommit=True, timeout=30)
    cursor = con.cursor()
    rows = cursor.execute("SELECT insured, COUNT(*) AS n FROM visits WHERE visit_date >= ? "
                          "GROUP BY insured ORDER BY insured", "2024-01-01").fetchall()
    assert [row[0] for row in rows] == ["0", "1"]  # psqlODBC's BoolsAsChar, as on PostgreSQL
    assert [t.table_name for t in cursor.tables(tableType="TABLE")] == ["visits"]
    con.close()


@pytest.mark.skipif(not ODBC_DRIVER.exists(), reason="psqlODBC is missing (apt-get install "
                    "odbc-postgresql unixodbc; .ci/run does)")
def test_psqlodbc_lists_columns(bi_served):
    pyodbc = pytest.importorskip("pyodbc", reason="needs the clients extra: pip install "
                                 "'dpsql[clients]'")
    con = pyodbc.connect(odbc_string(bi_served, bi_served.new_user()), autocommit=True,
                         timeout=30)
    assert [c.column_name for c in con.cursor().columns(table="visits")] == COLUMNS
    con.close()


def odbc_string(served, user: str) -> str:
    """A DSN-less connection string naming psqlODBC's Unicode driver by its path."""
    return (f"Driver={ODBC_DRIVER};Server={served.host};Port={served.port};Database=dpsql;"
            f"Uid={user};Pwd={PASSWORD};SSLmode=disable")


PSQL_DESCRIBES = ["patient_id|bigint|||", "specialty|character varying|||", "age|integer|||",
                  "cost|numeric(10,2)|||", "visit_date|date|||", "region|character varying|||",
                  "visit_time|timestamp without time zone|||", "insured|boolean|||"]
"""``\\d visits`` as PostgreSQL 15's psql shows a table of these types (checked against a
PostgreSQL 15 server): its type names, ``numeric(p,s)`` from its typmod."""


@pytest.mark.skipif(shutil.which("psql") is None, reason="psql is not installed (apt-get "
                    "install postgresql-client; .ci/run does)")
def test_psql_describes_columns_with_postgresql_type_names(bi_served):
    from tests.server.test_clients import psql

    done = psql(bi_served, bi_served.new_user(), r"\d visits")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == PSQL_DESCRIBES


PGCLI = shutil.which("pgcli") or (str(Path(sys.executable).with_name("pgcli"))
                                  if Path(sys.executable).with_name("pgcli").exists() else None)


def pgcli_session(served, user: str, folder: Path, sql: str) -> str:
    """What the real pgcli shows in a terminal (a pseudo-terminal: pgcli refreshes its
    completions, the catalog queries it sends on connect, only when interactive) after
    ``sql`` and ``\\q``."""
    rc = folder / "pgclirc"
    rc.write_text(f"[main]\nlog_file = {folder / 'log'}\nhistory_file = {folder / 'history'}\n"
                  "use_local_timezone = False\n")
    env = {**os.environ, "XDG_CONFIG_HOME": str(folder), "HOME": str(folder), "TERM": "dumb",
           "PGPASSWORD": PASSWORD}
    main, terminal = pty.openpty()
    process = subprocess.Popen([PGCLI, "--pgclirc", str(rc), "--less-chatty", "-w", "-h",
                                served.host, "-p", str(served.port), "-U", user, "-d", "dpsql"],
                               stdin=terminal, stdout=terminal, stderr=terminal, env=env)
    os.close(terminal)
    shown = _read_until(main, b"> ", 30)
    os.write(main, sql.encode() + b"\r")
    shown += _read_until(main, b"> ", 30)
    os.write(main, b"\\q\r")
    process.wait(30)
    os.close(main)
    return shown.decode(errors="replace")


def _read_until(fd: int, prompt: bytes, timeout: float) -> bytes:
    """What the terminal shows until ``prompt`` ends it, then a second more (pgcli's
    completion refresh runs in the background)."""
    shown, end = b"", time.monotonic() + timeout
    while time.monotonic() < end and not shown.rstrip().endswith(prompt.strip()):
        if select.select([fd], [], [], 0.1)[0]:
            shown += os.read(fd, 65536)
    settle = time.monotonic() + 1
    while time.monotonic() < settle:
        if select.select([fd], [], [], 0.1)[0]:
            shown += os.read(fd, 65536)
    return shown


needs_pgcli = pytest.mark.skipif(PGCLI is None, reason="needs the clients extra: pip install "
                                 "'dpsql[clients]'")


@needs_pgcli
def test_pgcli_answers_a_private_query(bi_served, tmp_path):
    user = bi_served.new_user()
    shown = pgcli_session(bi_served, user, tmp_path, "SELECT insured, COUNT(*) AS n FROM "
                          "visits GROUP BY insured ORDER BY insured;")
    assert "| False " in shown and "| True " in shown and "SELECT 2" in shown, shown
    assert spent(bi_served, user) > 0


@needs_pgcli
def test_pgcli_completion_catalog_queries_answer(bi_served, tmp_path):
    shown = pgcli_session(bi_served, bi_served.new_user(), tmp_path, "SELECT 1;")
    assert "Traceback" not in shown and "Error" not in shown, shown


@needs_pgcli
def test_pgcli_completions_are_the_catalog_tables_columns_and_types(bi_served):
    """What pgcli's completion refresher reads (pgcli.pgexecute.PGExecute), from public
    metadata: the table, its columns with PostgreSQL's type names, and no view, function or
    type of the engine's own."""
    from pgcli.pgexecute import PGExecute

    executor = PGExecute("dpsql", bi_served.new_user(), PASSWORD, bi_served.host,
                         bi_served.port, "")
    assert list(executor.tables()) == [("public", "visits")]
    columns = [(column[2], column[3]) for column in executor.table_columns()]
    assert columns[:3] == [("patient_id", "bigint"), ("specialty", "character varying"),
                           ("age", "integer")]
    assert [name for name, _ in columns] == COLUMNS
    assert list(executor.views()) == list(executor.functions()) == \
        list(executor.datatypes()) == []

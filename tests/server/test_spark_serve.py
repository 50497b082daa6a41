"""``dpsql serve`` in front of Spark: a real server process over Parquet files, local[2].

The catalog (grammar_tests/catalog.py's tables, written to Parquet) declares
``[engine] name = "spark"``; the server runs every session's bounded queries in its one
SparkSession and must answer as DuckDB does: at a huge ε, the corpus queries whose answer
does not depend on the query's salt (its random group choice) give DuckDB's answer on the
same files, with the same NOTICEs. The analyst reaches Spark only through dpsql's rewrite,
Spark's messages never reach the client, and a cancel stops the Spark job.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pyarrow as pa
import pyarrow.csv
import pyarrow.parquet as pq
import pytest

import dpsql
from dpsql.accounting.users import Users
from dpsql.datasets import REGIONS, SPECIALTIES, pums_path, visits
from dpsql.evaluate import truth
from dpsql.frontends.server.auth import make_verifier
from grammar_tests.cases import ACCEPTED
from grammar_tests.catalog import readings
from tests.conftest import SPARK_CONF
from tests.server.conftest import PASSWORD
from tests.server.processes import LISTENING, SIZED, ServeProcess
from tests.server.test_clients import PSQL, psql

psycopg = pytest.importorskip("psycopg", reason="the server tests use psycopg: pip install "
                              "'dpsql[test]'")
pytest.importorskip("pyspark", reason="the Spark tests need pyspark: pip install 'dpsql[spark]'")
pytestmark = [pytest.mark.spark, pytest.mark.slow]

BIG = 500_000
"""Rows of the table a cancel lands in (its query runs for seconds on Spark)."""
HUGE = 1e9
DELTA = 1e-3
ENGINE = f"""[engine]
name = "spark"
master = "local[2]"
config = {json.dumps(SPARK_CONF).replace('":', '" =')}
"""
CATALOG = """
[public.regions]
source = "regions.parquet"

[public.specialties]
source = "specialties.parquet"

[tables.patients]
source = "patients.parquet"
privacy_unit = "patient_id"
bounds = { weight = [30, 150] }
public_keys = { sex = ["f", "m"] }

[tables.visits]
source = "visits.parquet"
privacy_unit = "patient_id"
bounds = { cost = [0, 2000], age = [0, 100] }
max_groups_per_unit = 3
max_rows_per_group = 4
public_keys = { region = REGIONS }

[tables.checkups]
source = "visits.parquet"
privacy_unit = "patient_id"
bounds = { cost = [0, 2000], age = [0, 100] }
max_groups_per_unit = 3
max_rows_per_group = 4
public_keys = { region = REGIONS }
not_null = ["cost", "age"]

[tables.claims]
source = "visits.parquet"
privacy_unit = "patient_id"
bounds = { cost = [0, 1000] }
max_groups_per_unit = 4
max_rows_per_group = 3
max_rows_per_unit = 5
public_keys = { region = "regions", specialty = ["cardiology", "oncology"] }

[tables.stays]
source = "visits.parquet"
privacy_unit = "patient_id"
max_rows_per_unit = 3
public_keys = { region = REGIONS }

[tables.pums]
source = "pums.parquet"
privacy_unit = "pid"
bounds = { age = [0, 100], income = [0, 500000], educ = [1, 16] }
max_rows_per_group = 2
public_keys = { sex = [0, 1] }

[tables.readings]
source = "readings.parquet"
privacy_unit = "patient_id"
bounds = { value = [0, 10] }
max_rows_per_group = 4

[tables.spare]
source = "spare.parquet"
privacy_unit = "patient_id"

[tables.big]
source = "big.parquet"
privacy_unit = "patient_id"
bounds = { cost = [0, 2000] }
max_groups_per_unit = 3
max_rows_per_group = 4

[tables.people]
source = "people.parquet"
row_privacy = true
bounds = { age = [0, 100], income = [0, 500000] }
""".replace("REGIONS", json.dumps(list(REGIONS)))
"""grammar_tests/catalog.py's tables, from Parquet files."""


def write_corpus(folder: Path) -> Path:
    """The corpus tables as Parquet files in ``folder`` and the Spark catalog over them."""
    pq.write_table(pa.table({"region": list(REGIONS)}), folder / "regions.parquet")
    pq.write_table(pa.table({
        "specialty": list(SPECIALTIES),
        "department": ["surgery" if i % 3 == 0 else "medicine" for i in range(len(SPECIALTIES))],
        "base_fee": [float(50 + 10 * (i % 7)) for i in range(len(SPECIALTIES))]}),
        folder / "specialties.parquet")
    pq.write_table(pa.table({
        "patient_id": pa.array(range(1, 1001), pa.int64()),
        "sex": ["f" if i % 2 else "m" for i in range(1000)],
        "weight": pa.array([40.0 + (i * 37) % 90 for i in range(1000)])}),
        folder / "patients.parquet")
    pq.write_table(visits(2000, seed=0), folder / "visits.parquet")
    shutil.copy(folder / "visits.parquet", folder / "spare.parquet")
    pq.write_table(visits(BIG, seed=5), folder / "big.parquet")
    pq.write_table(readings(), folder / "readings.parquet")
    for name, source in (("pums", "PUMS_dup"), ("people", "PUMS")):
        pq.write_table(pyarrow.csv.read_csv(pums_path(source)), folder / f"{name}.parquet")
    path = folder / "catalog.toml"
    path.write_text(ENGINE + CATALOG)
    return path


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    return write_corpus(tmp_path_factory.mktemp("spark_serve"))


@pytest.fixture(scope="module")
def server(corpus):
    """One ``dpsql serve`` process on Spark for the module (Spark starts once: ~10 s)."""
    ledger = corpus.parent / "ledger.db"
    with Users(ledger) as users:
        for name in ("alice", "bob", "carol", "dave"):
            users.add(name, make_verifier(PASSWORD), dpsql.Budget(epsilon=1e15, delta=0.5))
    with ServeProcess(corpus, ledger, log=corpus.parent / "serve", timeout=180,
                      options=("--time-quantum", "0")) as serving:
        yield serving


@pytest.fixture(scope="module")
def duck(corpus):
    """DuckDB in this process on the same catalog file (``backend=`` wins over [engine])."""
    con = dpsql.connect(catalog=corpus, backend="duckdb",
                        budget=dpsql.Budget(epsilon=1e15, delta=0.5))
    yield con
    con.close()


def connect(server, user: str):
    con = psycopg.connect(host=server.host, port=server.port, user=user, dbname="dpsql",
                          password=PASSWORD, autocommit=True, connect_timeout=60)
    con.execute(f"SET dpsql.epsilon = {HUGE}")
    con.execute(f"SET dpsql.delta = {DELTA}")
    return con


def salt_free(con: dpsql.Connection, case) -> bool:
    """Whether the case's answer is the same under two salts (its limits never choose
    between a person's groups or rows on this data), asked in PostgreSQL's dialect with no
    ε of its own, so that the server's session settings give its ε and δ.

    A release through partition selection on private keys is never fixed, whatever ε: a key
    one person holds is kept with chance at most δ, and which keys one person holds after
    the group limit depends on the salt. Those cases stay out here: the unit counts a
    selection reads are compared with DuckDB's for every accepted case by
    tests/test_spark.py::test_every_accepted_grammar_case_gives_the_same_bounded_aggregates."""
    if case.dialect != "duckdb" or "DIFFERENTIAL_PRIVACY" in case.sql.upper():
        return False
    try:
        compiled = con.compile(case.sql, dialect="postgres", epsilon=HUGE, delta=DELTA)
        if selects_keys(compiled):
            return False
        return truth(con, compiled, seed=0).fetchall() == truth(con, compiled, seed=1).fetchall()
    except dpsql.Error:
        return False


def selects_keys(compiled) -> bool:
    """Whether some part of the compiled statement releases keys by partition selection."""
    parts = getattr(compiled, "parts", None) or (compiled,)
    return any(part.plan.selection is not None for part in parts)


def close(a: object, b: object) -> bool:
    if isinstance(a, float | int) and isinstance(b, float | int) and \
            not isinstance(a, bool) and not isinstance(b, bool):
        return math.isclose(float(a), float(b), rel_tol=1e-6, abs_tol=1e-3) or \
            (math.isnan(float(a)) and math.isnan(float(b)))
    return a == b


def same_rows(got: list[tuple], want: list[tuple]) -> bool:
    return len(got) == len(want) and all(
        len(g) == len(w) and all(close(x, y) for x, y in zip(g, w, strict=True))
        for g, w in zip(sorted(got, key=repr), sorted(want, key=repr), strict=True))


SAMPLE = 30
"""Corpus queries the server answers on Spark (spread over the files; each takes about a
second on two cores)."""


def corpus_sample(con: dpsql.Connection) -> list:
    candidates = [case for case in ACCEPTED if salt_free(con, case)]
    step = max(1, len(candidates) // SAMPLE)
    return candidates[::step][:SAMPLE]


def test_corpus_queries_through_the_spark_server_give_duckdbs_answers(server, duck):
    cases = corpus_sample(duck)
    assert len(cases) == SAMPLE
    with connect(server, "alice") as con:
        for case in cases:
            want = duck.sql(case.sql, dialect="postgres", epsilon=HUGE, delta=DELTA).fetchall()
            got = [tuple(row) for row in con.execute(case.sql, prepare=False).fetchall()]
            assert same_rows(got, want), (case.title, got, want)


def notices(con) -> list[str]:
    heard: list[str] = []
    con.add_notice_handler(lambda diag: heard.append(diag.message_primary))
    return heard


def test_answers_come_with_the_cost_notice_and_the_ledger_charges_them(server, duck):
    sql = "SELECT region, COUNT(*) AS n, AVG(cost) AS c FROM visits GROUP BY region"
    with connect(server, "bob") as con:
        heard = notices(con)
        got = con.execute(sql).fetchall()
        con.execute(sql).fetchall()  # the same question: the stored answer, free
    want = duck.sql(sql, dialect="postgres", epsilon=HUGE, delta=DELTA).fetchall()
    assert same_rows([tuple(r) for r in got], want)
    assert heard[-2].startswith(f"cost ε={HUGE:.0f}, δ=0;") and \
        heard[-1].startswith("cost ε=0, δ=0;")
    raw = sqlite3.connect(server.log.parent / "ledger.db")
    try:
        (charges,) = raw.execute("SELECT COUNT(*) FROM charges WHERE analyst = 'bob'").fetchone()
    finally:
        raw.close()
    assert charges == 1


@pytest.mark.skipif(PSQL is None, reason="psql is not installed (apt-get install "
                    "postgresql-client)")
def test_psql_gets_the_answer_and_the_notices(server):
    done = psql(server, "carol", f"SET dpsql.epsilon = {HUGE}",
                "SELECT sex, COUNT(*) AS n FROM pums GROUP BY sex")
    assert done.returncode == 0, done.stderr
    assert sorted(line.split("|")[0] for line in done.stdout.split()) == ["0", "1"]
    assert f"NOTICE:  cost ε={HUGE:.0f}, δ=0; budget left" in done.stderr


HOSTILE = [
    # Spark's own SQL: functions, tables and commands dpsql does not know.
    ("SELECT COUNT(*) FROM parquet.`visits.parquet`", "42"),
    ("SELECT * FROM visits", "0A000"),
    ("SELECT reflect('java.lang.System', 'getenv', 'HOME') AS h, COUNT(*) FROM visits "
     "GROUP BY h", "0A000"),
    ("SHOW FUNCTIONS", "42704"),
    ("CACHE TABLE visits", "0A000"),
    ("SET spark.sql.ansi.enabled = false", "42501"),
    ("SELECT COUNT(*) FROM global_temp.anything", "0A000"),
]


@pytest.mark.parametrize(("sql", "state"), HOSTILE, ids=[s for s, _ in HOSTILE])
def test_the_analyst_reaches_spark_only_through_dpsql(server, sql, state):
    """Spark SQL of the analyst's own is refused before any engine runs: nothing spent."""
    user = "alice"
    with connect(server, user) as con:
        before = con.execute("SHOW dpsql.budget").fetchall()
        with pytest.raises(psycopg.Error) as refused:
            con.execute(sql, prepare=False)
        assert refused.value.sqlstate.startswith(state), (refused.value.sqlstate, refused.value)
        assert con.execute("SHOW dpsql.budget").fetchall() == before


def test_a_spark_failure_reaches_the_client_as_its_kind_only_and_is_charged(server, corpus):
    """Spark's messages may quote what it read: a file replaced by one whose last bytes are
    'SECR' makes Spark say ``Expected magic number at tail, but found [83, 69, 67, 82]``.
    The client hears that the bounded query failed, its kind, and the charge; not Spark's
    text, not the path."""
    spare = corpus.parent / "spare.parquet"
    kept = spare.read_bytes()
    with connect(server, "dave") as con:
        spare.write_bytes(b"PAR1" + b"x" * 64 + b"SECR")
        try:
            with pytest.raises(psycopg.errors.InternalError) as failed:
                con.execute("SELECT COUNT(*) AS n FROM spare", prepare=False)
        finally:
            spare.write_bytes(kept)
    told = str(failed.value)
    assert "failed while reading the data" in told and "charged" in told, told
    for secret in ("SECR", "83, 69", "spare.parquet", str(corpus.parent), "magic"):
        assert secret not in told


def test_a_cancel_stops_the_spark_job_and_is_charged(server, duck):
    """A pg CancelRequest lands while Spark runs the bounded query: the job group is
    cancelled, so the client hears 57014 long before the query would have ended, charged in
    full (its engine had started), and the session answers the next query."""
    sql = ("SELECT specialty, COUNT(*) AS n, AVG(cost) AS c FROM big WHERE cost > -{} "
           "GROUP BY specialty")
    with connect(server, "carol") as con:
        start = time.monotonic()
        con.execute(sql.format(1), prepare=False).fetchall()
        whole = time.monotonic() - start
        timer = threading.Timer(whole / 4, con.cancel_safe)
        timer.start()
        start = time.monotonic()
        with pytest.raises(psycopg.errors.QueryCanceled) as cancelled:
            con.execute(sql.format(2), prepare=False)
        stopped = time.monotonic() - start
        timer.join()
        assert "was charged" in str(cancelled.value)
        assert stopped < whole * 3 / 4, (stopped, whole)
        print(f"whole {whole:.2f} s, cancelled after {stopped:.2f} s")
        assert len(con.execute(sql.format(3), prepare=False).fetchall()) == len(SPECIALTIES)


def test_the_documented_spark_submit_launcher_serves(corpus, tmp_path):
    """docs/server.md's launcher under a real spark-submit (its --master, the catalog's
    master left out): the server listens and answers a private query on Spark."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "server.md").read_text()
    launcher = tmp_path / "serve.py"
    launcher.write_text(re.findall(r"```python\n(.*?)```", doc, flags=re.S)[-1])
    catalog = corpus.parent / "submitted.toml"
    catalog.write_text(ENGINE.replace('master = "local[2]"\n', "") + CATALOG)
    ledger = tmp_path / "ledger.db"
    with Users(ledger) as users:
        users.add("erin", make_verifier(PASSWORD), dpsql.Budget(epsilon=1e15, delta=0.5))
    submit = Path(sys.executable).parent / "spark-submit"
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable,
           "PYSPARK_DRIVER_PYTHON": sys.executable,
           "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    out = tmp_path / "serve.out"
    with out.open("w") as stdout:
        process = subprocess.Popen([str(submit), "--master", "local[1]", str(launcher),
                                    str(catalog), "--ledger", str(ledger), "--port", "0",
                                    *SIZED, "--time-quantum", "0"], stdout=stdout,
                                   stderr=subprocess.DEVNULL, env=env, cwd=corpus.parent)
    try:
        deadline = time.monotonic() + 300
        while not (found := LISTENING.search(out.read_text())):
            assert process.poll() is None and time.monotonic() < deadline, out.read_text()
            time.sleep(0.2)
        served = SimpleNamespace(host=found[1], port=int(found[2]))
        with connect(served, "erin") as con:
            rows = con.execute("SELECT sex, COUNT(*) AS n FROM pums GROUP BY sex").fetchall()
        assert sorted(row[0] for row in rows) == [0, 1]
    finally:
        process.terminate()
        process.wait(60)

"""psycopg 3 against ``dpsql serve``: simple and extended queries, types, errors, settings."""

from __future__ import annotations

import datetime as dt

import psycopg
import pytest

from tests.server.conftest import PASSWORD


def spent(con) -> float:
    return con.execute("SHOW dpsql.budget").fetchone()[1]


def test_a_private_query_is_answered_and_charged(served):
    user = served.new_user(epsilon=2)
    with served.connect(user) as con:
        cur = con.execute("SELECT sex, COUNT(*) AS n, AVG(income) AS mean FROM pums "
                          "GROUP BY sex ORDER BY sex")
        rows = cur.fetchall()
        assert [d.name for d in cur.description] == ["sex", "n", "mean"]
        assert [d.type_code for d in cur.description] == [20, 20, 701]  # int8, int8, float8
        assert [r[0] for r in rows] == [0, 1]
        assert all(isinstance(r[1], int) and isinstance(r[2], float) for r in rows)
        assert 700 < rows[0][1] < 1100
        assert spent(con) == pytest.approx(0.2)  # no ε set: a tenth of the ε = 2 left
    entry = served.audit(user)[0]
    assert (entry.outcome, entry.sqlstate, entry.epsilon) == ("ok", "00000", 0.2)


def test_prepared_statements_bind_parameters_as_literals(served):
    user = served.new_user()
    with served.connect(user) as con:
        con.execute("SET dpsql.epsilon = 0.25")
        n = con.execute("SELECT COUNT(*) AS n FROM pums WHERE age > %s AND sex = %s",
                        [40, 1]).fetchone()[0]
        assert 200 < n < 800
        hostile = con.execute("SELECT COUNT(*) AS n FROM pums WHERE CAST(sex AS VARCHAR) = %s",
                              ["1' OR 1=1 --"]).fetchone()[0]
        assert abs(hostile) < 60  # the text matched no row: it was a value, not SQL
        for _ in range(2):  # prepared server-side after the first
            con.execute("SELECT COUNT(*) AS n FROM pums WHERE age < %s", [30], prepare=True)
        assert spent(con) == pytest.approx(0.75)  # the repeat was replayed from the cache


def test_types_reach_python_as_their_own_types(served):
    user = served.new_user()
    with served.connect(user) as con:
        row = con.execute("SELECT COUNT(*) AS n, SUM(income) AS total, "
                          "COUNT(*) > 0 AS some FROM pums", prepare=False).fetchone()
        assert isinstance(row[0], int) and isinstance(row[1], float)
        assert row[2] in (True, False)
        consts = con.execute("SELECT 1 AS one, 'x' AS t, DATE '2024-02-29' AS d, "
                             "1.5::float8 AS f").fetchone()
        assert consts == (1, "x", dt.date(2024, 2, 29), 1.5)


def test_binary_results_decode(served):
    user = served.new_user()
    with served.connect(user) as con:
        cur = con.cursor(binary=True)
        row = cur.execute("SELECT sex, COUNT(*) AS n, AVG(age) AS a FROM pums WHERE sex = %s "
                          "GROUP BY sex", [0]).fetchone()
        assert row[0] == 0 and isinstance(row[1], int) and 20 < row[2] < 80


def test_errors_carry_sqlstates_and_dpsql_messages(served):
    user = served.new_user()
    with served.connect(user) as con:
        cases = [("SELECT * FROM pums", "0A000", "not supported"),
                 ("SELECT COUNT(* FROM pums", "42601", "parse"),
                 ("SELECT COUNT(*) FROM nowhere", "42P01", "nowhere"),
                 ("SET memory_limit = '1TB'", "42501", "never engine settings"),
                 ("SET dpsql.epsilon = -1", "22023", "> 0"),
                 ("SHOW nothing_here", "42704", "unrecognized")]
        for sql, state, text in cases:
            with pytest.raises(psycopg.Error) as caught:
                con.execute(sql)
            assert caught.value.sqlstate == state, sql
            assert text in str(caught.value), sql
            assert "Traceback" not in str(caught.value)
        assert spent(con) == 0  # refusals spend nothing
    outcomes = [e.outcome for e in served.audit(user)]
    assert outcomes[0] == "error: UnsupportedQueryError"


def test_budget_exhaustion_refuses_with_53dp1_and_spends_nothing(served):
    user = served.new_user(epsilon=1.0)
    with served.connect(user) as con:
        con.execute("SET dpsql.epsilon = 1")
        con.execute("SELECT COUNT(*) AS n FROM pums WHERE age > 50")
        with pytest.raises(psycopg.errors.OperationalError) as caught:
            con.execute("SELECT COUNT(*) AS n FROM pums WHERE age > 60")
        assert caught.value.sqlstate == "53DP1"
        assert "nothing was spent" in str(caught.value)
        assert con.execute("SHOW dpsql.budget").fetchone()[:3] == (1.0, 1.0, 0.0)


def test_set_show_explain_and_intervals(served):
    user = served.new_user()
    with served.connect(user) as con:
        con.execute("SET dpsql.epsilon = 0.5")
        con.execute("SET dpsql.delta TO 1e-8")
        assert con.execute("SHOW dpsql.epsilon").fetchone() == ("0.5",)
        plan = "\n".join(r[0] for r in con.execute("EXPLAIN SELECT COUNT(*) AS n FROM pums"))
        assert "laplace" in plan and "ε=0.5" in plan
        assert "bounding on duckdb: all_pairs: " in plan  # the strategy and why
        assert spent(con) == 0  # EXPLAIN reads no data and spends nothing
        con.execute("SET dpsql.intervals = on")
        cur = con.execute("SELECT COUNT(*) AS n FROM pums")
        assert [d.name for d in cur.description] == ["n", "n_lower", "n_upper"]
        n, lower, upper = cur.fetchone()
        assert lower < n < upper
        assert spent(con) == pytest.approx(0.5)
        with pytest.raises(psycopg.Error) as caught:
            con.execute("EXPLAIN ANALYZE SELECT COUNT(*) FROM pums")
        assert caught.value.sqlstate == "0A000"


def test_client_probes_get_fixed_answers(served):
    user = served.new_user()
    with served.connect(user, autocommit=False) as con:
        assert "PostgreSQL" in con.execute("SELECT version()").fetchone()[0]
        assert con.execute("SELECT current_schema()").fetchone() == ("public",)
        assert con.execute("SHOW TRANSACTION ISOLATION LEVEL").fetchone() == ("read committed",)
        assert con.execute("SELECT current_user").fetchone() == (user,)
        con.commit()
        tables = con.execute("SELECT table_name FROM information_schema.tables "
                             "WHERE table_schema = 'public'").fetchall()
        assert tables == [("pums",)]
        con.rollback()
        assert con.info.parameter_status("server_version") == "15.0"
        assert con.execute("SHOW dpsql.budget").fetchone()[1] == 0


def test_a_failed_statement_in_a_transaction_needs_a_rollback(served):
    user = served.new_user()
    with served.connect(user, autocommit=False) as con:
        with pytest.raises(psycopg.Error):
            con.execute("SELECT * FROM pums")
        with pytest.raises(psycopg.errors.InFailedSqlTransaction):
            con.execute("SELECT 1")
        con.rollback()
        assert con.execute("SELECT 1").fetchone() == (1,)


def test_wrong_password_and_unknown_user_look_the_same(served):
    user = served.new_user()
    messages = []
    for name, password in ((user, "wrong password"), ("nobody", PASSWORD)):
        with pytest.raises(psycopg.OperationalError) as caught:
            served.connect(name, password=password)
        messages.append(str(caught.value).replace(name, "NAME"))
    assert messages[0] == messages[1]
    assert "password authentication failed" in messages[0]


def test_sqlalchemy_and_pandas_read_sql(served):
    sqlalchemy = pytest.importorskip("sqlalchemy")
    pandas = pytest.importorskip("pandas")
    user = served.new_user()
    url = f"postgresql+psycopg://{user}:{PASSWORD.replace(' ', '%20')}@{served.host}:" \
          f"{served.port}/dpsql"
    engine = sqlalchemy.create_engine(url)
    with engine.connect() as con:
        frame = pandas.read_sql("SELECT sex, COUNT(*) AS n FROM pums GROUP BY sex ORDER BY sex",
                                con)
    engine.dispose()
    assert list(frame.columns) == ["sex", "n"] and list(frame["sex"]) == [0, 1]


def test_jupysql_runs_private_queries_on_a_postgres_url(served):
    pytest.importorskip("sql.magic", reason="JupySQL is in the test extra")
    import sys

    from IPython.core.interactiveshell import InteractiveShell
    from sql.connection import ConnectionManager

    user = served.new_user()
    url = f"postgresql+psycopg://{user}:{PASSWORD.replace(' ', '%20')}@{served.host}:" \
          f"{served.port}/dpsql"
    main = sys.modules["__main__"]
    shell = InteractiveShell.instance()
    try:
        assert shell.run_cell("%load_ext sql").success
        assert shell.run_cell(f"%sql {url}").success
        cell = shell.run_cell("result = %sql SELECT sex, COUNT(*) AS n FROM pums GROUP BY sex "
                              "ORDER BY sex")
        assert cell.success, cell.error_in_exec
        rows = list(shell.user_ns["result"])
        assert [r[0] for r in rows] == [0, 1]
    finally:
        ConnectionManager.close_all()
        sys.modules["__main__"] = main  # IPython's own __main__ breaks multiprocessing's spawn


def test_32_concurrent_connections_of_one_analyst_never_overdraw(served):
    from concurrent.futures import ThreadPoolExecutor

    user = served.new_user(epsilon=10)

    def ask(i: int) -> str:
        with served.connect(user) as con:
            con.execute("SET dpsql.epsilon = 1")
            try:
                con.execute("SELECT COUNT(*) AS n FROM pums WHERE age > %s", [i])
            except psycopg.Error as error:
                return error.sqlstate or ""
            return "ok"

    with ThreadPoolExecutor(32) as pool:
        outcomes = list(pool.map(ask, range(32)))
    assert outcomes.count("ok") == 10 and outcomes.count("53DP1") == 22
    with served.connect(user) as con:
        assert con.execute("SHOW dpsql.budget").fetchone()[1:3] == (10.0, 0.0)


def test_equal_parameters_of_other_types_are_bound_anew(served):
    user = served.new_user()
    with served.connect(user) as con:
        for value in (True, 1, "1"):  # True == 1 in Python: different literals all the same
            got = con.execute("SELECT %s AS v", [value]).fetchone()[0]
            assert (type(got), got) == (type(value), value)


NAVIGATOR = [  # catalog queries in the style of DBeaver's PostgreSQL navigator
    "SELECT db.oid,db.* FROM pg_catalog.pg_database db WHERE datallowconn AND NOT "
    "datistemplate OR db.datname = 'dpsql' ORDER BY db.datname",
    "SELECT n.oid,n.*,d.description FROM pg_catalog.pg_namespace n LEFT OUTER JOIN "
    "pg_catalog.pg_description d ON d.objoid=n.oid AND d.objsubid=0 AND "
    "d.classoid='pg_namespace'::regclass ORDER BY nspname",
    "select c.oid,c.*,d.description,pg_catalog.pg_get_expr(c.relpartbound, c.oid) as "
    "partition_expr, pg_catalog.pg_get_partkeydef(c.oid) as partition_key from "
    "pg_catalog.pg_class c left outer join pg_catalog.pg_description d on d.objoid=c.oid and "
    "d.objsubid=0 and d.classoid='pg_class'::regclass where c.relnamespace=(select oid from "
    "pg_catalog.pg_namespace where nspname='public') and c.relkind not in ('i','I','c')",
    "select c.oid,a.*,pg_catalog.format_type(a.atttypid, a.atttypmod) as formatted_type, "
    "d.description from pg_catalog.pg_attribute a inner join pg_catalog.pg_class c on "
    "(a.attrelid=c.oid) left outer join pg_catalog.pg_description d on d.objoid=a.attrelid "
    "and d.objsubid=a.attnum where NOT a.attisdropped and c.relname='pums' order by a.attnum",
    "SELECT i.*,i.indkey as keys,c.relname,tc.relname as tabrelname FROM pg_catalog.pg_index i "
    "INNER JOIN pg_catalog.pg_class c ON c.oid=i.indexrelid INNER JOIN pg_catalog.pg_class tc "
    "ON tc.oid=i.indrelid WHERE tc.relname='pums'",
    "select c.oid,pg_catalog.pg_total_relation_size(c.oid) as total_rel_size,"
    "pg_catalog.pg_relation_size(c.oid) as rel_size FROM pg_catalog.pg_class c",
    "SELECT a.oid,a.* FROM pg_catalog.pg_roles a ORDER BY a.rolname",
    "select * from pg_catalog.pg_extension",
]


def test_a_jdbc_navigators_catalog_queries_are_answered(served):
    user = served.new_user()
    with served.connect(user) as con:
        answers = [con.execute(sql).fetchall() for sql in NAVIGATOR]
        assert [row[2] for row in answers[0]] == ["dpsql"]  # oid, then db.*: oid, datname
        assert [row[2] for row in answers[2]] == ["pums"]  # tables of public: the catalog's
        assert len(answers[3]) == 7 and answers[4] == [] and answers[-1] == []
        assert all(row[1:] == (0, 0) for row in answers[5])  # the tables are empty here
        assert spent(con) == 0


def test_an_array_parameter_binds_as_an_array_on_either_side(served):
    """pgcli's ``relkind = ANY(%s)`` with a list: bound by the server (text[] in text form,
    or by the client (``'{r,v}'``), it reads as the array PostgreSQL reads."""
    from psycopg import ClientCursor

    sql = "SELECT c.relname FROM pg_catalog.pg_class c WHERE c.relkind = ANY(%s)"
    with served.connect(served.new_user()) as con:
        assert ("pums",) in con.execute(sql, [["r", "v"]]).fetchall()
        assert ("pums",) in ClientCursor(con).execute(sql, [["r", "v"]]).fetchall()


def test_a_quantile_array_reaches_python_as_a_list_in_either_format(served):
    """APPROX_QUANTILES' answer is sent as float8[] (OID 1022), as PostgreSQL sends an
    array: psycopg reads it as a list of floats from text and from binary; a text array's
    awkward elements are quoted and come back whole."""
    with served.connect(served.new_user(epsilon=4)) as con:
        for cursor in (con.cursor(), con.cursor(binary=True)):
            cur = cursor.execute("SELECT APPROX_QUANTILES(age, 4) AS q FROM pums")
            q = cur.fetchone()[0]
            assert cur.description[0].type_code == 1022
            assert len(q) == 5 and all(isinstance(v, float) for v in q) and q == sorted(q)
            cur = cursor.execute("SELECT ARRAY['a b', NULL, 'x\"y', '', 'null'] AS t")
            assert cur.description[0].type_code == 1009
            assert cur.fetchone()[0] == ["a b", None, 'x"y', "", "null"]

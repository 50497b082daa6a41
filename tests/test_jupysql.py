"""JupySQL's %sql on a dpsql connection and on a dpsql:// URL, in a real IPython shell."""

from __future__ import annotations

import sys

import pytest

pytest.importorskip("sql.magic", reason="JupySQL is in the test extra")

from IPython.core.interactiveshell import InteractiveShell

import dpsql
from dpsql.datasets import pums_path

GROUPED = "SELECT sex, COUNT(*) AS n, AVG(age) AS mean_age FROM pums GROUP BY sex ORDER BY sex"
SETUP = f"""
import dpsql
con = dpsql.connect(budget=dpsql.Budget(epsilon=3.0, delta=1e-6), default_epsilon=0.5, seed=5)
con.register("pums", {str(pums_path("PUMS_dup"))!r}, privacy_unit="pid",
             bounds={{"age": (0, 100)}}, public_keys={{"sex": [0, 1]}})
"""


@pytest.fixture(scope="module")
def ipython():
    main = sys.modules["__main__"]
    shell = InteractiveShell.instance()
    assert shell.run_cell("%load_ext sql").success
    yield shell
    sys.modules["__main__"] = main  # IPython's own __main__ breaks multiprocessing's spawn


@pytest.fixture
def shell(ipython):
    from sql.connection import ConnectionManager

    ipython.reset(new_session=False)
    yield ipython
    ConnectionManager.close_all()


@pytest.fixture
def catalog(tmp_path):
    path = tmp_path / "catalog.toml"
    path.write_text(f'[tables.pums]\nsource = "{pums_path("PUMS_dup")}"\nprivacy_unit = "pid"\n'
                    'bounds = { age = [0, 100] }\npublic_keys = { sex = [0, 1] }\n')
    return path


def run(shell, cell: str):
    result = shell.run_cell(cell)
    assert result.success, result.error_in_exec
    return result.result


def rows(result_set) -> list[tuple]:
    return [tuple(row) for row in result_set]


def release(catalog_or_setup: str, sql: str, *, seed: int) -> list[tuple]:
    """What dpsql itself releases for ``sql`` with noise ``seed`` (same data, same ε)."""
    namespace: dict = {}
    exec(catalog_or_setup, namespace)
    return namespace["con"].sql(sql, seed=seed).fetchall()


def test_sql_magic_on_a_dpsql_connection_returns_the_noisy_release(shell):
    run(shell, SETUP)
    run(shell, "%sql con")
    result = run(shell, f"%sql {GROUPED}")
    assert list(result.keys) == ["sex", "n", "mean_age"]
    assert rows(result) == release(SETUP, GROUPED, seed=5)
    assert shell.user_ns["con"].budget.remaining.epsilon == 2.5  # one query, default ε


def test_cell_magic_stores_the_result_set(shell):
    run(shell, SETUP)
    run(shell, "%sql con --alias dp")
    run(shell, "%%sql counts << --no-index\nSELECT COUNT(*) AS n FROM pums")
    assert rows(shell.user_ns["counts"]) == release(SETUP, "SELECT COUNT(*) AS n FROM pums",
                                                    seed=5)


def test_refused_queries_fail_the_cell_and_spend_nothing(shell):
    run(shell, SETUP)
    run(shell, "%sql con")
    result = shell.run_cell("%sql SELECT pid FROM pums")
    assert not result.success and "COUNT(DISTINCT pid)" in str(result.error_in_exec)
    assert shell.user_ns["con"].budget.remaining.epsilon == 3


def test_sql_magic_on_a_dpsql_url(shell, catalog):
    address = f"dpsql:///:memory:?catalog={catalog}&budget_epsilon=2&epsilon=0.5&seed=9"
    run(shell, f"%sql {address}")
    result = run(shell, f"%sql {GROUPED}")
    setup = f"import dpsql\ncon = dpsql.connect(catalog={str(catalog)!r}, default_epsilon=0.5)"
    assert rows(result) == release(setup, GROUPED, seed=9)
    assert "pums" in str(run(shell, "%sqlcmd tables"))
    from sql.connection import ConnectionManager

    behind = ConnectionManager.current.connection_sqlalchemy.connection.driver_connection
    assert isinstance(behind, dpsql.Connection) and behind.budget.remaining.epsilon == 1.5


def test_named_parameters_through_the_url_are_bound_safely(shell, catalog):
    run(shell, f"%sql dpsql:///:memory:?catalog={catalog}&budget_epsilon=2&epsilon=0.5&seed=4")
    run(shell, '%config SqlMagic.named_parameters = "enabled"')
    run(shell, "low = 30")
    query = "SELECT COUNT(*) AS n FROM pums WHERE age > :low"
    result = run(shell, f"%sql {query}")
    setup = f"import dpsql\ncon = dpsql.connect(catalog={str(catalog)!r}, default_epsilon=0.5)"
    assert rows(result) == release(setup, query.replace(":low", "30"), seed=4)
    run(shell, '%config SqlMagic.named_parameters = "warn"')


def test_a_refused_query_shows_one_line_not_a_traceback(shell, capsys):
    """In IPython a dpsql error shows as its class and message (what to change), for %sql
    and for plain cells; a bug (InternalError) keeps its traceback."""
    run(shell, SETUP)
    run(shell, "%sql con")
    for cell in ("%sql SELECT pid FROM pums", "con.sql('SELECT pid FROM pums')"):
        capsys.readouterr()
        assert not shell.run_cell(cell).success
        shown = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
        assert shown[-1].startswith("UnsupportedQueryError: SELECT: `pid` is not supported")
        assert not any("Traceback" in line or "File " in line for line in shown), shown
    capsys.readouterr()
    assert not shell.run_cell("raise dpsql.InternalError('an invariant broke')").success
    assert "Traceback" in capsys.readouterr().out

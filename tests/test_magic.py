"""The %dpsql / %%dpsql notebook magics, run in a real IPython shell."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

pytest.importorskip("IPython")

from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

import dpsql
from dpsql.frontends.magic import ErrorView, ResultView

SETUP = """
import dpsql, pyarrow as pa
people = pa.table({"pid": list(range(200)), "g": ["<b>&"] * 100 + ["x"] * 100,
                   "v": [1.0] * 200})
def connect():
    con = dpsql.connect(budget=dpsql.Budget(epsilon=3.0, delta=1e-6), seed=0)
    con.register("t", people, privacy_unit="pid", bounds={"v": (0, 10)},
                 public_keys={"g": ["<b>&", "x"]})
    return con
con = connect()
"""
ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "notebooks.md"
GROUPED = "SELECT g, COUNT(*) AS n, SUM(v) * 2 AS twice FROM t GROUP BY g"


@pytest.fixture(scope="module")
def ipython():
    main = sys.modules["__main__"]
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "dpsql.frontends.magic")
    shell.dpsql_real_main = main
    yield shell
    # IPython puts its namespace in sys.modules["__main__"]; multiprocessing's spawn, used
    # by tests that run later in this worker, needs the real one.
    sys.modules["__main__"] = main


@pytest.fixture
def shell(ipython):
    ipython.reset(new_session=False)
    assert ipython.run_cell(SETUP).success
    return ipython


def epsilon_left(shell, name: str = "con") -> float:
    return shell.user_ns[name].budget.remaining.epsilon


def test_cell_magic_stores_the_result_and_shows_intervals_cost_and_budget(shell):
    view = shell.run_cell_magic("dpsql", "--epsilon 0.5 --delta 0 res", GROUPED)
    res = shell.user_ns["res"]
    assert isinstance(view, ResultView) and view.result is res
    assert isinstance(res, dpsql.Result) and res.columns == ["g", "n", "twice"]
    assert res.cost.epsilon == 0.5 and epsilon_left(shell) == 2.5
    cells = [[cell.text for cell in row] for row in view.rows()]
    assert [["±" in text for text in row] for row in cells] == [[False, True, False]] * 2
    page = view._repr_html_()
    assert "<td title=\"95% CI [" in page and f"<td>{cells[1][2]}</td>" in page
    assert "&lt;b&gt;&amp;" in page and "<b>&" not in page
    assert "cost ε=0.5, δ=0 · budget left ε=2.5, δ=1e-06" in page
    assert "SEEDED, NOT PRIVATE" in page  # seed=0: the footer says it is not private
    assert "budget left ε=2.5" in repr(view) and "95% CIs" in repr(view)


def test_a_query_without_epsilon_spends_a_tenth_of_what_is_left_and_says_so(shell):
    view = shell.run_line_magic("dpsql", "SELECT COUNT(*) AS n FROM t")
    assert "cost ε=0.3, δ=0 · budget left ε=2.7, δ=1e-06" in view.footer()
    again = shell.run_line_magic("dpsql", "SELECT COUNT(*) AS n FROM t WHERE v > 0")
    assert "cost ε=0.27, δ=0 · budget left ε=2.43, δ=1e-06" in again.footer()


def test_plus_minus_is_the_ci_half_width(shell):
    view = shell.run_cell_magic("dpsql", "--epsilon 0.5", "SELECT COUNT(*) AS n FROM t")
    bounds = view.result.ci(0.95).to_pylist()[0]
    [[cell]] = view.rows()
    value, half = (float(part) for part in cell.text.split(" ± "))
    assert value == bounds["n"]
    assert half == pytest.approx((bounds["n_upper"] - bounds["n_lower"]) / 2, rel=1e-5)


def test_line_magic_keeps_the_sql_verbatim(shell):
    result = shell.run_cell("%dpsql --epsilon=0.25 SELECT COUNT(*) AS n FROM t WHERE g = 'x'")
    assert isinstance(result.result, ResultView)
    assert result.result.result.columns == ["n"] and epsilon_left(shell) == 2.75


def test_explicit_connection_and_the_newest_by_default(shell):
    shell.run_cell("other = connect()")
    shell.run_line_magic("dpsql", "--connection con --epsilon 1 SELECT COUNT(*) AS n FROM t")
    assert (epsilon_left(shell), epsilon_left(shell, "other")) == (2.0, 3.0)
    shell.run_line_magic("dpsql", "--epsilon 1 SELECT COUNT(*) AS n FROM t")
    assert (epsilon_left(shell), epsilon_left(shell, "other")) == (2.0, 2.0)
    shell.run_cell("con = connect()")  # rebinding an older name: still the newest connection
    shell.run_line_magic("dpsql", "--epsilon 1 SELECT COUNT(*) AS n FROM t")
    assert (epsilon_left(shell), epsilon_left(shell, "other")) == (2.0, 2.0)


@pytest.mark.parametrize(("sql", "error"), [
    ("SELECT COUNT(*) AS n FROM t", "BudgetExceededError"),
    ("SELECT pid FROM t", "UnsupportedQueryError"),
])
def test_refused_queries_are_a_red_message_and_spend_nothing(shell, sql, error):
    view = shell.run_cell_magic("dpsql", "--epsilon 5 res", sql)
    assert isinstance(view, ErrorView) and str(view).startswith(f"{error}: ")
    assert 'class="dpsql-error"' in view._repr_html_() and "color" in view._repr_html_()
    assert epsilon_left(shell) == 3.0 and "res" not in shell.user_ns


def test_unexpected_exceptions_still_raise(shell, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(shell.user_ns["con"], "sql", broken)
    with pytest.raises(RuntimeError, match="boom"):
        shell.run_line_magic("dpsql", "SELECT COUNT(*) AS n FROM t")


def test_no_connection_is_a_usage_error(shell):
    del shell.user_ns["con"]
    result = shell.run_cell("%dpsql SELECT COUNT(*) AS n FROM t")
    assert isinstance(result.error_in_exec, UsageError)
    assert "no dpsql.Connection in the namespace" in str(result.error_in_exec)


@pytest.mark.parametrize(("line", "cell", "message"), [
    ("--connection people", "SELECT COUNT(*) FROM t", "no dpsql.Connection named 'people'"),
    ("--epsilon lots", "SELECT COUNT(*) FROM t", "not a number"),
    ("--budget 1", "SELECT COUNT(*) FROM t", "unknown option --budget"),
    ("--epsilon", "SELECT COUNT(*) FROM t", "--epsilon needs a value"),
    ("two names", "SELECT COUNT(*) FROM t", "one variable name"),
    ("res", "  \n", "no SQL"),
])
def test_bad_magic_lines_are_usage_errors(shell, line, cell, message):
    with pytest.raises(UsageError, match=message):
        shell.run_cell_magic("dpsql", line, cell)
    assert epsilon_left(shell) == 3.0


def test_the_notebook_guide_runs(ipython, tmp_path, monkeypatch):
    """Every example of docs/notebooks.md, in order, in one shell (as in one notebook)."""
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    # JupySQL imports pyspark's Connect client where pyspark is installed, which reads
    # __main__.__spec__: the real __main__'s, not the namespace IPython put in its place.
    with monkeypatch.context() as real:
        real.setitem(sys.modules, "__main__", ipython.dpsql_real_main)
        from sql.connection import ConnectionManager
    from sqlalchemy import make_url

    from dpsql.frontends.sqlalchemy import DpsqlDialect

    text = DOC.read_text()
    [catalog] = re.findall(r"```toml\n(.*?)```", text, flags=re.S)
    (tmp_path / "catalog.toml").write_text(catalog)
    (tmp_path / "datasets").symlink_to(ROOT / "datasets")
    monkeypatch.chdir(tmp_path)
    for address in re.findall(r"```\n(dpsql://.*?)```", text, flags=re.S)[0].split():
        DpsqlDialect().create_connect_args(make_url(address))
    ipython.reset(new_session=False)
    cells = re.findall(r"```(?:python|ipython)\n(.*?)```", text, flags=re.S)
    assert len(cells) == 12
    outputs = []
    for cell in cells:
        result = ipython.run_cell(cell)
        assert result.success, cell
        outputs.append(result.result)
    ns = ipython.user_ns
    assert isinstance(ns["res"], dpsql.Result)
    bars = [p.get_height() for p in ns["ax"].patches]
    assert bars == ns["res"].arrow().column("mean_stay").to_pylist()
    assert [len(list(out)) for out in (outputs[8], outputs[11])] == [3, 2]  # JupySQL results
    # + one %sql at the default ε: a tenth of the 2.25 left, 0.22
    assert ns["con"].budget.remaining.epsilon == pytest.approx(2.03)
    assert len(ns["rows"]) == 2 and ns["budget"].remaining.epsilon == 1.5
    ConnectionManager.close_all()
    import matplotlib.pyplot as plt

    plt.close("all")


def test_load_ext_dpsql_package_entry_point(ipython):
    ipython.run_line_magic("load_ext", "dpsql")
    assert "dpsql" in ipython.extension_manager.loaded
    assert "dpsql" in ipython.magics_manager.magics["cell"]

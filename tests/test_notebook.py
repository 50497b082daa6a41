"""docs/notebook_demo.ipynb, executed by a real Jupyter kernel (nbclient + ipykernel)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOK = Path(__file__).resolve().parents[1] / "docs" / "notebook_demo.ipynb"


@pytest.fixture(scope="module")
def executed(tmp_path_factory) -> list:
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    workdir = tmp_path_factory.mktemp("notebook")  # the kernel's working directory
    nbclient.NotebookClient(notebook, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(workdir)}}).execute()
    return [cell for cell in notebook.cells if cell.cell_type == "code"]


def outputs(cell, mime: str) -> list[str]:
    return [o["data"][mime] for o in cell.outputs if mime in o.get("data", {})]


def cell_running(cells: list, source: str):
    [cell] = [c for c in cells if c.source.startswith(source)]
    return cell


def test_the_stored_notebook_has_no_outputs():
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(notebook)
    assert all(not c.get("outputs") and c.get("execution_count") is None
               for c in notebook.cells if c.cell_type == "code")


def test_the_notebook_runs_without_errors(executed):
    assert [o for cell in executed for o in cell.outputs if o.output_type == "error"] == []
    assert all(cell.execution_count is not None for cell in executed)


def test_cell_magic_shows_the_html_table_with_intervals_and_budget(executed):
    [page] = outputs(cell_running(executed, "%%dpsql --epsilon 0.5 by_sex"), "text/html")
    assert page.startswith('<table class="dpsql-result"><thead><tr><th>sex</th><th>n</th>'
                           "<th>mean_age</th></tr></thead>")
    cells = re.findall(r'<td title="95% CI \[[^"]+\]">[^<]+ (?:± [^<]+|\[[^<]+\])</td>', page)
    assert page.count("<tr><td>") == 2 and len(cells) == 4
    assert "cost ε=0.5, δ=0 · budget left ε=1.5, δ=1e-06" in page
    assert "NOT PRIVATE" not in page


def test_plots_are_images(executed):
    for source in ('by_sex.plot("mean_age")', "by_educ.plot()"):
        [image] = outputs(cell_running(executed, source), "image/png")
        assert len(image) > 1000


def test_refused_query_is_a_red_message_and_the_budget_is_what_was_spent(executed):
    [page] = outputs(cell_running(executed, "%dpsql SELECT pid"), "text/html")
    assert 'class="dpsql-error"' in page and "UnsupportedQueryError" in page
    [left] = outputs(cell_running(executed, "con.budget.remaining"), "text/plain")
    assert left == "Cost(epsilon=0.75, delta=1e-06)"

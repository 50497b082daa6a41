"""What was cut is said, for free: notes under a result read the plan and the declarations
only (issue 38, item 4). Default limits are named only where they can bind; a result from
private keys says below how many people a group is unlikely to be shown."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import dpsql
from dpsql.frontends.output import render
from dpsql.frontends.server.session import _notices

ROOT = Path(__file__).resolve().parents[1]
PEOPLE = pa.table({"pid": list(range(300)), "k": [str(i % 3) for i in range(300)],
                   "x": [float(i % 7) for i in range(300)]})
"""One row per person."""
SEVERAL = pa.table({"pid": [i // 3 for i in range(300)], "k": [str(i % 3) for i in range(300)]})
"""Three rows per person, one in each group."""


@pytest.fixture
def con():
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1e6, delta=1e-3), seed=7)
    con.register("once", PEOPLE, privacy_unit="pid", max_rows_per_unit=1,
                 public_keys={"k": ["0", "1", "2"]}, bounds={"x": (0, 10)})
    con.register("many", PEOPLE, privacy_unit="pid", public_keys={"k": ["0", "1", "2"]},
                 bounds={"x": (0, 10)})
    con.register("lone", PEOPLE, privacy_unit="pid", public_keys={"k": ["0"]})
    con.register("wrong", SEVERAL, privacy_unit="pid", max_rows_per_unit=1)
    return con


@pytest.mark.parametrize("sql", [
    "SELECT COUNT(*) AS n FROM {t}",
    "SELECT k, COUNT(*) AS n, AVG(x) AS m FROM {t} GROUP BY k",
    "SELECT k, COUNT(*) AS n FROM {t} GROUP BY k",
])
def test_a_table_of_one_row_per_person_is_cut_by_no_default_limit(con, sql):
    """``max_rows_per_unit=1`` is the owner's public word that a person has one row: no
    per-group row limit and no groups limit can cut below it; without it, both can."""
    declared = con.sql(sql.format(t="once"), epsilon=1)
    assert declared.default_limits == {}
    assert "default limits" not in repr(declared) and declared.notes() == ()
    undeclared = con.sql(sql.format(t="many"), epsilon=1)
    assert "max_rows_per_group" in undeclared.default_limits
    assert "bounded by default limits (max_rows_per_group=1" in repr(undeclared)


def test_a_wrong_declaration_is_enforced_not_trusted(con):
    """Three rows per person declared as one: the rewrite keeps one row per person."""
    n = con.sql("SELECT COUNT(*) AS n FROM wrong", epsilon=1000).fetchall()[0][0]
    assert abs(n - 100) <= 1


def test_limits_that_cannot_bind_are_not_named(con):
    counting_people = con.sql("SELECT k, COUNT(DISTINCT pid) AS n FROM many GROUP BY k",
                              epsilon=1)
    assert counting_people.default_limits == {"max_groups_per_unit": 1}  # rows do not count
    one_group = con.sql("SELECT k, COUNT(*) AS n FROM lone GROUP BY k", epsilon=1)
    assert one_group.default_limits == {"max_rows_per_group": 1}  # a single public group


@pytest.mark.parametrize(("sql", "method"), [
    ("SELECT k, COUNT(*) AS n FROM wrong GROUP BY k", "laplace_threshold"),
    ("SELECT k, COUNT(DISTINCT pid) AS n FROM wrong GROUP BY k", "laplace_threshold"),
])
def test_private_keys_say_how_many_people_a_group_needs_to_be_shown(con, sql, method):
    result = con.sql(sql, epsilon=1, delta=1e-6)
    shown = result.groups_shown
    selection = result.plan.selection
    assert selection.method == method
    noise = result.plan.selection_noise()
    chance = selection.chance(np.array([shown.likely - 1, shown.likely, shown.surely - 1,
                                        shown.surely]), noise)
    assert chance[0] < 0.5 <= chance[1] and chance[2] < 0.95 <= chance[3]
    assert str(shown) in repr(result)
    assert f"a group of fewer than {shown.likely} people is more often hidden" in str(shown)
    curve = result.explain().to_dict()["partition_selection"]["release_probability"]
    assert curve["1"] < 0.5  # the curve explain() prints agrees
    public = con.sql("SELECT k, COUNT(*) AS n FROM many GROUP BY k", epsilon=1)
    assert public.groups_shown is None and "private keys" not in repr(public)


def test_the_notes_reach_df_markdown_and_the_server(con):
    result = con.sql("SELECT k, COUNT(*) AS n FROM wrong GROUP BY k", epsilon=1, delta=1e-6)
    notes = result.notes()
    assert len(notes) == 1 and notes[0].startswith("groups come from the data")
    assert result.df().attrs["dpsql_notes"] == list(notes)
    assert render(result, "markdown").splitlines()[-1] == notes[0]
    assert _notices(result) == notes
    defaults = con.sql("SELECT COUNT(*) AS n FROM many", epsilon=1)
    assert defaults.df().attrs["dpsql_notes"] == list(defaults.notes())
    assert _notices(defaults) == ("bounded by default limits (max_rows_per_group=1): the data "
                                  "owner can declare them in the catalog",)
    assert con.sql("SELECT COUNT(*) AS n FROM once", epsilon=1).df().attrs["dpsql_notes"] == []


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dpsql", *args], capture_output=True,
                          text=True, timeout=120, cwd=cwd, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_machine_formats_keep_stdout_data_and_say_the_notes_on_stderr(tmp_path, fmt):
    data = tmp_path / "people.csv"
    data.write_text("pid,k\n" + "".join(f"{i},{i % 3}\n" for i in range(300)))
    (tmp_path / "c.toml").write_text(
        f'[tables.many]\nsource = "{data}"\nprivacy_unit = "pid"\n'
        f'[tables.once]\nsource = "{data}"\nprivacy_unit = "pid"\nmax_rows_per_unit = 1\n')
    grouped = run_cli("c.toml", "--format", fmt, "--seed", "1", "--delta", "1e-6", "-c",
                      "SELECT k, COUNT(*) AS n FROM many GROUP BY k", cwd=tmp_path)
    assert grouped.returncode == 0, grouped.stderr
    notes = grouped.stderr.splitlines()
    assert [n.split(":")[0] for n in notes] == ["note", "note"], notes
    assert notes[0].startswith("note: bounded by default limits (max_rows_per_group=1, "
                               "max_groups_per_unit=1): declare them in the table's")
    assert notes[1].startswith("note: groups come from the data (private keys): a group of "
                               "fewer than ")
    if fmt == "json":
        assert isinstance(json.loads(grouped.stdout), list)
    else:
        assert grouped.stdout.splitlines()[0] == '"k","n","n_lower","n_upper"'
    declared = run_cli("c.toml", "--format", fmt, "--seed", "1", "-c",
                       "SELECT COUNT(*) AS n FROM once", cwd=tmp_path)
    assert declared.returncode == 0 and declared.stderr == "", declared.stderr


def test_the_public_calendar_recipe_of_docs_sql_runs():
    """docs/sql.md, "Date series: a public calendar": every month, the empty one too."""
    text = (ROOT / "docs" / "sql.md").read_text().split("### Date series")[1]
    code = text.split("```python\n")[1].split("```")[0]
    exec(compile(code, "docs/sql.md", "exec"), {})

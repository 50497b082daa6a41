"""suggest_bounds and ``dpsql suggest-bounds``: limits from private histograms of
contributions, within the budget given, written into a catalog that then runs."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from fractions import Fraction

import pyarrow as pa
import pytest

import dpsql
from dpsql.datasets import pums_path
from dpsql.suggest import catalog_toml


def visits_of(rows_per_person: dict[int, int], seed: int = 3) -> tuple[dpsql.Connection, str]:
    """People with the given numbers of rows, each row in group ``g`` (one group a person
    for the first half of their rows, another for the rest)."""
    pids, groups = [], []
    person = 0
    for rows, people in rows_per_person.items():
        for _ in range(people):
            pids += [person] * rows
            groups += [f"g{person % 7}"] * (rows - rows // 2) + [f"g{(person + 1) % 7}"] * (
                rows // 2)
            person += 1
    con = dpsql.connect(budget=dpsql.Budget(epsilon=20.0, delta=1e-5), seed=seed)
    con.register("v", pa.table({"pid": pids, "g": groups, "x": [float(i % 50) for i in
                                                                range(len(pids))]}),
                 privacy_unit="pid")
    return con, "v"


@pytest.mark.parametrize(("coverage", "limit"), [(0.95, 8), (0.6, 2), (0.3, 1)])
def test_the_row_limit_is_the_coverage_quantile_of_rows_per_person(coverage, limit):
    # 2,000 people: 40% with 1 row, 30% with 2, 25% with 5 (bin 8), 5% with 40 (bin 64).
    con, table = visits_of({1: 800, 2: 600, 5: 500, 40: 100})
    suggestion = con.suggest_bounds(table, epsilon=8.0, delta=1e-6, coverage=coverage)
    assert suggestion.max_rows_per_unit == limit
    assert suggestion.bounds["x"] == (0.0, 64.0)


def test_group_limits_come_from_the_grouping_column():
    con, table = visits_of({1: 800, 4: 1200})
    suggestion = con.suggest_bounds(table, epsilon=8.0, delta=1e-6, group_by="g")
    assert (suggestion.max_groups_per_unit, suggestion.max_rows_per_group) == (2, 2)
    assert suggestion.options() == {"bounds": {"x": (0.0, 64.0)}, "max_rows_per_unit": 4,
                                    "max_groups_per_unit": 2, "max_rows_per_group": 2}


def test_the_spend_never_exceeds_the_budget_given_and_an_overdraft_spends_nothing():
    con, table = visits_of({1: 300, 3: 300})
    suggestion = con.suggest_bounds(table, epsilon=0.3, delta=3e-7, group_by="g")
    spent = con.budget.spent
    assert Fraction(spent.epsilon) <= Fraction(0.3) and Fraction(spent.delta) <= Fraction(3e-7)
    assert suggestion.cost.epsilon == pytest.approx(0.3)
    with pytest.raises(dpsql.BudgetExceededError):
        con.suggest_bounds(table, epsilon=100.0, delta=1e-6)
    assert con.budget.spent == spent


@pytest.mark.parametrize(("options", "error"), [
    ({"group_by": "pid"}, dpsql.CatalogError), ({"group_by": "nope"}, dpsql.CatalogError),
    ({"coverage": 1.0}, dpsql.ProgrammingError), ({"delta": 0.0}, dpsql.PrivacyError)])
def test_bad_requests_are_refused_before_any_spending(options, error):
    con, table = visits_of({1: 10})
    with pytest.raises(error):
        con.suggest_bounds(table, **{"epsilon": 1.0, "delta": 1e-6, **options})
    assert con.budget.spent.epsilon == 0


def test_the_catalog_written_round_trips():
    doc = {"budget": {"epsilon": 2.0, "delta": 1e-6},
           "tables": {"v": {"source": "v.csv", "privacy_unit": "pid",
                            "bounds": {"x": (0.0, 64.0)}, "public_keys": {"g": ["a", 'b"c']},
                            "max_rows_per_unit": 4}}}
    again = tomllib.loads(catalog_toml(doc))
    assert again["tables"]["v"]["bounds"] == {"x": [0, 64]}
    assert again["tables"]["v"]["public_keys"] == {"g": ["a", 'b"c']}
    assert again["budget"] == {"epsilon": 2, "delta": 1e-6}


def test_the_command_prints_the_lines_and_writes_a_catalog_that_runs(tmp_path):
    catalog = tmp_path / "catalog.toml"
    catalog.write_text(f'[tables.pums]\nsource = "{pums_path("PUMS_dup")}"\n'
                       'privacy_unit = "pid"\npublic_keys = { sex = [0, 1] }\n')
    out = tmp_path / "suggested.toml"
    done = subprocess.run([sys.executable, "-m", "dpsql", str(catalog), "suggest-bounds", "pums",
                           "--group-by", "sex", "--epsilon", "2", "--budget-epsilon", "3",
                           "--output", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("# suggested by dpsql suggest-bounds for pums (spent ε=2")
    entry = tomllib.loads(out.read_text())["tables"]["pums"]
    assert entry["public_keys"] == {"sex": [0, 1]} and entry["max_groups_per_unit"] == 1
    assert {"age", "income"} <= set(entry["bounds"]) and entry["max_rows_per_unit"] >= 2
    again = subprocess.run([sys.executable, "-m", "dpsql", str(out), "-c",
                            "SELECT sex, AVG(income) AS i FROM pums GROUP BY sex"],
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and "(2 rows;" in again.stdout, again.stderr
    refused = subprocess.run([sys.executable, "-m", "dpsql", str(catalog), "suggest-bounds",
                              "pums", "--output", str(out)], capture_output=True, text=True,
                             timeout=120)
    assert refused.returncode == 2 and "exists" in refused.stderr


def test_the_bounding_report_says_what_the_limits_cut_and_the_fix():
    # 1,000 people with 1 row, 1,000 with 6: a rows-per-group limit of 1 cuts half of them.
    con, _ = visits_of({1: 1000, 6: 1000})
    report = con.bounding_report("SELECT COUNT(*) AS n FROM v WHERE x >= 0", epsilon=4.0,
                                 delta=1e-6)
    (check,) = report.checks
    assert (check.name, check.limit, check.suggested) == ("max_rows_per_group", 1, 8)
    low, high = check.cut
    assert 0.45 <= low <= high <= 0.55
    assert "set max_rows_per_group=8 to keep 95% whole" in str(report)
    assert report.cost.epsilon == pytest.approx(4.0) and con.budget.spent.epsilon <= 4.0


def test_the_bounding_report_checks_the_group_limits_of_the_keys_grouped_by():
    con, _ = visits_of({2: 1500})
    con.register("w", con.backend.run_sql("SELECT * FROM v"), privacy_unit="pid",
                 max_groups_per_unit=2, max_rows_per_group=1)
    report = con.bounding_report("SELECT g, COUNT(*) AS n FROM w GROUP BY g", epsilon=4.0,
                                 delta=1e-6)
    groups, rows = report.checks
    assert (groups.name, groups.cut[1]) == ("max_groups_per_unit", 0.0)
    assert rows.name == "max_rows_per_group" and rows.cut[0] == 0.0 and "warning" not in \
        str(groups)
    with pytest.raises(dpsql.UnsupportedQueryError, match="one private table"):
        con.bounding_report("SELECT COUNT(*) FROM v JOIN w USING (pid)", epsilon=1.0,
                            delta=1e-6)


def test_the_bounding_report_says_what_a_clamp_cuts():
    # x is i % 50 for row i: with bounds [0, 10], about 78% of values lie above 10.
    con, _ = visits_of({1: 3000})
    con.register("c", con.backend.run_sql("SELECT * FROM v"), privacy_unit="pid",
                 bounds={"x": (0, 10)})
    report = con.bounding_report("SELECT SUM(x) AS s FROM c", epsilon=4.0, delta=1e-6)
    clamp = next(c for c in report.checks if getattr(c, "column", None) == "x")
    low, high = clamp.outside
    assert 0.6 <= low <= 0.78 <= high <= 0.85 and clamp.suggested == (0.0, 64.0)
    assert "warning: the data suggest [0, 64]" in str(report)


def test_names_the_helpers_invent_cannot_be_shadowed_by_the_tables_columns():
    """The histograms name their subquery columns themselves; a table whose unit is `m` and
    whose key is `m_bin` (the names they would pick) gets others, and the same answers."""
    table = pa.table({"m": [i % 300 for i in range(900)], "m_bin": ["a", "b", "c"] * 300})
    con = dpsql.connect(budget=dpsql.Budget(epsilon=10.0, delta=1e-5), seed=1)
    con.register("t", table, privacy_unit="m")
    suggestion = con.suggest_bounds("t", epsilon=4.0, delta=1e-6, group_by="m_bin")
    assert (suggestion.max_rows_per_unit, suggestion.max_groups_per_unit,
            suggestion.max_rows_per_group) == (4, 1, 4)
    report = con.bounding_report("SELECT m_bin, COUNT(*) FROM t GROUP BY m_bin", epsilon=2.0,
                                 delta=1e-6)
    assert [c.suggested for c in report.checks] == [1, 4]


def test_the_suggestion_says_what_it_cuts_from_the_histograms_it_paid_for():
    """960 people with one row, 40 with 16 (over 3 groups); 5 of them with a value of their
    own bin, too small to release. A huge ε makes the noisy bins the true ones: the shares
    are then those of the data, and the suggestion spends nothing more for them."""
    pids, xs, groups = [], [], []
    for person in range(1000):
        rows = 1 if person < 960 else 16
        pids += [person] * rows
        xs += [float(2 ** (20 + person)) if person < 5 else 1.0] * rows
        groups += [f"g{(person + i) % 3}" for i in range(rows)]
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1e6, delta=1e-3), seed=1)
    con.register("v", pa.table({"pid": pids, "x": xs, "g": groups}), privacy_unit="pid")
    suggestion = con.suggest_bounds("v", epsilon=1e4, delta=1e-4, group_by="g")
    assert con.budget.spent.epsilon == pytest.approx(1e4)
    cuts = {cut.name: cut for cut in suggestion.cuts}
    rows = cuts["max_rows_per_unit = 1"]
    assert rows.people == pytest.approx(0.04, abs=1e-3)
    low, high = rows.units
    assert low <= 600 / 1600 <= high  # 40 people drop 15 rows each, of 1,600
    pairs = cuts["max_groups_per_unit = 1"]
    assert pairs.people == pytest.approx(0.04, abs=1e-3)
    assert pairs.units[0] <= 80 / 1080 <= pairs.units[1]  # 40 people drop 2 of 3 groups
    assert cuts["x in [0, 2]"].people == pytest.approx(0.005, abs=1e-3)
    assert "# max_rows_per_unit = 1: cuts 4.0% of people, 24%–38% of rows" in suggestion.toml()
    assert "# x in [0, 2]: clamps about 0.5% of values" in suggestion.toml()
    assert tomllib.loads(suggestion.toml())["max_rows_per_unit"] == 1

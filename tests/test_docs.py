"""The README and the docs are executed: their commands and examples must work."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dpsql.datasets import pums_path

ROOT = Path(__file__).resolve().parents[1]


def blocks(path: Path, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", path.read_text(), flags=re.S)


def test_readme_opens_with_the_two_commands():
    first = blocks(ROOT / "README.md", "bash")[0].strip().splitlines()
    assert first == [
        "python3 -m venv .venv && .venv/bin/pip install -e '.[test]' && .venv/bin/dpsql demo",
        ".venv/bin/python -m pytest -n 2",
    ]
    ci = (ROOT / ".ci" / "run").read_text()
    assert first[1].removeprefix(".venv/bin/python -m pytest") in ci.split("pytest")[-1]


def test_readme_python_examples_run(tmp_path, monkeypatch):
    import dpsql.connection

    (tmp_path / "datasets").symlink_to(ROOT / "datasets")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(dpsql.connection, "_default", None)  # a fresh module-level budget
    namespace: dict = {}
    for code in blocks(ROOT / "README.md", "python"):
        exec(compile(code, "README.md", "exec"), namespace)
    assert (tmp_path / "ledger.db").exists()


def test_catalog_doc_examples_run(tmp_path, monkeypatch):
    doc = ROOT / "docs" / "catalog.md"
    (tmp_path / "catalog.toml").write_text(blocks(doc, "toml")[0])
    shutil.copy(pums_path("PUMS_dup"), tmp_path / "PUMS_dup.csv")
    (tmp_path / "sexes.csv").write_text("sex\n0\n1\n")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    for code in blocks(doc, "python"):
        exec(compile(code, "docs/catalog.md", "exec"), namespace)


def run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dpsql", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT)


def test_cli_demo_prints_answers_with_intervals_and_budget():
    out = run_cli("demo", "--rows", "20000")
    assert out.returncode == 0, out.stderr
    assert "95% CIs" in out.stdout and "budget left" in out.stdout
    assert out.stdout.count("; 95% CIs") == 4
    assert "max_groups_per_unit 1; max_rows_per_group 2" in out.stdout  # declared, and said
    assert "COUNT(*) counts the rows kept under that limit" in " ".join(out.stdout.split())
    assert "bounded by default limits" not in out.stdout


def test_cli_help_is_fast_and_documents_commands():
    out = run_cli("--help")
    assert out.returncode == 0 and "demo" in out.stdout and "Example" in out.stdout


@pytest.mark.parametrize(("args", "code", "stderr"), [
    ((), 2, "usage"),
    (("-c", "SELECT COUNT(*) FROM nowhere"), 3, "CatalogError"),
])
def test_cli_exit_codes_and_messages(args, code, stderr):
    out = run_cli(*args)
    assert out.returncode == code
    assert stderr in out.stderr


def test_cli_query_with_a_catalog(tmp_path):
    (tmp_path / "c.toml").write_text(
        f'[tables.pums]\nsource = "{pums_path("PUMS_dup")}"\nprivacy_unit = "pid"\n'
        'public_keys = { sex = [0, 1] }\n')
    out = run_cli("--catalog", str(tmp_path / "c.toml"), "--format", "json", "-c",
                  "SELECT sex, COUNT(*) AS n FROM pums GROUP BY sex")
    assert out.returncode == 0, out.stderr
    assert '"n_lower"' in out.stdout


def test_cli_budget_guide_lists_use_cases():
    out = run_cli("budget", "--guide")
    assert out.returncode == 0
    assert "health records" in out.stdout and "0.5 – 2" in out.stdout


def test_cli_spends_from_a_ledger_and_reports_it(tmp_path):
    ledger = str(tmp_path / "ledger.db")
    catalog = tmp_path / "c.toml"
    catalog.write_text(f'[tables.pums]\nsource = "{pums_path("PUMS_dup")}"\n'
                       'privacy_unit = "pid"\n')
    first = run_cli("--ledger", ledger, "--analyst", "ann", "--budget-epsilon", "2",
                    "--catalog", str(catalog), "--epsilon", "0.5", "-c",
                    "SELECT COUNT(*) FROM pums")
    assert first.returncode == 0, first.stderr
    report = run_cli("--ledger", ledger, "--analyst", "ann", "budget")
    assert report.returncode == 0, report.stderr
    assert "1 queries" in report.stdout and "basic: ε=0.5" in report.stdout

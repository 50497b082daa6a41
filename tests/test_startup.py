"""A one-query process loads only what answering needs (docs/benchmarks.md, "Start-up").

``import dpsql``, connect, register a Parquet file and answer a query, in a fresh
interpreter: none of the modules below may be loaded. Each was on that path once and cost
time there: pandas (pyarrow imports it to convert between NumPy and Arrow, ~0.15 s;
``dpsql.arrays`` converts without it), SciPy (``dpsql.mechanisms.special``), the
front-ends, the Spark engine and sqlglot's other dialects, the plot, and the façade's
tools a query does not use (owner tools, utility evaluation, the cursor, the ledger).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pyarrow.parquet as pq

from dpsql.datasets import visits

NOT_LOADED = (
    "pandas", "scipy", "matplotlib", "polars", "pyspark", "tomllib",
    "dpsql.frontends", "dpsql.plot", "dpsql.backends.spark", "dpsql.engines.spark",
    "sqlglot.dialects.spark", "sqlglot.dialects.bigquery", "sqlglot.dialects.postgres",
    "dpsql.owner", "dpsql.evaluate", "dpsql.dbapi", "dpsql.explain",
    "dpsql.accounting.ledger",
)
"""Modules (and their sub-modules) a one-query process must not load."""

ONE_QUERY = """
import json, sys
import dpsql
con = dpsql.connect(budget=dpsql.Budget(epsilon=10.0, delta=1e-5), cache=sys.argv[2] == "cache")
con.register("visits", sys.argv[1], privacy_unit="patient_id", max_groups_per_unit=3,
             max_rows_per_group=4, bounds={"cost": (0, 1000)})
for query in ("SELECT specialty, COUNT(*) FROM visits GROUP BY specialty",
              "SELECT COUNT(*) AS n, SUM(cost) AS total, AVG(cost) AS mean FROM visits"):
    result = con.sql(query, epsilon=1.0)
    result.fetchall(), result.ci(), repr(result)
print(json.dumps(sorted(sys.modules)))
"""


def loaded_by_one_query(path: str, cache: bool) -> list[str]:
    """The modules a fresh interpreter holds after answering ONE_QUERY's queries."""
    done = subprocess.run([sys.executable, "-c", ONE_QUERY, path, "cache" if cache else "-"],
                          check=True, capture_output=True, text=True, timeout=120)
    return json.loads(done.stdout)


def test_one_query_loads_only_what_answering_needs(tmp_path):
    path = tmp_path / "visits.parquet"
    pq.write_table(visits(2_000, seed=0), path)
    for cache in (False, True):
        loaded = loaded_by_one_query(str(path), cache)
        found = [n for n in NOT_LOADED if any(m == n or m.startswith(n + ".") for m in loaded)]
        assert found == [], (f"cache={cache}: a one-query process loaded {found}; import them "
                             "where they are used (docs/benchmarks.md, Start-up)")
        assert "dpsql.release" in loaded and "duckdb" in loaded  # the query was answered

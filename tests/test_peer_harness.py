"""The peer-suite harness (tests/peers) on small repositories written here in each peer's
format: its readers find every query and the peer's verdict, its translated tables load,
and each query ends answered or refused, never crashed. The figures over the peers' real
suites are in docs/sql.md ("How much of the peers' SQL dpsql answers")."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.peers.harness import run_peer, summary
from tests.peers.suites import PEERS, Repository, zetasql_translate

SMARTNOISE = {
    "sql/tests/query/queries/validate_pums/validate_pums.sql":
        "SELECT COUNT(*) FROM PUMS.PUMS;\n-- SELECT nothing;\nSELECT married,\n"
        "  AVG(income) FROM PUMS.PUMS GROUP BY married;\n",
    "sql/tests/query/queries/validate_pums/validate_pums_fail.sql":
        "SELECT pid FROM PUMS.PUMS;\n",
    "sql/tests/query/queries/run/run.sql":
        "SELECT Region, AVG(Temperature) AS t FROM Telemetry.Crashes GROUP BY Region;\n",
    "sql/tests/query/queries/rewrite/rewrites.sql":
        "SELECT COUNT(DISTINCT DeviceID) AS n FROM Telemetry.Crashes;\n",
    "sql/tests/rewriter/test_rewriting.py":
        'queries = [\n    "SELECT SUM(age) FROM PUMS.PUMS WHERE educ = \'9\'",\n]\n',
}

ZETASQL_TABLE = """[prepare_database]
CREATE TABLE People OPTIONS (userid_column=uid) AS
SELECT cast(1 as int64) as uid, cast(2.5 as double) as v UNION ALL
  SELECT 2, 3.5
--
ARRAY<STRUCT<uid INT64, v DOUBLE>>[{1, 2.5}, {2, 3.5}]
==
"""
ZETASQL = {
    "zetasql/compliance/testdata/differential_privacy.test": ZETASQL_TABLE + """
[name=sum]
# no noise
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon=1e20, delta=1.0)
  SUM(v, contribution_bounds_per_group => (0, 10))
FROM People;
--
ARRAY<STRUCT<DOUBLE>>[{6}]
==
[name=negative_epsilon]
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon=-1, delta=1e-6) COUNT(*) FROM People;
--
ERROR: generic::invalid_argument: Epsilon must be finite and positive
""",
    "zetasql/compliance/testdata/anonymization.test": ZETASQL_TABLE + """
[name=anon_count]
SELECT WITH ANONYMIZATION OPTIONS(epsilon=1e20, delta=1.0) ANON_COUNT(*) FROM People;
--
ARRAY<STRUCT<INT64>>[{2}]
""",
}

PYQRLEW = {"tests/queries/base_queries.sql":
           "SELECT COUNT(*) AS n FROM census;\n-- SELECT 1;\n"
           "SELECT sex, AVG(age) AS a FROM census GROUP BY sex\n"
           "SELECT SUM(DISTINCT age) AS s FROM census;\n"}


def checkout(root: Path, files: dict[str, str]) -> Repository:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return Repository(root)


@pytest.mark.parametrize(("peer", "files", "expected"), [
    ("smartnoise", SMARTNOISE, [(True, "answered"), (True, "answered"), (False, "refused"),
                                (True, "answered"), (True, "answered"), (True, "answered")]),
    ("zetasql", ZETASQL, [(True, "answered"), (False, "refused"), (True, "answered")]),
    ("pyqrlew", PYQRLEW, [(True, "answered"), (True, "answered"), (True, "refused")]),
])
def test_each_peer_format_is_read_and_run(tmp_path, peer, files, expected):
    outcomes = run_peer(PEERS[peer], checkout(tmp_path, files))
    assert [(o.query.peer_answers, o.verdict) for o in outcomes] == expected, \
        [o.detail for o in outcomes]
    assert "crashes on 0" in summary(peer, "0" * 40, outcomes)


def test_the_noiseless_test_settings_of_zetasql_become_real_ones():
    sql = "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon=1e20, delta = 1.0) COUNT(*) FROM t"
    assert zetasql_translate(sql) == ("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon=1, "
                                      "delta=1e-6) COUNT(*) FROM t")
    assert zetasql_translate("OPTIONS(epsilon=1, delta=1e-5)") == "OPTIONS(epsilon=1, delta=1e-5)"

"""Roles: an analyst connection receives noisy answers and nothing else.

Seeds make noise reproducible (so an analyst could subtract it), evaluation compares noisy
answers with exact ones, and catalog changes let the holder point a table at other data:
each is a data-owner tool. An analyst connection (``role="analyst"``, what the server
gives every client) refuses them all, before any data is read and without spending.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

import dpsql

CATALOG = """
[tables.pums]
source = "{root}/datasets/PUMS_dup.csv"
privacy_unit = "pid"
bounds = {{ age = [0, 100] }}
"""


@pytest.fixture
def analyst(tmp_path) -> dpsql.Connection:
    from pathlib import Path

    path = tmp_path / "catalog.toml"
    path.write_text(CATALOG.format(root=Path(__file__).resolve().parents[1]))
    return dpsql.connect(catalog=str(path), role="analyst",
                         budget=dpsql.Budget(epsilon=2.0, delta=1e-6))


def test_an_analyst_gets_private_noisy_answers(analyst):
    result = analyst.sql("SELECT COUNT(*), AVG(age) FROM pums", epsilon=0.5)
    assert result.private and len(result.fetchall()) == 1
    # no ε given: a tenth of the ε = 1.5 the budget has left
    assert analyst.explain("SELECT COUNT(*) FROM pums").to_dict()["epsilon"] == 0.15
    assert analyst.execute("SELECT COUNT(*) FROM pums WHERE age > ?", [30],
                           epsilon=0.5).fetchall()


@pytest.mark.parametrize("attempt", [
    lambda con: con.sql("SELECT COUNT(*) FROM pums", epsilon=0.5, seed=1),
    lambda con: con.execute("SELECT COUNT(*) FROM pums", epsilon=0.5, seed=1),
    lambda con: con.cursor().execute("SELECT COUNT(*) FROM pums", epsilon=0.5, seed=1),
    lambda con: con.evaluate("SELECT COUNT(*) FROM pums", runs=2),
    lambda con: con.register("pums", pa.table({"pid": [1]}), privacy_unit="pid"),
    lambda con: con.register_public("keys", pa.table({"k": [1]})),
    lambda con: con.read_csv("datasets/PUMS.csv", privacy_unit="pid"),
])
def test_owner_tools_are_refused_and_spend_nothing(analyst, attempt):
    with pytest.raises(dpsql.RoleError, match="role='analyst'"):
        attempt(analyst)
    assert not analyst.budget.charges


def test_an_analyst_connection_cannot_be_seeded():
    with pytest.raises(dpsql.RoleError, match="seed="):
        dpsql.connect(role="analyst", seed=0)


def test_unknown_roles_are_refused():
    with pytest.raises(dpsql.InterfaceError, match="role="):
        dpsql.connect(role="admin")


def test_the_owner_keeps_every_tool():
    con = dpsql.connect(seed=3, budget=dpsql.Budget(epsilon=10))
    con.register("t", pa.table({"pid": [1, 2, 3]}), privacy_unit="pid")
    assert con.role == "owner" and not con.sql("SELECT COUNT(*) FROM t").private
    assert con.evaluate("SELECT COUNT(*) FROM t", runs=2).runs == 2

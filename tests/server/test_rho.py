"""ρ-zCDP budgets through the server: charged as ρ, shown by SHOW dpsql.budget, shared by
an analyst's connections, kept across a restart."""

from __future__ import annotations

import psycopg
import pytest

from tests.server.conftest import start

QUERY = "SELECT COUNT(*) AS n FROM pums WHERE age > %s"


def budget(con) -> dict[str, float | None]:
    cur = con.execute("SHOW dpsql.budget")
    return dict(zip([d.name for d in cur.description], cur.fetchone(), strict=True))


def test_a_rho_budget_is_spent_as_rho_and_refuses_past_it(served):
    user = served.new_user(rho=0.5, delta=0.0)
    with served.connect(user) as one, served.connect(user) as two:
        for con in (one, two):
            con.execute("SET dpsql.epsilon = 0.5")       # a pure ε = 0.5 query: ρ = 0.125
        for i in range(4):
            (one, two)[i % 2].execute(QUERY, [20 + i])
        shown = budget(two)
        assert (shown["rho_total"], shown["rho_spent"], shown["rho_remaining"]) == (0.5, 0.5, 0)
        assert shown["epsilon_total"] is None and shown["epsilon_remaining"] is None
        assert shown["epsilon_spent"] == 2.0             # the ε's charged, for the record
        with pytest.raises(psycopg.errors.OperationalError) as refused:
            one.execute(QUERY, [70])
        assert refused.value.sqlstate == "53DP1" and "rho 0.125 > remaining 0" in str(
            refused.value)
        assert budget(one)["rho_spent"] == 0.5           # the refusal spent nothing
    assert [e.epsilon for e in served.audit(user)].count(0.5) == 4


def test_an_epsilon_budget_shows_no_rho(served):
    user = served.new_user(epsilon=2)
    with served.connect(user) as con:
        shown = budget(con)
    assert shown["epsilon_total"] == 2 and shown["rho_total"] is None


def test_rho_spend_survives_a_server_restart(tmp_path):
    first = start(tmp_path)
    try:
        user = first.new_user(rho=0.25, delta=0.0)
        with first.connect(user) as con:
            con.execute("SET dpsql.epsilon = 0.5")
            con.execute(QUERY, [30])
    finally:
        first.server.close()
    second = start(tmp_path)  # the same folder: the same ledger file
    try:
        with second.connect(user) as con:
            assert budget(con)["rho_spent"] == 0.125
            con.execute("SET dpsql.epsilon = 0.5")
            assert con.execute(QUERY, [30]).fetchone()  # the same question: replayed, free
            con.execute(QUERY, [31])
            assert budget(con)["rho_remaining"] == 0
            with pytest.raises(psycopg.errors.OperationalError):
                con.execute(QUERY, [32])
    finally:
        second.server.close()

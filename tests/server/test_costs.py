"""Every private answer of ``dpsql serve`` ends with a NOTICE: what it cost, what is left.

The NOTICE comes after the rows (the answer was computed and charged first) and says only
what the ledger holds, which the analyst knows: the charge and the budget left.
"""

from __future__ import annotations

import pytest

from dpsql.datasets import pums_path
from tests.server.test_clients import PSQL, psql

COUNT = "SELECT COUNT(*) AS n FROM pums"


@pytest.mark.skipif(PSQL is None, reason="psql is not installed (apt-get install "
                    "postgresql-client; .ci/run does)")
def test_psql_prints_the_cost_and_what_is_left_after_each_answer(served):
    """ε = 2: a query without ε spends a tenth of what is left (0.2, then 0.18); the same
    question with the same ε asked again is answered from the cache, free; a catalog
    listing says nothing."""
    user = served.new_user(epsilon=2)
    done = psql(served, user, COUNT, "SELECT AVG(age) AS a FROM pums",
                "SET dpsql.epsilon = 0.5", COUNT, COUNT, r"\dt")
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        "NOTICE:  cost ε=0.2, δ=0; budget left ε=1.8, δ=1e-06",
        "NOTICE:  cost ε=0.18, δ=0; budget left ε=1.62, δ=1e-06",
        "NOTICE:  cost ε=0.5, δ=0; budget left ε=1.12, δ=1e-06",
        "NOTICE:  cost ε=0, δ=0; budget left ε=1.12, δ=1e-06"]


def asked(served, user: str, *statements: str) -> tuple[list[str], list[list[tuple]]]:
    """The NOTICEs psycopg heard while ``user`` ran ``statements`` on one connection, and the
    rows of each statement that returns rows."""
    heard: list[str] = []
    answers = []
    with served.connect(user) as con:
        con.add_notice_handler(lambda notice: heard.append(notice.message_primary))
        for sql in statements:
            cursor = con.execute(sql)
            if cursor.description is not None:
                answers.append(cursor.fetchall())
    return heard, answers


def test_the_notice_follows_the_rows_and_matches_the_ledger(served):
    """psycopg hears the NOTICE once the rows are in; its cost is the audit's charge and
    what is left is SHOW dpsql.budget's, to the digit."""
    user = served.new_user(epsilon=3, delta=1e-5)
    heard, (rows, [budget]) = asked(served, user, "SET dpsql.epsilon = 0.7",
                                    "SET dpsql.delta = 1e-7",
                                    "SELECT sex, COUNT(*) AS n FROM pums GROUP BY sex",
                                    "SHOW dpsql.budget")
    assert len(rows) == 2
    assert heard[-1] == "cost ε=0.7, δ=0; budget left ε=2.3, δ=1e-05"  # after the cut note
    assert (budget[2], budget[5]) == (2.3, 1e-05)
    charged = [entry for entry in served.audit(user) if entry.epsilon > 0]
    assert [(entry.epsilon, entry.delta) for entry in charged] == [(0.7, 0.0)]


def test_a_rho_budget_shows_the_rho_left(served):
    [notice], _ = asked(served, served.new_user(rho=0.5), COUNT)
    assert notice.startswith("cost ε=0.31, δ=0; budget left ρ=0.45")  # ε²/2 = 0.04805


@pytest.fixture(scope="module")
def auto_served(tmp_path_factory):
    """The PUMS sample with ``income`` declared ``bounds="auto"``."""
    from tests.server.conftest import CATALOG, start

    folder = tmp_path_factory.mktemp("auto")
    catalog = folder / "catalog.toml"
    catalog.write_text(CATALOG.format(source=pums_path("PUMS_dup")).replace(
        "income = [0, 500000]", 'income = "auto"'))
    running = start(folder, catalog=catalog)
    yield running
    running.server.close()


def test_the_notice_counts_the_estimate_a_query_paid_for_first(auto_served):
    """The first AVG(income) pays a quarter of its ε = 1 for the bounds' estimate (a query
    of its own in the ledger, another text): the NOTICE says ε = 1, as does the audit."""
    user = auto_served.new_user(epsilon=3, delta=1e-5)
    heard, (_, [budget]) = asked(auto_served, user, "SET dpsql.epsilon = 1",
                                 "SET dpsql.delta = 1e-6", "SELECT AVG(income) AS a FROM pums",
                                 "SHOW dpsql.budget")
    delta = [entry.delta for entry in auto_served.audit(user) if entry.epsilon > 0]
    assert budget[2] == 2 and len(delta) == 1 and delta[0] > 0
    assert heard[-1] == f"cost ε=1, δ={delta[0]!r}; budget left ε=2, δ={budget[5]!r}"

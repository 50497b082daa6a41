"""The answer cache: repeating a question returns the stored answer at no cost."""

from __future__ import annotations

import pyarrow as pa
import pytest

import dpsql
from dpsql.datasets import pums_path

QUERY = "SELECT sex, COUNT(*) AS n, AVG(age) AS a FROM pums GROUP BY sex"


def connection(**options) -> dpsql.Connection:
    budget = options.pop("budget", dpsql.Budget(epsilon=2.0, delta=1e-6))
    con = dpsql.connect(budget=budget, **options)
    con.register("pums", str(pums_path("PUMS_dup")), privacy_unit="pid",
                 bounds={"age": (0, 100)}, public_keys={"sex": [0, 1]}, size=1000)
    return con


def test_repeated_query_returns_the_same_answer_for_free():
    con = connection()
    first = con.sql(QUERY, epsilon=0.5)
    again = con.sql(QUERY, epsilon=0.5)
    assert again.fetchall() == first.fetchall()
    assert again.ci(0.9).to_pylist() == first.ci(0.9).to_pylist()
    assert again.cost.epsilon == 0 and con.budget.spent.epsilon == 0.5


def test_different_parameters_are_different_questions():
    con = connection()
    con.sql(QUERY, epsilon=0.5)
    con.sql(QUERY, epsilon=0.25)
    assert con.budget.spent.epsilon == 0.75


@pytest.mark.parametrize("levels", [(None, 0.95), (0.95, None), (0.9, 0.95)])
def test_a_quantile_with_or_without_its_interval_is_another_question(levels):
    """The same bounded query and cost, other releases: the interval's ends are two more
    exponential mechanisms. The cache returned the first answer for the second question,
    whose interval it lacked (KeyError when shown)."""
    con = connection()
    sql = "SELECT sex, MEDIAN(age) AS m, COUNT(*) AS n FROM pums GROUP BY sex"
    for level in levels:
        result = con.sql(sql, epsilon=0.5, quantile_ci=level)
        repr(result)
        assert result.cost.epsilon == 0.5
        assert (result.ci(0.9).column("m_lower").null_count == 0) == (level is not None)
    assert con.budget.spent.epsilon == 1.0


@pytest.mark.parametrize("after", [
    "SELECT sex, COUNT(*) AS n FROM pums GROUP BY sex HAVING n > 500",
    "SELECT * FROM (SELECT sex, COUNT(*) AS n FROM pums GROUP BY sex) q WHERE n > 500",
    "SELECT sex, COUNT(*) AS n FROM pums GROUP BY sex ORDER BY n DESC LIMIT 1",
])
def test_other_post_processing_of_the_same_statistics_is_another_question(after):
    """The cached answer is the released table: replaying it for a query that filters or
    ranks the same statistics differently would answer the wrong question."""
    con = connection(budget=dpsql.Budget(epsilon=10, delta=1e-6))
    both = con.sql("SELECT sex, COUNT(*) AS n FROM pums GROUP BY sex", epsilon=5.0).fetchall()
    assert len(both) == 2 and min(n for _, n in both) < 500 < max(n for _, n in both)
    assert len(con.sql(after, epsilon=5.0).fetchall()) == 1


def test_cache_can_be_switched_off():
    con = connection(cache=False)
    answers = {tuple(con.sql(QUERY, epsilon=0.5).fetchall()) for _ in range(3)}
    assert len(answers) > 1 and con.budget.spent.epsilon == 1.5


def test_new_data_is_a_new_question(tmp_path):
    path = tmp_path / "t.parquet"
    pa.parquet.write_table(pa.table({"pid": [1, 2, 3]}), path)
    con = dpsql.connect(budget=dpsql.Budget(epsilon=2.0))
    con.register("t", str(path), privacy_unit="pid")
    con.sql("SELECT COUNT(*) FROM t", epsilon=0.5)
    pa.parquet.write_table(pa.table({"pid": [1, 2, 3, 4]}), path)
    con.register("t", str(path), privacy_unit="pid")
    con.sql("SELECT COUNT(*) FROM t", epsilon=0.5)
    assert con.budget.spent.epsilon == 1.0


def test_delta_not_well_below_one_over_n_warns():
    con = connection(budget=dpsql.Budget(epsilon=2.0, delta=0.01))
    with pytest.warns(dpsql.PrivacyWarning, match="1/n"):
        con.sql("SELECT educ, COUNT(*) FROM pums GROUP BY educ", epsilon=0.5, delta=1e-3)


def test_cached_quantile_answers_round_trip():
    con = connection()
    query = "SELECT sex, MEDIAN(age) AS m, COUNT(*) AS n FROM pums GROUP BY sex"
    first = con.sql(query, epsilon=0.5)
    assert con.sql(query, epsilon=0.5).fetchall() == first.fetchall()
    assert con.budget.spent.epsilon == 0.5

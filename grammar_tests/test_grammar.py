"""The SQL corpus: every case in grammar_tests/*.sql, run against one fixed catalog.

The case format and the helpers are in ``grammar_tests/cases.py``. Every ```sql block of
docs/sql.md must be a case.
"""

from __future__ import annotations

import re

import pytest

import dpsql
from grammar_tests.cases import (
    ACCEPTED,
    CASES,
    DOCS,
    REFUSED,
    WITH_RESULT,
    Case,
    bounded_rows,
    bounding,
    compile_case,
    generated_name_clashes,
    normalise,
    summarize,
)


def test_titles_are_unique() -> None:
    titles = [c.title for c in CASES]
    assert len(titles) == len(set(titles)), sorted(t for t in titles if titles.count(t) > 1)


@pytest.mark.parametrize("case", ACCEPTED, ids=[c.title for c in ACCEPTED])
def test_accepted(case: Case, con: dpsql.Connection) -> None:
    options = {"epsilon": case.epsilon, "delta": case.delta, "dialect": case.dialect}
    info = con.explain(case.sql, **options).to_dict()
    assert summarize(info) == case.expect["plan"]
    assert bounding(compile_case(con, case)) == case.expect["bounding"]
    result = con.sql(case.sql, **options)
    assert result.columns == [c["name"] for c in info["columns"]]
    assert all(len(row) == len(result.columns) for row in result.fetchall())


@pytest.mark.parametrize("case", WITH_RESULT, ids=[c.title for c in WITH_RESULT])
def test_bounded_result(case: Case, con: dpsql.Connection) -> None:
    assert bounded_rows(con, case) == case.expect["result"]


@pytest.mark.parametrize("case", REFUSED, ids=[c.title for c in REFUSED])
def test_refused(case: Case, con: dpsql.Connection) -> None:
    name, _, message = (part.strip() for part in case.expect["error"].partition(":"))
    spent = con.budget.spent
    with pytest.raises(getattr(dpsql, name)) as err:
        con.sql(case.sql, epsilon=case.epsilon, delta=case.delta, dialect=case.dialect)
    assert type(err.value).__name__ == name, err.value
    assert message in str(err.value)
    assert con.budget.spent == spent


def test_docs_examples_are_cases() -> None:
    corpus = {normalise(c.sql) for c in CASES}
    blocks = re.findall(r"```sql\n(.*?)```", DOCS.read_text(), flags=re.DOTALL)
    assert blocks, "docs/sql.md has no ```sql examples"
    missing = [b for b in map(normalise, blocks) if b not in corpus]
    assert not missing, f"docs/sql.md examples missing from grammar_tests/*.sql: {missing}"


@pytest.mark.parametrize("case", ACCEPTED, ids=[c.title for c in ACCEPTED])
def test_generated_names_are_unique(case: Case, con: dpsql.Connection) -> None:
    compiled = compile_case(con, case)
    for part in getattr(compiled, "parts", (compiled,)):  # each grouping set's own query
        assert generated_name_clashes(part.bounded_sql()) == []

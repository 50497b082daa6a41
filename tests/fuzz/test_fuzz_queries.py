"""Whole-query differential fuzzing on DuckDB: every accepted query keeps its plan's promise.

For a generated query (``tests.fuzz.queries``) and an adversarial database
(``tests.fuzz.tables``), dpsql either refuses the query before reading data (any
``dpsql.Error`` but ``InternalError``: fine) or plans and rewrites it, and then:

(i) **neighbours stay within the plan.** For every unit u, the bounded query on D and on
    D − u (same salt) differs per cell by at most the cell's sensitivity bound, per
    statistic by at most the plan's normalised L1/L2 over at most its number of cells, and
    over all cells by at most ``statistics_per_unit``; quantile histograms lose at most
    W_tot of weight in at most g groups, and never gain any (``tests.fuzz.harness``). This
    is the premise of every noise calibration: if it fails, the noise is too small for
    some person and the release is not differentially private.
(ii) **the bounded query never raises**, on D or on any D − u. An engine error on some
    data and not on other data is a yes/no answer about a person, for free; one on all
    data means dpsql accepted SQL it cannot run. Every statistic is also finite.

(iii) **a statement of several releases keeps each part's promise and the whole one.**
    Grouping sets and composed statements (``tests.fuzz.statements``) are checked part by
    part as in (i) and (ii); one unit changes at most the statement's
    ``statistics_per_unit`` cells over all parts, the parts' ε and δ add up to at most the
    charge, and the release (least squares of totals, the query around the parts) binds.

Planning must never raise anything but a ``dpsql.Error`` (``InternalError`` is a bug), and
the generator must mostly write queries dpsql accepts, or (i)–(iii) test little.

The default run is short and derandomized (the same examples in CI and locally), with a few
examples of grouping sets and of composed statements each; the ``slow`` run draws thousands
of fresh examples of all of them.
"""

from __future__ import annotations

import pytest
from hypothesis import event, given, seed, settings

import dpsql
from dpsql.backends import DuckDBBackend
from tests.fuzz.harness import FUZZ_SEED, LONG, SHORT, Engine, check_query
from tests.fuzz.queries import queries
from tests.fuzz.statements import composed, statements
from tests.fuzz.tables import databases, limits

ACCEPTED_SHARE = 0.4


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine(DuckDBBackend())


def _check(engine: Engine, db, declared, sql: str) -> None:
    event(check_query(engine, db, declared, sql))


@settings(SHORT, max_examples=110)
@given(db=databases(), declared=limits(), sql=queries())
def test_accepted_queries_keep_their_bounds_on_every_neighbour(engine, db, declared, sql):
    _check(engine, db, declared, sql)


@settings(SHORT, max_examples=20)
@given(db=databases(), declared=limits(), sql=queries(sets=True))
def test_grouping_sets_keep_their_bounds_on_every_neighbour(engine, db, declared, sql):
    _check(engine, db, declared, sql)


@settings(SHORT, max_examples=20)
@given(db=databases(), declared=limits(), sql=composed())
def test_several_releases_keep_their_bounds_on_every_neighbour(engine, db, declared, sql):
    _check(engine, db, declared, sql)


@pytest.mark.slow
@seed(FUZZ_SEED)
@settings(LONG)
@given(db=databases(), declared=limits(), sql=statements())
def test_accepted_queries_keep_their_bounds_on_every_neighbour_long(engine, db, declared,
                                                                    sql):
    _check(engine, db, declared, sql)


def test_most_generated_queries_are_accepted(engine):
    """Refusals are cheap to generate; the properties need accepted queries. (A crash while
    planning counts as not accepted here: the property tests report it.)"""
    outcomes = []

    @settings(SHORT, max_examples=300)
    @given(declared=limits(), sql=statements())
    def plan(declared, sql):
        try:
            outcomes.append(not isinstance(engine.plan(sql, declared), dpsql.Error))
        except Exception:
            outcomes.append(False)

    plan()
    assert sum(outcomes) / len(outcomes) > ACCEPTED_SHARE, f"{sum(outcomes)}/{len(outcomes)}"

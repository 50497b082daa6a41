"""The dpsql:// SQLAlchemy URL: a real engine over dpsql's PEP 249 interface."""

from __future__ import annotations

import pytest

sa = pytest.importorskip("sqlalchemy")

import pyarrow as pa  # noqa: E402

import dpsql  # noqa: E402
from dpsql.datasets import pums_path  # noqa: E402
from dpsql.frontends.sqlalchemy import DpsqlDialect  # noqa: E402

GROUPED = "SELECT sex, COUNT(*) AS n FROM pums GROUP BY sex ORDER BY sex"


@pytest.fixture
def catalog(tmp_path):
    path = tmp_path / "catalog.toml"
    path.write_text(f'[tables.pums]\nsource = "{pums_path("PUMS_dup")}"\n'
                    'privacy_unit = "pid"\npublic_keys = { sex = [0, 1] }\n'
                    'bounds = { age = [0, 100] }\n')
    return path


def url(catalog, **options) -> str:
    query = "&".join(f"{k}={v}" for k, v in {"catalog": catalog, **options}.items())
    return f"dpsql:///:memory:?{query}"


def dpsql_connection(connection) -> dpsql.Connection:
    return connection.connection.driver_connection


def test_the_entry_point_finds_the_dialect():
    engine = sa.create_engine("dpsql://")
    assert isinstance(engine.dialect, DpsqlDialect)
    assert engine.dialect.loaded_dbapi is dpsql


def test_text_queries_return_the_noisy_release(catalog):
    engine = sa.create_engine(url(catalog, budget_epsilon=3, epsilon=0.5, seed=11))
    with engine.connect() as connection:
        result = connection.execute(sa.text(GROUPED))
        assert list(result.keys()) == ["sex", "n"]
        rows = result.all()
        assert dpsql_connection(connection).budget.remaining.epsilon == 2.5
    expected = dpsql.connect(catalog=catalog, seed=11).sql(GROUPED, epsilon=0.5).fetchall()
    assert [tuple(row) for row in rows] == expected


def test_every_connection_of_an_engine_spends_from_one_budget(catalog):
    engine = sa.create_engine(url(catalog, budget_epsilon=1, epsilon=0.5))
    for age in (30, 40):  # different queries: a repeated one is answered free from the cache
        with engine.connect() as connection:
            connection.execute(sa.text(f"SELECT COUNT(*) AS n FROM pums WHERE age > {age}"))
    with engine.connect() as connection, pytest.raises(sa.exc.DatabaseError) as error:
        connection.execute(sa.text("SELECT COUNT(*) AS n FROM pums WHERE age > 50"))
    assert isinstance(error.value.orig, dpsql.BudgetExceededError)


def test_a_ledger_keeps_the_budget_across_engines(catalog, tmp_path):
    ledger = tmp_path / "ledger.db"
    for age in (30, 40):
        engine = sa.create_engine(url(catalog, ledger=ledger, budget_epsilon=1, epsilon=0.5))
        with engine.connect() as connection:
            connection.execute(sa.text(f"SELECT COUNT(*) AS n FROM pums WHERE age > {age}"))
        engine.dispose()
    engine = sa.create_engine(url(catalog, ledger=ledger, epsilon=0.5))
    with engine.connect() as connection:
        assert dpsql_connection(connection).budget.remaining.epsilon == 0
        with pytest.raises(sa.exc.DatabaseError, match="BudgetExceededError"):
            connection.execute(sa.text("SELECT COUNT(*) AS n FROM pums WHERE age > 50"))
    engine.dispose()


def test_named_parameters_are_bound_as_literals():
    people = pa.table({"pid": list(range(100)), "name": ["x"] * 50 + ["y"] * 50})
    engine = sa.create_engine("dpsql://?budget_epsilon=3&epsilon=0.5&seed=1")
    query = "SELECT COUNT(*) AS n FROM people WHERE name = :name OR pid < :pid"
    with engine.connect() as connection:
        dpsql_connection(connection).register("people", people, privacy_unit="pid")
        [(n,)] = connection.execute(sa.text(query), {"name": "y' OR '1'='1", "pid": 10}).all()
    con = dpsql.connect(seed=1)
    con.register("people", people, privacy_unit="pid")
    literal = "SELECT COUNT(*) AS n FROM people WHERE name = 'y'' OR ''1''=''1' OR pid < 10"
    assert [(n,)] == con.sql(literal, epsilon=0.5).fetchall()
    assert n < 50  # about 10: the quote did not turn the condition into "always true"


def test_refused_queries_raise_the_pep_249_error_and_spend_nothing(catalog):
    engine = sa.create_engine(url(catalog, budget_epsilon=3), pool_pre_ping=True)
    with engine.connect() as connection:
        with pytest.raises(sa.exc.NotSupportedError) as error:
            connection.execute(sa.text("SELECT pid FROM pums"))
        assert isinstance(error.value.orig, dpsql.UnsupportedQueryError)
        assert "COUNT(DISTINCT pid)" in str(error.value)
    with engine.connect() as connection:  # pre-ping and rollback on return work
        assert dpsql_connection(connection).budget.remaining.epsilon == 3


def test_tables_are_listed_and_core_selects_compile(catalog):
    engine = sa.create_engine(url(catalog, budget_epsilon=3, epsilon=0.5, seed=2))
    inspector = sa.inspect(engine)
    assert inspector.get_table_names() == ["pums"]
    assert inspector.get_schema_names() == [inspector.default_schema_name] == ["main"]
    assert inspector.get_table_names(schema="main") == ["pums"]
    with engine.connect() as connection:
        query = sa.select(sa.func.count().label("n")).select_from(sa.table("pums"))
        rows = connection.execute(query).all()
    expected = dpsql.connect(catalog=catalog, seed=2).sql(
        "SELECT count(*) AS n FROM pums", epsilon=0.5).fetchall()
    assert [tuple(row) for row in rows] == expected


def test_tables_can_be_registered_on_the_dpsql_connection():
    engine = sa.create_engine("dpsql://?budget_epsilon=2&epsilon=1")
    with engine.connect() as connection:
        dpsql_connection(connection).read_csv(pums_path("PUMS_dup"), name="people",
                                              privacy_unit="pid")
        assert connection.execute(sa.text("SELECT COUNT(*) AS n FROM people")).scalar() > 0
        assert dpsql_connection(connection).budget.remaining.epsilon == 1


@pytest.mark.parametrize(("address", "options"), [
    ("dpsql://", ([":memory:"], {"budget": dpsql.Budget(epsilon=1.0, delta=1e-6)})),
    ("dpsql:///clinic.duckdb?ledger=l.db&analyst=ann",
     (["clinic.duckdb"], {"ledger": "l.db", "analyst": "ann"})),
    ("dpsql:////data/clinic.duckdb?budget_delta=1e-8&delta=1e-9",
     (["/data/clinic.duckdb"], {"budget": dpsql.Budget(epsilon=1.0, delta=1e-8),
                                "default_delta": 1e-9})),
    ("dpsql:///:memory:?budget_rho=0.5", ([":memory:"], {"budget": dpsql.Budget(rho=0.5,
                                                                            delta=1e-6)})),
])
def test_url_forms(address, options):
    assert DpsqlDialect().create_connect_args(sa.make_url(address)) == options


@pytest.mark.parametrize(("address", "message"), [
    ("dpsql://host/db", "there is no server"),
    ("dpsql:///catalog.toml", r"\?catalog=catalog.toml"),
    ("dpsql:///:memory:?budget=3", "unknown dpsql URL parameter.*budget; known: catalog"),
    ("dpsql:///:memory:?epsilon=lots", "epsilon='lots' is not a number"),
    ("dpsql:///:memory:?seed=1.5", "seed='1.5' is not an integer"),
    ("dpsql:///:memory:?epsilon=1&epsilon=2", "epsilon is given 2 times"),
])
def test_bad_urls_are_refused_with_the_fix(address, message):
    with pytest.raises(sa.exc.ArgumentError, match=message):
        DpsqlDialect().create_connect_args(sa.make_url(address))


def test_columns_are_reflected_from_the_catalog_and_reading_rows_is_refused(catalog):
    """``inspect().get_columns`` and ``Table(autoload_with=...)`` read the catalog's public
    metadata; ``pd.read_sql_table`` then asks for every row, which is refused, for free."""
    pd = pytest.importorskip("pandas")
    engine = sa.create_engine(url(catalog, budget_epsilon=3))
    inspector = sa.inspect(engine)
    columns = {c["name"]: c for c in inspector.get_columns("pums")}
    assert list(columns) == ["age", "sex", "educ", "race", "income", "married", "pid"]
    assert isinstance(columns["age"]["type"], sa.BIGINT)
    assert (columns["pid"]["comment"], columns["age"]["comment"], columns["sex"]["comment"]) \
        == ("privacy unit", "bounds [0, 100]", "public key")
    assert inspector.has_table("pums") and not inspector.has_table("nope")
    with pytest.raises(sa.exc.NoSuchTableError):
        inspector.get_columns("nope")
    assert sa.Table("pums", sa.MetaData(), autoload_with=engine).c.keys() == list(columns)
    with pytest.raises(Exception, match="Only GROUP BY columns may appear outside aggregates"):
        pd.read_sql_table("pums", engine)
    with engine.connect() as connection:
        assert dpsql_connection(connection).budget.spent.epsilon == 0

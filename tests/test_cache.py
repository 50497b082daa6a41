"""The answer cache: repeating a question returns the stored answer at no cost."""

from __future__ import annotations

import dataclasses
import math
import os
import re
import subprocess
import sys
import time
import warnings
from collections.abc import Mapping
from fractions import Fraction

import pyarrow as pa
import pytest
from sqlglot import exp

import dpsql
from dpsql.cache import Registered, answer_key, fingerprint
from dpsql.compile import NOT_RELEASED
from dpsql.datasets import pums_path

QUERY = "SELECT sex, COUNT(*) AS n, AVG(age) AS a FROM pums GROUP BY sex"


def connection(**options) -> dpsql.Connection:
    budget = options.pop("budget", dpsql.Budget(epsilon=2.0, delta=1e-6))
    con = dpsql.connect(budget=budget, **options)
    con.register("pums", str(pums_path("PUMS_dup")), privacy_unit="pid",
                 bounds={"age": (0, 100)}, public_keys={"sex": [0, 1]}, size=1000)
    con.register("notes", pa.table({"pid": [1, 2], "note": ["a", "bb"]}), privacy_unit="pid",
                 max_text_length={"note": 80})
    return con


def test_repeated_query_returns_the_same_answer_for_free():
    con = connection()
    first = con.sql(QUERY, epsilon=0.5)
    again = con.sql(QUERY, epsilon=0.5)
    assert again.fetchall() == first.fetchall()
    assert again.ci(0.9).to_pylist() == first.ci(0.9).to_pylist()
    assert again.cost.epsilon == 0 and con.budget.spent.epsilon == 0.5


def test_a_question_computes_its_answer_key_once(monkeypatch):
    """The key hashes the whole release plan as canonical JSON, the costliest step of an
    answer from the cache: the lookup, the per-question lock and the stored answer share
    one computation."""
    import dpsql.connection

    keys = []
    monkeypatch.setattr(dpsql.connection, "answer_key",
                        lambda **parts: keys.append(answer_key(**parts)) or keys[-1])
    con = connection()
    con.sql(QUERY, epsilon=0.5)
    con.sql(QUERY, epsilon=0.5)
    assert len(keys) == 2 and keys[0] == keys[1]


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


def test_an_object_registered_again_is_a_new_question():
    """Another object under the same name is asked afresh, while the same registration is
    answered from the cache."""
    con = dpsql.connect(budget=dpsql.Budget(epsilon=4.0))
    for pids in ([1, 2, 3], [1, 2, 3, 4]):
        con.register("t", pa.table({"pid": pids}), privacy_unit="pid")
        con.sql("SELECT COUNT(*) FROM t", epsilon=0.5)
        con.sql("SELECT COUNT(*) FROM t", epsilon=0.5)
    assert con.budget.spent.epsilon == 1.0


def test_objects_are_fingerprinted_by_registration_not_address():
    """An address is reused once its object is freed, and means other data in another
    process sharing the ledger: a registration draws its own token."""
    first, second = Registered(), Registered()
    assert fingerprint(first) == fingerprint(first) != fingerprint(second)


def parts(folder, *sizes: int) -> None:
    """Parquet parts ``part-0.parquet``, ... of ``sizes[i]`` people each (ids never shared)."""
    for i, size in enumerate(sizes):
        ids = range(1000 * i, 1000 * i + size)
        pa.parquet.write_table(pa.table({"pid": ids}), folder / f"part-{i}.parquet")


def test_files_added_behind_a_glob_or_rewritten_make_a_new_question(tmp_path):
    """A glob is read anew by every query (DuckDB's view), so its answer depends on the files
    it matches when asked: adding, rewriting or removing one is new data, charged again; an
    unchanged glob is the same question, answered from the cache."""
    parts(tmp_path, 300, 300)
    con = dpsql.connect(budget=dpsql.Budget(epsilon=10.0))
    con.register("t", str(tmp_path / "part-*.parquet"), privacy_unit="pid")
    count = "SELECT COUNT(*) AS n FROM t"
    first = con.sql(count, epsilon=1.0).fetchall()
    assert con.sql(count, epsilon=1.0).fetchall() == first
    assert con.budget.spent.epsilon == 1.0
    parts(tmp_path, 300, 300, 300)
    added = con.sql(count, epsilon=1.0).fetchall()
    assert con.budget.spent.epsilon == 2.0 and abs(added[0][0] - 900) < 100
    parts(tmp_path, 300, 200, 300)
    con.sql(count, epsilon=1.0)
    (tmp_path / "part-2.parquet").unlink()
    con.sql(count, epsilon=1.0)
    assert con.budget.spent.epsilon == 4.0
    assert con.sql(count, epsilon=1.0).cost.epsilon == 0 and con.budget.spent.epsilon == 4.0


def test_a_file_rewritten_under_its_registered_name_is_a_new_question(tmp_path):
    """A Parquet file is read when asked, not when registered: its fingerprint is too."""
    parts(tmp_path, 300)
    con = dpsql.connect(budget=dpsql.Budget(epsilon=10.0))
    con.register("t", str(tmp_path / "part-0.parquet"), privacy_unit="pid")
    con.sql("SELECT COUNT(*) FROM t", epsilon=1.0)
    parts(tmp_path, 900)
    assert abs(con.sql("SELECT COUNT(*) FROM t", epsilon=1.0).fetchall()[0][0] - 900) < 100
    assert con.budget.spent.epsilon == 2.0


def test_a_fingerprint_follows_the_files_of_a_glob_or_folder(tmp_path):
    """Hidden files count (DuckDB's globs match them), and so do files in sub-folders of a
    folder source (Spark reads a folder's files)."""
    (tmp_path / "sub").mkdir()
    parts(tmp_path, 10, 10)
    glob, folder = str(tmp_path / "*.parquet"), tmp_path
    before = fingerprint(glob), fingerprint(folder)
    assert (fingerprint(glob), fingerprint(str(folder))) == before
    pa.parquet.write_table(pa.table({"pid": [1]}), tmp_path / ".hidden.parquet")
    assert fingerprint(glob) != before[0]
    pa.parquet.write_table(pa.table({"pid": [1]}), tmp_path / "sub" / "x.parquet")
    assert fingerprint(folder) not in before
    assert fingerprint(str(tmp_path / "none-*.parquet")) != fingerprint(glob)


def test_a_fingerprint_reads_no_file_and_is_cheap_for_many(tmp_path):
    """File metadata only: 2,000 sparse files of 1 GiB each would take minutes to read and
    take a few milliseconds to stat."""
    for i in range(2000):
        with open(tmp_path / f"part-{i:04}.parquet", "wb") as handle:
            handle.truncate(2**30)
    started = time.perf_counter()
    fingerprint(str(tmp_path / "part-*.parquet"))
    fingerprint(tmp_path)
    assert time.perf_counter() - started < 2.0


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


# --- the key: everything that is released ----------------------------------------------------

RELEASES = [  # together they reach every dataclass a compiled query holds
    ("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 1e-6, "
     "min_privacy_units_per_group = 3) educ, COUNT(*) AS n, AVG(age) AS a, MEDIAN(age) AS m "
     "FROM pums WHERE age > 20 GROUP BY educ HAVING n > 3 ORDER BY n", 0.9),
    ("SELECT sex, SUM(income, contribution_bounds_per_group => (0, 5000)) AS s FROM pums "
     "GROUP BY sex", None),
    ("SELECT educ, SUM(age) AS s FROM pums GROUP BY educ", None),
    ("SELECT COUNT(*) AS n FROM notes WHERE lower(note) LIKE '%a%'", None),
]


def field_paths(value, path=()):
    """(path, dataclass, field, value) of every field of every dataclass reachable from ``value``
    through fields and tuples: found by ``dataclasses.fields``, never listed by hand (not
    into a field the digest leaves out)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            child = getattr(value, f.name)
            yield (*path, f.name), type(value), f.name, child
            if (type(value).__qualname__, f.name) not in NOT_RELEASED:
                yield from field_paths(child, (*path, f.name))
    elif isinstance(value, tuple | list):
        for i, child in enumerate(value):
            yield from field_paths(child, (*path, i))


def replaced(value, path, new):
    """``value`` with the field at ``path`` set to ``new``, built field by field without
    ``__post_init__`` (which refuses most changes) or any cached property."""
    if not path:
        return new
    step, rest = path[0], path[1:]
    if isinstance(step, int):
        items = list(value)
        items[step] = replaced(items[step], rest, new)
        return type(value)(items)
    clone = object.__new__(type(value))
    for f in dataclasses.fields(value):
        object.__setattr__(clone, f.name, getattr(value, f.name))
    object.__setattr__(clone, step, replaced(getattr(value, step), rest, new))
    return clone


def changed(value):
    """The smallest change of ``value`` that keeps its kind (a float by one ulp)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, float):
        return math.nextafter(value, math.inf) if math.isfinite(value) else 0.0
    if isinstance(value, int | Fraction):
        return value + 1
    if isinstance(value, str):
        return value + "'"
    if isinstance(value, tuple):
        return value[:-1] if value else (1,)
    if isinstance(value, Mapping):
        return {**value, "__changed": 1}
    if isinstance(value, exp.Expr):
        return exp.Not(this=value.copy())
    return 1 if value is None else None  # a dataclass: gone (its fields change one by one)


def dataclasses_named(annotation, module) -> set[type]:
    """The dataclasses an annotation (a string, as under ``from __future__ import
    annotations``) names, resolved in ``module``."""
    names = re.findall(r"[A-Za-z_][A-Za-z_0-9]*", annotation)
    found = (getattr(module, n, None) for n in names)
    return {c for c in found if isinstance(c, type) and dataclasses.is_dataclass(c)}


def test_every_field_of_the_release_plan_changes_the_key():
    """The cache key is derived from every field of the compiled query, so a new release
    option cannot be forgotten: changing any field anywhere (a float by one ulp) is another
    question. Only the analyst's text is left out (``NOT_RELEASED``), and changing it is
    not. The key used to hash a hand-picked list: ``min_privacy_units_per_group``, the
    selection's method and δ, the quantiles' ε and the bounds of a HAVING were missing."""
    con = connection()
    classes, kept = set(), set()
    for sql, level in RELEASES:
        compiled = con.compile(sql, quantile_ci=level)
        key = answer_key(analyst="a", compiled=compiled, sources="s")
        assert answer_key(analyst="b", compiled=compiled, sources="s") != key
        assert answer_key(analyst="a", compiled=compiled, sources="t") != key
        for path, owner, name, value in field_paths(compiled):
            other = replaced(compiled, path, changed(value))
            same = answer_key(analyst="a", compiled=other, sources="s") == key
            assert same == ((owner.__qualname__, name) in NOT_RELEASED), (path, value)
            classes.add(owner)
            if same:
                kept.add((owner.__qualname__, name))
    assert kept == set(NOT_RELEASED)
    named = {c for cls in classes for f in dataclasses.fields(cls)
             if (cls.__qualname__, f.name) not in NOT_RELEASED
             for c in dataclasses_named(str(f.type), sys.modules[cls.__module__])}
    assert named <= classes, f"no query of RELEASES holds a {named - classes}: add one"


def test_min_privacy_units_per_group_is_another_question():
    """Issue 35, point 5: asked with m = 1, then with m = 200, the second answer came from
    the cache — the first's 30 groups of 100 people, for ε = 0."""
    con = dpsql.connect(budget=dpsql.Budget(epsilon=10, delta=1e-4))
    con.register("t", pa.table({"pid": range(3000), "k": [f"g{i % 30}" for i in range(3000)]}),
                 privacy_unit="pid")

    def ask(m: int):
        return con.sql("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 1e-6, "
                       f"min_privacy_units_per_group = {m}) k, COUNT(*) AS n FROM t GROUP BY k")

    assert len(ask(1).fetchall()) == 30
    strict = ask(200)
    assert strict.fetchall() == [] and strict.cost.epsilon == 1.0
    assert con.budget.spent.epsilon == 2.0
    assert ask(200).cost.epsilon == 0 and con.budget.spent.epsilon == 2.0


def test_every_accepted_query_of_the_corpus_has_a_key():
    """The canonical form writes every value a plan holds (public key values, bounds,
    trees) or fails loudly; no accepted query of grammar_tests/ may fail."""
    from grammar_tests.cases import ACCEPTED, compile_case
    from grammar_tests.catalog import connect

    con = connect()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpsql.PrivacyWarning)
        digests = {compile_case(con, case).release_digest for case in ACCEPTED}
    assert len(digests) > 0.9 * len(ACCEPTED)


KEY_IN_A_PROCESS = """
import dpsql
from dpsql.datasets import pums_path
con = dpsql.connect()
con.register("pums", str(pums_path("PUMS_dup")), privacy_unit="pid", bounds={"age": (0, 100)},
             public_keys={"sex": [0, 1]})
print(con._answer_key(con.compile(%r, quantile_ci=0.9)))
"""


def test_the_key_is_the_same_in_every_process():
    """Processes sharing a ledger share its answers: the key must not depend on hash
    seeds, object addresses or anything else of one process."""
    sql = RELEASES[0][0]
    keys = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-c", KEY_IN_A_PROCESS % sql], env=env,
                              capture_output=True, text=True, timeout=300, check=True)
        keys.add(done.stdout.strip())
    assert len(keys) == 1 and len(keys.pop()) == 64

"""Totals that add up: least squares over the grouping sets of public keys (docs/mechanisms.md
§14, ``dpsql.consistency``).

The closed form is checked against a dense weighted least-squares fit; end to end, the
released cells add up, have a lower error than each set answered on its own over repeated
runs, and their intervals (from the fitted variance) cover the true values — in both designs
(``design``): every set measured and fitted, or only the finest set measured and summed.
"""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa
import pytest

import dpsql
import dpsql.grouping as grouping_module
from dpsql.consistency import Level, least_squares
from dpsql.errors import UnsupportedQueryError
from dpsql.estimators import AVG_COUNT_FLOOR

SIZES = {"a": 3, "b": 2, "c": 4}


def dense_fit(levels: list[Level]) -> tuple[list[np.ndarray], list[float]]:
    """The textbook estimate: x̂ = (AᵀWA)⁺AᵀWy over the full table, each cell a_iᵀx̂ with
    variance a_iᵀ(AᵀWA)⁺a_i."""
    order = list(SIZES)
    cells = list(itertools.product(*(range(SIZES[k]) for k in order)))
    rows, ys, weights, spans = [], [], [], []
    for level in levels:
        start = len(rows)
        for index in itertools.product(*(range(SIZES[k]) for k in level.keys)):
            at = dict(zip(level.keys, index, strict=True))
            rows.append([all(c[order.index(k)] == at[k] for k in level.keys) for c in cells])
            ys.append(level.values[index])
            weights.append(1 / level.variance)
        spans.append((start, len(rows)))
    a, y, w = np.array(rows, dtype=float), np.array(ys), np.array(weights)
    inverse = np.linalg.pinv(a.T @ (w[:, None] * a))
    fitted = a @ inverse @ a.T @ (w * y)
    variances = np.einsum("ij,jk,ik->i", a, inverse, a)
    return ([fitted[s:e] for s, e in spans], [variances[s] for s, _ in spans])


@pytest.mark.parametrize("sets", [
    [("a", "b", "c"), ("a", "b"), ("a",), ()],                       # ROLLUP
    [s for n in range(3, -1, -1) for s in itertools.combinations("abc", n)],  # CUBE
    [("a",), ("b",), ("c", "a")],                                    # no set holds every key
    [("b", "a"), ("a",)],                                            # keys in another order
])
def test_the_closed_form_is_weighted_least_squares(sets) -> None:
    rng = np.random.default_rng(7)
    levels = [Level(tuple(s), rng.normal(50, 10, [SIZES[k] for k in s]), float(v))
              for s, v in zip(sets, rng.uniform(0.5, 4, len(sets)), strict=False)]
    values, variances = dense_fit(levels)
    for (fitted, variance), dense, dense_variance, level in zip(
            least_squares(levels, SIZES), values, variances, levels, strict=True):
        assert fitted.shape == level.values.shape
        assert np.allclose(fitted.reshape(-1), dense) and variance == pytest.approx(dense_variance)
        assert variance <= level.variance * (1 + 1e-12)  # never worse than the set alone


def test_noise_without_a_variance_is_an_exact_measurement() -> None:
    """At a huge ε the discrete noise's std is 0 as a float: such a level is exact, and the
    others are fitted to it (a division by zero here failed every such release)."""
    exact = Level(("a",), np.array([1.0, 2.0, 3.0]), 0.0)
    noisy = Level((), np.array(9.0), 4.0)
    (cells, _), (total, v_total) = least_squares([exact, noisy], {"a": 3})
    assert np.allclose(cells, [1, 2, 3]) and total == pytest.approx(6) and v_total < 1e-9
    both = least_squares([exact, Level((), np.array(6.0), 0.0)], {"a": 3})
    assert [v for _, v in both] == [0.0, 0.0]


A = ["x", "y", "z"]
B = ["p", "q"]
ROLLUP = ("SELECT {clause} a, b, COUNT(v) AS n, SUM(v) AS s, AVG(v) AS m FROM t "
          "GROUP BY ROLLUP (a, b)")


def people(n: int = 600) -> pa.Table:
    """One row per person (so every set bounds the same rows and the levels measure
    quantities that add up), keys skewed so that cells differ."""
    rng = np.random.default_rng(3)
    return pa.table({"pid": np.arange(n), "a": rng.choice(A, n, p=[0.6, 0.3, 0.1]),
                     "b": rng.choice(B, n), "v": rng.integers(0, 11, n)})


@pytest.fixture
def con() -> dpsql.Connection:
    """A fresh connection per test: its plan cache must not carry one design into the next."""
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1e9, delta=0.5))
    con.register("t", people(), privacy_unit="pid", bounds={"v": (0, 10)},
                 public_keys={"a": A, "b": B})
    return con


@pytest.fixture(params=["fitted", "summed"])
def design(request, monkeypatch, con) -> str:
    """Least squares over every set measured at its share, or the finest set measured alone
    and summed (what dpsql chooses for this 3 × 2 ROLLUP, ``consistency.derives_better``)."""
    if request.param == "fitted":
        monkeypatch.setattr(grouping_module, "derives_better", lambda plans, whole: False)
    summed = con.compile(ROLLUP.format(clause=""), epsilon=0.5).finest is not None
    assert summed == (request.param == "summed")
    return request.param


def levels_of(result: dpsql.Result) -> dict[tuple, tuple[float, float, float]]:
    return {(a, b): (n, s, m) for a, b, n, s, m in result.fetchall()}


def truth() -> dict[tuple, tuple[float, float]]:
    frame = people().to_pandas()
    out = {(a, b): (len(g), g.v.sum()) for (a, b), g in frame.groupby(["a", "b"])}
    out |= {(a, None): (len(g), g.v.sum()) for a, g in frame.groupby("a")}
    return out | {(None, None): (len(frame), frame.v.sum())}


def test_cells_add_up_and_avg_is_sum_over_count(con, design) -> None:
    cells = levels_of(con.sql(ROLLUP.format(clause=""), epsilon=0.5, seed=11))
    for column in (0, 1):
        for a in A:
            assert sum(cells[a, b][column] for b in B) == pytest.approx(
                cells[a, None][column], rel=1e-12, abs=1e-9)
        assert sum(cells[a, None][column] for a in A) == pytest.approx(
            cells[None, None][column], rel=1e-12, abs=1e-9)
    for n, s, m in cells.values():
        if n >= AVG_COUNT_FLOOR:  # below it AVG divides by the floor (a cell of few rows)
            assert m == pytest.approx(min(max(s / n, 0), 10))


def test_the_option_turns_it_off(con, design) -> None:
    off = "WITH DIFFERENTIAL_PRIVACY OPTIONS (consistent_totals = FALSE)"
    on = "WITH DIFFERENTIAL_PRIVACY OPTIONS (consistent_totals = TRUE)"
    plain = levels_of(con.sql(ROLLUP.format(clause=off), epsilon=0.5, seed=11))
    assert all(float(n).is_integer() for n, _, _ in plain.values())  # each set's own answer
    assert sum(plain[a, None][0] for a in A) != plain[None, None][0]
    assert levels_of(con.sql(ROLLUP.format(clause=on), epsilon=0.5, seed=11)) == \
        levels_of(con.sql(ROLLUP.format(clause=""), epsilon=0.5, seed=11))
    assert not con.compile(ROLLUP.format(clause=off), epsilon=0.5).consistent_totals
    assert con.explain(ROLLUP.format(clause=off), epsilon=0.5).to_dict()[
        "consistent_totals"] == []
    shown = con.explain(ROLLUP.format(clause=""), epsilon=0.5)
    assert shown.to_dict()["consistent_totals"] == ["(a, b)", "(a)", "()"]
    how = "fitted" if design == "fitted" else "summed from (a, b)"
    assert f"{how} to add up: (a, b), (a), ()" in str(shown)


@pytest.mark.parametrize(("sql", "message"), [
    ("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (consistent_totals = FALSE) a, COUNT(*) "
     "FROM t GROUP BY a", "option of ROLLUP, CUBE and GROUPING SETS"),
    ("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (consistent_totals = 1) a, COUNT(*) "
     "FROM t GROUP BY ROLLUP (a)", "TRUE or FALSE"),
])
def test_the_option_is_refused_where_it_means_nothing(con, sql: str, message: str) -> None:
    with pytest.raises(UnsupportedQueryError, match=message):
        con.compile(sql, epsilon=1)


def test_sets_of_private_keys_are_left_as_released() -> None:
    """CUBE (a, b) with b private: (a) and () are fitted together and add up; (a, b) and (b)
    are selected groups, released as each set's own noisy counts."""
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1e9, delta=0.5))
    con.register("t", people(), privacy_unit="pid", public_keys={"a": A})
    result = con.sql("SELECT a, b, COUNT(*) AS n FROM t GROUP BY CUBE (a, b)", epsilon=5,
                     delta=1e-6, seed=2)
    rows = result.fetchall()
    assert result.explain().to_dict()["consistent_totals"] == ["(a)", "()"]
    by_a = {a: n for a, b, n in rows if b is None}
    assert sum(by_a[a] for a in A) == pytest.approx(by_a[None], rel=1e-12)
    assert all(float(n).is_integer() for _, b, n in rows if b is not None)


RUNS = 60


def errors(con, clause: str) -> dict[str, np.ndarray]:
    """Root mean squared error per level (and per statistic) over RUNS seeds."""
    exact = truth()
    squared = {"(a, b)": [], "(a)": [], "()": []}
    for seed in range(RUNS):
        cells = levels_of(con.sql(ROLLUP.format(clause=clause), epsilon=0.5, seed=seed))
        for key, (n, s) in exact.items():
            level = "()" if key[0] is None else "(a)" if key[1] is None else "(a, b)"
            squared[level].append([(cells[key][0] - n) ** 2, (cells[key][1] - s) ** 2])
    return {level: np.sqrt(np.mean(values, axis=0)) for level, values in squared.items()}


@pytest.mark.slow
def test_the_fitted_cells_have_lower_error_than_each_set_alone(con, design) -> None:
    """Paired seeds: the same noise, fitted or not. The fit is the best linear unbiased
    estimate, so every level's RMSE, of COUNT and of SUM, drops: in theory to 0.79, 0.72
    and 0.82 of each set's own for (a, b), (a) and () (equal noise, 3 × 2 cells), so the
    mean squared error over the 10 cells to about 0.6 of it. Summed from (a, b) at the whole
    ε, to 1/3, 0.47 and 0.82 (a cell's std is √m/3 of its set's own at ε/3)."""
    alone = errors(con, "WITH DIFFERENTIAL_PRIVACY OPTIONS (consistent_totals = FALSE)")
    fitted = errors(con, "")
    for level in alone:
        assert np.all(fitted[level] < alone[level]), (level, fitted, alone)
    cells = {"(a, b)": 6, "(a)": 3, "()": 1}
    mse = {name: sum(n * errs[level] ** 2 for level, n in cells.items())
           for name, errs in (("alone", alone), ("fitted", fitted))}
    assert np.all(mse["fitted"] < 0.75 * mse["alone"]), mse


@pytest.mark.slow
def test_intervals_come_from_the_fitted_variance_and_cover(con, design) -> None:
    """The fitted cells' 90% intervals are narrower than each set's own and cover the true
    value at least as often as they claim (within three standard errors)."""
    exact = truth()
    covered, total, narrower = 0, 0, True
    for seed in range(RUNS):
        result = con.sql(ROLLUP.format(clause=""), epsilon=0.5, seed=seed)
        alone = con.sql(ROLLUP.format(
            clause="WITH DIFFERENTIAL_PRIVACY OPTIONS (consistent_totals = FALSE)"),
            epsilon=0.5, seed=seed)
        ci, ci_alone = result.ci(0.9).to_pylist(), alone.ci(0.9).to_pylist()
        for row, row_alone in zip(ci, ci_alone, strict=True):
            n, s = exact[row["a"], row["b"]]
            covered += int(row["n_lower"] <= n <= row["n_upper"]) + int(
                row["s_lower"] <= s <= row["s_upper"])
            total += 2
            narrower &= row["n_upper"] - row["n_lower"] < row_alone["n_upper"] - row_alone[
                "n_lower"] or row_alone["n_lower"] == 0
    assert narrower
    assert covered / total >= 0.9 - 3 * np.sqrt(0.9 * 0.1 / total)


def test_a_huge_epsilon_gives_the_exact_answer(con, design) -> None:
    exact = truth()
    cells = levels_of(con.sql(ROLLUP.format(clause=""), epsilon=1e6, seed=1))
    assert all(cells[key][:2] == pytest.approx(value) for key, value in exact.items())

"""Audits of CORR and REGR_SLOPE (Laplace noise on their sufficient statistics), each with a
negative control.

``CORR(y, x)`` and ``REGR_SLOPE(y, x)`` are post-processing of noisy sums (``dpsql.covariance``):
the count, the centred sums of x and y, of their squared deviations and of their products,
each bounded per unit and noised at its share of ε. D holds 200 one-row units with x and y
in [0, 10] and no correlation; the target adds 30 rows at x = y = 10⁶, which the rewrite must
clamp to (10, 10) and cut to ``max_rows_per_group`` = 3 rows. Each row then adds the largest
product, 5 · 5, to the sum of products, so the target pushes both aggregates up. Events
(``events.py``), on the released value v and its noise-free value on D (t_D) and on D' (t_D'):

- E: v ≥ t_D (likely on D), and F: v ≤ t_D' (likely on D').

The aggregates read every statistic, each moved by the target, so the loss they show is a
part of ε only (the sum of products carries about 40 % of the normalised L1): the honest
audits stay well below ε, and a control must err by much to be seen at all: here a
sensitivity pass that takes each statistic's per-cell bound a hundred times too small (a
bound in the wrong units): the target then moves every statistic by a hundred times its
calibrated bound, and the events must show a loss above ε. (A tenfold error moves CORR
by about 1.5 noise standard deviations: ε_lb ≈ 0.3–0.8 at 100 trials a side.)

Measured with these seeds (ε = 1 claimed; lower bounds at 99 % confidence, larger of E and F):

=====================  ===========  ==========================  ============
audit (trials a side)  honest ε_lb  negative control (trials)   control ε_lb
=====================  ===========  ==========================  ============
CORR (400)             0.000        bounds / 100 (150)          2.05
REGR_SLOPE (400)       0.000        bounds / 100 (150)          2.25
=====================  ===========  ==========================  ============

The honest events sit at the medians (P ≈ ½ on both sides), where a loss of a fraction of ε
cannot be told from none at this many trials; the controls reach P_D'(E) = 0/150. About
4.5 minutes on one loaded core.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pyarrow as pa
import pytest

import dpsql
import dpsql.analysis.sensitivity as sensitivity_module
from tests.privacy.events import TARGET, UNLIMITED, Events, run_audit

pytestmark = pytest.mark.slow

TRIALS = 400
CONTROL_TRIALS = 150
EPSILON = 1.0
C = 3
"""max_rows_per_group: the target's 30 rows are cut to these."""
HUGE = 1e6
RNG = np.random.default_rng(7)
XS, YS = RNG.uniform(0, 10, 200), RNG.uniform(0, 10, 200)


def table(with_target: bool) -> pa.Table:
    units, xs, ys = list(range(200)), list(XS), list(YS)
    if with_target:
        units += [TARGET] * 30
        xs += [HUGE] * 30
        ys += [HUGE] * 30
    return pa.table({"pid": units, "x": xs, "y": ys})


def connection(with_target: bool) -> dpsql.Connection:
    con = dpsql.connect(budget=UNLIMITED)
    con.register("t", table(with_target), privacy_unit="pid", bounds={"x": (0, 10), "y": (0, 10)},
                 max_rows_per_group=C)
    return con


def truth(kind: str, with_target: bool) -> float:
    """The noise-free value on the bounded data: the target as its 3 kept rows at (10, 10)."""
    xs = np.concatenate([XS, [10.0] * C if with_target else []])
    ys = np.concatenate([YS, [10.0] * C if with_target else []])
    if kind == "CORR":
        return float(np.corrcoef(xs, ys)[0, 1])
    return float(np.cov(xs, ys, bias=True)[0, 1] / np.var(xs))


def events(kind: str) -> Events:
    on_d, on_neighbour = truth(kind, True), truth(kind, False)
    return {f"E: {kind} >= {on_d:.4f} (D)": lambda rows: (rows[0][0] or -np.inf) >= on_d,
            f"F: {kind} <= {on_neighbour:.4f} (D')":
                lambda rows: (rows[0][0] or np.inf) <= on_neighbour}


def undercount_the_bounds(monkeypatch) -> None:
    """The bug of the controls: each statistic's per-cell bound a hundredth of the truth (at
    least one for a count)."""
    honest = sensitivity_module.sensitivity_of

    def undercounted(spec, limits):
        true = honest(spec, limits)
        return replace(true, bound=max(1, true.bound // 100) if true.integer else true.bound / 100)

    monkeypatch.setattr(sensitivity_module, "sensitivity_of", undercounted)


@pytest.mark.parametrize("kind", ["CORR", "REGR_SLOPE"])
def test_a_pair_aggregate_keeps_its_epsilon(kind):
    query = f"SELECT {kind}(y, x) AS v FROM t"
    assert run_audit(connection, query, events(kind), TRIALS) <= EPSILON


@pytest.mark.parametrize("kind", ["CORR", "REGR_SLOPE"])
def test_negative_control_a_pair_aggregate_with_undercounted_bounds_is_flagged(monkeypatch,
                                                                              kind):
    undercount_the_bounds(monkeypatch)
    query = f"SELECT {kind}(y, x) AS v FROM t"
    assert run_audit(connection, query, events(kind), CONTROL_TRIALS) > EPSILON

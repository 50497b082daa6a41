"""Speed of dpsql against the reference libraries (run on purpose, not by pytest):

    .venv/bin/python -m tests.reference.bench_reference

Prints the median of 3 runs of (1) 1,000,000 draws of discrete Laplace and discrete Gaussian
noise, from dpsql's samplers (OS randomness) and OpenDP's (a vector of zeros through
make_laplace / make_gaussian on integers), and (2) the ε at δ = 1e-6 of a 1,000-query history
(distinct noise multipliers, as real queries have), by dpsql's report and by dp-accounting:
PLD (dp-accounting's discrete-Gaussian PLD, one cell per query) and RDP.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import numpy as np

from dpsql.accounting.composition import approx, gaussian, laplace
from dpsql.accounting.report import build_report
from dpsql.mechanisms import Sampler
from tests.reference.references import (
    dp_accounting,
    opendp,
    reference_pld,
    reference_zcdp_epsilon,
)

DRAWS = 1_000_000
QUERIES = 1_000
DELTA = 1e-6


def median_time(work: Callable[[], object], repeats: int = 3) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def samplers() -> None:
    dp = opendp()
    zeros = np.zeros(DRAWS, dtype=np.int64)
    domain = dp.vector_domain(dp.atom_domain(T=dp.i64))
    for scale in (2.5, 1000.0):
        lap = dp.m.make_laplace(domain, dp.l1_distance(T=dp.i64), scale=scale)
        gau = dp.m.make_gaussian(domain, dp.l2_distance(T=float), scale=scale)
        for name, ours, theirs in [
            ("discrete laplace", lambda s=scale: Sampler().discrete_laplace(s, DRAWS),
             lambda m=lap: m(zeros)),
            ("discrete gaussian", lambda s=scale: Sampler().discrete_gaussian(s, DRAWS),
             lambda m=gau: m(zeros)),
        ]:
            mine, _ = median_time(ours)
            reference, _ = median_time(theirs)
            print(f"{name:18s} scale {scale:7g}: dpsql {mine:6.2f} s, OpenDP {reference:6.2f} s "
                  f"({reference / mine:.0f}x)")


def history() -> list:
    rng = np.random.default_rng(1)
    events = []
    for multiplier in rng.uniform(3.0, 60.0, QUERIES):
        if rng.random() < 0.8:
            events += [gaussian(float(multiplier), discrete=True), approx(0.0, 1e-10)]
        else:
            events.append(laplace(float(rng.choice([0.01, 0.02, 0.05]))))
    return events


def report() -> None:
    dp_accounting()
    events = history()
    costs = [(0.05, 1e-9)] * QUERIES
    mine, built = median_time(lambda: build_report(events, costs, 1000.0, DELTA), repeats=1)
    pld_time, pld_eps = median_time(
        lambda: reference_pld(events).get_epsilon_for_delta(DELTA), repeats=1)
    rdp_time, rdp_eps = median_time(lambda: reference_zcdp_epsilon(events, DELTA), repeats=1)
    print(f"report of {QUERIES} queries: dpsql {mine:.1f} s (every method; PLD ε {built.pld:.4f}, "
          f"zCDP ε {built.zcdp:.4f})")
    print(f"  dp-accounting PLD {pld_time:.1f} s (ε {pld_eps:.4f}, one cell per discrete "
          f"Gaussian), RDP {rdp_time:.1f} s (ε {rdp_eps:.4f})")


if __name__ == "__main__":
    samplers()
    report()

"""Speed of the exact samplers from OS randomness (run on purpose).

    .venv/bin/python tests/benchmarks/bench_samplers.py

Prints the median time of 1,000,000 draws of discrete Laplace and discrete Gaussian noise
at a few scales, with OS randomness (private) and with a seed (tests only).
"""

from __future__ import annotations

import statistics
import time

from dpsql.mechanisms import Sampler

DRAWS = 1_000_000
CASES = [("discrete laplace", "discrete_laplace", 2.5), ("discrete laplace", "discrete_laplace",
         1000.0), ("discrete gaussian", "discrete_gaussian", 3.73),
         ("discrete gaussian", "discrete_gaussian", 2.0**20)]


def median_time(draw, repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        draw()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    print(f"{'sampler':<18} {'scale':>10} {'OS random s':>12} {'seeded s':>9}")
    for label, method, scale in CASES:
        private = median_time(lambda m=method, s=scale: getattr(Sampler(), m)(s, DRAWS))
        seeded = median_time(lambda m=method, s=scale: getattr(Sampler(seed=1), m)(s, DRAWS))
        print(f"{label:<18} {scale:>10g} {private:>12.3f} {seeded:>9.3f}")


if __name__ == "__main__":
    main()

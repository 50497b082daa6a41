"""erfcx and log Φ to 60 digits (mpmath), the truth tests/test_special.py holds dpsql to.

SciPy cannot be the only yardstick: its erfcx(x) for x < −1 and its log Φ(x) for x > 1 round
x² before exponentiating and are off by up to ~x² ulps (250 and 1000 ulps in the far tails).
This writes ``special_values.csv`` next to it, one ``function,x,value`` row per point (floats
as ``repr``), on seeded random points and log-spaced ones out to 1e300. Regenerate (mpmath
is not a dependency of dpsql)::

    .venv/bin/python -m pip install mpmath
    .venv/bin/python tests/golden/special_values.py
"""

from __future__ import annotations

import csv
import random
from pathlib import Path

TABLE = Path(__file__).with_name("special_values.csv")


def points(low: float, high: float, tail: float, seed: int) -> list[float]:
    """800 seeded uniform points on [low, high], and 150 log-spaced ones from 10^1.5·tail
    to 1e300·tail (tail = ±1: the side whose answer stays a normal float)."""
    rng = random.Random(seed)
    inside = [rng.uniform(low, high) for _ in range(800)]
    return sorted(inside + [tail * 10.0 ** (k / 4) for k in range(6, 1201, 8)])


def truths() -> list[tuple[str, float, float]]:
    import mpmath  # not a dependency: only to regenerate the table

    mpmath.mp.dps = 60

    def erfcx(x: float) -> float:
        z = mpmath.mpf(x)
        if z > 1e8:  # DLMF 7.12.1, three terms: the next is below 1e-40 relative
            return float((1 - 1 / (2 * z * z) + 3 / (4 * z**4)) / (z * mpmath.sqrt(mpmath.pi)))
        return float(mpmath.exp(z * z) * mpmath.erfc(z))

    def log_ndtr(x: float) -> float:
        z = mpmath.mpf(x)
        if z < -1e8:  # log of DLMF 7.12.1 with Φ(z) = ½erfc(−z/√2)
            return float(-z * z / 2 - mpmath.log(-z * mpmath.sqrt(2 * mpmath.pi))
                         + mpmath.log(1 - 1 / (z * z) + 3 / z**4))
        if z > 0:
            return float(mpmath.log1p(-mpmath.ncdf(-z)))
        return float(mpmath.log(mpmath.ncdf(z)))

    rows = [("erfcx", x, erfcx(x)) for x in points(-26.6, 27.0, 1.0, seed=1)]
    return rows + [("log_ndtr", x, log_ndtr(x)) for x in points(-40.0, 38.0, -1.0, seed=2)]


def main() -> None:
    with TABLE.open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["function", "x", "value"])
        writer.writerows((name, repr(x), repr(value)) for name, x, value in truths())


if __name__ == "__main__":
    main()

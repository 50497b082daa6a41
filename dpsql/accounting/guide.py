"""Guidance on choosing ε and δ: typical values per use case and a δ sanity check.

The table reflects production practice (REFERENCES.md, "Error reports"); it is
advice, not a guarantee: smaller ε is more private, and δ should be well below
1/n for n people, or one person's data could be released with probability δ.

>>> delta_warning(1e-3, 5000) is not None
True
>>> delta_warning(1e-7, 10_000) is None
True
"""

from __future__ import annotations

EPSILON_GUIDE: tuple[tuple[str, float, float], ...] = (
    ("census and official statistics", 0.1, 1.0),
    ("health records", 0.5, 2.0),
    ("public reports", 0.5, 3.0),
    ("location data", 1.0, 3.0),
    ("product analytics", 1.0, 5.0),
    ("A/B tests", 2.0, 8.0),
)
"""(use case, typical lowest ε, typical highest ε) for a whole release."""


def delta_warning(delta: float, people: int | None) -> str | None:
    """A warning if δ is not well below 1/n, for a declared or public number of people.

    ``people`` must come from public knowledge (a declared size), never from the
    private data itself, or the warning would leak the count.
    """
    if people is None or people <= 0 or delta == 0:
        return None
    if delta * people >= 1:
        return (f"delta={delta:g} is at least 1/n for n={people:,} people: one person's data "
                f"could be released outright with probability delta; use delta < "
                f"{1 / (10 * people):.1g}")
    return None


def render_guide() -> str:
    """The guide as text, for ``dpsql budget --guide``."""
    width = max(len(use) for use, _, _ in EPSILON_GUIDE)
    lines = ["Typical total epsilon per use case (smaller is more private):", ""]
    lines += [f"  {use.ljust(width)}  {lo:g} – {hi:g}" for use, lo, hi in EPSILON_GUIDE]
    lines += ["", "delta: well below 1/n for n people (e.g. 1e-7 for a million people);",
              "delta = 0 gives pure ε-DP but forbids private group keys and Gaussian noise."]
    return "\n".join(lines)

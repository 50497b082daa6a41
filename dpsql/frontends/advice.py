"""Python advice in dpsql's messages, said the command line's way: flags and catalog keys.

The library's errors teach its Python API (``con.register(..., public_keys=...)``, ``pass
delta=1e-6``); at the command line the same fix is a flag or a line of the catalog.toml.
Each rewording is one row of WORDINGS, applied in order to the message of every error and
warning the ``dpsql`` command prints (:func:`dpsql.frontends.common.describe`).

>>> print(for_cli('GROUP BY educ: releasing them needs delta > 0 (pass delta=1e-6), or '
...               'declare the keys public: con.register(..., public_keys={"educ": [...]})'))
GROUP BY educ: releasing them needs delta > 0 (give --delta 1e-6), or declare the keys \
public: public_keys = { educ = [...] } in the table's [tables.NAME] entry of the catalog
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Rewording:
    """One piece of Python advice (a regular expression) and what the CLI says instead."""

    python: str
    cli: str
    why: str

    def apply(self, text: str) -> str:
        return re.sub(self.python, self.cli, text)


ENTRY = "the table's [tables.NAME] entry of the catalog"
VALUE = r"(-?\d[\w.+-]*?)(?=[\s),;]|$)"
"""A number in a message (``1e-6``, ``1.0``), not the punctuation after it."""

WORDINGS: tuple[Rewording, ...] = (
    Rewording(r'con\.register\(\.\.\., public_keys=\{"([^"]+)": \[[^\]]*\]\}\)',
              rf"public_keys = {{ \1 = [...] }} in {ENTRY}",
              "public keys are a table's catalog key"),
    Rewording(r'when registering the table \(public_keys=\{"([^"]+)": \[[^\]]*\]\}\)',
              rf"in {ENTRY} (public_keys = {{ \1 = [...] }})", "the same, as options.py says it"),
    Rewording(r'bounds=\{"([^"]+)": \(lo, hi\)\} when registering the table',
              rf"bounds = {{ \1 = [lo, hi] }} in {ENTRY}", "bounds are a table's catalog key"),
    Rewording(r"register the table with privacy_unit=\.\.\.",
              f"declare privacy_unit in {ENTRY}", "the privacy unit is a catalog key"),
    Rewording(r"register (it|the file) with con\.register\(name, (?:source|path), "
              r"privacy_unit=\.\.\.\)(?: or con\.register_public\(name, source\))?",
              r"declare \1 in the catalog: [tables.NAME] with source and privacy_unit "
              "(private), or [public.NAME] with source (public)",
              "tables come from the catalog, not from register()"),
    Rewording(r"register it first: con\.register\(name, path, privacy_unit=\.\.\.\)",
              "declare it first as the source of a [tables.NAME] entry of the catalog",
              "the same, for a file named in FROM"),
    Rewording(r"register the key list with con\.register_public\(\.\.\.\)",
              "declare the key list as a [public.NAME] entry of the catalog",
              "public tables are catalog entries too"),
    Rewording(r"con\.suggest_bounds\('([^']+)', group_by=\.\.\., epsilon=\.\.\., delta=\.\.\.\)",
              r"dpsql CATALOG suggest-bounds \1 --group-by COLUMN",
              "suggest-bounds is a command"),
    Rewording(r"(?:dpsql\.)?Budget\([^()]*delta=" + VALUE + r"\)", r"--budget-delta \1",
              "a budget is set by --budget-epsilon and --budget-delta"),
    Rewording(r"budget=(?:dpsql\.)?Budget\(epsilon=\.\.\., delta=\.\.\.\)",
              "--budget-epsilon and --budget-delta", "the same, without values"),
    Rewording(r"\bpass (e\.g\. )?(epsilon|delta)=" + VALUE, r"give \1--\2 \3",
              "ε and δ of a query are flags"),
    Rewording(r"(e\.g\. |, or )(epsilon|delta)=" + VALUE, r"\1--\2 \3",
              "the same, for the second value of a fix"),
    Rewording(r"\bpass delta >= ", "give --delta >= ", "the same, as a lower limit"),
    Rewording(r"\bpass a small delta ", "give a small --delta ", "the same, in words"),
)
"""Rewordings in the order they apply (a specific wording before the general one)."""


def for_cli(message: str) -> str:
    """``message`` with each piece of Python advice said as flags and catalog keys.

    >>> for_cli("epsilon=0 is not allowed. Fix: pass e.g. epsilon=1.0")
    'epsilon=0 is not allowed. Fix: give e.g. --epsilon 1.0'
    """
    for wording in WORDINGS:
        message = wording.apply(message)
    return message

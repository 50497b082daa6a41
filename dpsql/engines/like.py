r"""LIKE as a regular expression that cannot backtrack, for engines that match LIKE with one.

Spark matches ``x LIKE '%a%b%c%'`` with the Java regular expression ``.*a.*b.*c.*``, which
backtracks: on a text without a match it tries every triple of positions, n³ steps for a
text of n characters. An analyst who reaches one person's row with such a pattern makes
that row take seconds where others take microseconds (``dpsql.expr.size`` bounds each
row's work assuming linear matching). This module writes the same predicate so that no
engine can backtrack into it:

    \Afirst(?>.*?middle₁)(?>.*?middle₂)….*last(?!.)

Each fixed part between two ``%`` is found at its leftmost place after the one before it,
and the atomic group ``(?>…)`` commits to that place. That is exact, not an approximation:
a part is a fixed-length window (``_`` is one character), so its leftmost match ends
soonest, and any way to place the parts after it in a match also fits after the leftmost
one. Each part is searched once from its start position: text × pattern steps.

>>> print(like_regex("%a%b%c%"))
(?s)\A(?>.*?a)(?>.*?b)(?>.*?c).*(?!.)
>>> import re
>>> [bool(re.search(like_regex("a_c%d"), t)) for t in ("abcxd", "abd", "aXcd", "a\ncd")]
[True, False, True, True]
"""

from __future__ import annotations

METACHARACTERS = frozenset("<([{\\^-=$!|]})?*+.>&#~")
"""Characters a Java (or Python) regular expression gives a meaning: written escaped. Every
other character stands for itself in both."""
END = "(?!.)"
"""The end of the text (nothing follows, newlines included): Java's ``$`` also matches
before a final newline, and Java's ``\\z`` is not Python's."""


def like_regex(pattern: str) -> str:
    """The regular expression (Java's and Python's syntax) of a LIKE ``pattern`` without an
    escape character (``dpsql.expr.types`` refuses backslashes in patterns): ``%`` any text,
    ``_`` one character, anything else itself; the whole text must match."""
    first, *middles, last = pattern.split("%") if "%" in pattern else (pattern, None)
    if last is None:
        return f"(?s)\\A{_part(first)}{END}"
    found = "".join(f"(?>.*?{_part(m)})" for m in middles if m)
    return f"(?s)\\A{_part(first)}{found}.*{_part(last)}{END}"


def _part(text: str) -> str:
    """A fixed part of a pattern: ``_`` is any character, the others stand for themselves."""
    return "".join("." if c == "_" else "\\" + c if c in METACHARACTERS else c for c in text)

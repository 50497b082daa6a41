"""Neutral SQL-expression helpers, below both the analysis and the rewrite.

- ``types``: the type class of a row expression, checked from the catalog alone;
- ``functions``: the scalar functions a row expression may call, with their signatures;
- ``totality``: the rule that makes every accepted row expression evaluate without raising
  (``error_free``), the one function every row expression passes through to an engine;
- ``nodes``: small builders of sqlglot nodes (numbers, casts, exact sums).

Nothing here knows about plans, privacy units or backends.
"""

# note: UNNEST of an array of constants (docs/sql.md, "UNNEST of a list of values"): a public
# note: table with one row per element, cross joined to the private rows. The contribution
# note: limits are enforced on the joined rows (docs/mechanisms.md, "UNNEST of a public array").

# title: CROSS JOIN UNNEST, grouped by the element
SELECT e, COUNT(*) AS n FROM visits CROSS JOIN UNNEST([1, 2, 3]) AS u(e) GROUP BY e;
# result: [(1, 1056), (2, 1056), (3, 1056)]
# bounding: all_pairs
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | e | n=COUNT(*) L1=12 L2=6.9282

# title: CROSS JOIN UNNEST, one total over the repeated rows
SELECT COUNT(*) AS n, SUM(cost) AS total FROM visits CROSS JOIN UNNEST([1, 2]) AS u(e);
# result: [(1368, 284817.0)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | n=COUNT(*) L1=4 L2=4 | total=SUM(cost) in [0, 2000] L1=8000 L2=8000

# title: a comma join with UNNEST of text, grouped by it and a column
SELECT sex, e, COUNT(*) AS n FROM pums, UNNEST(['a', 'b']) AS u(e) GROUP BY sex, e;
# result: [(0, 'a', 428), (0, 'b', 451), (1, 'a', 327), (1, 'b', 376)]
# bounding: first_pair (g=1, packed)
# plan: laplace stats/unit=1 groups/unit=1 rows/group=2 selection=public | sex | e | n=COUNT(*) L1=2 L2=2

# title: UNNEST in BigQuery's DP syntax, the alias naming the element
# dialect: bigquery
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 1e-6, max_groups_contributed = 3) x, COUNT(*) AS n FROM visits CROSS JOIN UNNEST([1, 2, 3]) AS x GROUP BY x;
# result: [(1, 1056), (2, 1056), (3, 1056)]
# bounding: all_pairs
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | x | n=COUNT(*) L1=12 L2=6.9282

# title: k_threshold on UNNEST's elements selects them as private keys
# dialect: bigquery
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-6, k_threshold = 10, kappa = 3) e, ANON_COUNT(*) AS n FROM visits CROSS JOIN UNNEST([1, 2, 3]) AS e GROUP BY e ORDER BY e;
# result: [(1, 1056), (2, 1056), (3, 1056)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=truncated_geometric min_units=10 | e | n=ANON_COUNT(*) L1=12 L2=6.9282

# title: the element in an aggregate's argument, bounded by the elements
SELECT region, SUM(age * e) AS s FROM visits CROSS JOIN UNNEST([1, 2]) AS u(e) GROUP BY region;
# result: [('east north central', 14193.0), ('mid atlantic', 12198.0), ('mountain', 10068.0), ('new england', 6285.0), ('pacific', 26526.0), ('south atlantic', 13923.0), ('west north central', 8487.0), ('west south central', 7587.0)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | s=SUM(age * e) in [0, 200] L1=2400 L2=1385.64

# title: UNNEST of a column is refused
SELECT COUNT(*) FROM visits CROSS JOIN UNNEST([cost]) AS u(e);
# error: UnsupportedQueryError: no columns, NULL

# title: UNNEST of a function call is refused
SELECT COUNT(*) FROM visits CROSS JOIN UNNEST([random()]) AS u(e);
# error: UnsupportedQueryError: no columns, NULL, function calls

# title: UNNEST alone in FROM is refused
SELECT COUNT(*) FROM UNNEST([1, 2]) AS u(e);
# error: UnsupportedQueryError: public tables are for lookups

# title: UNNEST WITH OFFSET is refused
# dialect: bigquery
SELECT COUNT(*) FROM visits CROSS JOIN UNNEST([1, 2]) AS e WITH OFFSET;
# error: UnsupportedQueryError: Drop WITH OFFSET

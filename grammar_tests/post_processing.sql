# note: Everything after the noise is post-processing and free: HAVING, ORDER BY,
# note: LIMIT/OFFSET and arithmetic over noisy aggregates and group keys.

# title: HAVING on an output alias
SELECT region, COUNT(*) AS n FROM visits GROUP BY region HAVING n > 10;
# result: [('east north central', 171), ('mid atlantic', 133), ('mountain', 101), ('new england', 68), ('pacific', 265), ('south atlantic', 158), ('west north central', 89), ('west south central', 71)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | n=COUNT(*) L1=12 L2=6.9282

# title: HAVING on an aggregate that is not selected
SELECT region, COUNT(*) AS n FROM visits GROUP BY region HAVING AVG(cost) > 100;
# result: [('east north central', 171), ('mid atlantic', 133), ('mountain', 101), ('new england', 68), ('pacific', 265), ('south atlantic', 158), ('west north central', 89), ('west south central', 71)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=9 groups/unit=3 rows/group=4 selection=public | region | n=COUNT(*) L1=12 L2=6.9282 | also AVG(cost)

# title: HAVING on a group key
SELECT region, COUNT(*) FROM visits GROUP BY region HAVING region <> 'pacific';
# result: [('east north central', 171), ('mid atlantic', 133), ('mountain', 101), ('new england', 68), ('south atlantic', 158), ('west north central', 89), ('west south central', 71)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | COUNT(*) L1=12 L2=6.9282

# title: HAVING with AND and OR
SELECT region, SUM(cost) AS total, COUNT(*) AS n FROM visits GROUP BY region HAVING total > 1000 AND (n > 5 OR region = 'mountain');
# result: [('east north central', 39095.6, 171), ('mid atlantic', 34476.6, 133), ('mountain', 20340.3, 101), ('new england', 13473.1, 68), ('pacific', 49396.6, 265), ('south atlantic', 29997.8, 158), ('west north central', 19125.0, 89), ('west south central', 14366.3, 71)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=6 groups/unit=3 rows/group=4 selection=public | region | total=SUM(cost) in [0, 2000] L1=24000 L2=13856.4 | n=COUNT(*) L1=12 L2=6.9282

# title: HAVING on a global aggregate
SELECT AVG(age) AS mean_age FROM visits HAVING mean_age > 5;
# result: [(48.1856,)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | mean_age=AVG(age) in [0, 100] L1=200 L2=200

# title: ORDER BY an alias descending
SELECT region, COUNT(*) AS n FROM visits GROUP BY region ORDER BY n DESC;
# result: [('pacific', 265), ('east north central', 171), ('south atlantic', 158), ('mid atlantic', 133), ('mountain', 101), ('west north central', 89), ('west south central', 71), ('new england', 68)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | n=COUNT(*) L1=12 L2=6.9282

# title: ORDER BY an aggregate and a key
SELECT region, COUNT(*) FROM visits GROUP BY region ORDER BY COUNT(*) DESC, region;
# result: [('pacific', 265), ('east north central', 171), ('south atlantic', 158), ('mid atlantic', 133), ('mountain', 101), ('west north central', 89), ('west south central', 71), ('new england', 68)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | COUNT(*) L1=12 L2=6.9282

# title: ORDER BY an aggregate that is not selected
SELECT region FROM visits GROUP BY region ORDER BY SUM(cost) DESC;
# result: [('pacific',), ('east north central',), ('mid atlantic',), ('south atlantic',), ('mountain',), ('west north central',), ('west south central',), ('new england',)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | also SUM(cost)

# title: ORDER BY position with NULLS FIRST
SELECT region, COUNT(*) FROM visits GROUP BY region ORDER BY 2 DESC NULLS FIRST;
# result: [('pacific', 265), ('east north central', 171), ('south atlantic', 158), ('mid atlantic', 133), ('mountain', 101), ('west north central', 89), ('west south central', 71), ('new england', 68)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | COUNT(*) L1=12 L2=6.9282

# title: LIMIT
SELECT specialty, COUNT(*) AS n FROM visits GROUP BY specialty ORDER BY n DESC LIMIT 5;
# result: [('general practice', 356), ('emergency medicine', 181), ('internal medicine', 94), ('pediatrics', 70), ('dermatology', 49)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=truncated_geometric | specialty | n=COUNT(*) L1=12 L2=6.9282

# title: LIMIT with OFFSET
SELECT region, COUNT(*) AS n FROM visits GROUP BY region ORDER BY n DESC LIMIT 3 OFFSET 1;
# result: [('east north central', 171), ('south atlantic', 158), ('mid atlantic', 133)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | n=COUNT(*) L1=12 L2=6.9282

# title: OFFSET alone
SELECT region, COUNT(*) FROM visits GROUP BY region OFFSET 2;
# result: [('east north central', 171), ('mid atlantic', 133), ('mountain', 101), ('new england', 68), ('west north central', 89), ('west south central', 71)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | COUNT(*) L1=12 L2=6.9282

# title: LIMIT 0
SELECT COUNT(*) FROM visits LIMIT 0;
# result: []
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: ratio of two noisy aggregates
SELECT region, SUM(cost) / COUNT(*) AS mean_cost FROM visits GROUP BY region;
# result: [('east north central', 228.629), ('mid atlantic', 259.223), ('mountain', 201.389), ('new england', 198.135), ('pacific', 186.402), ('south atlantic', 189.859), ('west north central', 214.888), ('west south central', 202.343)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=6 groups/unit=3 rows/group=4 selection=public | region | mean_cost | also SUM(cost), COUNT(*)

# title: ROUND over AVG
SELECT ROUND(AVG(cost), 2) AS mean_cost FROM visits;
# result: [(208.59,)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | mean_cost | also AVG(cost)

# title: CASE over a noisy count
SELECT region, CASE WHEN COUNT(*) > 100 THEN 'many' ELSE 'few' END AS size FROM visits GROUP BY region;
# result: [('east north central', 'many'), ('mid atlantic', 'many'), ('mountain', 'many'), ('new england', 'few'), ('pacific', 'many'), ('south atlantic', 'many'), ('west north central', 'few'), ('west south central', 'few')]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | size | also COUNT(*)

# title: scalar functions over aggregates
SELECT SQRT(ABS(SUM(cost))) AS s, GREATEST(COUNT(*), 0) AS n, COALESCE(NULLIF(AVG(age), 0), -1) AS a FROM visits;
# result: [(469.331, 1056, 48.1856)]
# bounding: all_pairs
# plan: laplace stats/unit=4 groups/unit=1 rows/group=4 selection=public | s | n | a | also SUM(cost), COUNT(*), AVG(age)

# title: CAST over an aggregate
SELECT CAST(COUNT(*) AS INTEGER) AS n, COUNT(*) * 1.0 / 2 AS half FROM visits;
# result: [(1056, 528.0)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | n=COUNT(*) L1=4 L2=4 | half

# title: literal output columns
SELECT 'all' AS scope, 1 AS one, COUNT(*) FROM visits;
# result: [('all', 1, 1056)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | scope | one | COUNT(*) L1=4 L2=4

# title: alias shadowing a column name in ORDER BY and HAVING
SELECT region, SUM(age) AS age FROM visits GROUP BY region HAVING age > 3 ORDER BY age;
# result: [('new england', 3459.0), ('west south central', 3644.0), ('west north central', 4293.0), ('mountain', 5195.0), ('mid atlantic', 6318.0), ('east north central', 7480.0), ('south atlantic', 7743.0), ('pacific', 12752.0)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | age=SUM(age) in [0, 100] L1=1200 L2=692.82

# title: raw column in HAVING
SELECT region, COUNT(*) FROM visits GROUP BY region HAVING cost > 5;
# error: UnsupportedQueryError: HAVING: `cost` is not supported

# title: raw column in ORDER BY
SELECT region, COUNT(*) FROM visits GROUP BY region ORDER BY age;
# error: UnsupportedQueryError: ORDER BY: `age` is not supported

# title: privacy unit in ORDER BY
SELECT region, COUNT(*) FROM visits GROUP BY region ORDER BY patient_id;
# error: UnsupportedQueryError: Use COUNT(DISTINCT patient_id) to count people

# title: raw column in SELECT
SELECT cost FROM visits;
# error: UnsupportedQueryError: aggregate it (e.g. AVG(cost)) or add it to GROUP BY

# title: raw column beside an aggregate
SELECT age, COUNT(*) FROM visits;
# error: UnsupportedQueryError: SELECT: `age` is not supported

# title: privacy unit in SELECT
SELECT patient_id, COUNT(*) FROM visits;
# error: UnsupportedQueryError: Use COUNT(DISTINCT patient_id) to count people

# title: raw column inside an output expression
SELECT ROUND(cost) FROM visits;
# error: UnsupportedQueryError: group keys and aggregates

# title: LIMIT expression
SELECT COUNT(*) FROM visits LIMIT 1 + 1;
# error: UnsupportedQueryError: a non-negative integer literal

# title: negative LIMIT
SELECT COUNT(*) FROM visits LIMIT -1;
# error: UnsupportedQueryError: LIMIT

# title: random() over an aggregate
SELECT random() * 0 + COUNT(*) AS n FROM visits;
# result: [(1056.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | n | also COUNT(*)

# title: current time in SELECT
SELECT COUNT(*), now() FROM visits;
# error: UnsupportedQueryError: SELECT

# title: output alias used in the same SELECT
SELECT COUNT(*) AS n, n + 1 AS m FROM visits;
# error: CatalogError: column `n` is not in table 'visits'

# title: subquery in HAVING
SELECT region, COUNT(*) FROM visits GROUP BY region HAVING region IN (SELECT region FROM regions);
# error: UnsupportedQueryError: HAVING

# title: window function over a noisy aggregate
SELECT region, RANK() OVER (ORDER BY COUNT(*)) FROM visits GROUP BY region;
# result: [('east north central', 7), ('mid atlantic', 5), ('mountain', 4), ('new england', 1), ('pacific', 8), ('south atlantic', 6), ('west north central', 3), ('west south central', 2)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | RANK() OVER (ORDER BY COUNT(*)) | also COUNT(*)

# title: trigonometric and other math functions of noisy outputs
SELECT region, 3 * COS(COUNT(*)) AS c, DEGREES(ATAN2(SUM(cost), 1)) AS a FROM visits GROUP BY region;
# result: [('east north central', 0.645316, 89.9985), ('mid atlantic', 1.48462, 89.9983), ('mountain', 2.67601, 89.9972), ('new england', 1.32043, 89.9957), ('pacific', 1.34414, 89.9988), ('south atlantic', 1.81658, 89.9981), ('west north central', 1.53053, 89.997), ('west south central', -0.927068, 89.996)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=6 groups/unit=3 rows/group=4 selection=public | region | c | a | also COUNT(*), SUM(cost)

# note: Post-processing over released values (docs/sql.md, "After the noise"): window functions
# note: over aggregates and keys, QUALIFY, and an outer query over a DP release in a CTE or
# note: subquery. All of it runs on the noisy released table, never on exact values.

# title: share of the total with a window over the released counts
SELECT region, COUNT(*) AS n, COUNT(*) * 100.0 / SUM(COUNT(*)) OVER () AS pct FROM visits GROUP BY region ORDER BY region;
# result: [('east north central', 171, 16.1932), ('mid atlantic', 133, 12.5947), ('mountain', 101, 9.56439), ('new england', 68, 6.43939), ('pacific', 265, 25.0947), ('south atlantic', 158, 14.9621), ('west north central', 89, 8.42803), ('west south central', 71, 6.72348)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | n=COUNT(*) L1=12 L2=6.9282 | pct

# title: running total of released counts
SELECT region, SUM(COUNT(*)) OVER (ORDER BY region) AS running FROM visits GROUP BY region ORDER BY region;
# result: [('east north central', 171.0), ('mid atlantic', 304.0), ('mountain', 405.0), ('new england', 473.0), ('pacific', 738.0), ('south atlantic', 896.0), ('west north central', 985.0), ('west south central', 1056.0)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | running | also COUNT(*)

# title: rank of released counts
SELECT specialty, COUNT(*) AS n, RANK() OVER (ORDER BY COUNT(*) DESC) AS r FROM visits GROUP BY specialty ORDER BY r, specialty LIMIT 5;
# result: [('general practice', 356, 1), ('emergency medicine', 181, 2), ('internal medicine', 94, 3), ('pediatrics', 70, 4), ('dermatology', 49, 5)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=truncated_geometric | specialty | n=COUNT(*) L1=12 L2=6.9282 | r

# title: QUALIFY on a rank of released sums
SELECT region, SUM(cost) AS total, DENSE_RANK() OVER (ORDER BY SUM(cost) DESC) AS r FROM visits GROUP BY region QUALIFY r <= 3 ORDER BY r;
# result: [('pacific', 49396.6, 1), ('east north central', 39095.6, 2), ('mid atlantic', 34476.6, 3)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | total=SUM(cost) in [0, 2000] L1=24000 L2=13856.4 | r

# title: moving average over a rows frame and LAG of released means
SELECT region, AVG(age) AS a, AVG(AVG(age)) OVER (ORDER BY region ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS smooth, AVG(age) - LAG(AVG(age), 1, 0) OVER (ORDER BY region) AS step FROM visits GROUP BY region ORDER BY region;
# result: [('east north central', 43.7427, 45.6232, 43.7427), ('mid atlantic', 47.5038, 47.5607, 3.76107), ('mountain', 51.4356, 49.9357, 3.93188), ('new england', 50.8676, 50.1413, -0.567997), ('pacific', 48.1208, 49.3316, -2.74689), ('south atlantic', 49.0063, 48.4543, 0.885574), ('west north central', 48.236, 49.5221, -0.770374), ('west south central', 51.3239, 49.7799, 3.08799)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=6 groups/unit=3 rows/group=4 selection=public | region | a=AVG(age) in [0, 100] L1=600 L2=346.41 | smooth | step

# title: window partitioned by a public key over two keys
SELECT p.sex, s.department, COUNT(*) AS n, COUNT(*) / SUM(COUNT(*)) OVER (PARTITION BY p.sex) AS share FROM visits v JOIN patients p ON v.patient_id = p.patient_id JOIN specialties s ON v.specialty = s.specialty GROUP BY p.sex, s.department ORDER BY p.sex, s.department;
# result: [('f', 'medicine', 303, 0.51269), ('f', 'surgery', 288, 0.48731), ('m', 'medicine', 328, 0.518987), ('m', 'surgery', 304, 0.481013)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | sex | department | n=COUNT(*) L1=12 L2=6.9282 | share

# title: NTILE, ROW_NUMBER and CUME_DIST of released values
SELECT region, NTILE(2) OVER (ORDER BY MEDIAN(cost)) AS half, ROW_NUMBER() OVER (ORDER BY region) AS i, CUME_DIST() OVER (ORDER BY COUNT(*)) AS c FROM visits GROUP BY region ORDER BY i;
# result: [('east north central', 2, 1, 0.875), ('mid atlantic', 2, 2, 0.625), ('mountain', 2, 3, 0.5), ('new england', 1, 4, 0.125), ('pacific', 1, 5, 1.0), ('south atlantic', 1, 6, 0.75), ('west north central', 1, 7, 0.375), ('west south central', 2, 8, 0.25)]
# bounding: kept_rows_ranked (g=3)
# plan: laplace stats/unit=6 groups/unit=3 rows/group=4 selection=public | region | half | i | c | also MEDIAN(cost), COUNT(*)

# title: window over a raw private column
SELECT region, COUNT(*), SUM(cost) OVER () FROM visits GROUP BY region;
# error: UnsupportedQueryError: window function: `SUM(cost) OVER ()` is not supported; allowed: windows over aggregates and group keys

# title: window alias filtered in HAVING
SELECT region, RANK() OVER (ORDER BY COUNT(*)) AS r FROM visits GROUP BY region HAVING r <= 3;
# error: UnsupportedQueryError: r is a window function's result, computed after this clause: filter on it with QUALIFY

# title: window in HAVING
SELECT region, COUNT(*) FROM visits GROUP BY region HAVING RANK() OVER (ORDER BY COUNT(*)) <= 3;
# error: UnsupportedQueryError: Window functions are allowed in SELECT, QUALIFY and ORDER BY

# title: window in WHERE
SELECT COUNT(*) FROM visits WHERE ROW_NUMBER() OVER () > 3;
# error: UnsupportedQueryError: WHERE: `ROW_NUMBER() OVER ()` is not supported

# title: window inside an aggregate
SELECT SUM(ROW_NUMBER() OVER ()) FROM visits;
# error: UnsupportedQueryError: SUM argument: `ROW_NUMBER() OVER ()` is not supported

# title: LAG with a negative offset
SELECT region, LAG(COUNT(*), -1) OVER (ORDER BY region) FROM visits GROUP BY region;
# error: UnsupportedQueryError: LAG/LEAD take a non-negative integer literal offset

# title: RANGE frame with an offset
SELECT region, SUM(COUNT(*)) OVER (ORDER BY region RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) FROM visits GROUP BY region;
# error: UnsupportedQueryError: or ROWS with non-negative integer literal offsets

# title: window of a window
SELECT region, SUM(RANK() OVER (ORDER BY COUNT(*))) OVER () FROM visits GROUP BY region;
# error: UnsupportedQueryError: and not inside one another

# title: window over released text that cannot bind
SELECT region, COUNT(*), AVG(region) OVER () FROM visits GROUP BY region;
# error: UnsupportedQueryError: the query after the noise cannot run on the released rows (Binder Error

# title: average of released per-region sums in a CTE
WITH s AS (SELECT region, SUM(cost) AS total FROM visits GROUP BY region) SELECT AVG(total) AS mean_total, MAX(total) AS top FROM s;
# result: [(27533.9, 49396.6)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | mean_total | top | also SUM(cost)

# title: average of released per-specialty counts over private keys
SELECT AVG(n) AS mean_n, COUNT(*) AS groups FROM (SELECT specialty, COUNT(*) AS n FROM visits GROUP BY specialty) AS c;
# result: [(27.5625, 48)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=truncated_geometric | mean_n | groups | also COUNT(*)

# title: DP clause inside the CTE of a release
WITH s AS (SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 0.5, delta = 1e-5) region, COUNT(*) AS n FROM visits GROUP BY region) SELECT SUM(n) AS total FROM s;
# result: [(1056.0,)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | total | also COUNT(*)

# title: outer query filters, groups and ranks released rows
SELECT LEFT(region, 4) AS r4, SUM(n) AS n, RANK() OVER (ORDER BY SUM(n) DESC) AS rk FROM (SELECT region, COUNT(*) AS n FROM visits GROUP BY region) AS c WHERE n > 50 GROUP BY LEFT(region, 4) ORDER BY rk, r4;
# result: [('paci', 265.0, 1), ('east', 171.0, 2), ('west', 160.0, 3), ('sout', 158.0, 4), ('mid ', 133.0, 5), ('moun', 101.0, 6), ('new ', 68.0, 7)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | r4 | n | rk | also COUNT(*)

# title: outer query selects every released column
SELECT * FROM (SELECT region, COUNT(*) AS n FROM visits GROUP BY region HAVING COUNT(*) > 100) AS c ORDER BY n DESC;
# result: [('pacific', 265), ('east north central', 171), ('south atlantic', 158), ('mid atlantic', 133), ('mountain', 101)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | n | also COUNT(*)

# title: outer query names a column the release does not have
SELECT AVG(cost) FROM (SELECT region, COUNT(*) AS n FROM visits GROUP BY region) AS c;
# error: CatalogError: column `cost` is not a column of the release in FROM; its columns are region, n

# title: outer query reads a table of its own
SELECT AVG(n) FROM (SELECT region, COUNT(*) AS n FROM visits GROUP BY region) AS c WHERE region IN (SELECT region FROM regions);
# error: UnsupportedQueryError: An outer query reads the released rows only

# title: outer query averages released text
SELECT AVG(region) FROM (SELECT region, COUNT(*) AS n FROM visits GROUP BY region) AS c;
# error: UnsupportedQueryError: avg(VARCHAR)

# title: DP clause both inside and outside a release
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1) AVG(n) FROM (SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1) region, COUNT(*) AS n FROM visits GROUP BY region) AS c;
# error: UnsupportedQueryError: allowed: one clause, on the outer or the inner SELECT

# note: SmartNoise SQL's names and T-SQL's TOP (docs/sql.md, "SmartNoise and T-SQL names"):
# note: VAR() and STD() are the population variance and standard deviation (SmartNoise computes
# note: both from sums of x and x squared over n); STDDEV() and VARIANCE() keep the input
# note: dialect's meaning, the sample ones. SELECT TOP n is LIMIT n, after the noise.

# title: SmartNoise VAR and STD are the population versions
SELECT VAR(age) AS v, STD(age) AS s, VAR_POP(age) AS vp, STDDEV_POP(age) AS sp FROM visits;
# result: [(468.13, 21.6363, 468.13, 21.6363)]
# bounding: all_pairs
# plan: laplace stats/unit=3 groups/unit=1 rows/group=4 selection=public | v=VAR_POP(age) in [0, 100] L1=5000 L2=5000 | s=STDDEV_POP(age) in [0, 100] L1=5000 L2=5000 | vp=VAR_POP(age) in [0, 100] L1=5000 L2=5000 | sp=STDDEV_POP(age) in [0, 100] L1=5000 L2=5000

# title: SmartNoise STDDEV is the sample standard deviation
SELECT STDDEV(age) AS s, STDDEV_SAMP(age) AS ss, VARIANCE(age) AS v FROM visits;
# result: [(21.6466, 21.6466, 468.574)]
# bounding: all_pairs
# plan: laplace stats/unit=3 groups/unit=1 rows/group=4 selection=public | s=STDDEV(age) in [0, 100] L1=5000 L2=5000 | ss=STDDEV_SAMP(age) in [0, 100] L1=5000 L2=5000 | v=VARIANCE(age) in [0, 100] L1=5000 L2=5000

# title: SmartNoise VAR per group with a clamp
SELECT sex, VAR(LEAST(GREATEST(income, 0), 100000)) AS v FROM pums GROUP BY sex;
# result: [(0, 1019780000.0), (1, 569497000.0)]
# bounding: first_pair (g=1, packed)
# plan: laplace stats/unit=3 groups/unit=1 rows/group=2 selection=public | sex | v=VAR_POP(LEAST(GREATEST(income, 0), 100000)) in [0, 100000] L1=2.5e+09 L2=2.5e+09

# title: Spark STD is the sample standard deviation
# dialect: spark
SELECT STD(age) AS s FROM visits;
# result: [(21.6466,)]
# bounding: all_pairs
# plan: laplace stats/unit=3 groups/unit=1 rows/group=4 selection=public | s=STDDEV_SAMP(age) in [0, 100] L1=5000 L2=5000

# title: SmartNoise VAR without bounds
SELECT VAR(married) FROM people;
# error: UnsupportedQueryError: VAR_POP(married) needs bounds

# title: TOP n with ORDER BY
SELECT TOP 3 region, COUNT(*) AS n FROM visits GROUP BY region ORDER BY n DESC;
# result: [('pacific', 265), ('east north central', 171), ('south atlantic', 158)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | n=COUNT(*) L1=12 L2=6.9282

# title: TOP n in parentheses
SELECT TOP (2) region, COUNT(*) AS n FROM visits GROUP BY region ORDER BY region;
# result: [('east north central', 171), ('mid atlantic', 133)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | n=COUNT(*) L1=12 L2=6.9282

# title: TOP n PERCENT of the released rows
SELECT TOP 50 PERCENT region, COUNT(*) AS n FROM visits GROUP BY region ORDER BY n;
# result: [('new england', 68), ('west south central', 71), ('west north central', 89), ('mountain', 101)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | n=COUNT(*) L1=12 L2=6.9282

# title: top as a column name is not TOP
SELECT top, COUNT(*) FROM (SELECT patient_id, region AS top FROM visits) AS v GROUP BY top;
# result: [('east north central', 171), ('mid atlantic', 133), ('mountain', 101), ('new england', 68), ('pacific', 265), ('south atlantic', 158), ('west north central', 89), ('west south central', 71)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | top | COUNT(*) L1=12 L2=6.9282

# title: TOP n over private keys
SELECT TOP 5 specialty, COUNT(*) AS n FROM visits GROUP BY specialty ORDER BY n DESC;
# result: [('general practice', 356), ('emergency medicine', 181), ('internal medicine', 94), ('pediatrics', 70), ('dermatology', 49)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=truncated_geometric | specialty | n=COUNT(*) L1=12 L2=6.9282

# title: TOP with an expression
SELECT TOP (1 + 1) region, COUNT(*) FROM visits GROUP BY region;
# error: UnsupportedQueryError: TOP: `LIMIT 1 + 1` is not supported; allowed: a non-negative integer literal

# title: TOP n WITH TIES
SELECT TOP 2 WITH TIES region, COUNT(*) AS n FROM visits GROUP BY region ORDER BY n;
# error: UnsupportedQueryError: WITH TIES is not supported

# title: LIMIT n WITH TIES
SELECT region, COUNT(*) AS n FROM visits GROUP BY region ORDER BY n LIMIT 2 WITH TIES;
# error: UnsupportedQueryError: LIMIT: `LIMIT 2 WITH TIES` is not supported; allowed: LIMIT n [PERCENT]

# title: TOP inside a subquery
SELECT COUNT(*) FROM (SELECT TOP 10 patient_id, age FROM visits) AS v;
# error: UnsupportedQueryError: LIMIT inside a subquery

# title: SmartNoise PI and RAND after the noise
SELECT ROUND(PI(), 2) AS pi, RAND() < 2 AS yes, POWER(AVG(age), 2) AS squared FROM pums;
# result: [(3.14, True, 2012.33)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=2 selection=public | pi | yes | squared | also AVG(age)

# title: RAND in WHERE is refused
SELECT COUNT(*) FROM pums WHERE RAND() < 0.5;
# error: UnsupportedQueryError: WHERE: `RANDOM()` is not supported

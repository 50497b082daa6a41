# note: Quantiles: MEDIAN, QUANTILE_CONT/QUANTILE/APPROX_QUANTILE(x, q), PERCENTILE_CONT(q) WITHIN GROUP (ORDER BY x).
# note: Each is an exponential mechanism over 1024 buckets of x's bounds; ε is split equally
# note: between the noise (if any noisy statistic) and each quantile. L1/L2 are in ranks (rows).
# note: visits: 3 groups/unit, 4 rows/group, cost in [0, 2000], age in [0, 100]; region public.

# title: MEDIAN with catalog bounds
SELECT MEDIAN(age) FROM visits;
# plan: exponential stats/unit=1 groups/unit=1 rows/group=4 selection=public | MEDIAN(age) in [0, 100] L1=4 L2=4

# title: QUANTILE_CONT and QUANTILE with aliases
SELECT QUANTILE_CONT(cost, 0.9) AS p90, QUANTILE(cost, 0.1) AS p10 FROM visits;
# plan: exponential stats/unit=2 groups/unit=1 rows/group=4 selection=public | p90=QUANTILE_CONT(cost, 0.9) in [0, 2000] L1=4 L2=4 | p10=QUANTILE(cost, 0.1) in [0, 2000] L1=4 L2=4

# title: APPROX_QUANTILE is a quantile
SELECT APPROX_QUANTILE(age, 0.25) FROM visits;
# plan: exponential stats/unit=1 groups/unit=1 rows/group=4 selection=public | APPROX_QUANTILE(age, 0.25) in [0, 100] L1=4 L2=4

# title: PERCENTILE_CONT WITHIN GROUP
SELECT PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY age) AS median_age FROM visits;
# plan: exponential stats/unit=1 groups/unit=1 rows/group=4 selection=public | median_age=PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY age) in [0, 100] L1=4 L2=4

# title: PERCENTILE_CONT WITHIN GROUP descending is the complementary quantile
SELECT PERCENTILE_CONT(0.9) WITHIN GROUP (ORDER BY cost DESC) FROM visits;
# plan: exponential stats/unit=1 groups/unit=1 rows/group=4 selection=public | PERCENTILE_CONT(0.9) WITHIN GROUP (ORDER BY cost DESC NULLS LAST) in [0, 2000] L1=4 L2=4

# title: MEDIAN and the 0.5 quantile are one release
SELECT MEDIAN(cost) AS a, QUANTILE_CONT(cost, 0.5) AS b FROM visits;
# plan: exponential stats/unit=1 groups/unit=1 rows/group=4 selection=public | a=MEDIAN(cost) in [0, 2000] L1=4 L2=4 | b=MEDIAN(cost) in [0, 2000] L1=4 L2=4

# title: MEDIAN per public key with a count
SELECT region, MEDIAN(cost), COUNT(*) FROM visits GROUP BY region;
# plan: laplace stats/unit=6 groups/unit=3 rows/group=4 selection=public | region | MEDIAN(cost) in [0, 2000] L1=12 L2=6.9282 | COUNT(*) L1=12 L2=6.9282

# title: MEDIAN per private key uses the noisy unit count for selection
SELECT specialty, MEDIAN(age) FROM visits GROUP BY specialty;
# plan: laplace stats/unit=6 groups/unit=3 rows/group=4 selection=laplace_threshold | specialty | MEDIAN(age) in [0, 100] L1=12 L2=6.9282

# title: MEDIAN of a clamped unbounded column
SELECT MEDIAN(LEAST(GREATEST(race, 1), 9)) FROM pums;
# plan: exponential stats/unit=1 groups/unit=1 rows/group=2 selection=public | MEDIAN(LEAST(GREATEST(race, 1), 9)) in [1, 9] L1=2 L2=2

# title: MEDIAN with a rows-per-unit limit
SELECT region, MEDIAN(cost) FROM claims GROUP BY region;
# plan: exponential stats/unit=4 groups/unit=4 rows/group=3 rows/unit=5 selection=public | region | MEDIAN(cost) in [0, 1000] L1=5 L2=3.60555

# title: MEDIAN under row-level privacy
SELECT MEDIAN(age) FROM people;
# plan: exponential stats/unit=1 groups/unit=1 rows/group=1 rows/unit=1 selection=public | MEDIAN(age) in [0, 100] L1=1 L2=1

# title: quantiles in post-processing
SELECT region, MEDIAN(cost) - AVG(cost) AS skew FROM visits GROUP BY region HAVING COUNT(*) > 10 ORDER BY skew;
# plan: gaussian stats/unit=12 groups/unit=3 rows/group=4 selection=public | region | skew | also MEDIAN(cost), AVG(cost), COUNT(*)

# title: MEDIAN without bounds
SELECT MEDIAN(race) FROM pums;
# error: UnsupportedQueryError: MEDIAN(race) needs bounds: declare bounds={"race": (lo, hi)} when registering the table, or write MEDIAN(LEAST(GREATEST(race, lo), hi))

# title: PERCENTILE_CONT WITHIN GROUP without bounds
SELECT PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY race) FROM pums;
# error: UnsupportedQueryError: or write PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY LEAST(GREATEST(race, lo), hi))

# title: quantile level above 1
SELECT QUANTILE_CONT(cost, 1.5) FROM visits;
# error: UnsupportedQueryError: q = 1.5 is outside [0, 1]

# title: quantile level below 0
SELECT QUANTILE_CONT(cost, -0.1) FROM visits;
# error: UnsupportedQueryError: q a numeric literal in [0, 1]

# title: quantile level from a column
SELECT QUANTILE_CONT(cost, age) FROM visits;
# error: UnsupportedQueryError: q a numeric literal in [0, 1]

# title: a list of quantile levels
SELECT QUANTILE_CONT(cost, [0.25, 0.75]) FROM visits;
# error: UnsupportedQueryError: lists, expressions and parameters are not supported

# title: quantile level as a string
SELECT QUANTILE_CONT(cost, '0.5') FROM visits;
# error: UnsupportedQueryError: q a numeric literal in [0, 1]

# title: QUANTILE_DISC is refused
SELECT QUANTILE_DISC(cost, 0.5) FROM visits;
# error: UnsupportedQueryError: `QUANTILE_DISC(cost, 0.5)` is not supported

# title: PERCENTILE_DISC WITHIN GROUP is refused
SELECT PERCENTILE_DISC(0.5) WITHIN GROUP (ORDER BY cost) FROM visits;
# error: UnsupportedQueryError: allowed: PERCENTILE_CONT(q) WITHIN GROUP (ORDER BY expr)

# title: MEDIAN of text
SELECT MEDIAN(specialty) FROM visits;
# error: UnsupportedQueryError: a numeric argument

# title: MEDIAN of a constant
SELECT MEDIAN(5) FROM visits;
# error: UnsupportedQueryError: MEDIAN is the constant 5 here

# title: MEDIAN window function
SELECT MEDIAN(age) OVER () FROM visits;
# error: UnsupportedQueryError: window function

# title: MEDIAN nested in SUM
SELECT SUM(MEDIAN(age)) FROM visits;
# error: UnsupportedQueryError: not nested in other aggregates

# note: Quantiles: MEDIAN, QUANTILE_CONT/QUANTILE/APPROX_QUANTILE(x, q), PERCENTILE_CONT(q) WITHIN GROUP (ORDER BY x).
# note: Each is an exponential mechanism over 1024 buckets of x's bounds; ε is split equally
# note: between the noise (if any noisy statistic) and each quantile. L1/L2 are in ranks (rows).
# note: visits: 3 groups/unit, 4 rows/group, cost in [0, 2000], age in [0, 100]; region public.

# title: MEDIAN with catalog bounds
SELECT MEDIAN(age) FROM visits;
# result: [(47.0215,)]
# bounding: all_pairs
# plan: exponential stats/unit=1 groups/unit=1 rows/group=4 selection=public | MEDIAN(age) in [0, 100] L1=4 L2=4

# title: QUANTILE_CONT and QUANTILE with aliases
SELECT QUANTILE_CONT(cost, 0.9) AS p90, QUANTILE(cost, 0.1) AS p10 FROM visits;
# result: [(489.258, 30.2734)]
# bounding: all_pairs
# plan: exponential stats/unit=2 groups/unit=1 rows/group=4 selection=public | p90=QUANTILE_CONT(cost, 0.9) in [0, 2000] L1=4 L2=4 | p10=QUANTILE(cost, 0.1) in [0, 2000] L1=4 L2=4

# title: APPROX_QUANTILE is a quantile
SELECT APPROX_QUANTILE(age, 0.25) FROM visits;
# result: [(32.959,)]
# bounding: all_pairs
# plan: exponential stats/unit=1 groups/unit=1 rows/group=4 selection=public | APPROX_QUANTILE(age, 0.25) in [0, 100] L1=4 L2=4

# title: PERCENTILE_CONT WITHIN GROUP
SELECT PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY age) AS median_age FROM visits;
# result: [(47.0215,)]
# bounding: all_pairs
# plan: exponential stats/unit=1 groups/unit=1 rows/group=4 selection=public | median_age=PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY age) in [0, 100] L1=4 L2=4

# title: PERCENTILE_CONT WITHIN GROUP descending is the complementary quantile
SELECT PERCENTILE_CONT(0.9) WITHIN GROUP (ORDER BY cost DESC) FROM visits;
# result: [(30.2734,)]
# bounding: all_pairs
# plan: exponential stats/unit=1 groups/unit=1 rows/group=4 selection=public | PERCENTILE_CONT(0.9) WITHIN GROUP (ORDER BY cost DESC NULLS LAST) in [0, 2000] L1=4 L2=4

# title: MEDIAN and the 0.5 quantile are one release
SELECT MEDIAN(cost) AS a, QUANTILE_CONT(cost, 0.5) AS b FROM visits;
# result: [(120.117, 120.117)]
# bounding: all_pairs
# plan: exponential stats/unit=1 groups/unit=1 rows/group=4 selection=public | a=MEDIAN(cost) in [0, 2000] L1=4 L2=4 | b=MEDIAN(cost) in [0, 2000] L1=4 L2=4

# title: MEDIAN per public key with a count
SELECT region, MEDIAN(cost), COUNT(*) FROM visits GROUP BY region;
# result: [('east north central', 124.023, 171), ('mid atlantic', 139.648, 133), ('mountain', 131.836, 101), ('new england', 83.0078, 68), ('pacific', 106.445, 265), ('south atlantic', 120.117, 158), ('west north central', 112.305, 89), ('west south central', 127.93, 71)]
# bounding: kept_rows_ranked (g=3)
# plan: laplace stats/unit=6 groups/unit=3 rows/group=4 selection=public | region | MEDIAN(cost) in [0, 2000] L1=12 L2=6.9282 | COUNT(*) L1=12 L2=6.9282

# title: MEDIAN per private key uses the noisy unit count for selection
SELECT specialty, MEDIAN(age) FROM visits GROUP BY specialty;
# result: [('allergy and immunology', 35.0098), ('anesthesiology', 61.9629), ('cardiology', 64.0137), ('cardiothoracic surgery', 31.9824), ('colorectal surgery', 50.0488), ('dermatology', 52.002), ('emergency medicine', 51.0254), ('endocrinology', 56.0059), ('gastroenterology', 52.002), ('general practice', 46.0449), ('general surgery', 39.0137), ('geriatrics', 71.0449), ('gynecology', 47.0215), ('hematology', 63.0371), ('hepatology', 43.0176), ('hyperbaric medicine', 78.9551), ('infectious disease', 26.0254), ('internal medicine', 43.9941), ('medical genetics', 17.041), ('neonatology', 27.002), ('nephrology', 48.9746), ('neurology', 39.9902), ('neurosurgery', 68.9941), ('nuclear medicine', 15.9668), ('obstetrics', 39.0137), ('occupational medicine', 56.0059), ('oncology', 27.9785), ('ophthalmology', 55.0293), ('orthopedics', 39.0137), ('otolaryngology', 65.9668), ('palliative care', 56.0059), ('pediatric oncology', 68.0176), ('pediatrics', 52.9785), ('physical therapy', 35.0098), ('plastic surgery', 21.0449), ('podiatry', 56.9824), ('psychiatry', 53.9551), ('psychology', 55.0293), ('pulmonology', 47.0215), ('radiology', 43.0176), ('rheumatology', 32.959), ('sleep medicine', 50.0488), ('sports medicine', 43.9941), ('toxicology', 72.998), ('transplant surgery', 67.041), ('tropical medicine', 78.9551), ('urology', 61.9629), ('vascular surgery', 0.0488281)]
# bounding: kept_rows_ranked (g=3)
# plan: laplace stats/unit=6 groups/unit=3 rows/group=4 selection=laplace_threshold | specialty | MEDIAN(age) in [0, 100] L1=12 L2=6.9282

# title: MEDIAN of a clamped unbounded column
SELECT MEDIAN(LEAST(GREATEST(race, 1), 9)) FROM pums;
# result: [(1.00391,)]
# bounding: all_pairs
# plan: exponential stats/unit=1 groups/unit=1 rows/group=2 selection=public | MEDIAN(LEAST(GREATEST(race, 1), 9)) in [1, 9] L1=2 L2=2

# title: MEDIAN with a rows-per-unit limit
SELECT region, MEDIAN(cost) FROM claims GROUP BY region;
# result: [('east north central', 124.512), ('mid atlantic', 139.16), ('mountain', 132.324), ('new england', 84.4727), ('pacific', 106.934), ('south atlantic', 119.629), ('west north central', 112.793), ('west south central', 121.582)]
# bounding: first_pairs_by_window (g=4)
# plan: exponential stats/unit=4 groups/unit=4 rows/group=3 rows/unit=5 selection=public | region | MEDIAN(cost) in [0, 1000] L1=5 L2=3.60555

# title: MEDIAN under row-level privacy
SELECT MEDIAN(age) FROM people;
# result: [(42.041,)]
# bounding: row_level
# plan: exponential stats/unit=1 groups/unit=1 rows/group=1 rows/unit=1 selection=public | MEDIAN(age) in [0, 100] L1=1 L2=1

# title: quantiles in post-processing
SELECT region, MEDIAN(cost) - AVG(cost) AS skew FROM visits GROUP BY region HAVING COUNT(*) > 10 ORDER BY skew;
# result: [('mid atlantic', -119.574), ('new england', -115.127), ('east north central', -104.606), ('west north central', -102.583), ('pacific', -79.9568), ('west south central', -74.4131), ('south atlantic', -69.7422), ('mountain', -69.5528)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=12 groups/unit=3 rows/group=4 selection=public | region | skew | also MEDIAN(cost), AVG(cost), COUNT(*)

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

# note: BigQuery's APPROX_QUANTILES(x, n): the n + 1 quantiles at 0, 1/n, ..., 1 as an array,
# note: each its own exponential mechanism over one histogram with ε/(n + 1) (more shares with
# note: other aggregates), sorted after the release (post-processing).

# title: APPROX_QUANTILES releases n + 1 quantiles as a sorted array
# dialect: bigquery
SELECT APPROX_QUANTILES(age, 4) AS quartiles FROM visits;
# result: [([0.048828125, 32.958984375, 47.021484375, 64.013671875, 99.951171875],)]
# bounding: all_pairs
# plan: exponential stats/unit=5 groups/unit=1 rows/group=4 selection=public | quartiles | also APPROX_QUANTILES(age, 4)[OFFSET(0)], APPROX_QUANTILES(age, 4)[OFFSET(1)], APPROX_QUANTILES(age, 4)[OFFSET(2)], APPROX_QUANTILES(age, 4)[OFFSET(3)], APPROX_QUANTILES(age, 4)[OFFSET(4)]

# title: APPROX_QUANTILES elements and length by public key
# dialect: bigquery
SELECT region, APPROX_QUANTILES(age, 2)[OFFSET(1)] AS median, APPROX_QUANTILES(age, 2)[ORDINAL(3)] AS top, ARRAY_LENGTH(APPROX_QUANTILES(age, 2)) AS n FROM visits GROUP BY region;
# result: [('east north central', 43.0176, 99.9512, 3), ('mid atlantic', 43.9941, 97.0215, 3), ('mountain', 51.0254, 89.0137, 3), ('new england', 48.9746, 97.998, 3), ('pacific', 48.9746, 99.9512, 3), ('south atlantic', 47.0215, 99.9512, 3), ('west north central', 46.0449, 97.0215, 3), ('west south central', 52.002, 89.0137, 3)]
# bounding: kept_rows_ranked (g=3)
# plan: exponential stats/unit=9 groups/unit=3 rows/group=4 selection=public | region | median | top | n | also APPROX_QUANTILES(age, 2)[OFFSET(0)], APPROX_QUANTILES(age, 2)[OFFSET(1)], APPROX_QUANTILES(age, 2)[OFFSET(2)]

# title: APPROX_QUANTILES with per-row bounds beside a count
# dialect: bigquery
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1) APPROX_QUANTILES(cost, 3, contribution_bounds_per_row => (0, 300)) AS q, COUNT(*) AS n FROM visits;
# result: [([0.146484375, 78.076171875, 185.009765625, 299.853515625], 1056)]
# bounding: all_pairs
# plan: laplace stats/unit=5 groups/unit=1 rows/group=4 selection=public | q | n=COUNT(*) L1=4 L2=4 | also APPROX_QUANTILES(cost, 3, contribution_bounds_per_row => (0, 300))[OFFSET(0)], APPROX_QUANTILES(cost, 3, contribution_bounds_per_row => (0, 300))[OFFSET(1)], APPROX_QUANTILES(cost, 3, contribution_bounds_per_row => (0, 300))[OFFSET(2)], APPROX_QUANTILES(cost, 3, contribution_bounds_per_row => (0, 300))[OFFSET(3)]

# title: APPROX_QUANTILES in DuckDB indexes from one
SELECT APPROX_QUANTILES(age, 4)[2] AS q1 FROM visits;
# result: [(32.959,)]
# bounding: all_pairs
# plan: exponential stats/unit=5 groups/unit=1 rows/group=4 selection=public | q1 | also APPROX_QUANTILES(age, 4)[OFFSET(0)], APPROX_QUANTILES(age, 4)[OFFSET(1)], APPROX_QUANTILES(age, 4)[OFFSET(2)], APPROX_QUANTILES(age, 4)[OFFSET(3)], APPROX_QUANTILES(age, 4)[OFFSET(4)]

# title: APPROX_QUANTILES with FILTER
SELECT APPROX_QUANTILES(age, 4) FILTER (WHERE cost > 100) AS q FROM visits;
# result: [([0.048828125, 32.958984375, 47.998046875, 64.990234375, 99.951171875],)]
# bounding: all_pairs
# plan: exponential stats/unit=5 groups/unit=1 rows/group=4 selection=public | q | also APPROX_QUANTILES(age, 4) FILTER(WHERE cost > 100)[OFFSET(0)], APPROX_QUANTILES(age, 4) FILTER(WHERE cost > 100)[OFFSET(1)], APPROX_QUANTILES(age, 4) FILTER(WHERE cost > 100)[OFFSET(2)], APPROX_QUANTILES(age, 4) FILTER(WHERE cost > 100)[OFFSET(3)], APPROX_QUANTILES(age, 4) FILTER(WHERE cost > 100)[OFFSET(4)]

# title: APPROX_QUANTILES of zero quantiles
# dialect: bigquery
SELECT APPROX_QUANTILES(age, 0) FROM visits;
# error: UnsupportedQueryError: n an integer literal from 1 to 100

# title: APPROX_QUANTILES of more than 100 quantiles
# dialect: bigquery
SELECT APPROX_QUANTILES(age, 101) FROM visits;
# error: UnsupportedQueryError: n an integer literal from 1 to 100

# title: APPROX_QUANTILES indexed by an expression
# dialect: bigquery
SELECT region, APPROX_QUANTILES(age, 2)[OFFSET(ARRAY_LENGTH(APPROX_QUANTILES(age, 2)) - 1)] FROM visits GROUP BY region;
# error: UnsupportedQueryError: with i an integer literal

# title: APPROX_QUANTILES with per-group bounds
# dialect: bigquery
SELECT APPROX_QUANTILES(cost, 2, contribution_bounds_per_group => (0, 300)) FROM visits;
# error: UnsupportedQueryError: A quantile ranks rows

# title: array index on a group key
# dialect: bigquery
SELECT region, COUNT(*), region[OFFSET(0)] FROM visits GROUP BY region;
# error: UnsupportedQueryError: APPROX_QUANTILES(x, n)[OFFSET(i)]

# title: a scalar function of APPROX_QUANTILES' array is refused before the charge
# note: found by the fuzzer; read an element first: ROUND(APPROX_QUANTILES(age, 4)[2], 1)
SELECT ROUND(APPROX_QUANTILES(age, 4), 1) AS q FROM visits;
# error: UnsupportedQueryError: APPROX_QUANTILES releases an array: read its elements with [i]

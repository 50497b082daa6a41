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

# note: VAR_POP/VAR_SAMP/VARIANCE/STDDEV_POP/STDDEV_SAMP/STDDEV, COUNT(DISTINCT expr), and
# note: post-processing over them. A variance reads three statistics (count, centred sum,
# note: centred sum of squared deviations); the plan shows the last one's sensitivity: per row
# note: ((hi - lo) / 2)^2 / 2. A distinct count moves by at most c = rows/group per group.

# title: VAR_POP from three bounded sums
SELECT VAR_POP(age) FROM visits;
# result: [(468.13,)]
# bounding: all_pairs
# plan: laplace stats/unit=3 groups/unit=1 rows/group=4 selection=public | VAR_POP(age) in [0, 100] L1=5000 L2=5000

# title: VAR_SAMP and VARIANCE are the same release
SELECT VAR_SAMP(age) AS a, VARIANCE(age) AS b FROM visits;
# result: [(468.574, 468.574)]
# bounding: all_pairs
# plan: laplace stats/unit=3 groups/unit=1 rows/group=4 selection=public | a=VARIANCE(age) in [0, 100] L1=5000 L2=5000 | b=VARIANCE(age) in [0, 100] L1=5000 L2=5000

# title: STDDEV_POP of a bounded column
SELECT STDDEV_POP(cost) FROM visits;
# result: [(267.507,)]
# bounding: all_pairs
# plan: laplace stats/unit=3 groups/unit=1 rows/group=4 selection=public | STDDEV_POP(cost) in [0, 2000] L1=2e+06 L2=2e+06

# title: STDDEV and STDDEV_SAMP
SELECT STDDEV(age) AS s, STDDEV_SAMP(age) AS t FROM visits;
# result: [(21.6466, 21.6466)]
# bounding: all_pairs
# plan: laplace stats/unit=3 groups/unit=1 rows/group=4 selection=public | s=STDDEV(age) in [0, 100] L1=5000 L2=5000 | t=STDDEV_SAMP(age) in [0, 100] L1=5000 L2=5000

# title: AVG and STDDEV share the count and the centred sum
SELECT AVG(age), STDDEV(age), COUNT(age) FROM visits;
# result: [(48.1856, 21.6466, 1056)]
# bounding: all_pairs
# plan: laplace stats/unit=3 groups/unit=1 rows/group=4 selection=public | AVG(age) in [0, 100] L1=200 L2=200 | STDDEV(age) in [0, 100] L1=5000 L2=5000 | COUNT(age) L1=4 L2=4

# title: VAR_POP per public group
SELECT region, VAR_POP(age) AS v FROM visits GROUP BY region;
# result: [('east north central', 539.513), ('mid atlantic', 478.461), ('mountain', 356.939), ('new england', 643.556), ('pacific', 494.023), ('south atlantic', 396.171), ('west north central', 418.09), ('west south central', 311.543)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=9 groups/unit=3 rows/group=4 selection=public | region | v=VAR_POP(age) in [0, 100] L1=15000 L2=8660.25

# title: STDDEV per private group
SELECT specialty, STDDEV(cost) FROM visits GROUP BY specialty;
# result: [('allergy and immunology', 415.835), ('anesthesiology', 71.1262), ('cardiology', 438.689), ('cardiothoracic surgery', 255.152), ('colorectal surgery', 647.996), ('dermatology', 426.304), ('emergency medicine', 216.185), ('endocrinology', 421.224), ('gastroenterology', 156.141), ('general practice', 179.862), ('general surgery', 341.209), ('geriatrics', 188.222), ('gynecology', 220.493), ('hematology', 317.47), ('hepatology', 318.644), ('hyperbaric medicine', 464.496), ('infectious disease', 226.248), ('internal medicine', 178.724), ('medical genetics', 32.1066), ('neonatology', 0.0), ('nephrology', 308.751), ('neurology', 129.624), ('neurosurgery', 79.341), ('nuclear medicine', 810.132), ('obstetrics', 151.823), ('occupational medicine', 149.362), ('oncology', 178.083), ('ophthalmology', 147.224), ('orthopedics', 212.257), ('otolaryngology', 159.629), ('palliative care', 591.907), ('pediatric oncology', 399.224), ('pediatrics', 256.281), ('physical therapy', 402.441), ('plastic surgery', 36.3806), ('podiatry', 8.88835), ('psychiatry', 224.17), ('psychology', 109.492), ('pulmonology', 191.378), ('radiology', 467.78), ('rheumatology', 376.122), ('sleep medicine', 47.7343), ('sports medicine', 91.4772), ('toxicology', 0.0), ('transplant surgery', 94.1774), ('tropical medicine', 38.5656), ('urology', 537.712), ('vascular surgery', 40.001)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=9 groups/unit=3 rows/group=4 selection=truncated_geometric | specialty | STDDEV(cost) in [0, 2000] L1=6e+06 L2=3.4641e+06

# title: VAR_POP with a total row cap
SELECT region, VAR_POP(cost) FROM claims GROUP BY region;
# result: [('east north central', 53246.8), ('mid atlantic', 67289.9), ('mountain', 43899.6), ('new england', 47022.4), ('pacific', 41250.1), ('south atlantic', 35558.4), ('west north central', 55643.2), ('west south central', 41470.9)]
# bounding: first_pairs_by_window (g=4)
# plan: laplace stats/unit=12 groups/unit=4 rows/group=3 rows/unit=5 selection=public | region | VAR_POP(cost) in [0, 1000] L1=625000 L2=450694

# title: VARIANCE of a clamped column
SELECT VARIANCE(LEAST(GREATEST(income, 0), 100000)) FROM pums;
# result: [(895953000.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=3 groups/unit=1 rows/group=2 selection=public | VARIANCE(LEAST(GREATEST(income, 0), 100000)) in [0, 100000] L1=2.5e+09 L2=2.5e+09

# title: STDDEV of a derived value
SELECT STDDEV(cost / 100 + age) FROM visits;
# result: [(21.838,)]
# bounding: all_pairs
# plan: laplace stats/unit=3 groups/unit=1 rows/group=4 selection=public | STDDEV(cost / 100 + age) in [0, 120] L1=7200 L2=7200

# title: VAR_POP with FILTER
SELECT VAR_POP(age) FILTER (WHERE specialty = 'cardiology') FROM visits;
# result: [(547.161,)]
# bounding: all_pairs
# plan: laplace stats/unit=3 groups/unit=1 rows/group=4 selection=public | VAR_POP(age) FILTER(WHERE specialty = 'cardiology') in [0, 100] L1=5000 L2=5000

# title: VAR_POP of a CASE indicator
SELECT VAR_POP(CASE WHEN age > 65 THEN 1 ELSE 0 END) FROM visits;
# result: [(0.179695,)]
# bounding: all_pairs
# plan: laplace stats/unit=3 groups/unit=1 rows/group=4 selection=public | VAR_POP(CASE WHEN age > 65 THEN 1 ELSE 0 END) in [0, 1] L1=0.5 L2=0.5

# title: STDDEV on a row-level table
SELECT STDDEV_POP(age) FROM people;
# result: [(17.7365,)]
# bounding: row_level
# plan: laplace stats/unit=3 groups/unit=1 rows/group=1 rows/unit=1 selection=public | STDDEV_POP(age) in [0, 100] L1=1250 L2=1250

# title: ROUND over STDDEV is post-processing
SELECT ROUND(STDDEV(age), 1) AS sd FROM visits;
# result: [(21.6,)]
# bounding: all_pairs
# plan: laplace stats/unit=3 groups/unit=1 rows/group=4 selection=public | sd | also STDDEV(age)

# title: coefficient of variation from two noisy aggregates
SELECT STDDEV(cost) / AVG(cost) AS cv FROM visits;
# result: [(1.28306,)]
# bounding: all_pairs
# plan: laplace stats/unit=3 groups/unit=1 rows/group=4 selection=public | cv | also STDDEV(cost), AVG(cost)

# title: HAVING on a variance
SELECT region, COUNT(*) AS n FROM visits GROUP BY region HAVING VAR_POP(age) > 100;
# result: [('east north central', 171), ('mid atlantic', 133), ('mountain', 101), ('new england', 68), ('pacific', 265), ('south atlantic', 158), ('west north central', 89), ('west south central', 71)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=12 groups/unit=3 rows/group=4 selection=public | region | n=COUNT(*) L1=12 L2=6.9282 | also VAR_POP(age)

# title: ORDER BY a standard deviation
SELECT region, STDDEV(cost) AS s FROM visits GROUP BY region ORDER BY s DESC LIMIT 3;
# result: [('mid atlantic', 344.328), ('east north central', 299.937), ('new england', 289.953)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=9 groups/unit=3 rows/group=4 selection=public | region | s=STDDEV(cost) in [0, 2000] L1=6e+06 L2=3.4641e+06

# title: VARIANCE without bounds is refused
SELECT VARIANCE(race) FROM pums;
# error: UnsupportedQueryError: VARIANCE(race) needs bounds: declare bounds={"race": (lo, hi)}

# title: STDDEV of a constant is refused
SELECT STDDEV(1) FROM visits;
# error: UnsupportedQueryError: STDDEV: `STDDEV(1)` is not supported

# title: VAR_POP of text is refused
SELECT VAR_POP(specialty) FROM visits;
# error: UnsupportedQueryError: VAR_POP: `VAR_POP(specialty)` is not supported; allowed: a numeric argument

# title: STDDEV DISTINCT is refused
SELECT STDDEV(DISTINCT age) FROM visits;
# error: UnsupportedQueryError: DISTINCT is allowed only in COUNT(DISTINCT expr)

# title: COUNT DISTINCT of a non-unit column
SELECT COUNT(DISTINCT specialty) AS specialties FROM visits;
# result: [(48,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | specialties=COUNT(DISTINCT specialty) L1=4 L2=4

# title: COUNT DISTINCT on a row-level table
SELECT COUNT(DISTINCT age) FROM people;
# result: [(73,)]
# bounding: row_level
# plan: laplace stats/unit=1 groups/unit=1 rows/group=1 rows/unit=1 selection=public | COUNT(DISTINCT age) L1=1 L2=1

# title: COUNT DISTINCT per public group
SELECT region, COUNT(DISTINCT specialty) AS specialties FROM visits GROUP BY region;
# result: [('east north central', 33), ('mid atlantic', 23), ('mountain', 25), ('new england', 15), ('pacific', 34), ('south atlantic', 28), ('west north central', 21), ('west south central', 15)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | specialties=COUNT(DISTINCT specialty) L1=12 L2=6.9282

# title: COUNT DISTINCT per private group
SELECT specialty, COUNT(DISTINCT age) AS ages FROM visits GROUP BY specialty;
# result: [('allergy and immunology', 5), ('anesthesiology', 3), ('cardiology', 22), ('cardiothoracic surgery', 2), ('colorectal surgery', 3), ('dermatology', 24), ('emergency medicine', 57), ('endocrinology', 9), ('gastroenterology', 8), ('general practice', 78), ('general surgery', 9), ('geriatrics', 4), ('gynecology', 19), ('hematology', 5), ('hepatology', 4), ('hyperbaric medicine', 3), ('infectious disease', 5), ('internal medicine', 36), ('medical genetics', 2), ('neonatology', 1), ('nephrology', 7), ('neurology', 8), ('neurosurgery', 4), ('nuclear medicine', 2), ('obstetrics', 14), ('occupational medicine', 5), ('oncology', 7), ('ophthalmology', 11), ('orthopedics', 18), ('otolaryngology', 4), ('palliative care', 2), ('pediatric oncology', 1), ('pediatrics', 32), ('physical therapy', 7), ('plastic surgery', 2), ('podiatry', 2), ('psychiatry', 7), ('psychology', 7), ('pulmonology', 10), ('radiology', 12), ('rheumatology', 6), ('sleep medicine', 3), ('sports medicine', 3), ('toxicology', 1), ('transplant surgery', 2), ('tropical medicine', 2), ('urology', 3), ('vascular surgery', 2)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=truncated_geometric | specialty | ages=COUNT(DISTINCT age) L1=12 L2=6.9282

# title: COUNT DISTINCT ignores the total row cap in its sensitivity
SELECT region, COUNT(DISTINCT specialty) FROM claims GROUP BY region;
# result: [('east north central', 32), ('mid atlantic', 23), ('mountain', 24), ('new england', 14), ('pacific', 33), ('south atlantic', 28), ('west north central', 21), ('west south central', 15)]
# bounding: first_pairs_by_window (g=4)
# plan: laplace stats/unit=4 groups/unit=4 rows/group=3 rows/unit=5 selection=public | region | COUNT(DISTINCT specialty) L1=12 L2=6

# title: COUNT DISTINCT of an expression
SELECT COUNT(DISTINCT date_trunc('month', visit_date)) AS months FROM visits;
# result: [(72,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | months=COUNT(DISTINCT DATE_TRUNC('MONTH', visit_date)) L1=4 L2=4

# title: COUNT DISTINCT of a concatenation counts combinations
SELECT COUNT(DISTINCT region || '/' || specialty) FROM visits;
# result: [(195,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(DISTINCT region || '/' || specialty) L1=4 L2=4

# title: COUNT DISTINCT with FILTER
SELECT COUNT(DISTINCT specialty) FILTER (WHERE age > 65) FROM visits;
# result: [(37,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(DISTINCT specialty) FILTER(WHERE age > 65) L1=4 L2=4

# title: COUNT DISTINCT of people and of values together
SELECT COUNT(DISTINCT patient_id) AS patients, COUNT(DISTINCT specialty) AS specialties, COUNT(*) AS visits FROM visits;
# result: [(412, 48, 1056)]
# bounding: all_pairs
# plan: laplace stats/unit=3 groups/unit=1 rows/group=4 selection=public | patients=COUNT(DISTINCT patient_id) L1=1 L2=1 | specialties=COUNT(DISTINCT specialty) L1=4 L2=4 | visits=COUNT(*) L1=4 L2=4

# title: COUNT DISTINCT next to a quantile
SELECT region, COUNT(DISTINCT specialty), MEDIAN(age) FROM visits GROUP BY region;
# result: [('east north central', 33, 43.0176), ('mid atlantic', 23, 43.9941), ('mountain', 25, 51.0254), ('new england', 15, 48.9746), ('pacific', 34, 48.9746), ('south atlantic', 28, 47.0215), ('west north central', 21, 46.0449), ('west south central', 15, 52.002)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=6 groups/unit=3 rows/group=4 selection=public | region | COUNT(DISTINCT specialty) L1=12 L2=6.9282 | MEDIAN(age) in [0, 100] L1=12 L2=6.9282

# title: COUNT DISTINCT of a unit-only CASE counts people
SELECT region, COUNT(DISTINCT CASE WHEN cost > 1000 THEN patient_id END) AS big_spenders FROM visits GROUP BY region;
# result: [('east north central', 7), ('mid atlantic', 8), ('mountain', 3), ('new england', 4), ('pacific', 8), ('south atlantic', 5), ('west north central', 2), ('west south central', 3)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | big_spenders=COUNT(DISTINCT CASE WHEN cost > 1000 THEN patient_id END) L1=3 L2=1.73205

# title: COUNT DISTINCT of two columns is refused
SELECT COUNT(DISTINCT specialty, region) FROM visits;
# error: UnsupportedQueryError: Count distinct combinations with COUNT(DISTINCT a || '/' || b)

# title: COUNT DISTINCT of NULL is refused
SELECT COUNT(DISTINCT NULL) FROM visits;
# error: UnsupportedQueryError: COUNT(DISTINCT ...): `COUNT(DISTINCT NULL)` is not supported

# title: CASE over a noisy count labels groups
SELECT region, CASE WHEN COUNT(*) > 100 THEN 'big' ELSE 'small' END AS size FROM visits GROUP BY region;
# result: [('east north central', 'big'), ('mid atlantic', 'big'), ('mountain', 'big'), ('new england', 'small'), ('pacific', 'big'), ('south atlantic', 'big'), ('west north central', 'small'), ('west south central', 'small')]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | size | also COUNT(*)

# title: ROUND of an average to one decimal
SELECT region, ROUND(AVG(age), 1) AS mean_age FROM visits GROUP BY region;
# result: [('east north central', 43.7), ('mid atlantic', 47.5), ('mountain', 51.4), ('new england', 50.9), ('pacific', 48.1), ('south atlantic', 49.0), ('west north central', 48.2), ('west south central', 51.3)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=6 groups/unit=3 rows/group=4 selection=public | region | mean_age | also AVG(age)

# title: HAVING on a SUM
SELECT region, SUM(cost) AS total FROM visits GROUP BY region HAVING SUM(cost) > 10;
# result: [('east north central', 39095.6), ('mid atlantic', 34476.6), ('mountain', 20340.3), ('new england', 13473.1), ('pacific', 49396.6), ('south atlantic', 29997.8), ('west north central', 19125.0), ('west south central', 14366.3)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | total=SUM(cost) in [0, 2000] L1=24000 L2=13856.4

# title: modulo of noisy aggregates is NULL for a zero divisor
SELECT region, SUM(cost) % COUNT(*) AS rest FROM visits GROUP BY region;
# result: [('east north central', 107.619), ('mid atlantic', 29.6462), ('mountain', 39.2646), ('new england', 9.14726), ('pacific', 106.57), ('south atlantic', 135.778), ('west north central', 79.0356), ('west south central', 24.3387)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=6 groups/unit=3 rows/group=4 selection=public | region | rest | also SUM(cost), COUNT(*)

# title: HAVING on a filtered count
SELECT region, COUNT(*) AS n FROM visits GROUP BY region HAVING COUNT(*) FILTER (WHERE age > 65) > 10;
# result: [('east north central', 171), ('mid atlantic', 133), ('mountain', 101), ('new england', 68), ('pacific', 265), ('south atlantic', 158), ('west north central', 89), ('west south central', 71)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=6 groups/unit=3 rows/group=4 selection=public | region | n=COUNT(*) L1=12 L2=6.9282 | also COUNT(*) FILTER(WHERE age > 65)

# title: post-processing over a distinct count
SELECT region, COUNT(DISTINCT specialty) * 100 / COUNT(DISTINCT patient_id) AS per_hundred FROM visits GROUP BY region;
# result: [('east north central', 52.381), ('mid atlantic', 42.5926), ('mountain', 60.9756), ('new england', 65.2174), ('pacific', 31.4815), ('south atlantic', 49.1228), ('west north central', 58.3333), ('west south central', 50.0)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=6 groups/unit=3 rows/group=4 selection=public | region | per_hundred | also COUNT(DISTINCT specialty), COUNT(DISTINCT patient_id)

# title: CASE over a variance
SELECT CASE WHEN STDDEV(age) > 20 THEN 'spread' ELSE 'tight' END AS shape FROM visits;
# result: [('spread',)]
# bounding: all_pairs
# plan: laplace stats/unit=3 groups/unit=1 rows/group=4 selection=public | shape | also STDDEV(age)

# title: raw column inside a CASE over aggregates is refused
SELECT CASE WHEN age > 65 THEN COUNT(*) ELSE 0 END FROM visits;
# error: UnsupportedQueryError: SELECT: `age` is not supported

# title: raw column in HAVING next to a FILTER is refused
SELECT region, COUNT(*) FILTER (WHERE age > 65) FROM visits GROUP BY region HAVING cost > 5;
# error: UnsupportedQueryError: HAVING: `cost` is not supported

# title: raw column in ORDER BY expression is refused
SELECT region, COUNT(*) FROM visits GROUP BY region ORDER BY COUNT(*) + age;
# error: UnsupportedQueryError: ORDER BY: `age` is not supported

# title: raw column inside ROUND over an aggregate is refused
SELECT ROUND(AVG(cost), age) FROM visits;
# error: UnsupportedQueryError: SELECT: `age` is not supported

# title: PERCENTILE_CONT WITHIN GROUP with FILTER
SELECT PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY age) FILTER (WHERE cost > 100) AS m FROM visits;
# result: [(47.998,)]
# bounding: all_pairs
# plan: exponential stats/unit=1 groups/unit=1 rows/group=4 selection=public | m=PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY age) FILTER(WHERE cost > 100) in [0, 100] L1=4 L2=4

# title: ORDER BY a filtered sum that is not selected
SELECT region FROM visits GROUP BY region ORDER BY SUM(cost) FILTER (WHERE age > 50) DESC LIMIT 2;
# result: [('pacific',), ('south atlantic',)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | also SUM(cost) FILTER(WHERE age > 50)

# title: COUNT DISTINCT with FILTER on a row-level table
SELECT COUNT(DISTINCT age) FILTER (WHERE age > 50) FROM people;
# result: [(40,)]
# bounding: row_level
# plan: laplace stats/unit=1 groups/unit=1 rows/group=1 rows/unit=1 selection=public | COUNT(DISTINCT age) FILTER(WHERE age > 50) L1=1 L2=1

# title: COUNT DISTINCT per public group with a total row cap
SELECT specialty, COUNT(DISTINCT region) FROM claims GROUP BY specialty;
# result: [('cardiology', 8), ('oncology', 5)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=2 rows/group=3 rows/unit=5 selection=public | specialty | COUNT(DISTINCT region) L1=6 L2=4.24264

# title: STDDEV with BigQuery per-row bounds
SELECT STDDEV(cost, contribution_bounds_per_row => (0, 100)) FROM visits;
# result: [(28.8219,)]
# bounding: all_pairs
# plan: laplace stats/unit=3 groups/unit=1 rows/group=4 selection=public | STDDEV(cost, contribution_bounds_per_row => (0, 100)) in [0, 100] L1=5000 L2=5000

# title: VAR_POP with BigQuery per-group bounds is refused
SELECT VAR_POP(age, contribution_bounds_per_group => (0, 10)) FROM visits;
# error: UnsupportedQueryError: VARIANCE_POP: `VARIANCE_POP(age, contribution_bounds_per_group => (0, 10))` is not supported

# title: VAR_POP in the differential privacy clause
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 1e-6, privacy_unit_column = patient_id) VAR_POP(age) FROM visits;
# result: [(468.13,)]
# bounding: all_pairs
# plan: laplace stats/unit=3 groups/unit=1 rows/group=4 selection=public | VAR_POP(age) in [0, 100] L1=5000 L2=5000

# title: COUNT DISTINCT after a join with a public lookup
SELECT r.region, COUNT(DISTINCT v.specialty) FROM visits v JOIN regions r ON v.region = r.region GROUP BY r.region;
# result: [('east north central', 33), ('mid atlantic', 23), ('mountain', 25), ('new england', 15), ('pacific', 34), ('south atlantic', 28), ('west north central', 21), ('west south central', 15)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | COUNT(DISTINCT specialty) L1=12 L2=6.9282

# title: COUNT DISTINCT and VAR_POP of derived columns of a subquery
SELECT COUNT(DISTINCT m) AS months, VAR_POP(a) AS v FROM (SELECT patient_id, date_trunc('month', visit_date) AS m, age AS a FROM visits);
# result: [(72, 468.13)]
# bounding: all_pairs
# plan: laplace stats/unit=4 groups/unit=1 rows/group=4 selection=public | months=COUNT(DISTINCT m) L1=4 L2=4 | v=VAR_POP(a) in [0, 100] L1=5000 L2=5000

# note: readings: value in [0, 10] with NaN, NULL and ±inf rows (grammar_tests/catalog.py). A NaN
# note: value is missing from every statistic, as NULL is; ±inf is clamped to the bounds. Each
# note: result is DuckDB's aggregate over the non-NaN values clamped to [0, 10] (the median to
# note: its bucket of width 10/1024).

# title: VAR_POP and STDDEV_POP skip NaN values as they skip NULLs
SELECT VAR_POP(value) AS v, STDDEV_POP(value) AS s FROM readings;
# result: [(12.7861, 3.57576)]
# bounding: all_pairs
# plan: laplace stats/unit=3 groups/unit=1 rows/group=4 selection=public | v=VAR_POP(value) in [0, 10] L1=50 L2=50 | s=STDDEV_POP(value) in [0, 10] L1=50 L2=50

# title: VAR_SAMP, AVG, SUM and COUNT skip NaN values alike
SELECT VAR_SAMP(value) AS v, AVG(value) AS a, SUM(value) AS s, COUNT(value) AS n FROM readings;
# result: [(12.8484, 6.05437, 1247.2, 206)]
# bounding: all_pairs
# plan: laplace stats/unit=3 groups/unit=1 rows/group=4 selection=public | v=VARIANCE(value) in [0, 10] L1=50 L2=50 | a=AVG(value) in [0, 10] L1=20 L2=20 | s=SUM(value) in [0, 10] L1=40 L2=40 | n=COUNT(value) L1=4 L2=4

# title: MEDIAN skips NaN values
SELECT MEDIAN(value) AS m FROM readings;
# result: [(6.54785,)]
# bounding: all_pairs
# plan: exponential stats/unit=1 groups/unit=1 rows/group=4 selection=public | m=MEDIAN(value) in [0, 10] L1=4 L2=4

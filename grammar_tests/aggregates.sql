# note: Aggregates: COUNT(*), COUNT(expr), COUNT(DISTINCT <privacy unit>), SUM, AVG
# note: (quantiles are in quantiles.sql).
# note: visits: 3 groups/unit, 4 rows/group, cost in [0, 2000], age in [0, 100].
# note: A global aggregate touches one group, so one unit adds at most 4 rows.

# title: COUNT of non-NULL values
SELECT COUNT(cost) FROM visits;
# result: [(1056,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(cost) L1=4 L2=4

# title: COUNT of a constant
SELECT COUNT(1) FROM visits;
# result: [(1056,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(1) L1=4 L2=4

# title: COUNT of a row-level expression
SELECT COUNT(COALESCE(cost, age)) FROM visits;
# result: [(1056,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(COALESCE(cost, age)) L1=4 L2=4

# title: COUNT DISTINCT of the privacy unit counts people
SELECT COUNT(DISTINCT patient_id) AS patients FROM visits;
# result: [(412,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | patients=COUNT(DISTINCT patient_id) L1=1 L2=1

# title: COUNT DISTINCT of the qualified privacy unit
SELECT COUNT(DISTINCT v.patient_id) FROM visits v;
# result: [(412,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(DISTINCT patient_id) L1=1 L2=1

# title: COUNT DISTINCT of another table's privacy unit
SELECT COUNT(DISTINCT pid) FROM pums;
# result: [(1000,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=2 selection=public | COUNT(DISTINCT pid) L1=1 L2=1

# title: SUM with catalog bounds
SELECT SUM(cost) FROM visits;
# result: [(220271.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(cost) in [0, 2000] L1=8000 L2=8000

# title: AVG is a count and a centred sum
SELECT AVG(cost) FROM visits;
# result: [(208.59,)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | AVG(cost) in [0, 2000] L1=4000 L2=4000

# title: AVG with a lower bound above zero
SELECT AVG(educ) FROM pums;
# result: [(9.90013,)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=2 selection=public | AVG(educ) in [1, 16] L1=15 L2=15

# title: SUM of a constant is a bounded count
SELECT SUM(1) FROM visits;
# result: [(1056.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(1) in [1, 1] L1=4 L2=4

# title: every aggregate at once shares statistics
SELECT COUNT(*), COUNT(cost), SUM(cost), AVG(cost), COUNT(DISTINCT patient_id) FROM visits;
# result: [(1056, 1056, 220271.0, 208.59, 412)]
# bounding: all_pairs
# plan: laplace stats/unit=4 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4 | COUNT(cost) L1=4 L2=4 | SUM(cost) in [0, 2000] L1=8000 L2=8000 | AVG(cost) in [0, 2000] L1=4000 L2=4000 | COUNT(DISTINCT patient_id) L1=1 L2=1

# title: the same aggregate twice is computed once
SELECT COUNT(*) AS a, COUNT(*) AS b FROM visits;
# result: [(1056, 1056)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | a=COUNT(*) L1=4 L2=4 | b=COUNT(*) L1=4 L2=4

# title: MIN is refused
SELECT MIN(cost) FROM visits;
# error: UnsupportedQueryError: allowed: COUNT(*), COUNT(expr), COUNT(DISTINCT expr), SUM(expr), AVG(expr)

# title: MAX is refused
SELECT MAX(age) FROM visits;
# error: UnsupportedQueryError: `MAX(age)` is not supported

# title: STRING_AGG is refused
SELECT STRING_AGG(specialty, ',') FROM visits;
# error: UnsupportedQueryError: aggregate

# title: LIST is refused
SELECT LIST(cost) FROM visits;
# error: UnsupportedQueryError: aggregate

# title: COUNT_IF is refused
SELECT COUNT_IF(age > 65) FROM visits;
# error: UnsupportedQueryError: `COUNT_IF(age > 65)` is not supported

# title: SUM DISTINCT is refused
SELECT SUM(DISTINCT cost) FROM visits;
# error: UnsupportedQueryError: DISTINCT is allowed only in COUNT(DISTINCT expr)

# title: AVG DISTINCT is refused
SELECT AVG(DISTINCT age) FROM visits;
# error: UnsupportedQueryError: DISTINCT is allowed only in COUNT(DISTINCT expr)

# title: aggregate nested in an aggregate
SELECT AVG(SUM(cost)) FROM visits;
# error: UnsupportedQueryError: not nested in other aggregates

# title: COUNT nested in SUM
SELECT SUM(COUNT(*)) FROM visits;
# error: UnsupportedQueryError: SUM argument

# title: SUM without bounds
SELECT SUM(married) FROM people;
# error: UnsupportedQueryError: SUM(married) needs bounds: declare bounds={"married": (lo, hi)}

# title: AVG without bounds
SELECT AVG(race) FROM pums;
# error: UnsupportedQueryError: or write AVG(LEAST(GREATEST(race, lo), hi))

# title: SUM of a text column
SELECT SUM(specialty) FROM visits;
# error: UnsupportedQueryError: a numeric argument

# title: AVG of a constant
SELECT AVG(1) FROM visits;
# error: UnsupportedQueryError: AVG is the constant 1 here

# title: SUM that is always zero
SELECT SUM(0) FROM visits;
# error: UnsupportedQueryError: This sum is always 0

# title: SUM window function
SELECT SUM(cost) OVER (ORDER BY visit_date) FROM visits;
# error: UnsupportedQueryError: window function: `SUM(cost) OVER (ORDER BY visit_date)` is not supported; allowed: windows over aggregates and group keys. A window function runs after the noise

# title: COUNT(DISTINCT (unit)) with parentheses counts people
SELECT COUNT(DISTINCT (patient_id)) FROM visits;
# result: [(412,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(DISTINCT (patient_id)) L1=1 L2=1

# title: SUM beside AVG of the same column reads the AVG's statistics
SELECT region, SUM(cost) AS total, AVG(cost) AS mean FROM visits GROUP BY region;
# result: [('east north central', 39095.6, 228.629), ('mid atlantic', 34476.6, 259.223), ('mountain', 20340.3, 201.389), ('new england', 13473.1, 198.135), ('pacific', 49396.6, 186.402), ('south atlantic', 29997.8, 189.859), ('west north central', 19125.0, 214.888), ('west south central', 14366.3, 202.343)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=6 groups/unit=3 rows/group=4 selection=public | region | total=SUM(cost) in [0, 2000] L1=24000 L2=13856.4 | mean=AVG(cost) in [0, 2000] L1=12000 L2=6928.2

# title: SUM beside AVG of other bounds draws its own statistic
SELECT SUM(cost) AS total, AVG(LEAST(cost, 500)) AS mean FROM visits;
# result: [(220271.0, 173.212)]
# bounding: all_pairs
# plan: laplace stats/unit=3 groups/unit=1 rows/group=4 selection=public | total=SUM(cost) in [0, 2000] L1=8000 L2=8000 | mean=AVG(LEAST(cost, 500)) in [0, 500] L1=1000 L2=1000

# title: APPROX_COUNT_DISTINCT is answered as COUNT(DISTINCT)
# dialect: bigquery
SELECT specialty, APPROX_COUNT_DISTINCT(region) AS regions FROM visits GROUP BY specialty;
# result: [('allergy and immunology', 4), ('anesthesiology', 2), ('cardiology', 8), ('cardiothoracic surgery', 2), ('colorectal surgery', 3), ('dermatology', 6), ('emergency medicine', 8), ('endocrinology', 4), ('gastroenterology', 5), ('general practice', 8), ('general surgery', 4), ('geriatrics', 3), ('gynecology', 8), ('hematology', 4), ('hepatology', 4), ('hyperbaric medicine', 2), ('infectious disease', 4), ('internal medicine', 8), ('medical genetics', 1), ('neonatology', 1), ('nephrology', 3), ('neurology', 3), ('neurosurgery', 3), ('nuclear medicine', 1), ('obstetrics', 6), ('occupational medicine', 4), ('oncology', 5), ('ophthalmology', 4), ('orthopedics', 8), ('otolaryngology', 4), ('palliative care', 2), ('pediatric oncology', 1), ('pediatrics', 8), ('physical therapy', 6), ('plastic surgery', 1), ('podiatry', 2), ('psychiatry', 5), ('psychology', 4), ('pulmonology', 6), ('radiology', 7), ('rheumatology', 5), ('sleep medicine', 3), ('sports medicine', 4), ('toxicology', 1), ('transplant surgery', 1), ('tropical medicine', 2), ('urology', 3), ('vascular surgery', 2)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=truncated_geometric | specialty | regions=APPROX_COUNT_DISTINCT(region) L1=12 L2=6.9282

# title: APPROX_COUNT_DISTINCT with named bounds
# dialect: bigquery
SELECT APPROX_COUNT_DISTINCT(region, contribution_bounds_per_group => (0, 1)) FROM visits;
# error: UnsupportedQueryError: answered as COUNT(DISTINCT expr)

# note: ZetaSQL's older DP syntax (docs/sql.md, "ZetaSQL's older syntax: WITH ANONYMIZATION and
# note: ANON_*"): SELECT WITH ANONYMIZATION OPTIONS (...) with kappa, and the ANON_* aggregates
# note: with CLAMPED BETWEEN. COUNT, SUM and AVG clamp each person's partial in a group (like
# note: contribution_bounds_per_group); VAR_POP, STDDEV_POP and PERCENTILE_CONT clamp each row
# note: (like contribution_bounds_per_row). Also BigQuery's group_selection_strategy option.

# title: ANONYMIZATION clause with kappa and ANON_COUNT
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, kappa = 2) specialty, ANON_COUNT(*) AS n FROM visits GROUP BY specialty;
# result: [('allergy and immunology', 17), ('anesthesiology', 3), ('cardiology', 40), ('cardiothoracic surgery', 2), ('colorectal surgery', 7), ('dermatology', 43), ('emergency medicine', 165), ('endocrinology', 21), ('gastroenterology', 21), ('general practice', 332), ('general surgery', 15), ('geriatrics', 7), ('gynecology', 36), ('hematology', 12), ('hepatology', 14), ('hyperbaric medicine', 6), ('infectious disease', 15), ('internal medicine', 81), ('medical genetics', 3), ('neonatology', 1), ('nephrology', 14), ('neurology', 15), ('neurosurgery', 9), ('nuclear medicine', 2), ('obstetrics', 22), ('occupational medicine', 8), ('oncology', 16), ('ophthalmology', 19), ('orthopedics', 42), ('otolaryngology', 7), ('palliative care', 3), ('pediatric oncology', 4), ('pediatrics', 67), ('physical therapy', 14), ('plastic surgery', 1), ('podiatry', 2), ('psychiatry', 9), ('psychology', 11), ('pulmonology', 21), ('radiology', 25), ('rheumatology', 9), ('sleep medicine', 6), ('sports medicine', 9), ('transplant surgery', 5), ('tropical medicine', 2), ('urology', 8), ('vascular surgery', 2)]
# bounding: first_pairs_by_window (g=2)
# plan: laplace stats/unit=2 groups/unit=2 rows/group=4 selection=truncated_geometric | specialty | n=ANON_COUNT(*) L1=8 L2=5.65685

# title: ANONYMIZATION kappa is max_groups_contributed
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 2) specialty, ANON_COUNT(*) AS n FROM visits GROUP BY specialty;
# result: [('allergy and immunology', 17), ('anesthesiology', 3), ('cardiology', 40), ('cardiothoracic surgery', 2), ('colorectal surgery', 7), ('dermatology', 43), ('emergency medicine', 165), ('endocrinology', 21), ('gastroenterology', 21), ('general practice', 332), ('general surgery', 15), ('geriatrics', 7), ('gynecology', 36), ('hematology', 12), ('hepatology', 14), ('hyperbaric medicine', 6), ('infectious disease', 15), ('internal medicine', 81), ('medical genetics', 3), ('neonatology', 1), ('nephrology', 14), ('neurology', 15), ('neurosurgery', 9), ('nuclear medicine', 2), ('obstetrics', 22), ('occupational medicine', 8), ('oncology', 16), ('ophthalmology', 19), ('orthopedics', 42), ('otolaryngology', 7), ('palliative care', 3), ('pediatric oncology', 4), ('pediatrics', 67), ('physical therapy', 14), ('plastic surgery', 1), ('podiatry', 2), ('psychiatry', 9), ('psychology', 11), ('pulmonology', 21), ('radiology', 25), ('rheumatology', 9), ('sleep medicine', 6), ('sports medicine', 9), ('transplant surgery', 5), ('tropical medicine', 2), ('urology', 8), ('vascular surgery', 2)]
# bounding: first_pairs_by_window (g=2)
# plan: laplace stats/unit=2 groups/unit=2 rows/group=4 selection=truncated_geometric | specialty | n=ANON_COUNT(*) L1=8 L2=5.65685

# title: ANONYMIZATION clause keywords in lower case
select with anonymization options (epsilon = 0.5, kappa = 1) region, anon_count(*) from visits group by region;
# result: [('east north central', 171), ('mid atlantic', 133), ('mountain', 101), ('new england', 68), ('pacific', 265), ('south atlantic', 158), ('west north central', 89), ('west south central', 71)]
# bounding: first_pair (g=1, packed)
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | region | ANON_COUNT(*) L1=4 L2=4

# title: ANON_SUM clamps each person's sum in the group
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, kappa = 1) region, ANON_SUM(cost CLAMPED BETWEEN 0 AND 3000) AS total FROM visits GROUP BY region;
# result: [('east north central', 57485.0), ('mid atlantic', 50350.2), ('mountain', 32873.3), ('new england', 26289.9), ('pacific', 81108.7), ('south atlantic', 50809.5), ('west north central', 27173.0), ('west south central', 21984.6)]
# bounding: first_pair (g=1, packed)
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | region | total=ANON_SUM(cost CLAMPED BETWEEN 0 AND 3000) in [0, 3000] L1=3000 L2=3000

# title: ANON_SUM equals SUM with per-group bounds
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 1) region, SUM(cost, contribution_bounds_per_group => (0, 3000)) AS total FROM visits GROUP BY region;
# result: [('east north central', 57485.0), ('mid atlantic', 50350.2), ('mountain', 32873.3), ('new england', 26289.9), ('pacific', 81108.7), ('south atlantic', 50809.5), ('west north central', 27173.0), ('west south central', 21984.6)]
# bounding: first_pair (g=1, packed)
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | region | total=SUM(cost, contribution_bounds_per_group => (0, 3000)) in [0, 3000] L1=3000 L2=3000

# title: ANON_SUM without CLAMPED uses the catalog's row bounds
SELECT ANON_SUM(cost) FROM visits;
# result: [(220271.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | ANON_SUM(cost) in [0, 2000] L1=8000 L2=8000

# title: ANON_AVG averages each person's clamped mean
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5) ANON_AVG(cost CLAMPED BETWEEN 0 AND 500) AS mean_cost FROM visits;
# result: [(186.537,)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | mean_cost=ANON_AVG(cost CLAMPED BETWEEN 0 AND 500) in [0, 500] L1=250 L2=250

# title: ANON_COUNT of a column clamps each person's count
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, kappa = 1) region, ANON_COUNT(cost CLAMPED BETWEEN 0 AND 2) AS n FROM visits GROUP BY region;
# result: [('east north central', 105), ('mid atlantic', 87), ('mountain', 66), ('new england', 41), ('pacific', 180), ('south atlantic', 98), ('west north central', 58), ('west south central', 49)]
# bounding: first_pair (g=1, packed)
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | region | n=ANON_COUNT(cost CLAMPED BETWEEN 0 AND 2) L1=2 L2=2

# title: ANON_VAR_POP and ANON_STDDEV_POP clamp each row
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5) ANON_VAR_POP(age CLAMPED BETWEEN 18 AND 90) AS v, ANON_STDDEV_POP(age CLAMPED BETWEEN 18 AND 90) AS s FROM visits;
# result: [(399.619, 19.9905)]
# bounding: all_pairs
# plan: laplace stats/unit=3 groups/unit=1 rows/group=4 selection=public | v=ANON_VAR_POP(age CLAMPED BETWEEN 18 AND 90) in [18, 90] L1=2592 L2=2592 | s=ANON_STDDEV_POP(age CLAMPED BETWEEN 18 AND 90) in [18, 90] L1=2592 L2=2592

# title: ANON_VAR_POP equals VAR_POP with per-row bounds
SELECT VAR_POP(age, contribution_bounds_per_row => (18, 90)) AS v, STDDEV_POP(age, contribution_bounds_per_row => (18, 90)) AS s FROM visits;
# result: [(399.619, 19.9905)]
# bounding: all_pairs
# plan: laplace stats/unit=3 groups/unit=1 rows/group=4 selection=public | v=VARIANCE_POP(age, contribution_bounds_per_row => (18, 90)) in [18, 90] L1=2592 L2=2592 | s=STDDEV_POP(age, contribution_bounds_per_row => (18, 90)) in [18, 90] L1=2592 L2=2592

# title: ANON_PERCENTILE_CONT with CLAMPED BETWEEN
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, kappa = 1) region, ANON_PERCENTILE_CONT(cost, 0.5 CLAMPED BETWEEN 0 AND 1000) AS median_cost FROM visits GROUP BY region;
# result: [('east north central', 124.512), ('mid atlantic', 139.16), ('mountain', 132.324), ('new england', 83.4961), ('pacific', 106.934), ('south atlantic', 119.629), ('west north central', 112.793), ('west south central', 128.418)]
# bounding: kept_rows_ranked (g=1)
# plan: exponential stats/unit=1 groups/unit=1 rows/group=4 selection=public | region | median_cost=ANON_PERCENTILE_CONT(cost, 0.5 CLAMPED BETWEEN 0 AND 1000) in [0, 1000] L1=4 L2=4

# title: ANON aggregates with expressions and post-processing
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, kappa = 1) region, ROUND(ANON_SUM(cost / 100 CLAMPED BETWEEN 0 AND 30) / ANON_COUNT(*), 2) AS hundreds FROM visits WHERE age > 18 GROUP BY region ORDER BY hundreds DESC;
# result: [('new england', 4.12), ('mid atlantic', 3.76), ('east north central', 3.35), ('south atlantic', 3.3), ('mountain', 3.25), ('pacific', 3.14), ('west north central', 3.1), ('west south central', 3.04)]
# bounding: first_pair (g=1, packed)
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | region | hundreds | also ANON_SUM(cost / 100 CLAMPED BETWEEN 0 AND 30), ANON_COUNT(*)

# title: ANON aggregates over a join with a public table
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, kappa = 2) s.department, ANON_COUNT(*) AS n, ANON_AVG(v.age CLAMPED BETWEEN 0 AND 100) AS age FROM visits v JOIN specialties s ON v.specialty = s.specialty GROUP BY s.department;
# result: [('medicine', 631, 48.7931), ('surgery', 592, 48.0659)]
# bounding: all_pairs
# plan: laplace stats/unit=6 groups/unit=2 rows/group=4 selection=public | department | n=ANON_COUNT(*) L1=8 L2=5.65685 | age=ANON_AVG(age CLAMPED BETWEEN 0 AND 100) in [0, 100] L1=100 L2=70.7107

# title: ANON_SUM with negative clamp bounds
SELECT ANON_SUM(age - 50 CLAMPED BETWEEN -100 AND 100) FROM visits;
# result: [(-1363.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | ANON_SUM(age - 50 CLAMPED BETWEEN -100 AND 100) in [-100, 100] L1=100 L2=100

# title: ANON_COUNT clamp must be whole numbers
SELECT ANON_COUNT(age CLAMPED BETWEEN 0.5 AND 3) FROM visits;
# error: UnsupportedQueryError: allowed: CLAMPED BETWEEN lo AND hi with integers 0 <= lo <= hi

# title: ANON_SUM clamp must be number literals
SELECT ANON_SUM(cost CLAMPED BETWEEN 0 AND age) FROM visits;
# error: UnsupportedQueryError: CLAMPED BETWEEN: `ANON_SUM(cost CLAMPED BETWEEN 0 AND age)` is not supported; allowed: CLAMPED BETWEEN lo AND hi with number literals

# title: ANON_SUM clamp bounds reversed
SELECT ANON_SUM(cost CLAMPED BETWEEN 10 AND 0) FROM visits;
# error: UnsupportedQueryError: (10, 0) is not a finite range

# title: ANON_SUM without bounds anywhere
SELECT ANON_SUM(married) FROM people;
# error: UnsupportedQueryError: ANON_SUM(married) needs bounds: declare bounds={"married": (lo, hi)} when registering the table, or write ANON_SUM(married CLAMPED BETWEEN lo AND hi)

# title: ANON_PERCENTILE_CONT without its percentile
SELECT ANON_PERCENTILE_CONT(cost CLAMPED BETWEEN 0 AND 10) FROM visits;
# error: ParseError: ANON_PERCENTILE_CONT takes (expression, percentile [CLAMPED BETWEEN lo AND hi])

# title: ANON_SUM with a BigQuery named argument
SELECT ANON_SUM(cost, contribution_bounds_per_group => (0, 10)) FROM visits;
# error: ParseError: ANON_SUM takes one expression

# title: ANONYMIZATION clause with kappa and max_groups_contributed
SELECT WITH ANONYMIZATION OPTIONS (kappa = 1, max_groups_contributed = 2) COUNT(*) FROM visits;
# error: UnsupportedQueryError: max_groups_contributed is given twice (kappa is its older name)

# title: ANONYMIZATION clause k_threshold is min_privacy_units_per_group
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-6, k_threshold = 10) specialty, ANON_COUNT(*) FROM visits GROUP BY specialty;
# result: [('allergy and immunology', 17), ('anesthesiology', 3), ('cardiology', 46), ('cardiothoracic surgery', 2), ('colorectal surgery', 8), ('dermatology', 49), ('emergency medicine', 181), ('endocrinology', 25), ('gastroenterology', 21), ('general practice', 356), ('general surgery', 16), ('geriatrics', 11), ('gynecology', 43), ('hematology', 12), ('hepatology', 14), ('hyperbaric medicine', 6), ('infectious disease', 15), ('internal medicine', 94), ('medical genetics', 3), ('neonatology', 1), ('nephrology', 15), ('neurology', 15), ('neurosurgery', 9), ('nuclear medicine', 2), ('obstetrics', 32), ('occupational medicine', 8), ('oncology', 21), ('ophthalmology', 27), ('orthopedics', 48), ('otolaryngology', 7), ('palliative care', 7), ('pediatric oncology', 4), ('pediatrics', 70), ('physical therapy', 15), ('plastic surgery', 2), ('podiatry', 2), ('psychiatry', 9), ('psychology', 17), ('pulmonology', 23), ('radiology', 25), ('rheumatology', 9), ('sleep medicine', 6), ('sports medicine', 9), ('toxicology', 1), ('transplant surgery', 5), ('tropical medicine', 2), ('urology', 8), ('vascular surgery', 2)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=truncated_geometric min_units=10 | specialty | ANON_COUNT(*) L1=12 L2=6.9282

# title: ANONYMIZATION clause k_threshold on a global aggregate selects its one row
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-6, k_threshold = 10) ANON_SUM(cost CLAMPED BETWEEN 0 AND 100), ANON_AVG(cost CLAMPED BETWEEN 0 AND 100) FROM visits;
# result: [(38166.4, 88.9967)]
# bounding: all_pairs
# plan: laplace stats/unit=3 groups/unit=1 rows/group=4 selection=truncated_geometric min_units=10 | ANON_SUM(cost CLAMPED BETWEEN 0 AND 100) in [0, 100] L1=100 L2=100 | ANON_AVG(cost CLAMPED BETWEEN 0 AND 100) in [0, 100] L1=50 L2=50

# title: ANONYMIZATION clause k_threshold on a global aggregate needs delta
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 0, k_threshold = 10) ANON_COUNT(*) FROM visits;
# error: DeltaNeeded: partition selection on its one group, which needs delta > 0

# title: ANON_QUANTILES with CLAMPED BETWEEN
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-6) ANON_QUANTILES(cost, 2 CLAMPED BETWEEN 0 AND 300) AS q FROM visits;
# result: [([0.146484375, 119.384765625, 299.853515625],)]
# bounding: all_pairs
# plan: exponential stats/unit=3 groups/unit=1 rows/group=4 selection=public | q | also ANON_QUANTILES(cost, 2 CLAMPED BETWEEN 0 AND 300)[OFFSET(0)], ANON_QUANTILES(cost, 2 CLAMPED BETWEEN 0 AND 300)[OFFSET(1)], ANON_QUANTILES(cost, 2 CLAMPED BETWEEN 0 AND 300)[OFFSET(2)]

# title: ANON_QUANTILES without a number
SELECT ANON_QUANTILES(cost CLAMPED BETWEEN 0 AND 300) FROM visits;
# error: ParseError: ANON_QUANTILES takes (expression, number

# title: ANONYMIZATION clause kappa zero
SELECT WITH ANONYMIZATION OPTIONS (kappa = 0) COUNT(*) FROM visits;
# error: UnsupportedQueryError: WITH ANONYMIZATION OPTIONS max_groups_contributed: `0` is not supported; allowed: a positive integer literal

# title: ANONYMIZATION clause without OPTIONS
SELECT WITH ANONYMIZATION ANON_COUNT(*) FROM visits;
# error: ParseError: expected OPTIONS (...) after WITH ANONYMIZATION

# title: ANONYMIZATION clause conflicting epsilon
# epsilon: 0.25
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 0.5) ANON_COUNT(*) FROM visits;
# error: PrivacyError: WITH ANONYMIZATION OPTIONS: epsilon = 0.5 conflicts with epsilon=0.25

# title: ANONYMIZATION clause on a row-level table
SELECT WITH ANONYMIZATION OPTIONS (kappa = 2) ANON_COUNT(*) FROM people;
# error: UnsupportedQueryError: WITH ANONYMIZATION OPTIONS: table 'people' has row-level privacy

# title: ANON aggregate inside a window over private rows
SELECT ANON_SUM(cost CLAMPED BETWEEN 0 AND 10) OVER () FROM visits;
# error: UnsupportedQueryError: window function: `ANON_SUM(cost CLAMPED BETWEEN 0 AND 10) OVER ()` is not supported; allowed: windows over aggregates and group keys

# title: group_selection_strategy PUBLIC_GROUPS with public keys
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 0, group_selection_strategy = PUBLIC_GROUPS) region, COUNT(*) AS n FROM visits GROUP BY region;
# result: [('east north central', 171), ('mid atlantic', 133), ('mountain', 101), ('new england', 68), ('pacific', 265), ('south atlantic', 158), ('west north central', 89), ('west south central', 71)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | n=COUNT(*) L1=12 L2=6.9282

# title: group_selection_strategy PUBLIC_GROUPS with a public table's column
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (group_selection_strategy = PUBLIC_GROUPS) s.department, COUNT(*) AS n FROM visits v JOIN specialties s ON v.specialty = s.specialty GROUP BY s.department;
# result: [('medicine', 631), ('surgery', 592)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=2 rows/group=4 selection=public | department | n=COUNT(*) L1=8 L2=5.65685

# title: group_selection_strategy PUBLIC_GROUPS as a string in ANONYMIZATION
SELECT WITH ANONYMIZATION OPTIONS (kappa = 1, group_selection_strategy = 'public_groups') sex, ANON_COUNT(*) FROM pums GROUP BY sex;
# result: [(0, 879), (1, 703)]
# bounding: first_pair (g=1, packed)
# plan: laplace stats/unit=1 groups/unit=1 rows/group=2 selection=public | sex | ANON_COUNT(*) L1=2 L2=2

# title: group_selection_strategy LAPLACE_THRESHOLD selects privately
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (group_selection_strategy = LAPLACE_THRESHOLD) specialty, COUNT(*) AS n FROM visits GROUP BY specialty;
# result: [('allergy and immunology', 17), ('anesthesiology', 3), ('cardiology', 46), ('cardiothoracic surgery', 2), ('colorectal surgery', 8), ('dermatology', 49), ('emergency medicine', 181), ('endocrinology', 25), ('gastroenterology', 21), ('general practice', 356), ('general surgery', 16), ('geriatrics', 11), ('gynecology', 43), ('hematology', 12), ('hepatology', 14), ('hyperbaric medicine', 6), ('infectious disease', 15), ('internal medicine', 94), ('medical genetics', 3), ('neonatology', 1), ('nephrology', 15), ('neurology', 15), ('neurosurgery', 9), ('nuclear medicine', 2), ('obstetrics', 32), ('occupational medicine', 8), ('oncology', 21), ('ophthalmology', 27), ('orthopedics', 48), ('otolaryngology', 7), ('palliative care', 7), ('pediatric oncology', 4), ('pediatrics', 70), ('physical therapy', 15), ('plastic surgery', 2), ('podiatry', 2), ('psychiatry', 9), ('psychology', 17), ('pulmonology', 23), ('radiology', 25), ('rheumatology', 9), ('sleep medicine', 6), ('sports medicine', 9), ('toxicology', 1), ('transplant surgery', 5), ('tropical medicine', 2), ('urology', 8), ('vascular surgery', 2)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=truncated_geometric | specialty | n=COUNT(*) L1=12 L2=6.9282

# title: group_selection_strategy PUBLIC_GROUPS with a private key
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (group_selection_strategy = PUBLIC_GROUPS) specialty, COUNT(*) AS n FROM visits GROUP BY specialty;
# error: UnsupportedQueryError: group_selection_strategy = PUBLIC_GROUPS: GROUP BY specialty is not a public key

# title: group_selection_strategy PUBLIC_GROUPS with an expression key
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (group_selection_strategy = PUBLIC_GROUPS) LOWER(region) AS r, COUNT(*) AS n FROM visits GROUP BY LOWER(region);
# error: UnsupportedQueryError: an expression of a public column is a private key

# title: group_selection_strategy unknown value
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (group_selection_strategy = GAUSSIAN) region, COUNT(*) FROM visits GROUP BY region;
# error: UnsupportedQueryError: group_selection_strategy: `GAUSSIAN` is not supported; allowed: LAPLACE_THRESHOLD or PUBLIC_GROUPS

# title: DP clause privacy unit qualified by a subquery alias
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (privacy_unit_column = s.patient_id) COUNT(*) AS n FROM (SELECT patient_id, age FROM visits WHERE age > 30) AS s;
# result: [(839,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | n=COUNT(*) L1=4 L2=4

# title: DP clause privacy unit qualified by the first table of a join
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (privacy_unit_column = v.patient_id) p.sex, COUNT(*) AS n FROM visits v JOIN patients p ON v.patient_id = p.patient_id GROUP BY p.sex;
# result: [('f', 511), ('m', 545)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=2 rows/group=4 selection=public | sex | n=COUNT(*) L1=8 L2=5.65685

# title: DP clause privacy unit of a subquery alias that is another column
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (privacy_unit_column = s.age) COUNT(*) FROM (SELECT patient_id, age FROM visits) AS s;
# error: UnsupportedQueryError: privacy_unit_column = age is not the privacy unit of the FROM clause, which protects each patient_id

# title: DP clause privacy unit qualified by an unknown alias
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (privacy_unit_column = q.patient_id) COUNT(*) FROM (SELECT patient_id FROM visits) AS s;
# error: UnsupportedQueryError: 'q' is not a table or alias in FROM

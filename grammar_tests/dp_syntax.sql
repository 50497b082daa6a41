# note: BigQuery/ZetaSQL differential-privacy syntax (docs/sql.md, "BigQuery-style DP syntax
# note: and dialects"): SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (...) and the named arguments
# note: contribution_bounds_per_row / contribution_bounds_per_group. Cases without
# note: "# epsilon:" / "# delta:" take them from OPTIONS, else the defaults (1, 1e-6).

# title: DP clause with every BigQuery option
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 2, privacy_unit_column = patient_id) specialty, COUNT(*) AS n FROM visits GROUP BY specialty;
# result: [('allergy and immunology', 17), ('anesthesiology', 3), ('cardiology', 40), ('cardiothoracic surgery', 2), ('colorectal surgery', 7), ('dermatology', 43), ('emergency medicine', 165), ('endocrinology', 21), ('gastroenterology', 21), ('general practice', 332), ('general surgery', 15), ('geriatrics', 7), ('gynecology', 36), ('hematology', 12), ('hepatology', 14), ('hyperbaric medicine', 6), ('infectious disease', 15), ('internal medicine', 81), ('medical genetics', 3), ('neonatology', 1), ('nephrology', 14), ('neurology', 15), ('neurosurgery', 9), ('nuclear medicine', 2), ('obstetrics', 22), ('occupational medicine', 8), ('oncology', 16), ('ophthalmology', 19), ('orthopedics', 42), ('otolaryngology', 7), ('palliative care', 3), ('pediatric oncology', 4), ('pediatrics', 67), ('physical therapy', 14), ('plastic surgery', 1), ('podiatry', 2), ('psychiatry', 9), ('psychology', 11), ('pulmonology', 21), ('radiology', 25), ('rheumatology', 9), ('sleep medicine', 6), ('sports medicine', 9), ('transplant surgery', 5), ('tropical medicine', 2), ('urology', 8), ('vascular surgery', 2)]
# bounding: first_pairs_by_window (g=2)
# plan: laplace stats/unit=2 groups/unit=2 rows/group=4 selection=truncated_geometric | specialty | n=COUNT(*) L1=8 L2=5.65685

# title: DP clause with epsilon only
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 0.5) COUNT(*) FROM visits;
# result: [(1056,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: DP clause keywords in lower case
select with differential_privacy options (epsilon = 0.5, delta = 1e-7) count(*) from visits;
# result: [(1056,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: DP clause option names in upper case
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (EPSILON = 0.5, MAX_GROUPS_CONTRIBUTED = 1) region, COUNT(*) FROM visits GROUP BY region;
# result: [('east north central', 171), ('mid atlantic', 133), ('mountain', 101), ('new england', 68), ('pacific', 265), ('south atlantic', 158), ('west north central', 89), ('west south central', 71)]
# bounding: first_pair (g=1, packed)
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | region | COUNT(*) L1=4 L2=4

# title: DP clause with an empty option list
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS () COUNT(*) FROM visits;
# result: [(1056,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: DP clause delta decides Gaussian noise
# note: eight statistics (SUM(x) reads AVG(x)'s, VAR_POP and STDDEV_POP add squares) in unequal shares (ε split by column), so Gaussian needs a larger delta than equal shares
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 1e-3) COUNT(*), SUM(cost), AVG(age), COUNT(cost), SUM(age), VAR_POP(age), AVG(cost), STDDEV_POP(cost), COUNT(DISTINCT patient_id) FROM visits;
# result: [(1056, 220271.0, 48.1856, 1056, 50884.0, 468.13, 208.59, 267.507, 412)]
# bounding: all_pairs
# plan: gaussian stats/unit=8 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4 | SUM(cost) in [0, 2000] L1=8000 L2=8000 | AVG(age) in [0, 100] L1=200 L2=200 | COUNT(cost) L1=4 L2=4 | SUM(age) in [0, 100] L1=400 L2=400 | VAR_POP(age) in [0, 100] L1=5000 L2=5000 | AVG(cost) in [0, 2000] L1=4000 L2=4000 | STDDEV_POP(cost) in [0, 2000] L1=2e+06 L2=2e+06 | COUNT(DISTINCT patient_id) L1=1 L2=1

# title: DP clause delta 0 forces Laplace
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 0) COUNT(*), SUM(cost), AVG(age), COUNT(cost), SUM(age), VAR_POP(age), AVG(cost), STDDEV_POP(cost), COUNT(DISTINCT patient_id) FROM visits;
# result: [(1056, 220271.0, 48.1856, 1056, 50884.0, 468.13, 208.59, 267.507, 412)]
# bounding: all_pairs
# plan: laplace stats/unit=8 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4 | SUM(cost) in [0, 2000] L1=8000 L2=8000 | AVG(age) in [0, 100] L1=200 L2=200 | COUNT(cost) L1=4 L2=4 | SUM(age) in [0, 100] L1=400 L2=400 | VAR_POP(age) in [0, 100] L1=5000 L2=5000 | AVG(cost) in [0, 2000] L1=4000 L2=4000 | STDDEV_POP(cost) in [0, 2000] L1=2e+06 L2=2e+06 | COUNT(DISTINCT patient_id) L1=1 L2=1

# title: DP clause delta 0 with private keys is refused
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 0) specialty, COUNT(*) FROM visits GROUP BY specialty;
# error: DeltaNeeded: releasing them needs delta > 0

# title: DP clause epsilon equal to the call's
# epsilon: 0.5
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 0.5) COUNT(*) FROM visits;
# result: [(1056,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: DP clause epsilon conflicting with the call's
# epsilon: 0.25
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 0.5) COUNT(*) FROM visits;
# error: PrivacyError: conflicts with epsilon=0.25

# title: DP clause delta conflicting with the call's
# delta: 1e-7
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (delta = 1e-5) specialty, COUNT(*) FROM visits GROUP BY specialty;
# error: PrivacyError: conflicts with delta=1e-07

# title: DP clause negative epsilon
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = -1) COUNT(*) FROM visits;
# error: PrivacyError

# title: DP clause epsilon as a string
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = '1') COUNT(*) FROM visits;
# error: UnsupportedQueryError: a number literal

# title: DP clause epsilon as an expression
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1 / 2) COUNT(*) FROM visits;
# error: UnsupportedQueryError: a number literal

# title: DP clause delta of one
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (delta = 1) COUNT(*) FROM visits;
# error: PrivacyError

# title: DP clause unknown option
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, max_ids = 10) COUNT(*) FROM visits;
# error: UnsupportedQueryError: max_ids is not an option dpsql knows

# title: DP clause min_privacy_units_per_group shifts the selection of private keys
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 1e-6, min_privacy_units_per_group = 10) specialty, COUNT(*) AS n FROM visits GROUP BY specialty;
# result: [('allergy and immunology', 17), ('anesthesiology', 3), ('cardiology', 46), ('cardiothoracic surgery', 2), ('colorectal surgery', 8), ('dermatology', 49), ('emergency medicine', 181), ('endocrinology', 25), ('gastroenterology', 21), ('general practice', 356), ('general surgery', 16), ('geriatrics', 11), ('gynecology', 43), ('hematology', 12), ('hepatology', 14), ('hyperbaric medicine', 6), ('infectious disease', 15), ('internal medicine', 94), ('medical genetics', 3), ('neonatology', 1), ('nephrology', 15), ('neurology', 15), ('neurosurgery', 9), ('nuclear medicine', 2), ('obstetrics', 32), ('occupational medicine', 8), ('oncology', 21), ('ophthalmology', 27), ('orthopedics', 48), ('otolaryngology', 7), ('palliative care', 7), ('pediatric oncology', 4), ('pediatrics', 70), ('physical therapy', 15), ('plastic surgery', 2), ('podiatry', 2), ('psychiatry', 9), ('psychology', 17), ('pulmonology', 23), ('radiology', 25), ('rheumatology', 9), ('sleep medicine', 6), ('sports medicine', 9), ('toxicology', 1), ('transplant surgery', 5), ('tropical medicine', 2), ('urology', 8), ('vascular surgery', 2)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=truncated_geometric min_units=10 | specialty | n=COUNT(*) L1=12 L2=6.9282

# title: DP clause min_privacy_units_per_group on a global aggregate selects its one row
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 1e-6, min_privacy_units_per_group = 10) COUNT(*) FROM visits;
# result: [(1056,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=truncated_geometric min_units=10 | COUNT(*) L1=4 L2=4

# title: DP clause min_privacy_units_per_group selects public keys as private ones
# note: as ZetaSQL does for any key without PUBLIC_GROUPS: a region is released only if
# note: its noisy count of people passes the threshold for the floor
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, min_privacy_units_per_group = 10) region, COUNT(*) FROM visits GROUP BY region;
# result: [('east north central', 171), ('mid atlantic', 133), ('mountain', 101), ('new england', 68), ('pacific', 265), ('south atlantic', 158), ('west north central', 89), ('west south central', 71)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=truncated_geometric min_units=10 | region | COUNT(*) L1=12 L2=6.9282

# title: DP clause min_privacy_units_per_group with PUBLIC_GROUPS is refused
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 1e-6, min_privacy_units_per_group = 10, group_selection_strategy = PUBLIC_GROUPS) COUNT(*) FROM visits;
# error: UnsupportedQueryError: ZetaSQL refuses the pair too

# title: DP clause legacy kappa
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (kappa = 2) COUNT(*) FROM visits;
# error: UnsupportedQueryError: kappa is not an option dpsql knows

# title: DP clause option given twice
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, epsilon = 0.5) COUNT(*) FROM visits;
# error: UnsupportedQueryError: epsilon is given twice

# title: DP clause option without a value
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon) COUNT(*) FROM visits;
# error: UnsupportedQueryError: Write each option as name = value

# title: DP clause max_groups_contributed loosens the catalog limit
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (max_groups_contributed = 6) specialty, COUNT(*) FROM visits GROUP BY specialty;
# result: [('allergy and immunology', 17), ('anesthesiology', 5), ('cardiology', 46), ('cardiothoracic surgery', 2), ('colorectal surgery', 8), ('dermatology', 49), ('emergency medicine', 189), ('endocrinology', 26), ('gastroenterology', 21), ('general practice', 376), ('general surgery', 16), ('geriatrics', 11), ('gynecology', 43), ('hematology', 12), ('hepatology', 14), ('hyperbaric medicine', 6), ('infectious disease', 15), ('internal medicine', 94), ('medical genetics', 3), ('neonatology', 2), ('nephrology', 15), ('neurology', 17), ('neurosurgery', 9), ('nuclear medicine', 2), ('obstetrics', 36), ('occupational medicine', 8), ('oncology', 21), ('ophthalmology', 27), ('orthopedics', 48), ('otolaryngology', 7), ('palliative care', 7), ('pediatric oncology', 4), ('pediatrics', 72), ('physical therapy', 15), ('plastic surgery', 7), ('podiatry', 2), ('psychiatry', 9), ('psychology', 21), ('pulmonology', 23), ('radiology', 25), ('rheumatology', 9), ('sleep medicine', 6), ('sports medicine', 9), ('toxicology', 1), ('transplant surgery', 9), ('tropical medicine', 2), ('urology', 8), ('vascular surgery', 2)]
# bounding: first_pairs_by_window (g=6)
# plan: gaussian stats/unit=12 groups/unit=6 rows/group=4 selection=gaussian_threshold | specialty | COUNT(*) L1=24 L2=9.79796

# title: DP clause max_groups_contributed tightens the catalog limit
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (max_groups_contributed = 1) specialty, COUNT(*) FROM visits GROUP BY specialty;
# result: [('allergy and immunology', 9), ('anesthesiology', 2), ('cardiology', 24), ('cardiothoracic surgery', 2), ('colorectal surgery', 3), ('dermatology', 34), ('emergency medicine', 107), ('endocrinology', 11), ('gastroenterology', 17), ('general practice', 239), ('general surgery', 8), ('geriatrics', 7), ('gynecology', 28), ('hematology', 12), ('hepatology', 12), ('hyperbaric medicine', 5), ('infectious disease', 13), ('internal medicine', 50), ('medical genetics', 2), ('neonatology', 1), ('nephrology', 11), ('neurology', 11), ('neurosurgery', 5), ('obstetrics', 19), ('occupational medicine', 5), ('oncology', 16), ('ophthalmology', 15), ('orthopedics', 26), ('otolaryngology', 6), ('palliative care', 3), ('pediatrics', 46), ('physical therapy', 9), ('plastic surgery', 1), ('podiatry', 2), ('psychiatry', 7), ('psychology', 8), ('pulmonology', 18), ('radiology', 8), ('rheumatology', 7), ('sleep medicine', 5), ('sports medicine', 6), ('tropical medicine', 1), ('urology', 7), ('vascular surgery', 2)]
# bounding: first_pair (g=1, packed)
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=truncated_geometric | specialty | COUNT(*) L1=4 L2=4

# title: DP clause max_groups_contributed on a global aggregate
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (max_groups_contributed = 5) COUNT(*) FROM visits;
# result: [(1056,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: DP clause max_groups_contributed above the public domain
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (max_groups_contributed = 50) region, COUNT(*) FROM visits GROUP BY region;
# result: [('east north central', 171), ('mid atlantic', 133), ('mountain', 101), ('new england', 68), ('pacific', 265), ('south atlantic', 158), ('west north central', 89), ('west south central', 71)]
# bounding: all_pairs
# plan: laplace stats/unit=8 groups/unit=8 rows/group=4 selection=public | region | COUNT(*) L1=32 L2=11.3137

# title: DP clause max_groups_contributed on a table without a declared limit
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (max_groups_contributed = 2) sex, educ, COUNT(*) FROM pums GROUP BY sex, educ;
# result: [(0, 1, 27), (0, 10, 45), (0, 11, 136), (0, 12, 56), (0, 13, 168), (0, 14, 52), (0, 15, 29), (0, 16, 16), (0, 2, 12), (0, 3, 30), (0, 4, 16), (0, 5, 25), (0, 6, 20), (0, 7, 34), (0, 8, 52), (0, 9, 161), (1, 1, 24), (1, 10, 44), (1, 11, 119), (1, 12, 63), (1, 13, 114), (1, 14, 35), (1, 15, 11), (1, 16, 6), (1, 2, 9), (1, 3, 30), (1, 4, 11), (1, 5, 14), (1, 6, 14), (1, 7, 16), (1, 8, 29), (1, 9, 164)]
# bounding: first_pairs_by_window (g=2)
# plan: laplace stats/unit=2 groups/unit=2 rows/group=2 selection=laplace_threshold | sex | educ | COUNT(*) L1=4 L2=2.82843

# title: DP clause max_groups_contributed zero
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (max_groups_contributed = 0) COUNT(*) FROM visits;
# error: UnsupportedQueryError: a positive integer literal

# title: DP clause max_groups_contributed NULL
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (max_groups_contributed = NULL) COUNT(*) FROM visits;
# error: UnsupportedQueryError: would lift the bound

# title: DP clause max_groups_contributed fractional
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (max_groups_contributed = 1.5) COUNT(*) FROM visits;
# error: UnsupportedQueryError: a positive integer literal

# title: DP clause max_rows_contributed
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (max_rows_contributed = 5) specialty, COUNT(*) FROM visits GROUP BY specialty;
# result: [('allergy and immunology', 11), ('anesthesiology', 4), ('cardiology', 41), ('cardiothoracic surgery', 2), ('colorectal surgery', 7), ('dermatology', 45), ('emergency medicine', 162), ('endocrinology', 22), ('gastroenterology', 19), ('general practice', 339), ('general surgery', 13), ('geriatrics', 11), ('gynecology', 39), ('hematology', 10), ('hepatology', 13), ('hyperbaric medicine', 4), ('infectious disease', 12), ('internal medicine', 76), ('medical genetics', 2), ('neonatology', 1), ('nephrology', 13), ('neurology', 15), ('neurosurgery', 6), ('nuclear medicine', 2), ('obstetrics', 25), ('occupational medicine', 8), ('oncology', 20), ('ophthalmology', 22), ('orthopedics', 45), ('otolaryngology', 6), ('palliative care', 5), ('pediatric oncology', 2), ('pediatrics', 64), ('physical therapy', 15), ('plastic surgery', 5), ('podiatry', 2), ('psychiatry', 8), ('psychology', 15), ('pulmonology', 21), ('radiology', 19), ('rheumatology', 8), ('sleep medicine', 6), ('sports medicine', 9), ('toxicology', 1), ('transplant surgery', 6), ('tropical medicine', 2), ('urology', 5), ('vascular surgery', 2)]
# bounding: first_pairs_by_window (g=5)
# plan: laplace stats/unit=5 groups/unit=5 rows/group=5 rows/unit=5 selection=laplace_threshold | specialty | COUNT(*) L1=5 L2=5

# title: DP clause max_rows_contributed replaces all three limits
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (max_rows_contributed = 2) region, SUM(cost) FROM claims GROUP BY region;
# result: [('east north central', 21395.0), ('mid atlantic', 20703.0), ('mountain', 12426.2), ('new england', 7557.06), ('pacific', 32851.4), ('south atlantic', 18450.4), ('west north central', 12610.6), ('west south central', 8895.04)]
# bounding: first_pairs_by_window (g=2)
# plan: laplace stats/unit=2 groups/unit=2 rows/group=2 rows/unit=2 selection=public | region | SUM(cost) in [0, 1000] L1=2000 L2=2000

# title: DP clause both contribution options
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (max_groups_contributed = 2, max_rows_contributed = 5) COUNT(*) FROM visits;
# error: UnsupportedQueryError: one of max_groups_contributed and max_rows_contributed

# title: DP clause privacy unit qualified by the table
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (privacy_unit_column = visits.patient_id) COUNT(*) FROM visits;
# result: [(1056,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: DP clause privacy unit qualified by the alias
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (privacy_unit_column = v.patient_id) v.specialty, COUNT(*) FROM visits AS v GROUP BY v.specialty;
# result: [('allergy and immunology', 17), ('anesthesiology', 3), ('cardiology', 46), ('cardiothoracic surgery', 2), ('colorectal surgery', 8), ('dermatology', 49), ('emergency medicine', 181), ('endocrinology', 25), ('gastroenterology', 21), ('general practice', 356), ('general surgery', 16), ('geriatrics', 11), ('gynecology', 43), ('hematology', 12), ('hepatology', 14), ('hyperbaric medicine', 6), ('infectious disease', 15), ('internal medicine', 94), ('medical genetics', 3), ('neonatology', 1), ('nephrology', 15), ('neurology', 15), ('neurosurgery', 9), ('nuclear medicine', 2), ('obstetrics', 32), ('occupational medicine', 8), ('oncology', 21), ('ophthalmology', 27), ('orthopedics', 48), ('otolaryngology', 7), ('palliative care', 7), ('pediatric oncology', 4), ('pediatrics', 70), ('physical therapy', 15), ('plastic surgery', 2), ('podiatry', 2), ('psychiatry', 9), ('psychology', 17), ('pulmonology', 23), ('radiology', 25), ('rheumatology', 9), ('sleep medicine', 6), ('sports medicine', 9), ('toxicology', 1), ('transplant surgery', 5), ('tropical medicine', 2), ('urology', 8), ('vascular surgery', 2)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=truncated_geometric | specialty | COUNT(*) L1=12 L2=6.9282

# title: DP clause privacy unit in another case
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (privacy_unit_column = PATIENT_ID) COUNT(*) FROM visits;
# result: [(1056,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: DP clause privacy unit naming another column
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (privacy_unit_column = specialty) COUNT(*) FROM visits;
# error: UnsupportedQueryError: is not the privacy unit of 'visits'

# title: DP clause privacy unit qualified by another table
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (privacy_unit_column = claims.patient_id) COUNT(*) FROM visits;
# error: UnsupportedQueryError: 'claims' is not a table in FROM

# title: DP clause privacy unit as a string
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (privacy_unit_column = 'patient_id') COUNT(*) FROM visits;
# error: UnsupportedQueryError: a column name

# title: DP clause privacy unit on a row-level table
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (privacy_unit_column = pid) COUNT(*) FROM people;
# error: UnsupportedQueryError: row-level privacy

# title: DP clause max_groups_contributed on a row-level table
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (max_groups_contributed = 2) COUNT(*) FROM people;
# error: UnsupportedQueryError: row-level privacy

# title: DP clause epsilon on a row-level table
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 0.5, delta = 1e-6) sex, COUNT(*) FROM people GROUP BY sex;
# result: [(0, 486), (1, 514)]
# bounding: row_level
# plan: laplace stats/unit=1 groups/unit=1 rows/group=1 rows/unit=1 selection=laplace_threshold | sex | COUNT(*) L1=1 L2=1

# title: a DP clause in one branch of a set operation that takes the whole epsilon
SELECT COUNT(*) FROM visits UNION ALL SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1) COUNT(*) FROM visits;
# error: PrivacyError: leaves nothing of the statement's epsilon=1

# title: DP clause with post-processing
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 1e-6) specialty, ROUND(AVG(cost), 1) AS mean_cost FROM visits GROUP BY specialty HAVING COUNT(*) > 10 ORDER BY mean_cost DESC LIMIT 3;
# result: [('physical therapy', 456.8), ('endocrinology', 412.0), ('radiology', 410.5)]
# bounding: first_pairs_by_window (g=3)
# plan: gaussian stats/unit=12 groups/unit=3 rows/group=4 selection=gaussian_threshold | specialty | mean_cost | also AVG(cost), COUNT(*)

# title: DP clause without OPTIONS
SELECT WITH DIFFERENTIAL_PRIVACY COUNT(*) FROM visits;
# error: ParseError

# title: SUM with per-group bounds
SELECT SUM(cost, contribution_bounds_per_group => (0, 3000)) FROM visits;
# result: [(348074.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(cost, contribution_bounds_per_group => (0, 3000)) in [0, 3000] L1=3000 L2=3000

# title: SUM with per-group bounds per group
SELECT specialty, SUM(cost, contribution_bounds_per_group => (0, 3000)) AS total FROM visits GROUP BY specialty;
# result: [('allergy and immunology', 8228.53), ('anesthesiology', 685.43), ('cardiology', 19510.2), ('cardiothoracic surgery', 720.14), ('colorectal surgery', 3858.17), ('dermatology', 23285.3), ('emergency medicine', 46771.8), ('endocrinology', 13027.7), ('gastroenterology', 6298.89), ('general practice', 51482.7), ('general surgery', 5585.17), ('geriatrics', 2817.91), ('gynecology', 13072.9), ('hematology', 5878.3), ('hepatology', 6140.03), ('hyperbaric medicine', 3284.12), ('infectious disease', 5762.42), ('internal medicine', 25984.2), ('medical genetics', 349.79), ('neonatology', 83.53), ('nephrology', 5309.72), ('neurology', 1898.57), ('neurosurgery', 1046.46), ('nuclear medicine', 1207.86), ('obstetrics', 9906.99), ('occupational medicine', 1576.53), ('oncology', 6291.34), ('ophthalmology', 6821.78), ('orthopedics', 12911.1), ('otolaryngology', 1615.87), ('palliative care', 6000.0), ('pediatric oncology', 2000.22), ('pediatrics', 26659.5), ('physical therapy', 7358.2), ('plastic surgery', 229.91), ('podiatry', 44.67), ('psychiatry', 2053.35), ('psychology', 4510.58), ('pulmonology', 5451.06), ('radiology', 10541.1), ('rheumatology', 2807.12), ('sleep medicine', 589.06), ('sports medicine', 837.0), ('toxicology', 64.5), ('transplant surgery', 554.88), ('tropical medicine', 351.96), ('urology', 4131.83), ('vascular surgery', 334.99)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=truncated_geometric | specialty | total=SUM(cost, contribution_bounds_per_group => (0, 3000)) in [0, 3000] L1=9000 L2=5196.15

# title: SUM with per-group bounds on an unbounded column
SELECT SUM(married, contribution_bounds_per_group => (0, 1)) FROM pums;
# result: [(549.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=2 selection=public | SUM(married, contribution_bounds_per_group => (0, 1)) in [0, 1] L1=1 L2=1

# title: SUM with negative per-group bounds
SELECT SUM(cost - 1000, contribution_bounds_per_group => (-500, 100)) FROM visits;
# result: [(-202694.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(cost - 1000, contribution_bounds_per_group => (-500, 100)) in [-500, 100] L1=500 L2=500

# title: SUM with per-group bounds of zero
SELECT SUM(cost, contribution_bounds_per_group => (0, 0)) FROM visits;
# error: UnsupportedQueryError: This is always 0

# title: SUM with per-row bounds
SELECT SUM(cost, contribution_bounds_per_row => (0, 10)) FROM visits;
# result: [(10524.2,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(cost, contribution_bounds_per_row => (0, 10)) in [0, 10] L1=40 L2=40

# title: SUM with per-row bounds looser than the catalog
SELECT SUM(cost, contribution_bounds_per_row => (-100, 5000)) FROM visits;
# result: [(220271.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(cost, contribution_bounds_per_row => (-100, 5000)) in [0, 2000] L1=8000 L2=8000

# title: SUM with per-row bounds outside the catalog range
SELECT SUM(age, contribution_bounds_per_row => (200, 300)) FROM visits;
# result: [(211200.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(age, contribution_bounds_per_row => (200, 300)) in [200, 200] L1=800 L2=800

# title: SUM with per-row bounds on an unbounded column
SELECT SUM(income, contribution_bounds_per_row => (0, 100000)) FROM people;
# result: [(28928300.0,)]
# bounding: row_level
# plan: laplace stats/unit=1 groups/unit=1 rows/group=1 rows/unit=1 selection=public | SUM(income, contribution_bounds_per_row => (0, 100000)) in [0, 100000] L1=100000 L2=100000

# title: SUM with both named bounds
SELECT SUM(cost, contribution_bounds_per_row => (0, 10), contribution_bounds_per_group => (0, 20)) FROM visits;
# error: UnsupportedQueryError: one of contribution_bounds_per_row and contribution_bounds_per_group

# title: SUM of a clamp with per-group bounds
SELECT SUM(LEAST(GREATEST(cost, 0), 10), contribution_bounds_per_group => (0, 20)) FROM visits;
# result: [(6831.41,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(LEAST(GREATEST(cost, 0), 10), contribution_bounds_per_group => (0, 20)) in [0, 20] L1=20 L2=20

# title: SUM with the same named bound twice
SELECT SUM(cost, contribution_bounds_per_row => (0, 10), contribution_bounds_per_row => (0, 20)) FROM visits;
# error: UnsupportedQueryError: each named argument once

# title: SUM with reversed per-row bounds
SELECT SUM(cost, contribution_bounds_per_row => (10, 0)) FROM visits;
# error: UnsupportedQueryError: is not a finite range

# title: SUM with one bound
SELECT SUM(cost, contribution_bounds_per_row => (10)) FROM visits;
# error: UnsupportedQueryError: with number literals lo <= hi

# title: SUM with three bounds
SELECT SUM(cost, contribution_bounds_per_row => (0, 1, 2)) FROM visits;
# error: UnsupportedQueryError: with number literals lo <= hi

# title: SUM with a string bound
SELECT SUM(cost, contribution_bounds_per_group => ('0', 10)) FROM visits;
# error: UnsupportedQueryError: with number literals lo <= hi

# title: SUM with an unknown named argument
SELECT SUM(cost, clamped_between => (0, 10)) FROM visits;
# error: ParseError

# title: AVG with per-group bounds averages each person's mean
SELECT AVG(cost, contribution_bounds_per_group => (0, 500)) FROM visits;
# result: [(186.537,)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | AVG(cost, contribution_bounds_per_group => (0, 500)) in [0, 500] L1=250 L2=250

# title: AVG with per-group bounds per group
SELECT region, AVG(age, contribution_bounds_per_group => (18, 90)) AS mean_age FROM visits GROUP BY region;
# result: [('east north central', 46.9524), ('mid atlantic', 47.1852), ('mountain', 50.5854), ('new england', 53.3478), ('pacific', 50.8611), ('south atlantic', 46.6667), ('west north central', 47.1389), ('west south central', 53.4333)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=6 groups/unit=3 rows/group=4 selection=public | region | mean_age=AVG(age, contribution_bounds_per_group => (18, 90)) in [18, 90] L1=108 L2=62.3538

# title: AVG with per-group bounds on a row-level table
SELECT AVG(income, contribution_bounds_per_group => (0, 100000)) FROM people;
# result: [(28928.3,)]
# bounding: row_level
# plan: laplace stats/unit=2 groups/unit=1 rows/group=1 rows/unit=1 selection=public | AVG(income, contribution_bounds_per_group => (0, 100000)) in [0, 100000] L1=50000 L2=50000

# title: AVG with per-row bounds
SELECT AVG(cost, contribution_bounds_per_row => (0, 500)) FROM visits;
# result: [(173.212,)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | AVG(cost, contribution_bounds_per_row => (0, 500)) in [0, 500] L1=1000 L2=1000

# title: AVG with a constant per-group bound
SELECT AVG(cost, contribution_bounds_per_group => (5, 5)) FROM visits;
# error: UnsupportedQueryError: AVG is the constant 5 here

# title: AVG and SUM with per-group bounds share the unit count
SELECT COUNT(cost, contribution_bounds_per_group => (0, 1)) AS people_with_cost, AVG(cost, contribution_bounds_per_group => (0, 500)) AS mean FROM visits;
# result: [(412, 186.537)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | people_with_cost=COUNT(cost, contribution_bounds_per_group => (0, 1)) L1=1 L2=1 | mean=AVG(cost, contribution_bounds_per_group => (0, 500)) in [0, 500] L1=250 L2=250

# title: COUNT star with per-group bounds
SELECT specialty, COUNT(*, contribution_bounds_per_group => (0, 5)) AS n FROM visits GROUP BY specialty;
# result: [('allergy and immunology', 20), ('anesthesiology', 3), ('cardiology', 49), ('cardiothoracic surgery', 2), ('colorectal surgery', 8), ('dermatology', 53), ('emergency medicine', 199), ('endocrinology', 28), ('gastroenterology', 24), ('general practice', 384), ('general surgery', 18), ('geriatrics', 13), ('gynecology', 48), ('hematology', 14), ('hepatology', 16), ('hyperbaric medicine', 7), ('infectious disease', 16), ('internal medicine', 102), ('medical genetics', 3), ('neonatology', 1), ('nephrology', 15), ('neurology', 15), ('neurosurgery', 9), ('nuclear medicine', 2), ('obstetrics', 35), ('occupational medicine', 8), ('oncology', 23), ('ophthalmology', 29), ('orthopedics', 52), ('otolaryngology', 8), ('palliative care', 8), ('pediatric oncology', 5), ('pediatrics', 76), ('physical therapy', 16), ('plastic surgery', 2), ('podiatry', 2), ('psychiatry', 9), ('psychology', 19), ('pulmonology', 25), ('radiology', 27), ('rheumatology', 9), ('sleep medicine', 6), ('sports medicine', 10), ('toxicology', 1), ('transplant surgery', 5), ('tropical medicine', 2), ('urology', 9), ('vascular surgery', 2)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=truncated_geometric | specialty | n=COUNT(*, contribution_bounds_per_group => (0, 5)) L1=15 L2=8.66025

# title: COUNT star with per-group bounds of one counts people per group
SELECT region, COUNT(*, contribution_bounds_per_group => (0, 1)) FROM visits GROUP BY region;
# result: [('east north central', 63), ('mid atlantic', 54), ('mountain', 41), ('new england', 23), ('pacific', 108), ('south atlantic', 57), ('west north central', 36), ('west south central', 30)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | COUNT(*, contribution_bounds_per_group => (0, 1)) L1=3 L2=1.73205

# title: COUNT of a column with per-group bounds
SELECT COUNT(cost, contribution_bounds_per_group => (1, 3)) FROM visits;
# result: [(888,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(cost, contribution_bounds_per_group => (1, 3)) L1=3 L2=3

# title: COUNT with per-row bounds
SELECT COUNT(*, contribution_bounds_per_row => (0, 1)) FROM visits;
# error: UnsupportedQueryError: per-row bounds do not apply

# title: COUNT with fractional per-group bounds
SELECT COUNT(*, contribution_bounds_per_group => (0, 2.5)) FROM visits;
# error: UnsupportedQueryError: with integers 0 <= lo <= hi

# title: COUNT with negative per-group bounds
SELECT COUNT(*, contribution_bounds_per_group => (-1, 2)) FROM visits;
# error: UnsupportedQueryError: with integers 0 <= lo <= hi

# title: COUNT with per-group bounds on a row-level table
SELECT COUNT(*, contribution_bounds_per_group => (0, 1)) FROM people;
# error: UnsupportedQueryError: drop contribution_bounds_per_group

# title: COUNT with another named argument
SELECT COUNT(*, mode => 1) FROM visits;
# error: UnsupportedQueryError: COUNT takes one argument

# title: COUNT DISTINCT with named bounds
SELECT COUNT(DISTINCT patient_id, contribution_bounds_per_group => (0, 1)) FROM visits;
# error: ParseError

# title: PERCENTILE_CONT with per-row bounds as in BigQuery
SELECT specialty, PERCENTILE_CONT(cost, 0.5, contribution_bounds_per_row => (0, 500)) AS median_cost FROM visits GROUP BY specialty;
# result: [('allergy and immunology', 112.061), ('anesthesiology', 221.436), ('cardiology', 197.51), ('cardiothoracic surgery', 179.443), ('colorectal surgery', 170.654), ('dermatology', 218.994), ('emergency medicine', 111.084), ('endocrinology', 291.748), ('gastroenterology', 143.799), ('general practice', 71.0449), ('general surgery', 92.5293), ('geriatrics', 122.803), ('gynecology', 148.193), ('hematology', 175.049), ('hepatology', 149.658), ('hyperbaric medicine', 226.807), ('infectious disease', 159.912), ('internal medicine', 123.779), ('medical genetics', 117.92), ('neonatology', 83.7402), ('nephrology', 283.447), ('neurology', 77.3926), ('neurosurgery', 112.061), ('nuclear medicine', 31.0059), ('obstetrics', 119.873), ('occupational medicine', 142.334), ('oncology', 131.592), ('ophthalmology', 109.131), ('orthopedics', 150.635), ('otolaryngology', 185.791), ('palliative care', 499.756), ('pediatric oncology', 95.9473), ('pediatrics', 250.732), ('physical therapy', 282.471), ('plastic surgery', 89.1113), ('podiatry', 15.8691), ('psychiatry', 155.029), ('psychology', 69.5801), ('pulmonology', 72.5098), ('radiology', 174.561), ('rheumatology', 166.748), ('sleep medicine', 94.4824), ('sports medicine', 52.4902), ('toxicology', 64.6973), ('transplant surgery', 65.1855), ('tropical medicine', 148.682), ('urology', 270.752), ('vascular surgery', 139.404)]
# bounding: kept_rows_ranked (g=3)
# plan: laplace stats/unit=6 groups/unit=3 rows/group=4 selection=laplace_threshold | specialty | median_cost=PERCENTILE_CONT(cost, 0.5, contribution_bounds_per_row => (0, 500)) in [0, 500] L1=12 L2=6.9282

# title: PERCENTILE_CONT with per-row bounds on an unbounded column
SELECT PERCENTILE_CONT(income, 0.9, contribution_bounds_per_row => (0, 200000)) FROM people;
# result: [(77050.8,)]
# bounding: row_level
# plan: exponential stats/unit=1 groups/unit=1 rows/group=1 rows/unit=1 selection=public | PERCENTILE_CONT(income, 0.9, contribution_bounds_per_row => (0, 200000)) in [0, 200000] L1=1 L2=1

# title: MEDIAN with per-row bounds
SELECT MEDIAN(age, contribution_bounds_per_row => (20, 60)) FROM visits;
# result: [(47.0117,)]
# bounding: all_pairs
# plan: exponential stats/unit=1 groups/unit=1 rows/group=4 selection=public | MEDIAN(age, contribution_bounds_per_row => (20, 60)) in [20, 60] L1=4 L2=4

# title: quantile with per-group bounds
SELECT PERCENTILE_CONT(cost, 0.5, contribution_bounds_per_group => (0, 500)) FROM visits;
# error: UnsupportedQueryError: A quantile ranks rows

# title: WITHIN GROUP quantile with named bounds
SELECT PERCENTILE_CONT(0.5, contribution_bounds_per_row => (0, 500)) WITHIN GROUP (ORDER BY cost) FROM visits;
# error: UnsupportedQueryError: Named bounds go in the two-argument form

# title: named bounds on a scalar function
SELECT COUNT(*) FROM visits WHERE ABS(cost, contribution_bounds_per_row => (0, 1)) > 0;
# error: ParseError: named argument of aggregate functions

# title: named bounds in post-processing arithmetic
SELECT SUM(cost, contribution_bounds_per_group => (0, 3000)) / COUNT(*, contribution_bounds_per_group => (0, 4)) AS ratio FROM visits;
# result: [(329.616,)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | ratio | also SUM(cost, contribution_bounds_per_group => (0, 3000)), COUNT(*, contribution_bounds_per_group => (0, 4))

# title: the BigQuery documentation example
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 10, delta = .01, max_groups_contributed = 1, privacy_unit_column = patient_id) specialty, AVG(cost, contribution_bounds_per_group => (0, 100)) average_cost FROM visits GROUP BY specialty;
# result: [('allergy and immunology', 100.0), ('anesthesiology', 100.0), ('cardiology', 96.6477), ('cardiothoracic surgery', 100.0), ('colorectal surgery', 100.0), ('dermatology', 96.822), ('emergency medicine', 90.4338), ('endocrinology', 100.0), ('gastroenterology', 92.1886), ('general practice', 75.3007), ('general surgery', 98.1275), ('geriatrics', 100.0), ('gynecology', 92.305), ('hematology', 98.132), ('hepatology', 100.0), ('hyperbaric medicine', 100.0), ('infectious disease', 100.0), ('internal medicine', 88.6203), ('medical genetics', 100.0), ('neonatology', 83.53), ('nephrology', 91.016), ('neurology', 71.0017), ('neurosurgery', 55.92), ('obstetrics', 87.1855), ('occupational medicine', 83.935), ('oncology', 100.0), ('ophthalmology', 81.3025), ('orthopedics', 90.5936), ('otolaryngology', 79.3467), ('palliative care', 100.0), ('pediatrics', 92.846), ('physical therapy', 100.0), ('plastic surgery', 100.0), ('podiatry', 22.335), ('psychiatry', 90.01), ('psychology', 86.0978), ('pulmonology', 84.3792), ('radiology', 99.606), ('rheumatology', 100.0), ('sleep medicine', 94.2475), ('sports medicine', 90.862), ('tropical medicine', 100.0), ('urology', 100.0), ('vascular surgery', 100.0)]
# bounding: first_pair (g=1, packed)
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=laplace_threshold | specialty | average_cost=AVG(cost, contribution_bounds_per_group => (0, 100)) in [0, 100] L1=50 L2=50

# title: bigquery dialect with backticks and double-quoted strings
# dialect: bigquery
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 1e-6, privacy_unit_column = patient_id) `specialty`, COUNT(*) AS n FROM `visits` WHERE region = "pacific" GROUP BY `specialty`;
# result: [('allergy and immunology', 4), ('anesthesiology', 1), ('cardiology', 10), ('dermatology', 24), ('emergency medicine', 37), ('endocrinology', 8), ('gastroenterology', 5), ('general practice', 95), ('general surgery', 4), ('geriatrics', 4), ('gynecology', 8), ('hematology', 4), ('internal medicine', 23), ('nephrology', 5), ('neurology', 10), ('nuclear medicine', 2), ('obstetrics', 12), ('occupational medicine', 2), ('oncology', 9), ('ophthalmology', 10), ('orthopedics', 9), ('otolaryngology', 4), ('pediatric oncology', 4), ('pediatrics', 12), ('physical therapy', 1), ('plastic surgery', 2), ('podiatry', 1), ('psychiatry', 1), ('psychology', 9), ('pulmonology', 3), ('radiology', 1), ('rheumatology', 2), ('sports medicine', 2), ('tropical medicine', 1)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=truncated_geometric | specialty | n=COUNT(*) L1=12 L2=6.9282

# title: bigquery dialect SAFE_CAST in post-processing
# dialect: bigquery
SELECT SAFE_CAST(SUM(cost) AS INT64) AS total FROM visits;
# result: [(220271,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | total=SUM(cost) in [0, 2000] L1=8000 L2=8000

# title: bigquery dialect IF in post-processing
# dialect: bigquery
SELECT region, IF(COUNT(*) > 100, 'many', 'few') AS size FROM visits GROUP BY region;
# result: [('east north central', 'many'), ('mid atlantic', 'many'), ('mountain', 'many'), ('new england', 'few'), ('pacific', 'many'), ('south atlantic', 'many'), ('west north central', 'few'), ('west south central', 'few')]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | size | also COUNT(*)

# title: postgres dialect double-colon cast in post-processing
# dialect: postgres
SELECT region, COUNT(*)::FLOAT / 10 AS tens FROM visits GROUP BY region;
# result: [('east north central', 17.1), ('mid atlantic', 13.3), ('mountain', 10.1), ('new england', 6.8), ('pacific', 26.5), ('south atlantic', 15.8), ('west north central', 8.9), ('west south central', 7.1)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | tens | also COUNT(*)

# title: postgres dialect ILIKE and quoted identifiers
# dialect: postgres
SELECT "specialty", COUNT(*) FROM visits WHERE "specialty" ILIKE 'CARD%' GROUP BY "specialty";
# result: [('cardiology', 46), ('cardiothoracic surgery', 2)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=truncated_geometric | specialty | COUNT(*) L1=12 L2=6.9282

# title: postgres dialect with the DP clause
# dialect: postgres
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 0.5, max_groups_contributed = 2) region, SUM(cost, contribution_bounds_per_group => (0, 1000)) FROM visits GROUP BY region;
# result: [('east north central', 35350.2), ('mid atlantic', 30404.3), ('mountain', 19646.7), ('new england', 14439.9), ('pacific', 52365.7), ('south atlantic', 33024.3), ('west north central', 19389.7), ('west south central', 13165.8)]
# bounding: first_pairs_by_window (g=2)
# plan: laplace stats/unit=2 groups/unit=2 rows/group=4 selection=public | region | SUM(cost, contribution_bounds_per_group => (0, 1000)) in [0, 1000] L1=2000 L2=1414.21

# title: spark dialect with backticks
# dialect: spark
SELECT `region`, AVG(`age`) AS mean_age FROM `visits` GROUP BY `region`;
# result: [('east north central', 43.7427), ('mid atlantic', 47.5038), ('mountain', 51.4356), ('new england', 50.8676), ('pacific', 48.1208), ('south atlantic', 49.0063), ('west north central', 48.236), ('west south central', 51.3239)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=6 groups/unit=3 rows/group=4 selection=public | region | mean_age=AVG("age") in [0, 100] L1=600 L2=346.41

# title: spark dialect with the DP clause
# dialect: spark
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 1e-6) specialty, COUNT(*, contribution_bounds_per_group => (0, 2)) AS n FROM visits GROUP BY specialty;
# result: [('allergy and immunology', 9), ('anesthesiology', 3), ('cardiology', 36), ('cardiothoracic surgery', 2), ('colorectal surgery', 5), ('dermatology', 38), ('emergency medicine', 128), ('endocrinology', 17), ('gastroenterology', 14), ('general practice', 261), ('general surgery', 12), ('geriatrics', 7), ('gynecology', 30), ('hematology', 8), ('hepatology', 8), ('hyperbaric medicine', 4), ('infectious disease', 9), ('internal medicine', 71), ('medical genetics', 3), ('neonatology', 1), ('nephrology', 12), ('neurology', 12), ('neurosurgery', 6), ('nuclear medicine', 2), ('obstetrics', 23), ('occupational medicine', 8), ('oncology', 12), ('ophthalmology', 18), ('orthopedics', 35), ('otolaryngology', 5), ('palliative care', 4), ('pediatric oncology', 2), ('pediatrics', 54), ('physical therapy', 10), ('plastic surgery', 2), ('podiatry', 2), ('psychiatry', 9), ('psychology', 12), ('pulmonology', 15), ('radiology', 18), ('rheumatology', 9), ('sleep medicine', 4), ('sports medicine', 7), ('toxicology', 1), ('transplant surgery', 3), ('tropical medicine', 2), ('urology', 5), ('vascular surgery', 2)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=laplace_threshold | specialty | n=COUNT(*, contribution_bounds_per_group => (0, 2)) L1=6 L2=3.4641

# title: spark dialect NVL in post-processing
# dialect: spark
SELECT NVL(SUM(cost), 0) AS total FROM visits;
# result: [(220271.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | total | also SUM(cost)

# title: bigquery dialect double quotes make a string
# dialect: bigquery
SELECT COUNT(*) FROM visits WHERE specialty = "cardiology";
# result: [(46,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: duckdb dialect double quotes make a column name
SELECT COUNT(*) FROM visits WHERE specialty = "cardiology";
# error: CatalogError: column `cardiology` is not in table 'visits'

# title: bigquery dialect named bounds and post-processing together
# dialect: bigquery
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 0.5, delta = 1e-6, max_groups_contributed = 2, privacy_unit_column = patient_id) region, ROUND(AVG(age, contribution_bounds_per_group => (0, 100)), 1) AS mean_age, COUNT(*, contribution_bounds_per_group => (0, 3)) AS visits FROM `visits` GROUP BY region ORDER BY visits DESC;
# result: [('pacific', 50.0, 228), ('east north central', 46.0, 141), ('south atlantic', 46.2, 131), ('mid atlantic', 46.4, 112), ('mountain', 50.6, 85), ('west north central', 47.0, 74), ('west south central', 53.3, 61), ('new england', 52.1, 56)]
# bounding: first_pairs_by_window (g=2)
# plan: laplace stats/unit=6 groups/unit=2 rows/group=4 selection=public | region | mean_age | visits=COUNT(*, contribution_bounds_per_group => (0, 3)) L1=6 L2=4.24264 | also AVG(age, contribution_bounds_per_group => (0, 100))

# title: spark dialect quantile with per-row bounds
# dialect: spark
SELECT `specialty`, PERCENTILE_CONT(cost, 0.25, contribution_bounds_per_row => (0, 1000)) AS q1 FROM visits GROUP BY `specialty`;
# result: [('allergy and immunology', 82.5195), ('anesthesiology', 160.645), ('cardiology', 144.043), ('cardiothoracic surgery', 179.199), ('colorectal surgery', 112.793), ('dermatology', 128.418), ('emergency medicine', 57.1289), ('endocrinology', 134.277), ('gastroenterology', 97.168), ('general practice', 33.6914), ('general surgery', 67.8711), ('geriatrics', 85.4492), ('gynecology', 82.5195), ('hematology', 110.84), ('hepatology', 75.6836), ('hyperbaric medicine', 155.762), ('infectious disease', 95.2148), ('internal medicine', 71.7773), ('medical genetics', 83.4961), ('neonatology', 83.4961), ('nephrology', 102.051), ('neurology', 46.3867), ('neurosurgery', 80.5664), ('nuclear medicine', 30.7617), ('obstetrics', 66.8945), ('occupational medicine', 92.2852), ('oncology', 79.5898), ('ophthalmology', 64.9414), ('orthopedics', 64.9414), ('otolaryngology', 51.2695), ('palliative care', 215.332), ('pediatric oncology', 93.2617), ('pediatrics', 123.535), ('physical therapy', 135.254), ('plastic surgery', 89.3555), ('podiatry', 16.1133), ('psychiatry', 100.098), ('psychology', 34.668), ('pulmonology', 45.4102), ('radiology', 132.324), ('rheumatology', 76.6602), ('sleep medicine', 70.8008), ('sports medicine', 29.7852), ('toxicology', 64.9414), ('transplant surgery', 56.1523), ('tropical medicine', 148.926), ('urology', 116.699), ('vascular surgery', 139.16)]
# bounding: kept_rows_ranked (g=3)
# plan: laplace stats/unit=6 groups/unit=3 rows/group=4 selection=laplace_threshold | specialty | q1=PERCENTILE_CONT(cost, 0.25, contribution_bounds_per_row => (0, 1000)) in [0, 1000] L1=12 L2=6.9282

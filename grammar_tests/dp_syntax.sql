# note: BigQuery/ZetaSQL differential-privacy syntax (docs/sql.md, "BigQuery-style DP syntax
# note: and dialects"): SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (...) and the named arguments
# note: contribution_bounds_per_row / contribution_bounds_per_group. Cases without
# note: "# epsilon:" / "# delta:" take them from OPTIONS, else the defaults (1, 1e-6).

# title: DP clause with every BigQuery option
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 2, privacy_unit_column = patient_id) specialty, COUNT(*) AS n FROM visits GROUP BY specialty;
# plan: laplace stats/unit=2 groups/unit=2 rows/group=4 selection=truncated_geometric | specialty | n=COUNT(*) L1=8 L2=5.65685

# title: DP clause with epsilon only
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 0.5) COUNT(*) FROM visits;
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: DP clause keywords in lower case
select with differential_privacy options (epsilon = 0.5, delta = 1e-7) count(*) from visits;
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: DP clause option names in upper case
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (EPSILON = 0.5, MAX_GROUPS_CONTRIBUTED = 1) region, COUNT(*) FROM visits GROUP BY region;
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | region | COUNT(*) L1=4 L2=4

# title: DP clause with an empty option list
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS () COUNT(*) FROM visits;
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: DP clause delta decides Gaussian noise
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 1e-5) COUNT(*), SUM(cost), AVG(age), COUNT(cost), SUM(age), COUNT(age), AVG(cost), COUNT(DISTINCT patient_id) FROM visits;
# plan: gaussian stats/unit=8 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4 | SUM(cost) in [0, 2000] L1=8000 L2=8000 | AVG(age) in [0, 100] L1=200 L2=200 | COUNT(cost) L1=4 L2=4 | SUM(age) in [0, 100] L1=400 L2=400 | COUNT(age) L1=4 L2=4 | AVG(cost) in [0, 2000] L1=4000 L2=4000 | COUNT(DISTINCT patient_id) L1=1 L2=1

# title: DP clause delta 0 forces Laplace
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 0) COUNT(*), SUM(cost), AVG(age), COUNT(cost), SUM(age), COUNT(age), AVG(cost), COUNT(DISTINCT patient_id) FROM visits;
# plan: laplace stats/unit=8 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4 | SUM(cost) in [0, 2000] L1=8000 L2=8000 | AVG(age) in [0, 100] L1=200 L2=200 | COUNT(cost) L1=4 L2=4 | SUM(age) in [0, 100] L1=400 L2=400 | COUNT(age) L1=4 L2=4 | AVG(cost) in [0, 2000] L1=4000 L2=4000 | COUNT(DISTINCT patient_id) L1=1 L2=1

# title: DP clause delta 0 with private keys is refused
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 0) specialty, COUNT(*) FROM visits GROUP BY specialty;
# error: PrivacyError: releasing them needs delta > 0

# title: DP clause epsilon equal to the call's
# epsilon: 0.5
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 0.5) COUNT(*) FROM visits;
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
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, min_privacy_units_per_group = 10) COUNT(*) FROM visits;
# error: UnsupportedQueryError: min_privacy_units_per_group is not an option dpsql knows

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
# plan: gaussian stats/unit=12 groups/unit=6 rows/group=4 selection=gaussian_threshold | specialty | COUNT(*) L1=24 L2=9.79796

# title: DP clause max_groups_contributed tightens the catalog limit
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (max_groups_contributed = 1) specialty, COUNT(*) FROM visits GROUP BY specialty;
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=truncated_geometric | specialty | COUNT(*) L1=4 L2=4

# title: DP clause max_groups_contributed on a global aggregate
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (max_groups_contributed = 5) COUNT(*) FROM visits;
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: DP clause max_groups_contributed above the public domain
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (max_groups_contributed = 50) region, COUNT(*) FROM visits GROUP BY region;
# plan: laplace stats/unit=8 groups/unit=8 rows/group=4 selection=public | region | COUNT(*) L1=32 L2=11.3137

# title: DP clause max_groups_contributed on a table without a declared limit
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (max_groups_contributed = 2) sex, educ, COUNT(*) FROM pums GROUP BY sex, educ;
# plan: laplace stats/unit=2 groups/unit=2 rows/group=2 selection=truncated_geometric | sex | educ | COUNT(*) L1=4 L2=2.82843

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
# plan: laplace stats/unit=5 groups/unit=5 rows/group=5 rows/unit=5 selection=truncated_geometric | specialty | COUNT(*) L1=5 L2=5

# title: DP clause max_rows_contributed replaces all three limits
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (max_rows_contributed = 2) region, SUM(cost) FROM claims GROUP BY region;
# plan: laplace stats/unit=2 groups/unit=2 rows/group=2 rows/unit=2 selection=public | region | SUM(cost) in [0, 1000] L1=2000 L2=2000

# title: DP clause both contribution options
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (max_groups_contributed = 2, max_rows_contributed = 5) COUNT(*) FROM visits;
# error: UnsupportedQueryError: one of max_groups_contributed and max_rows_contributed

# title: DP clause privacy unit qualified by the table
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (privacy_unit_column = visits.patient_id) COUNT(*) FROM visits;
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: DP clause privacy unit qualified by the alias
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (privacy_unit_column = v.patient_id) v.specialty, COUNT(*) FROM visits AS v GROUP BY v.specialty;
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=truncated_geometric | specialty | COUNT(*) L1=12 L2=6.9282

# title: DP clause privacy unit in another case
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (privacy_unit_column = PATIENT_ID) COUNT(*) FROM visits;
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
# plan: laplace stats/unit=1 groups/unit=1 rows/group=1 rows/unit=1 selection=truncated_geometric | sex | COUNT(*) L1=1 L2=1

# title: DP clause in a set operation
SELECT COUNT(*) FROM visits UNION ALL SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1) COUNT(*) FROM visits;
# error: UnsupportedQueryError: right after the outermost SELECT

# title: DP clause with post-processing
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 1e-6) specialty, ROUND(AVG(cost), 1) AS mean_cost FROM visits GROUP BY specialty HAVING COUNT(*) > 10 ORDER BY mean_cost DESC LIMIT 3;
# plan: gaussian stats/unit=12 groups/unit=3 rows/group=4 selection=gaussian_threshold | specialty | mean_cost | also AVG(cost), COUNT(*)

# title: DP clause without OPTIONS
SELECT WITH DIFFERENTIAL_PRIVACY COUNT(*) FROM visits;
# error: ParseError

# title: SUM with per-group bounds
SELECT SUM(cost, contribution_bounds_per_group => (0, 3000)) FROM visits;
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(cost, contribution_bounds_per_group => (0, 3000)) in [0, 3000] L1=3000 L2=3000

# title: SUM with per-group bounds per group
SELECT specialty, SUM(cost, contribution_bounds_per_group => (0, 3000)) AS total FROM visits GROUP BY specialty;
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=truncated_geometric | specialty | total=SUM(cost, contribution_bounds_per_group => (0, 3000)) in [0, 3000] L1=9000 L2=5196.15

# title: SUM with per-group bounds on an unbounded column
SELECT SUM(married, contribution_bounds_per_group => (0, 1)) FROM pums;
# plan: laplace stats/unit=1 groups/unit=1 rows/group=2 selection=public | SUM(married, contribution_bounds_per_group => (0, 1)) in [0, 1] L1=1 L2=1

# title: SUM with negative per-group bounds
SELECT SUM(cost - 1000, contribution_bounds_per_group => (-500, 100)) FROM visits;
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(cost - 1000, contribution_bounds_per_group => (-500, 100)) in [-500, 100] L1=500 L2=500

# title: SUM with per-group bounds of zero
SELECT SUM(cost, contribution_bounds_per_group => (0, 0)) FROM visits;
# error: UnsupportedQueryError: This is always 0

# title: SUM with per-row bounds
SELECT SUM(cost, contribution_bounds_per_row => (0, 10)) FROM visits;
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(cost, contribution_bounds_per_row => (0, 10)) in [0, 10] L1=40 L2=40

# title: SUM with per-row bounds looser than the catalog
SELECT SUM(cost, contribution_bounds_per_row => (-100, 5000)) FROM visits;
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(cost, contribution_bounds_per_row => (-100, 5000)) in [0, 2000] L1=8000 L2=8000

# title: SUM with per-row bounds outside the catalog range
SELECT SUM(age, contribution_bounds_per_row => (200, 300)) FROM visits;
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(age, contribution_bounds_per_row => (200, 300)) in [200, 200] L1=800 L2=800

# title: SUM with per-row bounds on an unbounded column
SELECT SUM(income, contribution_bounds_per_row => (0, 100000)) FROM people;
# plan: laplace stats/unit=1 groups/unit=1 rows/group=1 rows/unit=1 selection=public | SUM(income, contribution_bounds_per_row => (0, 100000)) in [0, 100000] L1=100000 L2=100000

# title: SUM with both named bounds
SELECT SUM(cost, contribution_bounds_per_row => (0, 10), contribution_bounds_per_group => (0, 20)) FROM visits;
# error: UnsupportedQueryError: one of contribution_bounds_per_row and contribution_bounds_per_group

# title: SUM of a clamp with per-group bounds
SELECT SUM(LEAST(GREATEST(cost, 0), 10), contribution_bounds_per_group => (0, 20)) FROM visits;
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
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | AVG(cost, contribution_bounds_per_group => (0, 500)) in [0, 500] L1=250 L2=250

# title: AVG with per-group bounds per group
SELECT region, AVG(age, contribution_bounds_per_group => (18, 90)) AS mean_age FROM visits GROUP BY region;
# plan: laplace stats/unit=6 groups/unit=3 rows/group=4 selection=public | region | mean_age=AVG(age, contribution_bounds_per_group => (18, 90)) in [18, 90] L1=108 L2=62.3538

# title: AVG with per-group bounds on a row-level table
SELECT AVG(income, contribution_bounds_per_group => (0, 100000)) FROM people;
# plan: laplace stats/unit=2 groups/unit=1 rows/group=1 rows/unit=1 selection=public | AVG(income, contribution_bounds_per_group => (0, 100000)) in [0, 100000] L1=50000 L2=50000

# title: AVG with per-row bounds
SELECT AVG(cost, contribution_bounds_per_row => (0, 500)) FROM visits;
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | AVG(cost, contribution_bounds_per_row => (0, 500)) in [0, 500] L1=1000 L2=1000

# title: AVG with a constant per-group bound
SELECT AVG(cost, contribution_bounds_per_group => (5, 5)) FROM visits;
# error: UnsupportedQueryError: AVG is the constant 5 here

# title: AVG and SUM with per-group bounds share the unit count
SELECT COUNT(cost, contribution_bounds_per_group => (0, 1)) AS people_with_cost, AVG(cost, contribution_bounds_per_group => (0, 500)) AS mean FROM visits;
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | people_with_cost=COUNT(cost, contribution_bounds_per_group => (0, 1)) L1=1 L2=1 | mean=AVG(cost, contribution_bounds_per_group => (0, 500)) in [0, 500] L1=250 L2=250

# title: COUNT star with per-group bounds
SELECT specialty, COUNT(*, contribution_bounds_per_group => (0, 5)) AS n FROM visits GROUP BY specialty;
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=truncated_geometric | specialty | n=COUNT(*, contribution_bounds_per_group => (0, 5)) L1=15 L2=8.66025

# title: COUNT star with per-group bounds of one counts people per group
SELECT region, COUNT(*, contribution_bounds_per_group => (0, 1)) FROM visits GROUP BY region;
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | COUNT(*, contribution_bounds_per_group => (0, 1)) L1=3 L2=1.73205

# title: COUNT of a column with per-group bounds
SELECT COUNT(cost, contribution_bounds_per_group => (1, 3)) FROM visits;
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
# plan: laplace stats/unit=6 groups/unit=3 rows/group=4 selection=laplace_threshold | specialty | median_cost=PERCENTILE_CONT(cost, 0.5, contribution_bounds_per_row => (0, 500)) in [0, 500] L1=12 L2=6.9282

# title: PERCENTILE_CONT with per-row bounds on an unbounded column
SELECT PERCENTILE_CONT(income, 0.9, contribution_bounds_per_row => (0, 200000)) FROM people;
# plan: exponential stats/unit=1 groups/unit=1 rows/group=1 rows/unit=1 selection=public | PERCENTILE_CONT(income, 0.9, contribution_bounds_per_row => (0, 200000)) in [0, 200000] L1=1 L2=1

# title: MEDIAN with per-row bounds
SELECT MEDIAN(age, contribution_bounds_per_row => (20, 60)) FROM visits;
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
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | ratio | also SUM(cost, contribution_bounds_per_group => (0, 3000)), COUNT(*, contribution_bounds_per_group => (0, 4))

# title: the BigQuery documentation example
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 10, delta = .01, max_groups_contributed = 1, privacy_unit_column = patient_id) specialty, AVG(cost, contribution_bounds_per_group => (0, 100)) average_cost FROM visits GROUP BY specialty;
# plan: laplace stats/unit=3 groups/unit=1 rows/group=4 selection=laplace_threshold | specialty | average_cost=AVG(cost, contribution_bounds_per_group => (0, 100)) in [0, 100] L1=50 L2=50

# title: bigquery dialect with backticks and double-quoted strings
# dialect: bigquery
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 1e-6, privacy_unit_column = patient_id) `specialty`, COUNT(*) AS n FROM `visits` WHERE region = "pacific" GROUP BY `specialty`;
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=truncated_geometric | specialty | n=COUNT(*) L1=12 L2=6.9282

# title: bigquery dialect SAFE_CAST in post-processing
# dialect: bigquery
SELECT SAFE_CAST(SUM(cost) AS INT64) AS total FROM visits;
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | total | also SUM(cost)

# title: bigquery dialect IF in post-processing
# dialect: bigquery
SELECT region, IF(COUNT(*) > 100, 'many', 'few') AS size FROM visits GROUP BY region;
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | size | also COUNT(*)

# title: postgres dialect double-colon cast in post-processing
# dialect: postgres
SELECT region, COUNT(*)::FLOAT / 10 AS tens FROM visits GROUP BY region;
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | tens | also COUNT(*)

# title: postgres dialect ILIKE and quoted identifiers
# dialect: postgres
SELECT "specialty", COUNT(*) FROM visits WHERE "specialty" ILIKE 'CARD%' GROUP BY "specialty";
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=truncated_geometric | specialty | COUNT(*) L1=12 L2=6.9282

# title: postgres dialect with the DP clause
# dialect: postgres
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 0.5, max_groups_contributed = 2) region, SUM(cost, contribution_bounds_per_group => (0, 1000)) FROM visits GROUP BY region;
# plan: laplace stats/unit=2 groups/unit=2 rows/group=4 selection=public | region | SUM(cost, contribution_bounds_per_group => (0, 1000)) in [0, 1000] L1=2000 L2=1414.21

# title: spark dialect with backticks
# dialect: spark
SELECT `region`, AVG(`age`) AS mean_age FROM `visits` GROUP BY `region`;
# plan: laplace stats/unit=6 groups/unit=3 rows/group=4 selection=public | region | mean_age=AVG("age") in [0, 100] L1=600 L2=346.41

# title: spark dialect with the DP clause
# dialect: spark
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 1e-6) specialty, COUNT(*, contribution_bounds_per_group => (0, 2)) AS n FROM visits GROUP BY specialty;
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=truncated_geometric | specialty | n=COUNT(*, contribution_bounds_per_group => (0, 2)) L1=6 L2=3.4641

# title: spark dialect NVL in post-processing
# dialect: spark
SELECT NVL(SUM(cost), 0) AS total FROM visits;
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | total | also SUM(cost)

# title: bigquery dialect double quotes make a string
# dialect: bigquery
SELECT COUNT(*) FROM visits WHERE specialty = "cardiology";
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: duckdb dialect double quotes make a column name
SELECT COUNT(*) FROM visits WHERE specialty = "cardiology";
# error: UnsupportedQueryError: column `cardiology` is not in table 'visits'

# title: bigquery dialect named bounds and post-processing together
# dialect: bigquery
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 0.5, delta = 1e-6, max_groups_contributed = 2, privacy_unit_column = patient_id) region, ROUND(AVG(age, contribution_bounds_per_group => (0, 100)), 1) AS mean_age, COUNT(*, contribution_bounds_per_group => (0, 3)) AS visits FROM `visits` GROUP BY region ORDER BY visits DESC;
# plan: laplace stats/unit=6 groups/unit=2 rows/group=4 selection=public | region | mean_age | visits=COUNT(*, contribution_bounds_per_group => (0, 3)) L1=6 L2=4.24264 | also AVG(age, contribution_bounds_per_group => (0, 100))

# title: spark dialect quantile with per-row bounds
# dialect: spark
SELECT `specialty`, PERCENTILE_CONT(cost, 0.25, contribution_bounds_per_row => (0, 1000)) AS q1 FROM visits GROUP BY `specialty`;
# plan: laplace stats/unit=6 groups/unit=3 rows/group=4 selection=laplace_threshold | specialty | q1=PERCENTILE_CONT(cost, 0.25, contribution_bounds_per_row => (0, 1000)) in [0, 1000] L1=12 L2=6.9282

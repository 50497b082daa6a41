# note: GROUP BY: columns only, never the privacy unit. Private keys need DP partition
# note: selection (delta > 0), which adds the distinct-unit count as a statistic; public keys
# note: (declared with public_keys) need no selection and cap groups/unit at the domain size.

# title: private key needs partition selection
SELECT specialty, COUNT(*) AS n FROM visits GROUP BY specialty;
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=truncated_geometric | specialty | n=COUNT(*) L1=12 L2=6.9282

# title: public key needs no partition selection
SELECT region, COUNT(*) AS n FROM visits GROUP BY region;
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | n=COUNT(*) L1=12 L2=6.9282

# title: public key with delta 0 is pure epsilon-DP
# delta: 0
SELECT region, SUM(cost) FROM visits GROUP BY region;
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | SUM(cost) in [0, 2000] L1=24000 L2=13856.4

# title: private key with delta 0 is refused
# delta: 0
SELECT specialty, COUNT(*) FROM visits GROUP BY specialty;
# error: PrivacyError: GROUP BY specialty: group keys are private, and releasing them needs delta > 0

# title: mixed public and private keys with delta 0 are refused
# delta: 0
SELECT region, specialty, COUNT(*) FROM visits GROUP BY region, specialty;
# error: PrivacyError: public_keys={"specialty": [...values...]}

# title: public and private keys together need selection
SELECT region, specialty, COUNT(*) FROM visits GROUP BY region, specialty;
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=truncated_geometric | region | specialty | COUNT(*) L1=12 L2=6.9282

# title: public domain of two values caps groups per unit
SELECT specialty, COUNT(*) FROM claims GROUP BY specialty;
# plan: laplace stats/unit=2 groups/unit=2 rows/group=3 rows/unit=5 selection=public | specialty | COUNT(*) L1=5 L2=3.60555

# title: public keys read from a public table
SELECT region, COUNT(*) FROM claims GROUP BY region;
# plan: laplace stats/unit=4 groups/unit=4 rows/group=3 rows/unit=5 selection=public | region | COUNT(*) L1=5 L2=3.60555

# title: two public keys multiply their domains
SELECT region, specialty, COUNT(*) FROM claims GROUP BY region, specialty;
# plan: laplace stats/unit=4 groups/unit=4 rows/group=3 rows/unit=5 selection=public | region | specialty | COUNT(*) L1=5 L2=3.60555

# title: public key with the default one group per unit
SELECT sex, COUNT(*) FROM pums GROUP BY sex;
# plan: laplace stats/unit=1 groups/unit=1 rows/group=2 selection=public | sex | COUNT(*) L1=2 L2=2

# title: private key with the default one group per unit
SELECT educ, COUNT(*) FROM pums GROUP BY educ;
# plan: laplace stats/unit=1 groups/unit=1 rows/group=2 selection=truncated_geometric | educ | COUNT(*) L1=2 L2=2

# title: distinct-unit count shared with partition selection
SELECT educ, COUNT(DISTINCT pid) AS people, COUNT(*) AS rows FROM pums GROUP BY educ;
# plan: laplace stats/unit=2 groups/unit=1 rows/group=2 selection=laplace_threshold | educ | people=COUNT(DISTINCT pid) L1=1 L2=1 | rows=COUNT(*) L1=2 L2=2

# title: AVG under private keys
SELECT specialty, AVG(age) FROM visits GROUP BY specialty;
# plan: laplace stats/unit=6 groups/unit=3 rows/group=4 selection=truncated_geometric | specialty | AVG(age) in [0, 100] L1=600 L2=346.41

# title: private key on a row-level table
SELECT race, COUNT(*) FROM people GROUP BY race;
# plan: laplace stats/unit=1 groups/unit=1 rows/group=1 rows/unit=1 selection=truncated_geometric | race | COUNT(*) L1=1 L2=1

# title: group key not in SELECT
SELECT COUNT(*) FROM visits GROUP BY region;
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | COUNT(*) L1=12 L2=6.9282

# title: group key after the aggregate
SELECT COUNT(*) AS n, region FROM visits GROUP BY region;
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | n=COUNT(*) L1=12 L2=6.9282 | region

# title: group key renamed in SELECT
SELECT region AS area, COUNT(*) FROM visits GROUP BY region;
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | area | COUNT(*) L1=12 L2=6.9282

# title: group key inside an output expression
SELECT UPPER(region) AS area, COUNT(*) AS n FROM visits GROUP BY region;
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | area | n=COUNT(*) L1=12 L2=6.9282

# title: GROUP BY the privacy unit
SELECT patient_id, COUNT(*) FROM visits GROUP BY patient_id;
# error: UnsupportedQueryError: use COUNT(DISTINCT patient_id) to count people instead

# title: GROUP BY the qualified privacy unit
SELECT COUNT(*) FROM pums p GROUP BY p.pid;
# error: UnsupportedQueryError: Grouping by pid would release one row per person

# title: GROUP BY an output alias
SELECT region AS area, COUNT(*) FROM visits GROUP BY area;
# error: UnsupportedQueryError: column `area` is not in table 'visits'

# title: GROUP BY ROLLUP
SELECT region, COUNT(*) FROM visits GROUP BY ROLLUP (region);
# error: UnsupportedQueryError: GROUP BY

# title: GROUP BY CUBE
SELECT region, specialty, COUNT(*) FROM visits GROUP BY CUBE (region, specialty);
# error: UnsupportedQueryError: GROUP BY

# title: GROUP BY GROUPING SETS
SELECT region, COUNT(*) FROM visits GROUP BY GROUPING SETS ((region), ());
# error: UnsupportedQueryError: GROUP BY

# title: GROUP BY ALL
SELECT region, COUNT(*) FROM visits GROUP BY ALL;
# error: UnsupportedQueryError

# title: the same key twice
SELECT region, COUNT(*) FROM visits GROUP BY region, visits.region;
# error: UnsupportedQueryError: each column once

# title: unknown group key
SELECT ward, COUNT(*) FROM visits GROUP BY ward;
# error: UnsupportedQueryError: column `ward` is not in table 'visits'

# title: column neither grouped nor aggregated
SELECT region, specialty, COUNT(*) FROM visits GROUP BY region;
# error: UnsupportedQueryError: aggregate it (e.g. AVG(specialty)) or add it to GROUP BY

# title: group keys without an aggregate
SELECT region FROM visits GROUP BY region;
# error: UnsupportedQueryError: Private rows cannot be listed

# title: private keys alone are released by truncated-geometric partition selection
SELECT specialty FROM visits GROUP BY specialty;
# plan: truncated_geometric stats/unit=3 groups/unit=3 rows/group=4 selection=truncated_geometric | specialty

# title: public keys alone release nothing private and are refused
SELECT region FROM visits GROUP BY region;
# error: UnsupportedQueryError: at least one aggregate, or private GROUP BY keys alone

# title: private keys alone need delta
# delta: 0
SELECT specialty FROM visits GROUP BY specialty;
# error: PrivacyError: needs delta > 0

# note: Contribution limits per privacy unit, row-level privacy, and (epsilon, delta).
# note: claims: 4 groups/unit, 3 rows/group, at most 5 rows/unit, cost in [0, 1000];
# note: a COUNT's L1 is min(5, groups x 3), its L2 one full group of 3 rows plus one of 2.

# title: rows per unit cap does not bind on one group
SELECT COUNT(*), SUM(cost) FROM claims;
# plan: laplace stats/unit=2 groups/unit=1 rows/group=3 rows/unit=5 selection=public | COUNT(*) L1=3 L2=3 | SUM(cost) in [0, 1000] L1=3000 L2=3000

# title: rows per unit cap binds across groups
SELECT region, COUNT(*) AS n FROM claims GROUP BY region;
# plan: laplace stats/unit=4 groups/unit=4 rows/group=3 rows/unit=5 selection=public | region | n=COUNT(*) L1=5 L2=3.60555

# title: rows per unit cap scales a SUM
SELECT region, SUM(cost) AS total FROM claims GROUP BY region;
# plan: laplace stats/unit=4 groups/unit=4 rows/group=3 rows/unit=5 selection=public | region | total=SUM(cost) in [0, 1000] L1=5000 L2=3605.55

# title: distinct units count once per group
SELECT region, COUNT(DISTINCT patient_id) AS patients FROM claims GROUP BY region;
# plan: laplace stats/unit=4 groups/unit=4 rows/group=3 rows/unit=5 selection=public | region | patients=COUNT(DISTINCT patient_id) L1=4 L2=2

# title: private key with a rows per unit cap
SELECT age, COUNT(*) FROM claims GROUP BY age;
# plan: laplace stats/unit=4 groups/unit=4 rows/group=3 rows/unit=5 selection=truncated_geometric | age | COUNT(*) L1=5 L2=3.60555

# title: row-level COUNT
SELECT COUNT(*) FROM people;
# plan: laplace stats/unit=1 groups/unit=1 rows/group=1 rows/unit=1 selection=public | COUNT(*) L1=1 L2=1

# title: row-level SUM and AVG
SELECT SUM(income), AVG(age) FROM people;
# plan: laplace stats/unit=3 groups/unit=1 rows/group=1 rows/unit=1 selection=public | SUM(income) in [0, 500000] L1=500000 L2=500000 | AVG(age) in [0, 100] L1=50 L2=50

# title: row-level table with a WHERE clause
SELECT COUNT(*) FROM people WHERE age >= 65 AND married = 1;
# plan: laplace stats/unit=1 groups/unit=1 rows/group=1 rows/unit=1 selection=public | COUNT(*) L1=1 L2=1

# title: delta 0 without group keys
# delta: 0
SELECT COUNT(*), AVG(cost) FROM visits;
# plan: laplace stats/unit=3 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4 | AVG(cost) in [0, 2000] L1=4000 L2=4000

# title: smaller epsilon keeps sensitivity
# epsilon: 0.1
SELECT COUNT(*) FROM visits;
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: many statistics under private keys
SELECT specialty, COUNT(*) AS n, SUM(cost) AS total, AVG(age) AS mean_age FROM visits GROUP BY specialty;
# plan: gaussian stats/unit=15 groups/unit=3 rows/group=4 selection=gaussian_threshold | specialty | n=COUNT(*) L1=12 L2=6.9282 | total=SUM(cost) in [0, 2000] L1=24000 L2=13856.4 | mean_age=AVG(age) in [0, 100] L1=600 L2=346.41

# title: epsilon 0 is refused
# epsilon: 0
SELECT COUNT(*) FROM visits;
# error: PrivacyError: epsilon must be a finite number > 0

# title: negative epsilon is refused
# epsilon: -1
SELECT COUNT(*) FROM visits;
# error: PrivacyError: epsilon=-1.0 is not allowed

# title: infinite epsilon is refused
# epsilon: inf
SELECT COUNT(*) FROM visits;
# error: PrivacyError: epsilon=inf is not allowed

# title: delta 1 is refused
# delta: 1
SELECT COUNT(*) FROM visits;
# error: PrivacyError: delta must be in [0, 1)

# title: negative delta is refused
# delta: -1e-9
SELECT COUNT(*) FROM visits;
# error: PrivacyError: delta=-1e-09 is not allowed

# title: more epsilon than the budget holds
# epsilon: 2e9
SELECT COUNT(*) FROM visits;
# error: BudgetExceededError: query refused, nothing was spent

# title: private keys on a row-level table with delta 0
# delta: 0
SELECT sex, COUNT(*) FROM people GROUP BY sex;
# error: PrivacyError: group keys are private

# title: COUNT DISTINCT of a column named like a unit on a row-level table
SELECT COUNT(DISTINCT pid) FROM people;
# error: UnsupportedQueryError: column `pid` is not in table 'people'

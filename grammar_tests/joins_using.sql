# note: JOIN ... USING, NATURAL JOIN, public tables first in FROM, and
# note: WHERE k IN (SELECT c FROM public_table [WHERE ...]) (docs/sql.md, "Subqueries, CTEs and
# note: joins"). USING and NATURAL are their column equalities; a column they merge is named,
# note: unqualified, after its left side. An IN-subquery over a public table is a join with its
# note: distinct values, so each private row is kept or dropped by its own value alone.

# title: JOIN USING a public table, grouped by its column
SELECT s.department, COUNT(*) AS n FROM visits v JOIN specialties s USING (specialty) GROUP BY s.department;
# result: [('medicine', 631), ('surgery', 592)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=2 rows/group=4 selection=public | department | n=COUNT(*) L1=8 L2=5.65685

# title: JOIN USING, the merged column unqualified
SELECT department, COUNT(*) AS n, SUM(base_fee * 0 + cost) AS total FROM visits JOIN specialties USING (specialty) WHERE specialty <> 'urology' GROUP BY department;
# result: [('medicine', 627, 146953.0), ('surgery', 592, 106826.0)]
# bounding: all_pairs
# plan: laplace stats/unit=4 groups/unit=2 rows/group=4 selection=public | department | n=COUNT(*) L1=8 L2=5.65685 | total=SUM(base_fee * 0 + cost) in [0, 2000] L1=16000 L2=11313.7

# title: NATURAL JOIN a public table
SELECT department, COUNT(*) AS n FROM visits NATURAL JOIN specialties GROUP BY department;
# result: [('medicine', 631), ('surgery', 592)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=2 rows/group=4 selection=public | department | n=COUNT(*) L1=8 L2=5.65685

# title: NATURAL LEFT JOIN a public table
SELECT department, COUNT(*) AS n FROM visits NATURAL LEFT JOIN specialties GROUP BY department;
# result: [('medicine', 631), ('surgery', 592)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=2 rows/group=4 selection=public | department | n=COUNT(*) L1=8 L2=5.65685

# title: JOIN USING the privacy unit of two private tables
SELECT p.sex, COUNT(*) AS n FROM visits v JOIN patients p USING (patient_id) GROUP BY p.sex;
# result: [('f', 511), ('m', 545)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=2 rows/group=4 selection=public | sex | n=COUNT(*) L1=8 L2=5.65685

# title: NATURAL JOIN of two private tables on their shared unit
SELECT sex, AVG(weight) AS w FROM visits NATURAL JOIN patients GROUP BY sex;
# result: [('f', 84.9295), ('m', 83.1083)]
# bounding: all_pairs
# plan: laplace stats/unit=4 groups/unit=2 rows/group=4 selection=public | sex | w=AVG(weight) in [30, 150] L1=480 L2=339.411

# title: a public table first, then USING
SELECT r.region, COUNT(*) AS n FROM regions r JOIN visits v USING (region) GROUP BY r.region;
# result: [('east north central', 171), ('mid atlantic', 133), ('mountain', 101), ('new england', 68), ('pacific', 265), ('south atlantic', 158), ('west north central', 89), ('west south central', 71)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | n=COUNT(*) L1=12 L2=6.9282

# title: a public table first, two more joins
SELECT s.department, COUNT(*) AS n FROM specialties s JOIN visits v ON s.specialty = v.specialty JOIN regions r ON r.region = v.region GROUP BY s.department;
# result: [('medicine', 631), ('surgery', 592)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=2 rows/group=4 selection=public | department | n=COUNT(*) L1=8 L2=5.65685

# title: a public table first, then two private tables on their unit
SELECT p.sex, s.department, COUNT(*) AS n FROM specialties s JOIN visits v ON s.specialty = v.specialty JOIN patients p ON v.patient_id = p.patient_id GROUP BY p.sex, s.department;
# result: [('f', 'medicine', 303), ('f', 'surgery', 288), ('m', 'medicine', 328), ('m', 'surgery', 304)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | sex | department | n=COUNT(*) L1=12 L2=6.9282

# title: a public table first, two private tables not on their unit
SELECT COUNT(*) FROM specialties s JOIN visits v ON s.specialty = v.specialty JOIN claims c ON c.specialty = s.specialty;
# error: UnsupportedQueryError: Private tables can be joined only on their privacy units

# title: JOIN USING a column one side lacks
SELECT COUNT(*) FROM visits JOIN specialties USING (department);
# error: UnsupportedQueryError: Write the condition with ON for 'department'

# title: JOIN USING of two private tables on another column
SELECT COUNT(*) FROM visits v JOIN claims c USING (region);
# error: UnsupportedQueryError: JOIN of two private tables: `JOIN claims AS c USING (region)` is not supported; allowed: ON v.patient_id = c.patient_id

# title: IN subquery over a public table with a filter
SELECT COUNT(*) AS n, AVG(cost) AS mean_cost FROM visits WHERE specialty IN (SELECT specialty FROM specialties WHERE department = 'surgery') AND age > 30;
# result: [(465, 188.935)]
# bounding: all_pairs
# plan: laplace stats/unit=3 groups/unit=1 rows/group=4 selection=public | n=COUNT(*) L1=4 L2=4 | mean_cost=AVG(cost) in [0, 2000] L1=4000 L2=4000

# title: IN subquery under OR
SELECT region, COUNT(*) AS n FROM visits v WHERE LOWER(v.specialty) IN (SELECT UPPER(s.specialty) FROM specialties s WHERE s.base_fee >= 60) OR FALSE GROUP BY region;
# error: UnsupportedQueryError: An IN-subquery must be a condition joined to the others by AND, not under OR or NOT

# title: IN subquery with an expression on both sides
SELECT region, COUNT(*) AS n FROM visits v WHERE LOWER(v.specialty) IN (SELECT LOWER(s.specialty) FROM specialties s WHERE s.base_fee >= 60) GROUP BY region;
# result: [('east north central', 129), ('mid atlantic', 96), ('mountain', 76), ('new england', 47), ('pacific', 185), ('south atlantic', 114), ('west north central', 57), ('west south central', 51)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | n=COUNT(*) L1=12 L2=6.9282

# title: two IN subqueries and a join
SELECT s.department, COUNT(*) AS n FROM visits v JOIN specialties s ON v.specialty = s.specialty WHERE v.region IN (SELECT region FROM regions WHERE region LIKE '%central') AND v.specialty IN (SELECT specialty FROM specialties WHERE base_fee > 50) GROUP BY s.department;
# result: [('medicine', 181), ('surgery', 67)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=2 rows/group=4 selection=public | department | n=COUNT(*) L1=8 L2=5.65685

# title: IN subquery inside a CTE
WITH surgical AS (SELECT patient_id, cost FROM visits WHERE specialty IN (SELECT specialty FROM specialties WHERE department = 'surgery')) SELECT SUM(cost) AS total FROM surgical;
# result: [(106826.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | total=SUM(cost) in [0, 2000] L1=8000 L2=8000

# title: IN subquery over a private table
SELECT COUNT(*) FROM visits WHERE patient_id IN (SELECT patient_id FROM patients WHERE weight > 100);
# error: UnsupportedQueryError: patients is not a public table

# title: IN subquery over a CTE
WITH heavy AS (SELECT patient_id FROM patients WHERE weight > 100) SELECT COUNT(*) FROM visits WHERE patient_id IN (SELECT patient_id FROM heavy);
# error: UnsupportedQueryError: heavy is not a public table

# title: NOT IN subquery
SELECT COUNT(*) FROM visits WHERE specialty NOT IN (SELECT specialty FROM specialties);
# error: UnsupportedQueryError: (NOT IN takes a literal list)

# title: IN subquery correlated with the outer row
SELECT COUNT(*) FROM visits WHERE specialty IN (SELECT specialty FROM specialties WHERE base_fee > visits.age);
# error: UnsupportedQueryError: A lookup reads its public table alone: it cannot refer to the outer query's rows

# title: IN subquery comparing text with numbers
SELECT COUNT(*) FROM visits WHERE age IN (SELECT specialty FROM specialties);
# error: UnsupportedQueryError: allowed: a subquery column of the same type as the value it is compared with

# title: IN subquery with two columns
SELECT COUNT(*) FROM visits WHERE specialty IN (SELECT specialty, department FROM specialties);
# error: UnsupportedQueryError: Select exactly one column of a public table

# title: IN subquery with LIMIT
SELECT COUNT(*) FROM visits WHERE specialty IN (SELECT specialty FROM specialties LIMIT 3);
# error: UnsupportedQueryError: Only a filter (WHERE) on the public table is allowed

# title: IN subquery that may fail on a public row
SELECT COUNT(*) FROM visits WHERE age IN (SELECT CAST(specialty AS INTEGER) FROM specialties);
# error: UnsupportedQueryError: use TRY_CAST(specialty AS INT)

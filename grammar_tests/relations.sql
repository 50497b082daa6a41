# note: Subqueries, CTEs, joins and GROUP BY expressions (dpsql/analysis/relations.py).
# note: The FROM clause becomes one source whose rows each belong to one person; the
# note: rewrite bounds each person's contribution after the joins and subqueries.
# note: specialties is a public lookup (specialty unique); patients shares visits' unit.

# title: a row-level derived table
SELECT COUNT(*) FROM (SELECT * FROM visits WHERE age > 60) AS t;
# result: [(323,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: a derived table without an alias
SELECT COUNT(*) FROM (SELECT patient_id, cost FROM visits);
# result: [(1056,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: a derived table that drops the privacy unit still bounds per person
SELECT SUM(cost) FROM (SELECT cost FROM visits WHERE region = 'pacific') AS t;
# result: [(49396.6,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(cost) in [0, 2000] L1=8000 L2=8000

# title: derived columns keep the catalog bounds of the columns they copy
SELECT AVG(c) FROM (SELECT patient_id, cost AS c FROM visits) AS t;
# result: [(208.59,)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | AVG(c) in [0, 2000] L1=4000 L2=4000

# title: arithmetic in a derived table gets bounds by interval arithmetic
SELECT SUM(double_cost) FROM (SELECT cost * 2 AS double_cost FROM visits) AS t;
# result: [(440543.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(double_cost) in [0, 4000] L1=16000 L2=16000

# title: a clamp inside the derived table sets the bound
SELECT SUM(capped) FROM (SELECT LEAST(GREATEST(cost, 0), 100) AS capped FROM visits) AS t;
# result: [(84422.2,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(capped) in [0, 100] L1=400 L2=400

# title: per-person aggregation inside, clamped outside
SELECT AVG(LEAST(GREATEST(n, 0), 20)) AS visits_per_person
FROM (SELECT patient_id, COUNT(*) AS n FROM visits GROUP BY patient_id) AS per_person;
# result: [(4.02913,)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | visits_per_person=AVG(LEAST(GREATEST(n, 0), 20)) in [0, 12] L1=24 L2=24

# title: per-person totals, clamped and summed
SELECT SUM(LEAST(GREATEST(spent, 0), 5000)) FROM (
  SELECT patient_id, SUM(cost) AS spent FROM visits GROUP BY patient_id) AS p;
# result: [(392473.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(LEAST(GREATEST(spent, 0), 5000)) in [0, 5000] L1=20000 L2=20000

# title: per-person average keeps the bounds of its argument
SELECT AVG(mean_cost) FROM (
  SELECT patient_id, AVG(cost) AS mean_cost FROM visits GROUP BY patient_id) AS p;
# result: [(207.949,)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | AVG(mean_cost) in [0, 2000] L1=4000 L2=4000

# title: per-person MIN and MAX keep the bounds of their argument
SELECT AVG(oldest - youngest) FROM (
  SELECT patient_id, MAX(age) AS oldest, MIN(age) AS youngest FROM visits
  GROUP BY patient_id) AS p;
# result: [(0.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | AVG(oldest - youngest) in [-100, 100] L1=400 L2=400

# title: per-person aggregation grouped by a public key too
SELECT region, AVG(LEAST(GREATEST(n, 0), 10)) FROM (
  SELECT patient_id, region, COUNT(*) AS n FROM visits GROUP BY patient_id, region) AS p
GROUP BY region;
# result: [('east north central', 4.01587), ('mid atlantic', 3.51852), ('mountain', 3.58537), ('new england', 5.0), ('pacific', 3.74074), ('south atlantic', 4.17544), ('west north central', 3.52778), ('west south central', 3.33333)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=6 groups/unit=3 rows/group=4 selection=public | region | AVG(LEAST(GREATEST(n, 0), 10)) in [0, 10] L1=60 L2=34.641

# title: count people with more than two visits
SELECT COUNT(*) AS frequent FROM (
  SELECT patient_id, COUNT(*) AS n FROM visits GROUP BY patient_id) AS p WHERE n > 2;
# result: [(204,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | frequent=COUNT(*) L1=4 L2=4

# title: a common table expression
WITH old AS (SELECT * FROM visits WHERE age > 60) SELECT COUNT(*) FROM old;
# result: [(323,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: a CTE that uses an earlier CTE
WITH old AS (SELECT * FROM visits WHERE age > 60),
     costly AS (SELECT patient_id, cost FROM old WHERE cost > 500)
SELECT COUNT(*), SUM(cost) FROM costly;
# result: [(62, 57303.0)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4 | SUM(cost) in [500, 2000] L1=8000 L2=8000

# title: a per-person CTE
WITH per_person AS (SELECT patient_id, COUNT(*) AS n FROM visits GROUP BY patient_id)
SELECT AVG(LEAST(GREATEST(n, 0), 10)) FROM per_person;
# result: [(3.82039,)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | AVG(LEAST(GREATEST(n, 0), 10)) in [0, 10] L1=20 L2=20

# title: nested derived tables
SELECT COUNT(*) FROM (SELECT * FROM (SELECT patient_id, age FROM visits) AS a
                      WHERE age < 30) AS b;
# result: [(205,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: a derived table keeps public keys
SELECT region, COUNT(*) FROM (SELECT region FROM visits WHERE age >= 18) AS t
GROUP BY region;
# result: [('east north central', 144), ('mid atlantic', 124), ('mountain', 101), ('new england', 61), ('pacific', 239), ('south atlantic', 148), ('west north central', 87), ('west south central', 67)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | COUNT(*) L1=12 L2=6.9282

# title: a derived table over a row-level table stays row-level
SELECT COUNT(*) FROM (SELECT age FROM people WHERE age > 40) AS t;
# result: [(534,)]
# bounding: row_level
# plan: laplace stats/unit=1 groups/unit=1 rows/group=1 rows/unit=1 selection=public | COUNT(*) L1=1 L2=1

# title: join a public lookup, group by its column
SELECT s.department, COUNT(*) AS n FROM visits v
JOIN specialties s ON v.specialty = s.specialty GROUP BY s.department;
# result: [('medicine', 631), ('surgery', 592)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=2 rows/group=4 selection=public | department | n=COUNT(*) L1=8 L2=5.65685

# title: a left join with a public lookup
SELECT COUNT(*) FROM visits v LEFT JOIN regions r ON v.region = r.region;
# result: [(1056,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: a public lookup column used in a clamp
SELECT SUM(LEAST(GREATEST(v.cost - s.base_fee, 0), 1000)) FROM visits v
JOIN specialties s ON v.specialty = s.specialty;
# result: [(147017.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(LEAST(GREATEST(cost - base_fee, 0), 1000)) in [0, 1000] L1=4000 L2=4000

# title: a public lookup filtered in WHERE
SELECT COUNT(*) FROM visits v JOIN specialties s ON v.specialty = s.specialty
WHERE s.department = 'surgery';
# result: [(592,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: unqualified columns resolve when one side has them
SELECT department, COUNT(*) FROM visits JOIN specialties
ON visits.specialty = specialties.specialty GROUP BY department;
# result: [('medicine', 631), ('surgery', 592)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=2 rows/group=4 selection=public | department | COUNT(*) L1=8 L2=5.65685

# title: two private tables joined on the privacy unit
SELECT p.sex, COUNT(*) FROM visits v JOIN patients p ON v.patient_id = p.patient_id
GROUP BY p.sex;
# result: [('f', 511), ('m', 545)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=2 rows/group=4 selection=public | sex | COUNT(*) L1=8 L2=5.65685

# title: a private join with an extra condition
SELECT AVG(p.weight) FROM visits v JOIN patients p
ON v.patient_id = p.patient_id AND v.age > 50;
# result: [(85.5282,)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | AVG(weight) in [30, 150] L1=240 L2=240

# title: a join inside a CTE
WITH enriched AS (SELECT v.patient_id, s.department, v.cost FROM visits v
                  JOIN specialties s ON v.specialty = s.specialty)
SELECT department, SUM(cost) FROM enriched GROUP BY department;
# result: [('medicine', 149363.0), ('surgery', 106826.0)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=2 rows/group=4 selection=public | department | SUM(cost) in [0, 2000] L1=16000 L2=11313.7

# title: GROUP BY a position
SELECT region, COUNT(*) FROM visits GROUP BY 1;
# result: [('east north central', 171), ('mid atlantic', 133), ('mountain', 101), ('new england', 68), ('pacific', 265), ('south atlantic', 158), ('west north central', 89), ('west south central', 71)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | COUNT(*) L1=12 L2=6.9282

# title: GROUP BY a row-level expression is a private key
SELECT COUNT(*) FROM visits GROUP BY LOWER(region);
# result: [(101,), (133,), (158,), (171,), (265,), (68,), (71,), (89,)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=truncated_geometric | COUNT(*) L1=12 L2=6.9282

# title: GROUP BY an expression under its SELECT alias
SELECT UPPER(specialty) AS s, COUNT(*) FROM visits GROUP BY s;
# result: [('ALLERGY AND IMMUNOLOGY', 17), ('ANESTHESIOLOGY', 5), ('CARDIOLOGY', 46), ('CARDIOTHORACIC SURGERY', 2), ('COLORECTAL SURGERY', 8), ('DERMATOLOGY', 49), ('EMERGENCY MEDICINE', 175), ('ENDOCRINOLOGY', 26), ('GASTROENTEROLOGY', 21), ('GENERAL PRACTICE', 367), ('GENERAL SURGERY', 16), ('GERIATRICS', 11), ('GYNECOLOGY', 40), ('HEMATOLOGY', 12), ('HEPATOLOGY', 14), ('HYPERBARIC MEDICINE', 6), ('INFECTIOUS DISEASE', 15), ('INTERNAL MEDICINE', 94), ('MEDICAL GENETICS', 3), ('NEONATOLOGY', 2), ('NEPHROLOGY', 15), ('NEUROLOGY', 16), ('NEUROSURGERY', 9), ('NUCLEAR MEDICINE', 2), ('OBSTETRICS', 27), ('OCCUPATIONAL MEDICINE', 8), ('ONCOLOGY', 21), ('OPHTHALMOLOGY', 27), ('ORTHOPEDICS', 48), ('OTOLARYNGOLOGY', 7), ('PALLIATIVE CARE', 7), ('PEDIATRIC ONCOLOGY', 4), ('PEDIATRICS', 70), ('PHYSICAL THERAPY', 15), ('PLASTIC SURGERY', 7), ('PODIATRY', 2), ('PSYCHIATRY', 8), ('PSYCHOLOGY', 17), ('PULMONOLOGY', 23), ('RADIOLOGY', 23), ('RHEUMATOLOGY', 9), ('SLEEP MEDICINE', 6), ('SPORTS MEDICINE', 9), ('TOXICOLOGY', 1), ('TRANSPLANT SURGERY', 8), ('TROPICAL MEDICINE', 2), ('UROLOGY', 8), ('VASCULAR SURGERY', 2)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=truncated_geometric | s | COUNT(*) L1=12 L2=6.9282

# title: GROUP BY an expression repeated in SELECT
SELECT age > 65, COUNT(*) FROM visits GROUP BY age > 65;
# result: [(False, 808), (True, 248)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=truncated_geometric | age > 65 | COUNT(*) L1=12 L2=6.9282

# title: the same expression named in GROUP BY and SELECT
SELECT LOWER(region) AS r, COUNT(*) AS n FROM visits GROUP BY LOWER(region);
# result: [('east north central', 171), ('mid atlantic', 133), ('mountain', 101), ('new england', 68), ('pacific', 265), ('south atlantic', 158), ('west north central', 89), ('west south central', 71)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=truncated_geometric | r | n=COUNT(*) L1=12 L2=6.9282

# title: LIMIT inside a subquery is refused
SELECT COUNT(*) FROM (SELECT * FROM visits LIMIT 10) AS t;
# error: UnsupportedQueryError: LIMIT inside a subquery

# title: DISTINCT inside a subquery is refused
SELECT COUNT(*) FROM (SELECT DISTINCT region FROM visits) AS t;
# error: UnsupportedQueryError: DISTINCT inside a subquery

# title: ORDER BY inside a subquery is refused
SELECT COUNT(*) FROM (SELECT * FROM visits ORDER BY cost) AS t;
# error: UnsupportedQueryError: ORDER BY inside a subquery

# title: aggregation not by the privacy unit is a release, post-processed outside
SELECT AVG(n) FROM (SELECT region, COUNT(*) AS n FROM visits GROUP BY region) AS t;
# result: [(132.0,)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | AVG(n) | also COUNT(*)

# title: an aggregate without GROUP BY in a subquery is a release
SELECT AVG(n) FROM (SELECT COUNT(*) AS n FROM visits) AS t;
# result: [(1056.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | AVG(n) | also COUNT(*)

# title: aggregation not by the privacy unit below a join is refused
SELECT COUNT(*) FROM visits v JOIN (SELECT region, COUNT(*) AS n FROM visits GROUP BY region) AS t ON v.region = t.region;
# error: UnsupportedQueryError: A subquery may aggregate only per privacy unit

# title: an unnamed aggregate in a per-person subquery is refused
SELECT COUNT(*) FROM (SELECT patient_id, COUNT(*) FROM visits GROUP BY patient_id) AS t;
# error: UnsupportedQueryError: aliased aggregates

# title: a raw column in a per-person subquery is refused
SELECT COUNT(*) FROM (SELECT patient_id, cost FROM visits GROUP BY patient_id) AS t;
# error: UnsupportedQueryError: Aggregate every other column

# title: a window function in a subquery is refused
SELECT COUNT(*) FROM (SELECT patient_id, ROW_NUMBER() OVER () AS r FROM visits) AS t;
# error: UnsupportedQueryError: window function

# title: an unbounded per-person count needs a clamp
SELECT AVG(n) FROM (SELECT pid, COUNT(*) AS n FROM pums GROUP BY pid) AS t;
# error: UnsupportedQueryError: needs bounds

# title: a public table alone is refused
SELECT COUNT(*) FROM (SELECT * FROM regions) AS t;
# error: UnsupportedQueryError: a subquery over private data

# title: a public table first in a join
SELECT s.department, COUNT(*) AS n FROM specialties s JOIN visits v ON v.specialty = s.specialty GROUP BY s.department;
# result: [('medicine', 631), ('surgery', 592)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=2 rows/group=4 selection=public | department | n=COUNT(*) L1=8 L2=5.65685

# title: a public table first with a LEFT JOIN is refused
SELECT s.department, COUNT(*) AS n FROM specialties s LEFT JOIN visits v ON v.specialty = s.specialty GROUP BY s.department;
# error: UnsupportedQueryError: Put the private table in FROM and LEFT JOIN the public tables to it

# title: a self-join of a private table on another column is refused
SELECT COUNT(*) FROM visits a JOIN visits b ON a.region = b.region;
# error: UnsupportedQueryError: only on their privacy units

# title: a private table on the right of a LEFT JOIN is refused
SELECT COUNT(*) FROM visits v LEFT JOIN patients p ON v.patient_id = p.patient_id;
# error: UnsupportedQueryError: Use an inner join

# title: a cross join is refused
SELECT COUNT(*) FROM visits CROSS JOIN regions;
# error: UnsupportedQueryError: Cross joins with tables, right, full, semi, anti and lateral joins are not supported

# title: a comma join is refused
SELECT COUNT(*) FROM visits, regions;
# error: UnsupportedQueryError: Cross joins with tables, right, full, semi, anti and lateral joins are not supported

# title: a right join is refused
SELECT COUNT(*) FROM visits v RIGHT JOIN regions r ON v.region = r.region;
# error: UnsupportedQueryError: Cross joins with tables, right, full, semi, anti and lateral joins are not supported

# title: JOIN USING with a public table
SELECT COUNT(*) FROM visits JOIN regions USING (region);
# result: [(1056,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: a join of a row-level table is refused
SELECT COUNT(*) FROM people p JOIN regions r ON p.age = 1;
# error: UnsupportedQueryError: Row-level tables cannot be joined

# title: an ambiguous column is refused
SELECT COUNT(*) FROM visits v JOIN regions r ON v.region = r.region GROUP BY region;
# error: UnsupportedQueryError: column `region` is ambiguous

# title: an unknown qualifier is refused
SELECT COUNT(*) FROM visits v JOIN regions r ON v.region = x.region;
# error: UnsupportedQueryError: 'x' is not a table or alias in FROM

# title: a join condition comparing text with numbers is refused
SELECT COUNT(*) FROM visits v JOIN specialties s ON v.age = s.specialty;
# error: UnsupportedQueryError: compares numeric with string

# title: a recursive CTE is refused
WITH RECURSIVE r AS (SELECT patient_id FROM visits) SELECT COUNT(*) FROM r;
# error: UnsupportedQueryError: WITH RECURSIVE

# title: a CTE may not shadow a registered table
WITH visits AS (SELECT * FROM claims) SELECT COUNT(*) FROM visits;
# error: UnsupportedQueryError: Rename the common table expression

# title: GROUP BY a position out of range is refused
SELECT region, COUNT(*) FROM visits GROUP BY 3;
# error: UnsupportedQueryError: a position of a SELECT item

# title: GROUP BY the privacy unit through a subquery is refused
SELECT pid, COUNT(*) FROM (SELECT patient_id AS pid FROM visits) AS t GROUP BY pid;
# error: UnsupportedQueryError: columns other than the privacy unit

# title: UNION ALL of two private tables with the same unit
SELECT COUNT(*), SUM(c) FROM (SELECT patient_id, cost AS c FROM visits
                              UNION ALL SELECT patient_id, cost FROM claims) AS u;
# result: [(1096, 224824.0)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=3 rows/unit=5 selection=public | COUNT(*) L1=3 L2=3 | SUM(c) in [0, 2000] L1=6000 L2=6000

# title: UNION ALL traces the unit when the branches drop it
SELECT r, COUNT(*) FROM (SELECT region AS r FROM visits WHERE age > 50
                         UNION ALL SELECT region FROM claims) AS u GROUP BY r;
# result: [('east north central', 155), ('mid atlantic', 123), ('mountain', 96), ('new england', 62), ('pacific', 266), ('south atlantic', 138), ('west north central', 83), ('west south central', 71)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=3 rows/unit=5 selection=laplace_threshold | r | COUNT(*) L1=5 L2=3.60555

# title: UNION (distinct) in FROM is refused
SELECT COUNT(*) FROM (SELECT patient_id FROM visits UNION SELECT patient_id FROM claims) AS u;
# error: UnsupportedQueryError: use UNION ALL

# title: UNION ALL of a row-level and a unit table is refused
SELECT COUNT(*) FROM (SELECT age FROM people UNION ALL SELECT age FROM visits) AS u;
# error: UnsupportedQueryError: Do not mix row-level tables

# title: UNION ALL branches must have matching types
SELECT COUNT(*) FROM (SELECT region FROM visits UNION ALL SELECT age FROM claims) AS u;
# error: UnsupportedQueryError: differs in type between the branches

# title: per-person count of distinct values inside
SELECT AVG(LEAST(GREATEST(n, 0), 5)) FROM (
  SELECT patient_id, COUNT(DISTINCT specialty) AS n FROM visits GROUP BY patient_id) AS p;
# result: [(1.65534,)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | AVG(LEAST(GREATEST(n, 0), 5)) in [0, 5] L1=10 L2=10

# title: per-person sum of distinct values inside
SELECT AVG(LEAST(GREATEST(s, 0), 300)) FROM (
  SELECT patient_id, SUM(DISTINCT age) AS s FROM visits GROUP BY patient_id) AS p;
# result: [(48.5728,)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | AVG(LEAST(GREATEST(s, 0), 300)) in [0, 300] L1=600 L2=600

# title: a per-person count needs a clamp (it is no registered column to declare bounds for)
SELECT AVG(n) FROM (SELECT pid, COUNT(*) AS n FROM pums GROUP BY pid) AS p;
# error: UnsupportedQueryError: AVG(n) needs bounds: write AVG(LEAST(GREATEST(n, lo), hi))

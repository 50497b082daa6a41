# note: WHERE: row-level predicates only. Filtering never changes sensitivity.

# title: equality on a string
SELECT COUNT(*) FROM visits WHERE region = 'pacific';
# result: [(265,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: inequality operators
SELECT COUNT(*) FROM visits WHERE age <> 40 AND age != 41 AND cost < 900 AND cost <= 800;
# result: [(997,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: AND OR NOT with parentheses
SELECT COUNT(*) FROM visits WHERE NOT (age > 80 OR (cost >= 1000 AND region = 'mountain'));
# result: [(996,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: IN list
SELECT COUNT(*) FROM visits WHERE specialty IN ('cardiology', 'oncology', 'neurology');
# result: [(83,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: NOT IN list
SELECT COUNT(*) FROM visits WHERE region NOT IN ('pacific', 'mountain');
# result: [(690,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: tuple IN list
SELECT COUNT(*) FROM visits WHERE (region, age) IN (('pacific', 30), ('mountain', 40));
# result: [(0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: BETWEEN
SELECT COUNT(*) FROM visits WHERE age BETWEEN 18 AND 65;
# result: [(723,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: NOT BETWEEN
SELECT COUNT(*) FROM visits WHERE cost NOT BETWEEN 100 AND 200;
# result: [(892,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: IS NULL and IS NOT NULL
SELECT COUNT(*) FROM visits WHERE cost IS NOT NULL OR age IS NULL;
# result: [(1056,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: LIKE and NOT LIKE
SELECT COUNT(*) FROM visits WHERE specialty LIKE 'p%' AND specialty NOT LIKE '%surgery';
# result: [(145,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: ILIKE
SELECT COUNT(*) FROM visits WHERE specialty ILIKE '%CARDIO%';
# result: [(48,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: arithmetic in a predicate
SELECT COUNT(*) FROM visits WHERE cost * 2 - age + 1 > 500;
# result: [(374,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: LEAST GREATEST and ABS in a predicate
SELECT COUNT(*) FROM visits WHERE LEAST(cost, 1000) > 200 AND GREATEST(age, 18) < 65 AND ABS(age - 50) < 10;
# result: [(142,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: COALESCE in a predicate
SELECT COUNT(*) FROM visits WHERE COALESCE(cost, 0) > 100;
# result: [(764,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: LOWER and UPPER in a predicate
SELECT COUNT(*) FROM visits WHERE LOWER(region) = 'pacific' OR UPPER(specialty) = 'ONCOLOGY';
# result: [(277,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: date column compared with a string
SELECT COUNT(*) FROM visits WHERE visit_date >= '2023-01-01';
# result: [(701,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: negative literal
SELECT COUNT(*) FROM pums WHERE income > -1;
# result: [(1582,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=2 selection=public | COUNT(*) L1=2 L2=2

# title: filter on the privacy unit
SELECT COUNT(*) FROM visits WHERE patient_id < 100;
# result: [(282,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: constant predicate
SELECT COUNT(*) FROM visits WHERE TRUE;
# result: [(1056,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: WHERE and GROUP BY together
SELECT region, AVG(cost) FROM visits WHERE age >= 65 GROUP BY region;
# result: [('east north central', 188.996), ('mid atlantic', 182.141), ('mountain', 321.322), ('new england', 166.55), ('pacific', 208.533), ('south atlantic', 170.568), ('west north central', 352.038), ('west south central', 163.652)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=6 groups/unit=3 rows/group=4 selection=public | region | AVG(cost) in [0, 2000] L1=12000 L2=6928.2

# title: regular expression in WHERE
SELECT COUNT(*) FROM visits WHERE regexp_matches(specialty, '^p');
# error: UnsupportedQueryError: WHERE

# title: GLOB in WHERE
SELECT COUNT(*) FROM visits WHERE specialty GLOB 'p*';
# error: UnsupportedQueryError: WHERE

# title: IS DISTINCT FROM in WHERE
SELECT COUNT(*) FROM visits WHERE age IS DISTINCT FROM 40;
# error: UnsupportedQueryError: WHERE

# title: random() in WHERE
SELECT COUNT(*) FROM visits WHERE random() < 0.5;
# error: UnsupportedQueryError: `RANDOM()` is not supported

# title: IN subquery over a public table
SELECT COUNT(*) FROM visits WHERE region IN (SELECT region FROM regions);
# result: [(1056,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: EXISTS subquery
SELECT COUNT(*) FROM visits WHERE EXISTS (SELECT 1 FROM regions);
# error: UnsupportedQueryError: WHERE

# title: scalar subquery
SELECT COUNT(*) FROM visits WHERE age > (SELECT AVG(age) FROM visits);
# error: UnsupportedQueryError: WHERE

# title: aggregate in WHERE
SELECT COUNT(*) FROM visits WHERE COUNT(*) > 1;
# error: UnsupportedQueryError: Aggregates are allowed only in SELECT, HAVING and ORDER BY

# title: positional parameter
SELECT COUNT(*) FROM visits WHERE age > ?;
# error: UnsupportedQueryError: WHERE

# title: unknown column in WHERE
SELECT COUNT(*) FROM visits WHERE diagnosis = 'flu';
# error: CatalogError: its columns are age, cost, patient_id, region, specialty, visit_date

# title: text column compared with a number is refused before reading data
SELECT COUNT(*) FROM visits WHERE patient_id = 3 AND region = 5;
# error: UnsupportedQueryError: compares string with numeric

# title: number column compared with text is refused
SELECT COUNT(*) FROM visits WHERE age = 'old';
# error: UnsupportedQueryError: compares numeric with string

# title: IN list of the wrong type is refused
SELECT COUNT(*) FROM visits WHERE region IN (1, 2);
# error: UnsupportedQueryError: compares string with numeric

# title: text column used as a condition is refused
SELECT COUNT(*) FROM visits WHERE specialty;
# error: UnsupportedQueryError: a condition

# title: LIKE on a number is refused
SELECT COUNT(*) FROM visits WHERE age LIKE '1%';
# error: UnsupportedQueryError: needs string arguments

# title: LOWER of a number is refused
SELECT COUNT(*) FROM visits WHERE LOWER(age) = 'a';
# error: UnsupportedQueryError: needs string arguments

# title: arithmetic that would overflow integers runs in DOUBLE and cannot fail
SELECT COUNT(age * 100000000) FROM visits WHERE patient_id = 3;
# result: [(4,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(age * 100000000) L1=4 L2=4

# title: huge multiplier inside a clamp cannot fail on any row
SELECT SUM(LEAST(GREATEST(age * 1000000000000000000, 0), 1)) FROM visits WHERE age > 50;
# result: [(479.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(LEAST(GREATEST(age * 1000000000000000000, 0), 1)) in [1, 1] L1=4 L2=4

# title: LIKE with a pattern read from the rows is refused
# note: a pattern an engine rejects (Spark: a trailing backslash) would fail on some data only
SELECT COUNT(*) FROM visits WHERE specialty LIKE region;
# error: UnsupportedQueryError: needs a text literal as its pattern

# title: LIKE with a backslash in its pattern is refused
SELECT COUNT(*) FROM visits WHERE specialty LIKE 'a\%';
# error: UnsupportedQueryError: has a backslash in its pattern

# note: Bounds that follow from the query. A row that passes WHERE x BETWEEN lo AND hi (or
# note: x > lo AND x < hi, x IN (...)) has x in that range, and so does x in the arm of
# note: CASE WHEN that tests it; a per-person COUNT(*) in a subquery is at most the unit's
# note: row limit (max_rows_per_unit, else max_groups_per_unit × max_rows_per_group), and
# note: a per-person SUM(x) that limit times x's range (with no limits declared, a per-person
# note: count needs a clamp: relations.sql). The rewrite clamps to what was
# note: inferred, so a bound holds whatever the data holds. `stays` declares only
# note: max_rows_per_unit = 3, which is then also its rows per group; it has no bounds.

# title: WHERE BETWEEN bounds a column without catalog bounds
SELECT SUM(cost) FROM stays WHERE cost BETWEEN 0 AND 500;
# result: [(118008.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=3 rows/unit=3 selection=public | SUM(cost) in [0, 500] L1=1500 L2=1500

# title: WHERE comparisons joined by AND bound a column
SELECT AVG(cost) FROM stays WHERE cost > 10 AND cost <= 300;
# result: [(113.166,)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=3 rows/unit=3 selection=public | AVG(cost) in [10, 300] L1=435 L2=435

# title: a number on the left of the comparison bounds too
SELECT SUM(cost) FROM stays WHERE 0 <= cost AND 100 >= cost;
# result: [(29933.7,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=3 rows/unit=3 selection=public | SUM(cost) in [0, 100] L1=300 L2=300

# title: WHERE IN bounds by its smallest and largest values
SELECT SUM(age) FROM stays WHERE age IN (30, 40, 50);
# result: [(1890.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=3 rows/unit=3 selection=public | SUM(age) in [30, 50] L1=150 L2=150

# title: WHERE narrows catalog bounds
SELECT SUM(cost) FROM visits WHERE cost < 100 AND cost >= 0;
# result: [(33232.3,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(cost) in [0, 100] L1=400 L2=400

# title: a CASE arm is bounded by its WHEN condition
SELECT SUM(CASE WHEN cost BETWEEN 0 AND 200 THEN cost ELSE 0 END) FROM stays;
# result: [(54123.5,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=3 rows/unit=3 selection=public | SUM(CASE WHEN cost BETWEEN 0 AND 200 THEN cost ELSE 0 END) in [0, 200] L1=600 L2=600

# title: an IF arm is bounded by its condition
SELECT SUM(IF(age > 0 AND age < 90, age, NULL)) FROM stays;
# result: [(40281.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=3 rows/unit=3 selection=public | SUM(CASE WHEN age > 0 AND age < 90 THEN age ELSE NULL END) in [0, 90] L1=270 L2=270

# title: OR proves no range
SELECT SUM(cost) FROM stays WHERE cost < 100 OR cost < 200;
# error: UnsupportedQueryError: needs bounds

# title: NOT proves no range
SELECT SUM(cost) FROM stays WHERE NOT cost > 100;
# error: UnsupportedQueryError: needs bounds

# title: a one-sided range still needs the other side
SELECT SUM(cost) FROM stays WHERE cost > 0;
# error: UnsupportedQueryError: needs bounds

# title: a per-person count in a subquery is bounded by the row limit
SELECT AVG(n) FROM (SELECT patient_id, COUNT(*) AS n FROM stays GROUP BY patient_id) s;
# result: [(2.15534,)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=3 rows/unit=3 selection=public | AVG(n) in [0, 3] L1=4.5 L2=4.5

# title: a per-person count is bounded by groups times rows per group
SELECT AVG(n) FROM (SELECT patient_id, COUNT(*) AS n FROM visits GROUP BY patient_id) s;
# result: [(4.02913,)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | AVG(n) in [0, 12] L1=24 L2=24

# title: a per-person sum is bounded by the row limit times the value range
SELECT AVG(total) FROM (SELECT patient_id, SUM(cost) AS total FROM claims GROUP BY patient_id) s;
# result: [(952.605,)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=3 rows/unit=5 selection=public | AVG(total) in [0, 5000] L1=7500 L2=7500

# title: a per-person sum of a column bounded by the subquery's WHERE
SELECT SUM(total) FROM (SELECT patient_id, SUM(cost) AS total FROM stays WHERE cost BETWEEN 0 AND 100 GROUP BY patient_id) s;
# result: [(37104.6,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=3 rows/unit=3 selection=public | SUM(total) in [0, 300] L1=900 L2=900

# title: only max_rows_per_unit declared: it is also the rows per group
SELECT region, COUNT(*) FROM stays GROUP BY region;
# result: [('east north central', 141), ('mid atlantic', 112), ('mountain', 85), ('new england', 56), ('pacific', 228), ('south atlantic', 131), ('west north central', 74), ('west south central', 61)]
# bounding: first_pair (g=1, packed)
# plan: laplace stats/unit=1 groups/unit=1 rows/group=3 rows/unit=3 selection=public | region | COUNT(*) L1=3 L2=3

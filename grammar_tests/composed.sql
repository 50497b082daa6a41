# note: Several releases in one statement (docs/sql.md, Several releases; docs/mechanisms.md §15):
# note: subqueries, CTEs, UNION ALL branches and scalar subqueries that each aggregate private
# note: rows are parts, each planned, bounded and released as its own query at its share of
# note: epsilon; the statement around them runs over their released tables (post-processing).
# note: `||` separates the parts in the plan and bounding lines; each part is named by its alias
# note: or CTE name, else by its SQL.

# title: two one-row releases joined by CROSS JOIN, each column keeps its interval
SELECT a.n, b.m FROM (SELECT COUNT(*) AS n FROM pums) a CROSS JOIN (SELECT AVG(age) AS m FROM pums) b;
# result: [(1582, 44.859)]
# bounding: all_pairs || all_pairs
# plan: parts=2 stats/unit=3 || a laplace stats/unit=1 groups/unit=1 rows/group=2 selection=public | n=COUNT(*) L1=2 L2=2 || b laplace stats/unit=2 groups/unit=1 rows/group=2 selection=public | m=AVG(age) in [0, 100] L1=100 L2=100

# title: a ratio of two scalar subqueries is post-processing of two releases
SELECT (SELECT COUNT(*) FROM pums WHERE married = 1) * 1.0 / (SELECT COUNT(*) FROM pums) AS share_married;
# result: [(0.554362,)]
# bounding: all_pairs || all_pairs
# plan: parts=2 stats/unit=2 || SELECT COUNT(*) FROM pums WHERE married = 1 laplace stats/unit=1 groups/unit=1 rows/group=2 selection=public | COUNT(*) L1=2 L2=2 || SELECT COUNT(*) FROM pums laplace stats/unit=1 groups/unit=1 rows/group=2 selection=public | COUNT(*) L1=2 L2=2

# title: UNION ALL of two aggregates over different filters
SELECT COUNT(*) AS n FROM pums WHERE sex = 0 UNION ALL SELECT COUNT(*) FROM pums WHERE sex = 1;
# result: [(703,), (879,)]
# bounding: all_pairs || all_pairs
# plan: parts=2 stats/unit=2 || SELECT COUNT(*) AS n FROM pums WHERE sex = 0 laplace stats/unit=1 groups/unit=1 rows/group=2 selection=public | n=COUNT(*) L1=2 L2=2 || SELECT COUNT(*) FROM pums WHERE sex = 1 laplace stats/unit=1 groups/unit=1 rows/group=2 selection=public | COUNT(*) L1=2 L2=2

# title: UNION (distinct) of releases is post-processing
SELECT COUNT(*) AS n FROM visits UNION SELECT COUNT(*) FROM pums;
# result: [(1056,), (1582,)]
# bounding: all_pairs || all_pairs
# plan: parts=2 stats/unit=2 || SELECT COUNT(*) AS n FROM visits laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | n=COUNT(*) L1=4 L2=4 || SELECT COUNT(*) FROM pums laplace stats/unit=1 groups/unit=1 rows/group=2 selection=public | COUNT(*) L1=2 L2=2

# title: two CTEs joined on a public key
WITH a AS (SELECT sex, COUNT(*) AS n FROM pums GROUP BY sex), b AS (SELECT sex, AVG(income) AS m FROM pums GROUP BY sex) SELECT a.sex, a.n, b.m FROM a JOIN b ON a.sex = b.sex ORDER BY a.sex;
# result: [(0, 879, 45631.9), (1, 703, 25387.3)]
# bounding: first_pair (g=1, packed) || first_pair (g=1, packed)
# plan: parts=2 stats/unit=3 || a laplace stats/unit=1 groups/unit=1 rows/group=2 selection=public | sex | n=COUNT(*) L1=2 L2=2 || b laplace stats/unit=2 groups/unit=1 rows/group=2 selection=public | sex | m=AVG(income) in [0, 500000] L1=500000 L2=500000

# title: releases over two tables, one with a per-person CTE
WITH per AS (SELECT patient_id, COUNT(*) AS k FROM visits GROUP BY patient_id), v AS (SELECT AVG(LEAST(k, 10)) AS visits_per_patient FROM per), p AS (SELECT COUNT(*) AS patients FROM patients) SELECT visits_per_patient, patients FROM v CROSS JOIN p;
# result: [(3.82039, 1000)]
# bounding: all_pairs || all_pairs
# plan: parts=2 stats/unit=3 || v laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | visits_per_patient=AVG(LEAST(k, 10)) in [0, 10] L1=20 L2=20 || p laplace stats/unit=1 groups/unit=1 rows/group=1 selection=public | patients=COUNT(*) L1=1 L2=1

# title: each part its own epsilon in its DP clause (ZetaSQL's several DP clauses)
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 0.25, delta = 0) COUNT(*) AS n FROM visits UNION ALL SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 0.75, delta = 0) COUNT(*) FROM visits;
# result: [(1056,), (1056,)]
# bounding: all_pairs || all_pairs
# plan: parts=2 stats/unit=2 || SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 0.25,... laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | n=COUNT(*) L1=4 L2=4 || SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 0.75,... laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: one part names its epsilon, the other takes what is left
SELECT COUNT(*) AS n FROM visits UNION ALL SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 0.25) COUNT(*) FROM visits;
# result: [(1056,), (1056,)]
# bounding: all_pairs || all_pairs
# plan: parts=2 stats/unit=2 || SELECT COUNT(*) AS n FROM visits laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | n=COUNT(*) L1=4 L2=4 || SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 0.25)... laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: the same statistic twice is two releases, each paid
SELECT a.n - b.n AS zero FROM (SELECT COUNT(*) AS n FROM pums) a, (SELECT COUNT(*) AS n FROM pums) b;
# result: [(0,)]
# bounding: all_pairs || all_pairs
# plan: parts=2 stats/unit=2 || a laplace stats/unit=1 groups/unit=1 rows/group=2 selection=public | n=COUNT(*) L1=2 L2=2 || b laplace stats/unit=1 groups/unit=1 rows/group=2 selection=public | n=COUNT(*) L1=2 L2=2

# title: a release joined with private rows
SELECT a.n, p.age FROM (SELECT COUNT(*) AS n FROM pums) a CROSS JOIN pums p;
# error: UnsupportedQueryError: private rows beside releases

# title: a release joined with per-person rows
SELECT a.sex, q.c FROM (SELECT sex, COUNT(*) AS n FROM pums GROUP BY sex) a JOIN (SELECT pid, sex, COUNT(*) AS c FROM pums GROUP BY pid, sex) q ON a.sex = q.sex;
# error: UnsupportedQueryError: private rows beside releases

# title: post-processing reads no table
SELECT a.n, r.region FROM (SELECT COUNT(*) AS n FROM visits) a CROSS JOIN regions r;
# error: UnsupportedQueryError: a table beside releases

# title: a scalar release filtering private rows
SELECT COUNT(*) FROM pums WHERE age > (SELECT AVG(age) FROM pums);
# error: UnsupportedQueryError: WHERE

# title: a table function in the query around releases
SELECT a.n FROM (SELECT COUNT(*) AS n FROM pums) a CROSS JOIN read_csv('x.csv') f;
# error: UnsupportedQueryError: a table beside releases

# title: a DP clause on the query around releases
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1) a.n, b.n FROM (SELECT COUNT(*) AS n FROM pums) a, (SELECT COUNT(*) AS n FROM pums) b;
# error: UnsupportedQueryError: query over releases

# title: the parts' own epsilon conflicts with the call's
# epsilon: 1
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 0.5) COUNT(*) FROM visits UNION ALL SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 0.25) COUNT(*) FROM visits;
# error: PrivacyError: every part names its own epsilon

# title: a reserved name in the query around releases
SELECT __dp_part_0.n FROM (SELECT COUNT(*) AS n FROM pums) a, (SELECT COUNT(*) AS m FROM pums) b;
# error: UnsupportedQueryError: names starting with __dp are reserved


# note: Names. Identifiers starting with __dp (any case) are dpsql's: the rewrite generates
# note: them, so a query or a catalog may not use them (dpsql/names.py). Alias lists rename
# note: columns positionally; SELECT * takes EXCLUDE, REPLACE and RENAME.

# title: a subquery alias in the reserved namespace is refused
SELECT COUNT(*) FROM (SELECT visit_id AS __dp_unit_of FROM visits) s;
# error: UnsupportedQueryError: identifier `__dp_unit_of`: names starting with __dp are reserved

# title: reserved names are refused in any letter case, quoted or not
SELECT COUNT(*) FROM (SELECT cost AS "__DP_Unit_Of" FROM visits) s;
# error: UnsupportedQueryError: identifier `__DP_Unit_Of`: names starting with __dp are reserved

# title: a CTE named in the reserved namespace is refused
WITH __dp_source AS (SELECT * FROM visits) SELECT COUNT(*) FROM __dp_source;
# error: UnsupportedQueryError: identifier `__dp_source`: names starting with __dp are reserved

# title: a table alias in the reserved namespace is refused
SELECT COUNT(*) FROM visits AS __dp_q0;
# error: UnsupportedQueryError: identifier `__dp_q0`: names starting with __dp are reserved

# title: a column alias list with a reserved name is refused
SELECT COUNT(*) FROM visits AS v(a, __dp_unit);
# error: UnsupportedQueryError: identifier `__dp_unit`: names starting with __dp are reserved

# title: privacy_unit_column cannot name a generated column
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, privacy_unit_column = __dp_unit_of) COUNT(*) FROM visits;
# error: UnsupportedQueryError: identifier `__dp_unit_of`: names starting with __dp are reserved

# title: EXCLUDE cannot name a generated column
SELECT COUNT(*) FROM (SELECT * EXCLUDE (__dp_unit_of) FROM visits) s;
# error: UnsupportedQueryError: identifier `__dp_unit_of`: names starting with __dp are reserved

# title: an output alias in the reserved namespace is refused
SELECT COUNT(*) AS __dp_a0 FROM visits;
# error: UnsupportedQueryError: identifier `__dp_a0`: names starting with __dp are reserved

# title: a join whose columns collide with another side's alias_column names
SELECT COUNT(*) FROM visits a JOIN (SELECT cost AS a_patient_id, patient_id FROM visits) b ON a.patient_id = b.patient_id;
# result: [(1228,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: a column alias list renames a table's columns by position
SELECT SUM(c) FROM visits AS v(p, s, a, c);
# result: [(220271.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(c) in [0, 2000] L1=8000 L2=8000

# title: a shorter alias list renames the first columns only
SELECT AVG(a) FROM visits AS v(p, s, a);
# result: [(48.1856,)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | AVG(a) in [0, 100] L1=200 L2=200

# title: a CTE's column list renames its columns, the unit included
WITH w(person, amount) AS (SELECT patient_id, cost FROM visits) SELECT COUNT(DISTINCT person), SUM(amount) FROM w;
# result: [(412, 220271.0)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | COUNT(DISTINCT person) L1=1 L2=1 | SUM(amount) in [0, 2000] L1=8000 L2=8000

# title: a subquery's alias list renames its columns
SELECT AVG(amount) FROM (SELECT patient_id, cost FROM visits) AS t(person, amount);
# result: [(208.59,)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | AVG(amount) in [0, 2000] L1=4000 L2=4000

# title: an alias list longer than the columns is refused
SELECT COUNT(*) FROM visits AS v(a, b, c, d, e, f, g);
# error: UnsupportedQueryError: column alias list: `visits AS v(a, b, c, d, e, f, g)` is not supported

# title: an alias list naming a column twice is refused
SELECT COUNT(*) FROM visits AS v(a, a);
# error: UnsupportedQueryError: column alias list: `visits AS v(a, a)` is not supported

# title: SELECT * EXCLUDE in a subquery
SELECT SUM(cost) FROM (SELECT * EXCLUDE (age) FROM visits) s;
# result: [(220271.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(cost) in [0, 2000] L1=8000 L2=8000

# title: SELECT * REPLACE in a subquery takes the new expression's bounds
SELECT SUM(cost) FROM (SELECT * REPLACE (cost / 2 AS cost) FROM visits) s;
# result: [(110136.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(cost) in [0, 1000] L1=4000 L2=4000

# title: SELECT * RENAME in a subquery
SELECT SUM(amount) FROM (SELECT * RENAME (cost AS amount) FROM visits) s;
# result: [(220271.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(amount) in [0, 2000] L1=8000 L2=8000

# title: EXCLUDE of a column that is not there is refused
SELECT COUNT(*) FROM (SELECT * EXCLUDE (nothing) FROM visits) s;
# error: CatalogError: column `nothing` is not in the FROM clause

# title: REPLACE of the privacy unit does not make the new column the unit
SELECT COUNT(DISTINCT patient_id), COUNT(*) FROM (SELECT * REPLACE (age AS patient_id) FROM visits) s;
# result: [(89, 1056)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | COUNT(DISTINCT patient_id) L1=4 L2=4 | COUNT(*) L1=4 L2=4

# title: alias.* in a subquery over a join
SELECT SUM(LEAST(GREATEST(s.base_fee, 0), 200)) FROM (SELECT v.*, s.base_fee FROM visits v JOIN specialties s ON v.specialty = s.specialty) AS s;
# result: [(72659.7,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(LEAST(GREATEST(base_fee, 0), 200)) in [0, 200] L1=800 L2=800

# title: SELECT * over a join whose sides share a column name is refused
SELECT COUNT(*) FROM (SELECT * FROM visits v JOIN specialties s ON v.specialty = s.specialty) AS t;
# error: UnsupportedQueryError: subquery SELECT: `SELECT * FROM visits AS v JOIN specialties


# title: a query parameter named as dpsql's salt is refused, not bound to the secret salt
SELECT specialty, COUNT(*) FROM visits WHERE cost > $__dp_salt GROUP BY specialty;
# error: UnsupportedQueryError: WHERE: `$__dp_salt` is not supported

# title: a query parameter named as one of the salt's constants is refused
SELECT specialty, COUNT(*) FROM visits WHERE cost > $__dp_k0 GROUP BY specialty;
# error: UnsupportedQueryError: WHERE: `$__dp_k0` is not supported

# title: a parameter in the select list cannot read the salt's constants either
SELECT specialty, COUNT(*) + :__dp_k5 FROM visits GROUP BY specialty;
# error: UnsupportedQueryError

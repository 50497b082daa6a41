# note: Row-level expressions inside aggregates, WHERE and FILTER: CASE, IF, COALESCE, NULLIF,
# note: TRY_CAST, casts that cannot fail, total division, date and string functions.
# note: visits: 3 groups/unit, 4 rows/group, cost in [0, 2000], age in [0, 100]; a global
# note: aggregate touches one group, so one unit adds at most 4 rows. Bounds flow through every
# note: expression by interval arithmetic; a NULL branch adds nothing to a sum.

# title: CASE inside SUM counts matching rows exactly
SELECT SUM(CASE WHEN age > 65 THEN 1 ELSE 0 END) AS seniors FROM visits;
# result: [(248.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | seniors=SUM(CASE WHEN age > 65 THEN 1 ELSE 0 END) in [0, 1] L1=4 L2=4

# title: CASE inside SUM picks a bounded column
SELECT SUM(CASE WHEN age > 65 THEN cost ELSE 0 END) FROM visits;
# result: [(51919.1,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(CASE WHEN age > 65 THEN cost ELSE 0 END) in [0, 2000] L1=8000 L2=8000

# title: CASE without ELSE sums only the matching rows
SELECT SUM(CASE WHEN specialty = 'cardiology' THEN cost END) FROM visits;
# result: [(17557.6,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(CASE WHEN specialty = 'cardiology' THEN cost END) in [0, 2000] L1=8000 L2=8000

# title: CASE with negative branches
SELECT SUM(CASE WHEN age < 18 THEN -1 WHEN age > 65 THEN 1 ELSE 0 END) FROM visits;
# result: [(163.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(CASE WHEN age < 18 THEN -1 WHEN age > 65 THEN 1 ELSE 0 END) in [-1, 1] L1=4 L2=4

# title: simple CASE with an operand
SELECT SUM(CASE specialty WHEN 'cardiology' THEN 2 WHEN 'oncology' THEN 3 ELSE 1 END) FROM visits;
# result: [(1130.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(CASE specialty WHEN 'cardiology' THEN 2 WHEN 'oncology' THEN 3 ELSE 1 END) in [1, 3] L1=12 L2=12

# title: CASE inside AVG is a share
SELECT AVG(CASE WHEN cost > 500 THEN 1 ELSE 0 END) AS expensive_share FROM visits;
# result: [(0.0975379,)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | expensive_share=AVG(CASE WHEN cost > 500 THEN 1 ELSE 0 END) in [0, 1] L1=2 L2=2

# title: CASE inside COUNT counts non-NULL branches
SELECT COUNT(CASE WHEN age > 65 THEN 1 END) FROM visits;
# result: [(248,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(CASE WHEN age > 65 THEN 1 END) L1=4 L2=4

# title: CASE branches hull across columns
SELECT SUM(CASE WHEN age > 50 THEN age ELSE cost END) FROM visits;
# result: [(155343.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(CASE WHEN age > 50 THEN age ELSE cost END) in [0, 2000] L1=8000 L2=8000

# title: IF inside SUM
SELECT SUM(IF(age >= 18, 1, 0)) AS adults FROM visits;
# result: [(971.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | adults=SUM(CASE WHEN age >= 18 THEN 1 ELSE 0 END) in [0, 1] L1=4 L2=4

# title: CASE per public group
SELECT region, SUM(CASE WHEN age > 65 THEN 1 ELSE 0 END) AS seniors FROM visits GROUP BY region;
# result: [('east north central', 40.0), ('mid atlantic', 28.0), ('mountain', 17.0), ('new england', 20.0), ('pacific', 68.0), ('south atlantic', 43.0), ('west north central', 15.0), ('west south central', 17.0)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | seniors=SUM(CASE WHEN age > 65 THEN 1 ELSE 0 END) in [0, 1] L1=12 L2=6.9282

# title: CASE branch without bounds needs a clamp
SELECT SUM(CASE WHEN sex = 1 THEN income ELSE race END) FROM pums;
# error: UnsupportedQueryError: SUM(CASE WHEN sex = 1 THEN income ELSE race END) needs bounds: declare bounds={"race": (lo, hi)}

# title: CASE mixing text and numbers is refused
SELECT SUM(CASE WHEN age > 65 THEN 'old' ELSE 0 END) FROM visits;
# error: UnsupportedQueryError: `CASE WHEN age > 65 THEN 'old' ELSE 0 END` mixes numeric, string; give arguments of one type

# title: CASE condition must be a condition
SELECT SUM(CASE WHEN specialty THEN 1 ELSE 0 END) FROM visits;
# error: UnsupportedQueryError: `CASE WHEN specialty THEN 1 ELSE 0 END` needs boolean arguments, but `specialty` is string

# title: arithmetic scales the bounds
SELECT SUM(cost * 1.1) FROM visits;
# result: [(242299.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(cost * 1.1) in [0, 2200] L1=8800 L2=8800

# title: AVG of a shifted column
SELECT AVG(age - 18) FROM visits;
# result: [(30.1856,)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | AVG(age - 18) in [-18, 82] L1=200 L2=200

# title: SUM of two bounded columns
SELECT SUM(cost + age) FROM visits;
# result: [(271155.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(cost + age) in [0, 2100] L1=8400 L2=8400

# title: SUM of a difference of bounded columns
SELECT SUM(cost - age) FROM visits;
# result: [(169387.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(cost - age) in [-100, 2000] L1=8000 L2=8000

# title: division by a constant halves the bound
SELECT SUM(cost / 2) FROM visits;
# result: [(110136.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(cost / 2) in [0, 1000] L1=4000 L2=4000

# title: division by a bounded positive denominator
SELECT AVG(cost / (age + 1)) FROM visits;
# result: [(8.29383,)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | AVG(cost / (age + 1)) in [0, 2000] L1=4000 L2=4000

# title: division by a column that may be zero needs a clamp
SELECT SUM(cost / age) FROM visits;
# error: UnsupportedQueryError: SUM(cost / age) needs bounds: write SUM(LEAST(GREATEST(cost / age, lo), hi))

# title: clamped ratio with a zero divisor is NULL on those rows
SELECT SUM(LEAST(GREATEST(cost / age, 0), 100)) FROM visits;
# result: [(6022.16,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(LEAST(GREATEST(cost / age, 0), 100)) in [0, 100] L1=400 L2=400

# title: integer division in an AVG argument
SELECT AVG(age // 10) AS decade FROM visits;
# result: [(4.38542,)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | decade=AVG(age // 10) in [0, 10] L1=20 L2=20

# title: modulo keeps the sign of the dividend
SELECT SUM(age % 10) FROM visits;
# result: [(4574.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(age % 10) in [0, 10] L1=40 L2=40

# title: ROUND in a SUM argument
SELECT SUM(ROUND(cost)) FROM visits;
# result: [(220277.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(ROUND(cost)) in [0, 2000] L1=8000 L2=8000

# title: ROUND to a number of decimals
SELECT SUM(ROUND(cost, 1)) FROM visits;
# result: [(220276.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(ROUND(cost, 1)) in [0, 2000] L1=8000 L2=8000

# title: FLOOR and CEIL keep integer bounds
SELECT SUM(FLOOR(cost / 100)), SUM(CEIL(age / 10)) FROM visits;
# result: [(1701.0, 5538.0)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | SUM(FLOOR(cost / 100)) in [0, 20] L1=80 L2=80 | SUM(CEIL(age / 10)) in [0, 10] L1=40 L2=40

# title: ROUND with a column as decimals is refused
SELECT SUM(ROUND(cost, age)) FROM visits;
# error: UnsupportedQueryError: `ROUND(cost, age)` needs an integer literal of at most 20 as its decimals

# title: COALESCE replaces NULL with a bounded default
SELECT SUM(COALESCE(cost, 0)) FROM claims;
# result: [(175806.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=3 rows/unit=5 selection=public | SUM(COALESCE(cost, 0)) in [0, 1000] L1=3000 L2=3000

# title: NULLIF drops one value from an average
SELECT AVG(NULLIF(age, 0)) FROM visits;
# result: [(49.0212,)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | AVG(NULLIF(age, 0)) in [0, 100] L1=200 L2=200

# title: NULLIF compares values of one type only
SELECT SUM(NULLIF(cost, 'none')) FROM visits;
# error: UnsupportedQueryError: `NULLIF(cost, 'none')` compares numeric with string; compare values of the same type

# title: TRY_CAST of text to a number needs a clamp
SELECT SUM(LEAST(GREATEST(TRY_CAST(specialty AS INTEGER), 0), 10)) FROM visits;
# result: [(0.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(LEAST(GREATEST(TRY_CAST(specialty AS INT), 0), 10)) in [0, 10] L1=40 L2=40

# title: TRY_CAST of a bounded column keeps its bounds
SELECT SUM(TRY_CAST(ROUND(cost) AS INTEGER)) FROM visits;
# result: [(220277.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(TRY_CAST(ROUND(cost) AS INT)) in [0, 2000] L1=8000 L2=8000

# title: a cast that drops a fraction is refused: engines round it differently
SELECT SUM(TRY_CAST(cost AS INTEGER)) FROM visits;
# error: UnsupportedQueryError: `TRY_CAST(cost AS INT)` may drop a fraction, which engines round differently (DuckDB to the nearest, Spark towards zero); say which you mean: ROUND, FLOOR or CEIL of `cost` first

# title: a cast between a date or time and a number is refused: engines disagree
SELECT COUNT(*) FROM visits WHERE TRY_CAST(visit_date AS BIGINT) > 0;
# error: UnsupportedQueryError: `TRY_CAST(visit_date AS BIGINT)` converts date to numeric, which engines do differently

# title: CAST that could fail on some rows is refused
SELECT SUM(CAST(ROUND(cost) AS INTEGER)) FROM visits;
# error: UnsupportedQueryError: `CAST(ROUND(cost) AS INT)` can fail on some rows (a numeric value that is not a valid INT),

# title: a cast to a type Spark lacks is refused on every engine
SELECT SUM(LEAST(GREATEST(TRY_CAST(cost AS UBIGINT), 0), 10)) FROM visits;
# error: UnsupportedQueryError: `TRY_CAST(cost AS UBIGINT)` casts to UBIGINT, which not every engine dpsql runs on has

# title: a number literal of more than 38 digits is refused, with its scientific notation
SELECT COUNT(*) FROM visits WHERE cost < 1000000000000000000000000000000000000000;
# error: UnsupportedQueryError: `1000000000000000000000000000000000000000` has more than 38 digits, which engines read differently (DuckDB as a 128-bit integer or a DOUBLE, Spark not at all); write it in scientific notation, e.g. 1.000000e+39

# title: CAST of text to a number is refused
SELECT COUNT(*) FROM visits WHERE CAST(specialty AS INTEGER) > 3;
# error: UnsupportedQueryError: `CAST(specialty AS INT)` can fail on some rows (a string value that is not a valid

# title: CAST to text cannot fail
SELECT COUNT(*) FROM visits WHERE CAST(age AS VARCHAR) = '40';
# result: [(26,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: CAST of a number to DOUBLE cannot fail
SELECT SUM(CAST(age AS DOUBLE)) FROM visits;
# result: [(50884.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(CAST(age AS DOUBLE)) in [0, 100] L1=400 L2=400

# title: DATE literal is converted before reading data
SELECT COUNT(*) FROM visits WHERE visit_date >= DATE '2023-01-01';
# result: [(701,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: an invalid DATE literal is refused before reading data
SELECT COUNT(*) FROM visits WHERE visit_date >= DATE '2023-02-30';
# error: InvalidLiteral: `CAST('2023-02-30' AS DATE)` is not a valid date literal

# title: CAST of a date to a timestamp
SELECT COUNT(*) FROM visits WHERE CAST(visit_date AS TIMESTAMP) < TIMESTAMP '2023-06-01 12:00:00';
# result: [(775,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: CAST to a type dpsql cannot check is refused
SELECT COUNT(*) FROM visits WHERE TRY_CAST(age AS INTEGER[]) IS NULL;
# error: UnsupportedQueryError: `TRY_CAST(age AS INT[])` casts to or from a type dpsql cannot check; cast to a number,

# title: division in WHERE gives NULL for a zero divisor
SELECT COUNT(*) FROM visits WHERE cost / age > 10;
# result: [(238,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: modulo in WHERE
SELECT COUNT(*) FROM visits WHERE patient_id % 2 = 0;
# result: [(511,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: CASE in WHERE
SELECT COUNT(*) FROM visits WHERE CASE WHEN age > 65 THEN cost > 100 ELSE FALSE END;
# result: [(184,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: COUNT with FILTER
SELECT COUNT(*) FILTER (WHERE age > 65) AS seniors FROM visits;
# result: [(248,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | seniors=COUNT(*) FILTER(WHERE age > 65) L1=4 L2=4

# title: SUM with FILTER
SELECT SUM(cost) FILTER (WHERE specialty = 'cardiology') AS cardiology_cost FROM visits;
# result: [(17557.6,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | cardiology_cost=SUM(cost) FILTER(WHERE specialty = 'cardiology') in [0, 2000] L1=8000 L2=8000

# title: AVG with FILTER per group
SELECT region, AVG(cost) FILTER (WHERE age >= 65) AS senior_cost FROM visits GROUP BY region;
# result: [('east north central', 188.996), ('mid atlantic', 182.141), ('mountain', 321.322), ('new england', 166.55), ('pacific', 208.533), ('south atlantic', 170.568), ('west north central', 352.038), ('west south central', 163.652)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=6 groups/unit=3 rows/group=4 selection=public | region | senior_cost=AVG(cost) FILTER(WHERE age >= 65) in [0, 2000] L1=12000 L2=6928.2

# title: FILTER reads raw values, not clamped ones
SELECT COUNT(*) FILTER (WHERE cost > 5000) FROM visits;
# result: [(3,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) FILTER(WHERE cost > 5000) L1=4 L2=4

# title: filtered and unfiltered counts are two statistics
SELECT COUNT(*) AS n, COUNT(*) FILTER (WHERE age > 65) AS seniors FROM visits;
# result: [(1056, 248)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | n=COUNT(*) L1=4 L2=4 | seniors=COUNT(*) FILTER(WHERE age > 65) L1=4 L2=4

# title: ratio of a filtered count to a count
SELECT region, COUNT(*) FILTER (WHERE age > 65) * 1.0 / COUNT(*) AS senior_share FROM visits GROUP BY region;
# result: [('east north central', 0.233918), ('mid atlantic', 0.210526), ('mountain', 0.168317), ('new england', 0.294118), ('pacific', 0.256604), ('south atlantic', 0.272152), ('west north central', 0.168539), ('west south central', 0.239437)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=6 groups/unit=3 rows/group=4 selection=public | region | senior_share | also COUNT(*) FILTER(WHERE age > 65), COUNT(*)

# title: FILTER on a quantile
SELECT MEDIAN(cost) FILTER (WHERE age > 65) FROM visits;
# result: [(120.117,)]
# bounding: all_pairs
# plan: exponential stats/unit=1 groups/unit=1 rows/group=4 selection=public | MEDIAN(cost) FILTER(WHERE age > 65) in [0, 2000] L1=4 L2=4

# title: FILTER on COUNT DISTINCT of the privacy unit
SELECT COUNT(DISTINCT patient_id) FILTER (WHERE age > 65) AS senior_patients FROM visits;
# result: [(98,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | senior_patients=COUNT(DISTINCT patient_id) FILTER(WHERE age > 65) L1=1 L2=1

# title: FILTER with a non-boolean condition is refused
SELECT COUNT(*) FILTER (WHERE specialty) FROM visits;
# error: UnsupportedQueryError: FILTER (WHERE ...): `specialty` is not supported

# title: FILTER with an aggregate is refused
SELECT COUNT(*) FILTER (WHERE COUNT(*) > 1) FROM visits;
# error: UnsupportedQueryError: FILTER (WHERE ...): `COUNT(*)` is not supported

# title: FILTER with a subquery is refused
SELECT COUNT(*) FILTER (WHERE age IN (SELECT 1)) FROM visits;
# error: UnsupportedQueryError: IN takes a list of literals here

# title: date_trunc in WHERE
SELECT COUNT(*) FROM visits WHERE date_trunc('month', visit_date) = '2023-03-01';
# result: [(28,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: date_trunc with an unknown unit is refused
SELECT COUNT(*) FROM visits WHERE date_trunc('fortnight', visit_date) = '2023-03-01';
# error: UnsupportedQueryError: `DATE_TRUNC('FORTNIGHT', visit_date)` needs a unit among year, quarter, month, week,

# title: date_trunc by decade, century or millennium is refused (Spark answers NULL)
SELECT date_trunc('decade', visit_date) AS d, COUNT(*) FROM visits GROUP BY d;
# error: UnsupportedQueryError: `DATE_TRUNC('DECADE', visit_date)` needs a unit among year, quarter, month, week,

# title: a negative SUBSTR length is refused (engines read it differently)
SELECT COUNT(DISTINCT SUBSTR(specialty, 2, -3)) FROM visits;
# error: UnsupportedQueryError: `SUBSTRING(specialty, 2, -3)` needs a length of 0 or more as its length

# title: date_trunc of a number is refused
SELECT COUNT(*) FROM visits WHERE date_trunc('month', age) = '2023-03-01';
# error: UnsupportedQueryError: `DATE_TRUNC('MONTH', age)` needs date or timestamp arguments, but `age` is numeric

# title: EXTRACT in WHERE
SELECT COUNT(*) FROM visits WHERE EXTRACT(year FROM visit_date) = 2023;
# result: [(297,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: YEAR and MONTH in WHERE
SELECT COUNT(*) FROM visits WHERE YEAR(visit_date) = 2023 AND MONTH(visit_date) <= 6;
# result: [(156,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: AVG of a month number is bounded by the calendar
SELECT AVG(MONTH(visit_date)) FROM visits;
# result: [(6.63352,)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | AVG(MONTH(visit_date)) in [1, 12] L1=22 L2=22

# title: day of week is bounded too
SELECT SUM(CASE WHEN DAYOFWEEK(visit_date) IN (0, 6) THEN 1 ELSE 0 END) AS weekend_visits FROM visits;
# result: [(308.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | weekend_visits=SUM(CASE WHEN DAYOFWEEK(visit_date) IN (0, 6) THEN 1 ELSE 0 END) in [0, 1] L1=4 L2=4

# title: SUM of a year needs a clamp
SELECT SUM(YEAR(visit_date)) FROM visits;
# error: UnsupportedQueryError: SUM(YEAR(visit_date)) needs bounds: write SUM(LEAST(GREATEST(YEAR(visit_date), lo), hi))

# title: EXTRACT of an unknown part is refused
SELECT COUNT(*) FROM visits WHERE EXTRACT(microseconds FROM visit_date) = 0;
# error: UnsupportedQueryError: `EXTRACT(MICROSECOND FROM visit_date)` needs a part among year, quarter, month, week,

# title: strftime in WHERE
SELECT COUNT(*) FROM visits WHERE strftime(visit_date, '%Y-%m') = '2023-03';
# result: [(28,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: strftime with an unknown format code is refused
SELECT COUNT(*) FROM visits WHERE strftime(visit_date, '%Q') = '1';
# error: UnsupportedQueryError: `STRFTIME(visit_date, '%Q')` uses format code %Q

# title: strftime with a week number Spark cannot format alike is refused
SELECT COUNT(*) FROM visits WHERE strftime(visit_date, '%U') = '10';
# error: UnsupportedQueryError: `STRFTIME(visit_date, '%U')` uses format code %U

# title: a cast of a value to TIME is refused on every engine
SELECT COUNT(*) FROM visits WHERE TRY_CAST(specialty AS TIME) IS NULL;
# error: UnsupportedQueryError: casts a value to TIME, which not every engine dpsql runs on can do

# title: strftime with a format from a column is refused
SELECT COUNT(*) FROM visits WHERE strftime(visit_date, specialty) = '1';
# error: UnsupportedQueryError: `STRFTIME(visit_date, specialty)` needs a string literal format, e.g. strftime(visit_date, '%Y-%m')

# title: LOWER and UPPER in WHERE
SELECT COUNT(*) FROM visits WHERE UPPER(specialty) = 'CARDIOLOGY' OR LOWER(region) = 'pacific';
# result: [(301,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: other scalar functions in WHERE
SELECT COUNT(*) FROM visits WHERE LENGTH(specialty) > 10;
# result: [(848,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: string concatenation in WHERE
SELECT COUNT(*) FROM visits WHERE region || specialty = 'pacificoncology';
# result: [(9,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: CONCAT converts any value to text
SELECT COUNT(*) FROM visits WHERE CONCAT(region, '-', age) = 'pacific-40';
# result: [(2,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: substr with literal positions
SELECT COUNT(*) FROM visits WHERE SUBSTR(specialty, 1, 4) = 'card';
# result: [(48,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: substr with a column position is refused
SELECT COUNT(*) FROM visits WHERE SUBSTR(specialty, age, 2) = 'ca';
# error: UnsupportedQueryError: `SUBSTRING(specialty, age, 2)` needs an integer literal of at most 2147483647 as its start

# title: substr with a huge position is refused
SELECT COUNT(*) FROM visits WHERE SUBSTR(specialty, 99999999999, 2) = 'ca';
# error: UnsupportedQueryError: `SUBSTRING(specialty, 99999999999, 2)` needs an integer literal of at most 2147483647 as its start

# title: TRIM, REPLACE and LEFT
SELECT COUNT(*) FROM visits WHERE TRIM(specialty) = 'oncology' AND REPLACE(region, 'a', 'o') <> 'x' AND LEFT(specialty, 3) = 'onc';
# result: [(21,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: starts_with and strpos
SELECT COUNT(*) FROM visits WHERE starts_with(specialty, 'card') OR STRPOS(specialty, 'log') > 0;
# result: [(396,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: SUM of a string length needs a clamp
SELECT SUM(LENGTH(specialty)) FROM visits;
# error: UnsupportedQueryError: SUM(LENGTH(specialty)) needs bounds: write SUM(LEAST(GREATEST(LENGTH(specialty), lo), hi))

# title: clamped string length
SELECT AVG(LEAST(LENGTH(specialty), 20)) FROM visits;
# result: [(14.1723,)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | AVG(LEAST(LENGTH(specialty), 20)) in [0, 20] L1=40 L2=40

# title: LENGTH of a number is refused
SELECT COUNT(*) FROM visits WHERE LENGTH(age) > 1;
# error: UnsupportedQueryError: `LENGTH(age)` needs string arguments, but `age` is numeric

# title: regular expressions stay refused
SELECT COUNT(*) FROM visits WHERE regexp_matches(specialty, '^p');
# error: UnsupportedQueryError: WHERE: `REGEXP_MATCHES(specialty, '^p')` is not supported

# title: LPAD is refused
SELECT COUNT(*) FROM visits WHERE LPAD(specialty, 20, 'x') = 'x';
# error: UnsupportedQueryError: WHERE: `LPAD(specialty, 20, 'x')` is not supported

# title: random() in an aggregate argument is refused
SELECT SUM(LEAST(GREATEST(random(), 0), 1)) FROM visits;
# error: UnsupportedQueryError: SUM argument: `RANDOM()` is not supported

# title: row-level table with CASE and FILTER
SELECT COUNT(*) FILTER (WHERE married = 1) AS married, SUM(CASE WHEN age >= 65 THEN 1 ELSE 0 END) AS seniors FROM people;
# result: [(549, 170.0)]
# bounding: row_level
# plan: laplace stats/unit=2 groups/unit=1 rows/group=1 rows/unit=1 selection=public | married=COUNT(*) FILTER(WHERE married = 1) L1=1 L2=1 | seniors=SUM(CASE WHEN age >= 65 THEN 1 ELSE 0 END) in [0, 1] L1=1 L2=1

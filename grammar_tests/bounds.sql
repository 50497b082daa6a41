# note: Value bounds: the catalog's bounds meet clamps in the query (the tighter wins),
# note: carried through + - * ABS COALESCE LEAST GREATEST by interval arithmetic.
# note: A SUM's per-row bound is max(|lo|, |hi|); AVG's centred sum moves by (hi - lo) / 2.

# title: clamp tighter than the catalog bounds
SELECT SUM(LEAST(GREATEST(cost, 0), 500)) FROM visits;
# result: [(182912.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(LEAST(GREATEST(cost, 0), 500)) in [0, 500] L1=2000 L2=2000

# title: clamp looser than the catalog bounds
SELECT SUM(LEAST(GREATEST(cost, 0), 5000)) FROM visits;
# result: [(220271.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(LEAST(GREATEST(cost, 0), 5000)) in [0, 2000] L1=8000 L2=8000

# title: clamp overlapping the catalog bounds
SELECT SUM(LEAST(GREATEST(cost, -50), 50)) FROM visits;
# result: [(48442.8,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(LEAST(GREATEST(cost, -50), 50)) in [0, 50] L1=200 L2=200

# title: clamp bounds a column with no catalog bounds
SELECT SUM(LEAST(GREATEST(married, 0), 1)) FROM people;
# result: [(549.0,)]
# bounding: row_level
# plan: laplace stats/unit=1 groups/unit=1 rows/group=1 rows/unit=1 selection=public | SUM(LEAST(GREATEST(married, 0), 1)) in [0, 1] L1=1 L2=1

# title: clamp written GREATEST outside LEAST
SELECT SUM(GREATEST(LEAST(income, 100000), 0)) FROM people;
# result: [(28928300.0,)]
# bounding: row_level
# plan: laplace stats/unit=1 groups/unit=1 rows/group=1 rows/unit=1 selection=public | SUM(GREATEST(LEAST(income, 100000), 0)) in [0, 100000] L1=100000 L2=100000

# title: nested clamps intersect
SELECT SUM(LEAST(GREATEST(LEAST(GREATEST(cost, 100), 900), 200), 800)) FROM visits;
# result: [(285167.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(LEAST(GREATEST(LEAST(GREATEST(cost, 100), 900), 200), 800)) in [200, 800] L1=3200 L2=3200

# title: one-sided clamp on a bounded column
SELECT SUM(LEAST(cost, 10)) FROM visits;
# result: [(10524.2,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(LEAST(cost, 10)) in [0, 10] L1=40 L2=40

# title: LEAST of several bounded arguments
SELECT SUM(LEAST(cost, age, 50)) FROM visits;
# result: [(39377.1,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(LEAST(cost, age, 50)) in [0, 50] L1=200 L2=200

# title: GREATEST of several bounded arguments
SELECT SUM(GREATEST(age, 20, LEAST(cost, 30))) FROM visits;
# result: [(53380.3,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(GREATEST(age, 20, LEAST(cost, 30))) in [20, 100] L1=400 L2=400

# title: inverted clamp collapses to a constant
SELECT SUM(LEAST(GREATEST(cost, 10), 5)) FROM visits;
# result: [(5280.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(LEAST(GREATEST(cost, 10), 5)) in [5, 5] L1=20 L2=20

# title: SUM of an entirely negative range
SELECT SUM(cost - 3000) FROM visits;
# result: [(-2947730.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(cost - 3000) in [-3000, -1000] L1=12000 L2=12000

# title: SUM of a negated column
SELECT SUM(-cost) FROM visits;
# result: [(-220271.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(-cost) in [-2000, 0] L1=8000 L2=8000

# title: SUM of a range straddling zero
SELECT SUM(cost - 500) FROM visits;
# result: [(-307729.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(cost - 500) in [-500, 1500] L1=6000 L2=6000

# title: AVG sensitivity ignores a shift
SELECT AVG(cost - 3000) FROM visits;
# result: [(-2791.41,)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=4 selection=public | AVG(cost - 3000) in [-3000, -1000] L1=4000 L2=4000

# title: SUM scaled by a constant
SELECT SUM(cost * 2) FROM visits;
# result: [(440543.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(cost * 2) in [0, 4000] L1=16000 L2=16000

# title: SUM of a product of two bounded columns
SELECT SUM(age * cost) FROM visits;
# result: [(10675100.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(age * cost) in [0, 200000] L1=800000 L2=800000

# title: ABS of a straddling range
SELECT SUM(ABS(cost - 500)) FROM visits;
# result: [(382447.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(ABS(cost - 500)) in [0, 1500] L1=6000 L2=6000

# title: COALESCE with a default inside the bounds
SELECT SUM(COALESCE(cost, 0)) FROM visits;
# result: [(220271.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(COALESCE(cost, 0)) in [0, 2000] L1=8000 L2=8000

# title: COALESCE with a default outside the bounds widens them
SELECT SUM(COALESCE(cost, 5000)) FROM visits;
# result: [(220271.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(COALESCE(cost, 5000)) in [0, 5000] L1=20000 L2=20000

# title: unary plus
SELECT SUM(+cost) FROM visits;
# result: [(220271.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | SUM(cost) in [0, 2000] L1=8000 L2=8000

# title: large income bound with two rows per unit
SELECT SUM(income) FROM pums;
# result: [(57957700.0,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=2 selection=public | SUM(income) in [0, 500000] L1=1e+06 L2=1e+06

# title: AVG over a clamp
SELECT AVG(LEAST(GREATEST(income, 0), 100000)) FROM pums;
# result: [(30537.7,)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=2 selection=public | AVG(LEAST(GREATEST(income, 0), 100000)) in [0, 100000] L1=100000 L2=100000

# title: clamp on one side only leaves the other unbounded
SELECT SUM(LEAST(married, 1)) FROM people;
# error: UnsupportedQueryError: needs bounds

# title: unbounded column inside a sum of columns
SELECT SUM(age + married) FROM people;
# error: UnsupportedQueryError: needs bounds

# title: string clamps do not bound a sum
SELECT SUM(LEAST(GREATEST(cost, 'a'), 'b')) FROM visits;
# error: UnsupportedQueryError: mixes numeric, string

# title: a SUM multiplied to zero
SELECT SUM(cost * 0) FROM visits;
# error: UnsupportedQueryError: This sum is always 0

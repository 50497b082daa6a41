# note: CORR, COVAR_POP/COVAR_SAMP and REGR_* of (y, x), y first as in SQL, over the rows where
# note: both are present: a count, centred sums of x and y, of their squared deviations and of
# note: the products of their deviations (dpsql/covariance.py). The plan shows the last
# note: statistic's sensitivity: for the products, c * hx * hy per unit and group.

# title: CORR from six bounded sums
SELECT CORR(cost, age) FROM visits;
# result: [(0.010005,)]
# bounding: all_pairs
# plan: laplace stats/unit=6 groups/unit=1 rows/group=4 selection=public | CORR(cost, age) L1=200000 L2=200000

# title: COVAR_POP from four bounded sums
SELECT COVAR_POP(cost, age) FROM visits;
# result: [(57.9076,)]
# bounding: all_pairs
# plan: laplace stats/unit=4 groups/unit=1 rows/group=4 selection=public | COVAR_POP(cost, age) L1=200000 L2=200000

# title: COVAR_SAMP
SELECT COVAR_SAMP(cost, age) FROM visits;
# result: [(57.9625,)]
# bounding: all_pairs
# plan: laplace stats/unit=4 groups/unit=1 rows/group=4 selection=public | COVAR_SAMP(cost, age) L1=200000 L2=200000

# title: REGR_SLOPE of y on x
SELECT REGR_SLOPE(cost, age) FROM visits;
# result: [(0.1237,)]
# bounding: all_pairs
# plan: laplace stats/unit=5 groups/unit=1 rows/group=4 selection=public | REGR_SLOPE(cost, age) L1=200000 L2=200000

# title: REGR_INTERCEPT
SELECT REGR_INTERCEPT(cost, age) FROM visits;
# result: [(202.63,)]
# bounding: all_pairs
# plan: laplace stats/unit=5 groups/unit=1 rows/group=4 selection=public | REGR_INTERCEPT(cost, age) L1=200000 L2=200000

# title: REGR_R2
SELECT REGR_R2(cost, age) FROM visits;
# result: [(0.0001001,)]
# bounding: all_pairs
# plan: laplace stats/unit=6 groups/unit=1 rows/group=4 selection=public | REGR_R2(cost, age) L1=200000 L2=200000

# title: REGR_COUNT needs no bounds
SELECT REGR_COUNT(income, age) FROM pums;
# result: [(1582,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=2 selection=public | REGR_COUNT(income, age) L1=2 L2=2

# title: REGR_AVGX and REGR_AVGY are averages over the pairs
SELECT REGR_AVGX(cost, age) AS ax, REGR_AVGY(cost, age) AS ay FROM visits;
# result: [(48.1856, 208.59)]
# bounding: all_pairs
# plan: laplace stats/unit=3 groups/unit=1 rows/group=4 selection=public | ax=REGR_AVGX(cost, age) in [0, 100] L1=200 L2=200 | ay=REGR_AVGY(cost, age) in [0, 2000] L1=4000 L2=4000

# title: REGR_SXX, REGR_SYY and REGR_SXY
SELECT REGR_SXX(cost, age) AS sxx, REGR_SYY(cost, age) AS syy, REGR_SXY(cost, age) AS sxy FROM visits;
# result: [(494346.0, 75567200.0, 61150.4)]
# bounding: all_pairs
# plan: gaussian stats/unit=6 groups/unit=1 rows/group=4 selection=public | sxx=REGR_SXX(cost, age) L1=5000 L2=5000 | syy=REGR_SYY(cost, age) L1=2e+06 L2=2e+06 | sxy=REGR_SXY(cost, age) L1=200000 L2=200000

# title: CORR and the regression share their statistics
SELECT CORR(cost, age) AS r, CORR(age, cost) AS r2, REGR_SLOPE(cost, age) AS b, REGR_INTERCEPT(cost, age) AS a FROM visits;
# result: [(0.010005, 0.010005, 0.1237, 202.63)]
# bounding: all_pairs
# plan: laplace stats/unit=6 groups/unit=1 rows/group=4 selection=public | r=CORR(cost, age) L1=200000 L2=200000 | r2=CORR(age, cost) L1=200000 L2=200000 | b=REGR_SLOPE(cost, age) L1=200000 L2=200000 | a=REGR_INTERCEPT(cost, age) L1=200000 L2=200000

# title: CORR per public group
SELECT region, CORR(cost, age) AS r FROM visits GROUP BY region;
# result: [('east north central', 0.0105475), ('mid atlantic', -0.0881949), ('mountain', 0.121028), ('new england', -0.024575), ('pacific', 0.0989236), ('south atlantic', -0.0203931), ('west north central', 0.103124), ('west south central', -0.180868)]
# bounding: first_pairs_by_window (g=3)
# plan: gaussian stats/unit=18 groups/unit=3 rows/group=4 selection=public | region | r=CORR(cost, age) L1=600000 L2=346410

# title: CORR of a clamped column on a row-level table
SELECT CORR(LEAST(GREATEST(income, 0), 100000), age) FROM people;
# result: [(0.117335,)]
# bounding: row_level
# plan: laplace stats/unit=6 groups/unit=1 rows/group=1 rows/unit=1 selection=public | CORR(LEAST(GREATEST(income, 0), 100000), age) L1=2.5e+06 L2=2.5e+06

# title: CORR with FILTER
SELECT CORR(cost, age) FILTER (WHERE specialty = 'cardiology') FROM visits;
# result: [(-0.0401474,)]
# bounding: all_pairs
# plan: laplace stats/unit=6 groups/unit=1 rows/group=4 selection=public | CORR(cost, age) FILTER(WHERE specialty = 'cardiology') L1=200000 L2=200000

# title: CORR without bounds is refused
SELECT CORR(income, race) FROM pums;
# error: UnsupportedQueryError: CORR(income, race) needs bounds: declare bounds={"race": (lo, hi)} when registering the table, or write CORR(income, LEAST(GREATEST(race, lo), hi))

# title: CORR of text is refused
SELECT CORR(cost, specialty) FROM visits;
# error: UnsupportedQueryError: CORR: `CORR(cost, specialty)` is not supported; allowed: numeric arguments

# title: REGR_SLOPE on a constant is refused
SELECT REGR_SLOPE(cost, 1) FROM visits;
# error: UnsupportedQueryError: REGR_SLOPE: `REGR_SLOPE(cost, 1)` is not supported; allowed: arguments with bounds lo < hi. 1 is the constant 1 here

# note: checkups is visits with cost and age declared NOT NULL: a NULL read anyway counts as a
# note: row and as the middle of the bounds, so CORR's count, centred sums and sums of squares
# note: are COUNT(*)'s, AVG's and VAR's own, drawn once (docs/mechanisms.md §13).

# title: CORR beside AVG and VAR of undeclared columns reads statistics of its own
SELECT AVG(age) AS a, CORR(age, cost) AS r, VAR_POP(cost) AS v FROM visits;
# result: [(48.1856, 0.010005, 71559.8)]
# bounding: all_pairs
# plan: laplace stats/unit=11 groups/unit=1 rows/group=4 selection=public | a=AVG(age) in [0, 100] L1=200 L2=200 | r=CORR(age, cost) L1=200000 L2=200000 | v=VAR_POP(cost) in [0, 2000] L1=2e+06 L2=2e+06

# title: CORR of columns declared NOT NULL shares AVG's and VAR's statistics
SELECT AVG(age) AS a, CORR(age, cost) AS r, VAR_POP(cost) AS v FROM checkups;
# result: [(48.1856, 0.010005, 71559.8)]
# bounding: all_pairs
# plan: laplace stats/unit=6 groups/unit=1 rows/group=4 selection=public | a=AVG(age) in [0, 100] L1=200 L2=200 | r=CORR(age, cost) L1=200000 L2=200000 | v=VAR_POP(cost) in [0, 2000] L1=2e+06 L2=2e+06

# title: a regression per group shares COUNT's and SUM's statistics
SELECT region, COUNT(*) AS n, SUM(cost) AS total, REGR_SLOPE(cost, age) AS slope, REGR_INTERCEPT(cost, age) AS intercept FROM checkups GROUP BY region ORDER BY region;
# result: [('east north central', 171, 39095.6, 0.135801, 222.689), ('mid atlantic', 133, 34476.6, -1.3831, 324.925), ('mountain', 101, 20340.3, 1.73771, 112.008), ('new england', 68, 13473.1, -0.278812, 212.317), ('pacific', 265, 49396.6, 0.979652, 139.261), ('south atlantic', 158, 29997.8, -0.208273, 200.066), ('west north central', 89, 19125.0, 1.44783, 145.05), ('west south central', 71, 14366.3, -2.50456, 330.887)]
# bounding: first_pairs_by_window (g=3)
# plan: gaussian stats/unit=15 groups/unit=3 rows/group=4 selection=public | region | n=COUNT(*) L1=12 L2=6.9282 | total=SUM(cost) in [0, 2000] L1=24000 L2=13856.4 | slope=REGR_SLOPE(cost, age) L1=600000 L2=346410 | intercept=REGR_INTERCEPT(cost, age) L1=600000 L2=346410

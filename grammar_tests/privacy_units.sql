# note: Contribution limits per privacy unit, row-level privacy, and (epsilon, delta).
# note: claims: 4 groups/unit, 3 rows/group, at most 5 rows/unit, cost in [0, 1000];
# note: a COUNT's L1 is min(5, groups x 3), its L2 one full group of 3 rows plus one of 2.

# title: rows per unit cap does not bind on one group
SELECT COUNT(*), SUM(cost) FROM claims;
# result: [(888, 175806.0)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=1 rows/group=3 rows/unit=5 selection=public | COUNT(*) L1=3 L2=3 | SUM(cost) in [0, 1000] L1=3000 L2=3000

# title: rows per unit cap binds across groups
SELECT region, COUNT(*) AS n FROM claims GROUP BY region;
# result: [('east north central', 141), ('mid atlantic', 112), ('mountain', 85), ('new england', 56), ('pacific', 228), ('south atlantic', 131), ('west north central', 74), ('west south central', 61)]
# bounding: first_pairs_by_window (g=4)
# plan: laplace stats/unit=4 groups/unit=4 rows/group=3 rows/unit=5 selection=public | region | n=COUNT(*) L1=5 L2=3.60555

# title: rows per unit cap scales a SUM
SELECT region, SUM(cost) AS total FROM claims GROUP BY region;
# result: [('east north central', 29552.4), ('mid atlantic', 26792.1), ('mountain', 15975.5), ('new england', 10343.7), ('pacific', 41680.8), ('south atlantic', 24494.9), ('west north central', 15363.1), ('west south central', 11603.8)]
# bounding: first_pairs_by_window (g=4)
# plan: laplace stats/unit=4 groups/unit=4 rows/group=3 rows/unit=5 selection=public | region | total=SUM(cost) in [0, 1000] L1=5000 L2=3605.55

# title: distinct units count once per group
SELECT region, COUNT(DISTINCT patient_id) AS patients FROM claims GROUP BY region;
# result: [('east north central', 63), ('mid atlantic', 54), ('mountain', 41), ('new england', 23), ('pacific', 108), ('south atlantic', 57), ('west north central', 36), ('west south central', 30)]
# bounding: first_pairs_by_window (g=4)
# plan: laplace stats/unit=4 groups/unit=4 rows/group=3 rows/unit=5 selection=public | region | patients=COUNT(DISTINCT patient_id) L1=4 L2=2

# title: private key with a rows per unit cap
SELECT age, COUNT(*) FROM claims GROUP BY age;
# result: [(0, 15), (1, 3), (10, 3), (100, 4), (11, 9), (14, 8), (15, 1), (16, 5), (17, 10), (18, 6), (19, 11), (2, 1), (20, 7), (21, 9), (22, 5), (23, 10), (24, 9), (25, 9), (26, 9), (27, 6), (28, 16), (29, 2), (30, 10), (31, 20), (32, 16), (33, 11), (34, 13), (35, 8), (36, 20), (37, 11), (38, 20), (39, 17), (40, 21), (41, 9), (42, 15), (43, 19), (44, 20), (45, 16), (46, 12), (47, 15), (48, 3), (49, 19), (5, 4), (50, 15), (51, 8), (52, 12), (53, 12), (54, 10), (55, 16), (56, 19), (57, 17), (58, 11), (59, 14), (60, 17), (61, 11), (62, 11), (63, 13), (64, 14), (65, 13), (66, 11), (67, 13), (68, 9), (69, 14), (7, 12), (70, 16), (71, 12), (72, 15), (73, 7), (74, 5), (75, 9), (76, 8), (77, 6), (78, 8), (79, 9), (8, 2), (80, 14), (81, 5), (82, 9), (84, 4), (85, 3), (89, 4), (90, 1), (91, 3), (92, 6), (93, 1), (94, 2), (96, 3), (97, 4), (98, 3)]
# bounding: first_pairs_by_window (g=4)
# plan: laplace stats/unit=4 groups/unit=4 rows/group=3 rows/unit=5 selection=laplace_threshold | age | COUNT(*) L1=5 L2=3.60555

# title: row-level COUNT
SELECT COUNT(*) FROM people;
# result: [(1000,)]
# bounding: row_level
# plan: laplace stats/unit=1 groups/unit=1 rows/group=1 rows/unit=1 selection=public | COUNT(*) L1=1 L2=1

# title: row-level SUM and AVG
SELECT SUM(income), AVG(age) FROM people;
# result: [(34380100.0, 44.797)]
# bounding: row_level
# plan: laplace stats/unit=3 groups/unit=1 rows/group=1 rows/unit=1 selection=public | SUM(income) in [0, 500000] L1=500000 L2=500000 | AVG(age) in [0, 100] L1=50 L2=50

# title: row-level table with a WHERE clause
SELECT COUNT(*) FROM people WHERE age >= 65 AND married = 1;
# result: [(101,)]
# bounding: row_level
# plan: laplace stats/unit=1 groups/unit=1 rows/group=1 rows/unit=1 selection=public | COUNT(*) L1=1 L2=1

# title: delta 0 without group keys
# delta: 0
SELECT COUNT(*), AVG(cost) FROM visits;
# result: [(1056, 208.59)]
# bounding: all_pairs
# plan: laplace stats/unit=3 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4 | AVG(cost) in [0, 2000] L1=4000 L2=4000

# title: smaller epsilon keeps sensitivity
# epsilon: 0.1
SELECT COUNT(*) FROM visits;
# result: [(1056,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: many statistics under private keys
SELECT specialty, COUNT(*) AS n, SUM(cost) AS total, AVG(age) AS mean_age FROM visits GROUP BY specialty;
# result: [('allergy and immunology', 17, 4243.19, 46.5882), ('anesthesiology', 3, 685.43, 56.6667), ('cardiology', 46, 17557.6, 51.4565), ('cardiothoracic surgery', 2, 720.14, 36.0), ('colorectal surgery', 8, 3858.17, 60.125), ('dermatology', 49, 18544.1, 45.9796), ('emergency medicine', 181, 33523.3, 48.9613), ('endocrinology', 25, 10300.6, 51.0), ('gastroenterology', 21, 4253.76, 51.8571), ('general practice', 356, 42662.1, 47.5112), ('general surgery', 16, 3602.45, 46.5625), ('geriatrics', 11, 2260.42, 59.7273), ('gynecology', 43, 9096.51, 50.093), ('hematology', 12, 3995.45, 52.3333), ('hepatology', 14, 3933.5, 41.8571), ('hyperbaric medicine', 6, 2424.49, 64.1667), ('infectious disease', 15, 3759.68, 29.0), ('internal medicine', 94, 16833.5, 48.7872), ('medical genetics', 3, 349.79, 35.6667), ('neonatology', 1, 83.53, 27.0), ('nephrology', 15, 5309.72, 46.4667), ('neurology', 15, 1898.57, 47.4), ('neurosurgery', 9, 1046.46, 68.1111), ('nuclear medicine', 2, 1207.86, 42.0), ('obstetrics', 32, 5338.45, 40.75), ('occupational medicine', 8, 1576.53, 60.625), ('oncology', 21, 4546.0, 31.2857), ('ophthalmology', 27, 4402.37, 52.2222), ('orthopedics', 48, 10435.4, 43.9167), ('otolaryngology', 7, 1435.0, 58.5714), ('palliative care', 7, 4962.72, 58.5714), ('pediatric oncology', 4, 1333.48, 68.0), ('pediatrics', 70, 20981.0, 53.4), ('physical therapy', 15, 6852.15, 41.0667), ('plastic surgery', 2, 229.91, 48.0), ('podiatry', 2, 44.67, 60.0), ('psychiatry', 9, 2053.35, 45.5556), ('psychology', 17, 1725.77, 52.8235), ('pulmonology', 23, 3856.35, 51.9565), ('radiology', 25, 10263.5, 48.24), ('rheumatology', 9, 2807.12, 35.7778), ('sleep medicine', 6, 589.06, 50.3333), ('sports medicine', 9, 755.276, 37.3333), ('toxicology', 1, 64.5, 73.0), ('transplant surgery', 5, 554.88, 66.8), ('tropical medicine', 2, 351.96, 80.0), ('urology', 8, 3324.99, 53.375), ('vascular surgery', 2, 334.99, 3.5)]
# bounding: first_pairs_by_window (g=3)
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
# error: DeltaNeeded: group keys are private

# title: COUNT DISTINCT of a column named like a unit on a row-level table
SELECT COUNT(DISTINCT pid) FROM people;
# error: CatalogError: column `pid` is not in table 'people'

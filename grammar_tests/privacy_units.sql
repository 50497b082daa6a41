# note: Contribution limits per privacy unit, row-level privacy, and (epsilon, delta).
# note: claims: 4 groups/unit, 3 rows/group, at most 5 rows/unit, cost in [0, 1000];
# note: a COUNT's L1 is min(5, groups x 3), its L2 one full group of 3 rows plus one of 2.

# title: rows per unit cap does not bind on one group
SELECT COUNT(*), SUM(cost) FROM claims;
# result: [(888, 338955.0)]
# plan: laplace stats/unit=2 groups/unit=1 rows/group=3 rows/unit=5 selection=public | COUNT(*) L1=3 L2=3 | SUM(cost) in [0, 1000] L1=3000 L2=3000

# title: rows per unit cap binds across groups
SELECT region, COUNT(*) AS n FROM claims GROUP BY region;
# result: [('east north central', 141), ('mid atlantic', 112), ('mountain', 85), ('new england', 56), ('pacific', 228), ('south atlantic', 131), ('west north central', 74), ('west south central', 61)]
# plan: laplace stats/unit=4 groups/unit=4 rows/group=3 rows/unit=5 selection=public | region | n=COUNT(*) L1=5 L2=3.60555

# title: rows per unit cap scales a SUM
SELECT region, SUM(cost) AS total FROM claims GROUP BY region;
# result: [('east north central', 56351.4), ('mid atlantic', 47809.3), ('mountain', 31738.5), ('new england', 24776.3), ('pacific', 80214.3), ('south atlantic', 50309.3), ('west north central', 26105.3), ('west south central', 21650.4)]
# plan: laplace stats/unit=4 groups/unit=4 rows/group=3 rows/unit=5 selection=public | region | total=SUM(cost) in [0, 1000] L1=5000 L2=3605.55

# title: distinct units count once per group
SELECT region, COUNT(DISTINCT patient_id) AS patients FROM claims GROUP BY region;
# result: [('east north central', 63), ('mid atlantic', 54), ('mountain', 41), ('new england', 23), ('pacific', 108), ('south atlantic', 57), ('west north central', 36), ('west south central', 30)]
# plan: laplace stats/unit=4 groups/unit=4 rows/group=3 rows/unit=5 selection=public | region | patients=COUNT(DISTINCT patient_id) L1=4 L2=2

# title: private key with a rows per unit cap
SELECT age, COUNT(*) FROM claims GROUP BY age;
# result: [(0, 15), (1, 3), (10, 3), (100, 4), (11, 9), (14, 8), (15, 1), (16, 5), (17, 10), (18, 6), (19, 11), (2, 1), (20, 7), (21, 9), (22, 5), (23, 10), (24, 9), (25, 9), (26, 9), (27, 6), (28, 16), (29, 2), (30, 10), (31, 20), (32, 16), (33, 11), (34, 13), (35, 8), (36, 20), (37, 11), (38, 20), (39, 17), (40, 21), (41, 9), (42, 15), (43, 19), (44, 20), (45, 16), (46, 12), (47, 15), (48, 3), (49, 19), (5, 4), (50, 15), (51, 8), (52, 12), (53, 12), (54, 10), (55, 16), (56, 19), (57, 17), (58, 11), (59, 14), (60, 17), (61, 11), (62, 11), (63, 13), (64, 14), (65, 13), (66, 11), (67, 13), (68, 9), (69, 14), (7, 12), (70, 16), (71, 12), (72, 15), (73, 7), (74, 5), (75, 9), (76, 8), (77, 6), (78, 8), (79, 9), (8, 2), (80, 14), (81, 5), (82, 9), (84, 4), (85, 3), (89, 4), (90, 1), (91, 3), (92, 6), (93, 1), (94, 2), (96, 3), (97, 4), (98, 3)]
# plan: laplace stats/unit=4 groups/unit=4 rows/group=3 rows/unit=5 selection=truncated_geometric | age | COUNT(*) L1=5 L2=3.60555

# title: row-level COUNT
SELECT COUNT(*) FROM people;
# result: [(1000,)]
# plan: laplace stats/unit=1 groups/unit=1 rows/group=1 rows/unit=1 selection=public | COUNT(*) L1=1 L2=1

# title: row-level SUM and AVG
SELECT SUM(income), AVG(age) FROM people;
# result: [(34380100.0, 44.797)]
# plan: laplace stats/unit=3 groups/unit=1 rows/group=1 rows/unit=1 selection=public | SUM(income) in [0, 500000] L1=500000 L2=500000 | AVG(age) in [0, 100] L1=50 L2=50

# title: row-level table with a WHERE clause
SELECT COUNT(*) FROM people WHERE age >= 65 AND married = 1;
# result: [(101,)]
# plan: laplace stats/unit=1 groups/unit=1 rows/group=1 rows/unit=1 selection=public | COUNT(*) L1=1 L2=1

# title: delta 0 without group keys
# delta: 0
SELECT COUNT(*), AVG(cost) FROM visits;
# result: [(1056, 110.629)]
# plan: laplace stats/unit=3 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4 | AVG(cost) in [0, 2000] L1=4000 L2=4000

# title: smaller epsilon keeps sensitivity
# epsilon: 0.1
SELECT COUNT(*) FROM visits;
# result: [(1056,)]
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: many statistics under private keys
SELECT specialty, COUNT(*) AS n, SUM(cost) AS total, AVG(age) AS mean_age FROM visits GROUP BY specialty;
# result: [('allergy and immunology', 17, 11592.6, 49.8824), ('anesthesiology', 3, 685.43, 56.6667), ('cardiology', 42, 16588.5, 49.6429), ('cardiothoracic surgery', 2, 720.14, 36.0), ('colorectal surgery', 8, 3858.17, 60.125), ('dermatology', 49, 23570.1, 44.449), ('emergency medicine', 180, 50332.1, 50.4611), ('endocrinology', 26, 14813.0, 54.5385), ('gastroenterology', 21, 6298.89, 53.2857), ('general practice', 369, 54654.5, 47.7019), ('general surgery', 16, 7303.0, 40.0), ('geriatrics', 11, 2817.91, 66.2727), ('gynecology', 43, 13072.9, 46.5814), ('hematology', 12, 6534.65, 64.75), ('hepatology', 14, 6140.03, 38.0714), ('hyperbaric medicine', 6, 7775.42, 78.1667), ('infectious disease', 15, 6751.45, 22.0667), ('internal medicine', 88, 27262.0, 48.8409), ('medical genetics', 3, 349.79, 35.6667), ('neonatology', 1, 83.53, 27.0), ('nephrology', 15, 5309.72, 46.4667), ('neurology', 17, 1976.89, 51.0), ('neurosurgery', 9, 1046.46, 68.1111), ('nuclear medicine', 2, 1207.86, 42.0), ('obstetrics', 31, 9044.3, 38.6452), ('occupational medicine', 8, 1576.53, 60.625), ('oncology', 21, 6291.34, 28.5238), ('ophthalmology', 27, 6821.78, 56.2222), ('orthopedics', 46, 12460.3, 40.3913), ('otolaryngology', 3, 711.53, 48.6667), ('palliative care', 7, 11196.9, 83.7143), ('pediatric oncology', 4, 2000.22, 77.0), ('pediatrics', 72, 30373.5, 53.6944), ('physical therapy', 15, 7358.2, 39.7333), ('plastic surgery', 7, 5174.67, 23.1429), ('podiatry', 2, 44.67, 60.0), ('psychiatry', 9, 2053.35, 45.5556), ('psychology', 13, 1510.58, 47.5385), ('pulmonology', 19, 4358.63, 50.4737), ('radiology', 24, 12423.2, 48.625), ('rheumatology', 8, 2674.81, 30.5), ('sleep medicine', 6, 589.06, 50.3333), ('sports medicine', 9, 837.0, 36.6667), ('toxicology', 1, 64.5, 73.0), ('transplant surgery', 8, 843.64, 62.875), ('tropical medicine', 2, 351.96, 80.0), ('urology', 8, 4421.57, 51.125), ('vascular surgery', 2, 334.99, 3.5)]
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
# error: PrivacyError: group keys are private

# title: COUNT DISTINCT of a column named like a unit on a row-level table
SELECT COUNT(DISTINCT pid) FROM people;
# error: UnsupportedQueryError: column `pid` is not in table 'people'

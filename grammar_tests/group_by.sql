# note: GROUP BY: columns only, never the privacy unit. Private keys need DP partition
# note: selection (delta > 0), which adds the distinct-unit count as a statistic; public keys
# note: (declared with public_keys) need no selection and cap groups/unit at the domain size.

# title: private key needs partition selection
SELECT specialty, COUNT(*) AS n FROM visits GROUP BY specialty;
# result: [('allergy and immunology', 17), ('anesthesiology', 3), ('cardiology', 46), ('cardiothoracic surgery', 2), ('colorectal surgery', 8), ('dermatology', 49), ('emergency medicine', 181), ('endocrinology', 25), ('gastroenterology', 21), ('general practice', 356), ('general surgery', 16), ('geriatrics', 11), ('gynecology', 43), ('hematology', 12), ('hepatology', 14), ('hyperbaric medicine', 6), ('infectious disease', 15), ('internal medicine', 94), ('medical genetics', 3), ('neonatology', 1), ('nephrology', 15), ('neurology', 15), ('neurosurgery', 9), ('nuclear medicine', 2), ('obstetrics', 32), ('occupational medicine', 8), ('oncology', 21), ('ophthalmology', 27), ('orthopedics', 48), ('otolaryngology', 7), ('palliative care', 7), ('pediatric oncology', 4), ('pediatrics', 70), ('physical therapy', 15), ('plastic surgery', 2), ('podiatry', 2), ('psychiatry', 9), ('psychology', 17), ('pulmonology', 23), ('radiology', 25), ('rheumatology', 9), ('sleep medicine', 6), ('sports medicine', 9), ('toxicology', 1), ('transplant surgery', 5), ('tropical medicine', 2), ('urology', 8), ('vascular surgery', 2)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=truncated_geometric | specialty | n=COUNT(*) L1=12 L2=6.9282

# title: public key needs no partition selection
SELECT region, COUNT(*) AS n FROM visits GROUP BY region;
# result: [('east north central', 171), ('mid atlantic', 133), ('mountain', 101), ('new england', 68), ('pacific', 265), ('south atlantic', 158), ('west north central', 89), ('west south central', 71)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | n=COUNT(*) L1=12 L2=6.9282

# title: public key with delta 0 is pure epsilon-DP
# delta: 0
SELECT region, SUM(cost) FROM visits GROUP BY region;
# result: [('east north central', 39095.6), ('mid atlantic', 34476.6), ('mountain', 20340.3), ('new england', 13473.1), ('pacific', 49396.6), ('south atlantic', 29997.8), ('west north central', 19125.0), ('west south central', 14366.3)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | SUM(cost) in [0, 2000] L1=24000 L2=13856.4

# title: private key with delta 0 is refused
# delta: 0
SELECT specialty, COUNT(*) FROM visits GROUP BY specialty;
# error: DeltaNeeded: GROUP BY specialty: group keys are private, and releasing them needs delta > 0

# title: mixed public and private keys with delta 0 are refused
# delta: 0
SELECT region, specialty, COUNT(*) FROM visits GROUP BY region, specialty;
# error: DeltaNeeded: public_keys={"specialty": [...values...]}

# title: public and private keys together need selection
SELECT region, specialty, COUNT(*) FROM visits GROUP BY region, specialty;
# result: [('east north central', 'allergy and immunology', 5), ('east north central', 'cardiology', 9), ('east north central', 'colorectal surgery', 4), ('east north central', 'dermatology', 4), ('east north central', 'emergency medicine', 34), ('east north central', 'gastroenterology', 5), ('east north central', 'general practice', 50), ('east north central', 'general surgery', 9), ('east north central', 'gynecology', 7), ('east north central', 'hematology', 3), ('east north central', 'hepatology', 1), ('east north central', 'hyperbaric medicine', 4), ('east north central', 'infectious disease', 2), ('east north central', 'internal medicine', 9), ('east north central', 'nephrology', 5), ('east north central', 'neurology', 4), ('east north central', 'neurosurgery', 5), ('east north central', 'obstetrics', 6), ('east north central', 'occupational medicine', 3), ('east north central', 'oncology', 4), ('east north central', 'orthopedics', 10), ('east north central', 'otolaryngology', 1), ('east north central', 'palliative care', 4), ('east north central', 'pediatrics', 7), ('east north central', 'physical therapy', 3), ('east north central', 'psychiatry', 3), ('east north central', 'radiology', 11), ('east north central', 'sleep medicine', 1), ('east north central', 'sports medicine', 1), ('east north central', 'toxicology', 1), ('east north central', 'tropical medicine', 1), ('east north central', 'vascular surgery', 1), ('mid atlantic', 'anesthesiology', 2), ('mid atlantic', 'cardiology', 8), ('mid atlantic', 'cardiothoracic surgery', 1), ('mid atlantic', 'dermatology', 9), ('mid atlantic', 'emergency medicine', 23), ('mid atlantic', 'endocrinology', 2), ('mid atlantic', 'gastroenterology', 1), ('mid atlantic', 'general practice', 55), ('mid atlantic', 'gynecology', 1), ('mid atlantic', 'infectious disease', 8), ('mid atlantic', 'internal medicine', 10), ('mid atlantic', 'neurosurgery', 1), ('mid atlantic', 'obstetrics', 1), ('mid atlantic', 'ophthalmology', 7), ('mid atlantic', 'orthopedics', 12), ('mid atlantic', 'palliative care', 3), ('mid atlantic', 'pediatrics', 9), ('mid atlantic', 'physical therapy', 1), ('mid atlantic', 'pulmonology', 5), ('mid atlantic', 'radiology', 1), ('mid atlantic', 'rheumatology', 1), ('mid atlantic', 'urology', 1), ('mid atlantic', 'vascular surgery', 1), ('mountain', 'allergy and immunology', 4), ('mountain', 'cardiology', 7), ('mountain', 'dermatology', 5), ('mountain', 'emergency medicine', 17), ('mountain', 'gastroenterology', 2), ('mountain', 'general practice', 31), ('mountain', 'gynecology', 4), ('mountain', 'infectious disease', 1), ('mountain', 'internal medicine', 8), ('mountain', 'neonatology', 1), ('mountain', 'neurology', 2), ('mountain', 'obstetrics', 4), ('mountain', 'occupational medicine', 2), ('mountain', 'oncology', 1), ('mountain', 'ophthalmology', 7), ('mountain', 'orthopedics', 4), ('mountain', 'otolaryngology', 1), ('mountain', 'pediatrics', 10), ('mountain', 'physical therapy', 4), ('mountain', 'psychiatry', 1), ('mountain', 'radiology', 2), ('mountain', 'rheumatology', 2), ('mountain', 'sleep medicine', 4), ('mountain', 'sports medicine', 4), ('new england', 'cardiology', 4), ('new england', 'colorectal surgery', 1), ('new england', 'emergency medicine', 15), ('new england', 'general practice', 36), ('new england', 'gynecology', 2), ('new england', 'hematology', 4), ('new england', 'internal medicine', 13), ('new england', 'neurosurgery', 3), ('new england', 'orthopedics', 1), ('new england', 'pediatrics', 2), ('new england', 'pulmonology', 4), ('new england', 'radiology', 3), ('new england', 'transplant surgery', 4), ('new england', 'urology', 4), ('pacific', 'allergy and immunology', 4), ('pacific', 'anesthesiology', 1), ('pacific', 'cardiology', 6), ('pacific', 'dermatology', 24), ('pacific', 'emergency medicine', 42), ('pacific', 'endocrinology', 8), ('pacific', 'gastroenterology', 5), ('pacific', 'general practice', 90), ('pacific', 'general surgery', 4), ('pacific', 'geriatrics', 4), ('pacific', 'gynecology', 8), ('pacific', 'hematology', 4), ('pacific', 'internal medicine', 23), ('pacific', 'nephrology', 5), ('pacific', 'neurology', 10), ('pacific', 'nuclear medicine', 2), ('pacific', 'obstetrics', 16), ('pacific', 'occupational medicine', 2), ('pacific', 'oncology', 9), ('pacific', 'ophthalmology', 10), ('pacific', 'orthopedics', 9), ('pacific', 'otolaryngology', 4), ('pacific', 'pediatric oncology', 4), ('pacific', 'pediatrics', 12), ('pacific', 'physical therapy', 1), ('pacific', 'plastic surgery', 6), ('pacific', 'podiatry', 1), ('pacific', 'psychiatry', 1), ('pacific', 'psychology', 9), ('pacific', 'pulmonology', 3), ('pacific', 'radiology', 1), ('pacific', 'rheumatology', 1), ('pacific', 'sports medicine', 2), ('pacific', 'tropical medicine', 1), ('south atlantic', 'allergy and immunology', 4), ('south atlantic', 'cardiology', 5), ('south atlantic', 'dermatology', 4), ('south atlantic', 'emergency medicine', 37), ('south atlantic', 'endocrinology', 4), ('south atlantic', 'gastroenterology', 8), ('south atlantic', 'general practice', 46), ('south atlantic', 'geriatrics', 6), ('south atlantic', 'gynecology', 5), ('south atlantic', 'hepatology', 4), ('south atlantic', 'hyperbaric medicine', 2), ('south atlantic', 'infectious disease', 4), ('south atlantic', 'internal medicine', 15), ('south atlantic', 'medical genetics', 3), ('south atlantic', 'neonatology', 1), ('south atlantic', 'obstetrics', 7), ('south atlantic', 'occupational medicine', 1), ('south atlantic', 'oncology', 4), ('south atlantic', 'ophthalmology', 3), ('south atlantic', 'orthopedics', 4), ('south atlantic', 'pediatrics', 13), ('south atlantic', 'physical therapy', 1), ('south atlantic', 'psychiatry', 3), ('south atlantic', 'psychology', 1), ('south atlantic', 'pulmonology', 2), ('south atlantic', 'radiology', 5), ('south atlantic', 'rheumatology', 2), ('south atlantic', 'transplant surgery', 5), ('south atlantic', 'urology', 3), ('west north central', 'cardiology', 2), ('west north central', 'cardiothoracic surgery', 1), ('west north central', 'colorectal surgery', 3), ('west north central', 'dermatology', 3), ('west north central', 'emergency medicine', 10), ('west north central', 'general practice', 38), ('west north central', 'general surgery', 2), ('west north central', 'geriatrics', 1), ('west north central', 'gynecology', 9), ('west north central', 'hematology', 1), ('west north central', 'hepatology', 8), ('west north central', 'internal medicine', 5), ('west north central', 'obstetrics', 2), ('west north central', 'orthopedics', 2), ('west north central', 'otolaryngology', 1), ('west north central', 'pediatrics', 3), ('west north central', 'physical therapy', 5), ('west north central', 'podiatry', 1), ('west north central', 'psychiatry', 1), ('west north central', 'pulmonology', 5), ('west north central', 'radiology', 2), ('west south central', 'cardiology', 1), ('west south central', 'emergency medicine', 5), ('west south central', 'endocrinology', 11), ('west south central', 'general practice', 16), ('west south central', 'gynecology', 7), ('west south central', 'hepatology', 1), ('west south central', 'internal medicine', 7), ('west south central', 'nephrology', 5), ('west south central', 'oncology', 3), ('west south central', 'orthopedics', 3), ('west south central', 'pediatrics', 15), ('west south central', 'psychology', 3), ('west south central', 'rheumatology', 2), ('west south central', 'sleep medicine', 1), ('west south central', 'sports medicine', 2)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=truncated_geometric | region | specialty | COUNT(*) L1=12 L2=6.9282

# title: public domain of two values caps groups per unit
SELECT specialty, COUNT(*) FROM claims GROUP BY specialty;
# result: [('cardiology', 42), ('oncology', 17)]
# bounding: all_pairs
# plan: laplace stats/unit=2 groups/unit=2 rows/group=3 rows/unit=5 selection=public | specialty | COUNT(*) L1=5 L2=3.60555

# title: public keys read from a public table
SELECT region, COUNT(*) FROM claims GROUP BY region;
# result: [('east north central', 141), ('mid atlantic', 112), ('mountain', 85), ('new england', 56), ('pacific', 228), ('south atlantic', 131), ('west north central', 74), ('west south central', 61)]
# bounding: first_pairs_by_window (g=4)
# plan: laplace stats/unit=4 groups/unit=4 rows/group=3 rows/unit=5 selection=public | region | COUNT(*) L1=5 L2=3.60555

# title: two public keys multiply their domains
SELECT region, specialty, COUNT(*) FROM claims GROUP BY region, specialty;
# result: [('east north central', 'cardiology', 8), ('east north central', 'oncology', 3), ('mid atlantic', 'cardiology', 8), ('mid atlantic', 'oncology', 0), ('mountain', 'cardiology', 6), ('mountain', 'oncology', 1), ('new england', 'cardiology', 4), ('new england', 'oncology', 0), ('pacific', 'cardiology', 9), ('pacific', 'oncology', 7), ('south atlantic', 'cardiology', 4), ('south atlantic', 'oncology', 3), ('west north central', 'cardiology', 2), ('west north central', 'oncology', 0), ('west south central', 'cardiology', 1), ('west south central', 'oncology', 3)]
# bounding: first_pairs_by_window (g=4)
# plan: laplace stats/unit=4 groups/unit=4 rows/group=3 rows/unit=5 selection=public | region | specialty | COUNT(*) L1=5 L2=3.60555

# title: public key with the default one group per unit
SELECT sex, COUNT(*) FROM pums GROUP BY sex;
# result: [(0, 879), (1, 703)]
# bounding: first_pair (g=1, packed)
# plan: laplace stats/unit=1 groups/unit=1 rows/group=2 selection=public | sex | COUNT(*) L1=2 L2=2

# title: private key with the default one group per unit
SELECT educ, COUNT(*) FROM pums GROUP BY educ;
# result: [(1, 51), (10, 89), (11, 255), (12, 119), (13, 282), (14, 87), (15, 40), (16, 22), (2, 21), (3, 60), (4, 27), (5, 39), (6, 34), (7, 50), (8, 81), (9, 325)]
# bounding: first_pair (g=1, packed)
# plan: laplace stats/unit=1 groups/unit=1 rows/group=2 selection=laplace_threshold | educ | COUNT(*) L1=2 L2=2

# title: distinct-unit count shared with partition selection
SELECT educ, COUNT(DISTINCT pid) AS people, COUNT(*) AS rows FROM pums GROUP BY educ;
# result: [(1, 33, 51), (10, 60, 89), (11, 165, 255), (12, 76, 119), (13, 178, 282), (14, 54, 87), (15, 24, 40), (16, 13, 22), (2, 14, 21), (3, 38, 60), (4, 17, 27), (5, 24, 39), (6, 21, 34), (7, 31, 50), (8, 51, 81), (9, 201, 325)]
# bounding: first_pair (g=1, packed)
# plan: laplace stats/unit=2 groups/unit=1 rows/group=2 selection=laplace_threshold | educ | people=COUNT(DISTINCT pid) L1=1 L2=1 | rows=COUNT(*) L1=2 L2=2

# title: AVG under private keys
SELECT specialty, AVG(age) FROM visits GROUP BY specialty;
# result: [('allergy and immunology', 46.5882), ('anesthesiology', 56.6667), ('cardiology', 51.4565), ('cardiothoracic surgery', 36.0), ('colorectal surgery', 60.125), ('dermatology', 45.9796), ('emergency medicine', 48.9613), ('endocrinology', 51.0), ('gastroenterology', 51.8571), ('general practice', 47.5112), ('general surgery', 46.5625), ('geriatrics', 59.7273), ('gynecology', 50.093), ('hematology', 52.3333), ('hepatology', 41.8571), ('hyperbaric medicine', 64.1667), ('infectious disease', 29.0), ('internal medicine', 48.7872), ('medical genetics', 35.6667), ('neonatology', 27.0), ('nephrology', 46.4667), ('neurology', 47.4), ('neurosurgery', 68.1111), ('nuclear medicine', 42.0), ('obstetrics', 40.75), ('occupational medicine', 60.625), ('oncology', 31.2857), ('ophthalmology', 52.2222), ('orthopedics', 43.9167), ('otolaryngology', 58.5714), ('palliative care', 58.5714), ('pediatric oncology', 68.0), ('pediatrics', 53.4), ('physical therapy', 41.0667), ('plastic surgery', 48.0), ('podiatry', 60.0), ('psychiatry', 45.5556), ('psychology', 52.8235), ('pulmonology', 51.9565), ('radiology', 48.24), ('rheumatology', 35.7778), ('sleep medicine', 50.3333), ('sports medicine', 37.3333), ('toxicology', 73.0), ('transplant surgery', 66.8), ('tropical medicine', 80.0), ('urology', 53.375), ('vascular surgery', 3.5)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=6 groups/unit=3 rows/group=4 selection=truncated_geometric | specialty | AVG(age) in [0, 100] L1=600 L2=346.41

# title: private key on a row-level table
SELECT race, COUNT(*) FROM people GROUP BY race;
# result: [(1, 550), (2, 71), (3, 265), (4, 108), (5, 1), (6, 5)]
# bounding: row_level
# plan: laplace stats/unit=1 groups/unit=1 rows/group=1 rows/unit=1 selection=laplace_threshold | race | COUNT(*) L1=1 L2=1

# title: group key not in SELECT
SELECT COUNT(*) FROM visits GROUP BY region;
# result: [(101,), (133,), (158,), (171,), (265,), (68,), (71,), (89,)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | COUNT(*) L1=12 L2=6.9282

# title: group key after the aggregate
SELECT COUNT(*) AS n, region FROM visits GROUP BY region;
# result: [(101, 'mountain'), (133, 'mid atlantic'), (158, 'south atlantic'), (171, 'east north central'), (265, 'pacific'), (68, 'new england'), (71, 'west south central'), (89, 'west north central')]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | n=COUNT(*) L1=12 L2=6.9282 | region

# title: group key renamed in SELECT
SELECT region AS area, COUNT(*) FROM visits GROUP BY region;
# result: [('east north central', 171), ('mid atlantic', 133), ('mountain', 101), ('new england', 68), ('pacific', 265), ('south atlantic', 158), ('west north central', 89), ('west south central', 71)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | area | COUNT(*) L1=12 L2=6.9282

# title: group key inside an output expression
SELECT UPPER(region) AS area, COUNT(*) AS n FROM visits GROUP BY region;
# result: [('EAST NORTH CENTRAL', 171), ('MID ATLANTIC', 133), ('MOUNTAIN', 101), ('NEW ENGLAND', 68), ('PACIFIC', 265), ('SOUTH ATLANTIC', 158), ('WEST NORTH CENTRAL', 89), ('WEST SOUTH CENTRAL', 71)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | area | n=COUNT(*) L1=12 L2=6.9282

# title: GROUP BY the privacy unit
SELECT patient_id, COUNT(*) FROM visits GROUP BY patient_id;
# error: UnsupportedQueryError: use COUNT(DISTINCT patient_id) to count people instead

# title: GROUP BY the qualified privacy unit
SELECT COUNT(*) FROM pums p GROUP BY p.pid;
# error: UnsupportedQueryError: Grouping by pid would release one row per person

# title: GROUP BY an output alias
SELECT region AS area, COUNT(*) FROM visits GROUP BY area;
# result: [('east north central', 171), ('mid atlantic', 133), ('mountain', 101), ('new england', 68), ('pacific', 265), ('south atlantic', 158), ('west north central', 89), ('west south central', 71)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | area | COUNT(*) L1=12 L2=6.9282

# title: GROUP BY a name that is a column and an alias groups by the column, as in DuckDB
SELECT specialty AS region, COUNT(*) FROM visits GROUP BY region;
# error: UnsupportedQueryError: SELECT: `specialty` is not supported; allowed: group keys and aggregates

# note: ROLLUP, CUBE and GROUPING SETS: each grouping set is released as the query grouped by
# note: that set alone (its own bounding, noise and selection) at epsilon/k and a share of delta
# note: (docs/sql.md, GROUP BY; docs/mechanisms.md §14). `||` separates the sets in the plan and
# note: bounding lines; results list rolled-up keys as None.

# title: GROUP BY ROLLUP releases each grouping set, a rolled-up key as NULL
SELECT region, COUNT(*) AS n FROM visits GROUP BY ROLLUP (region);
# result: [('east north central', 171), ('mid atlantic', 133), ('mountain', 101), ('new england', 68), ('pacific', 265), ('south atlantic', 158), ('west north central', 89), ('west south central', 71), (None, 1056)]
# bounding: first_pairs_by_window (g=3) || all_pairs
# plan: sets=2 stats/unit=4 || (region) laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | n=COUNT(*) L1=12 L2=6.9282 || () laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | region | n=COUNT(*) L1=4 L2=4

# title: GROUP BY CUBE: every subset of the keys, each its own release
SELECT sex, married, COUNT(*) AS n FROM pums GROUP BY CUBE (sex, married);
# result: [(0, 0, 362), (0, 1, 517), (0, None, 879), (1, 0, 343), (1, 1, 360), (1, None, 703), (None, 0, 705), (None, 1, 877), (None, None, 1582)]
# bounding: first_pair (g=1, packed) || first_pair (g=1, packed) || first_pair (g=1, packed) || all_pairs
# plan: sets=4 stats/unit=4 || (sex, married) laplace stats/unit=1 groups/unit=1 rows/group=2 selection=laplace_threshold | sex | married | n=COUNT(*) L1=2 L2=2 || (sex) laplace stats/unit=1 groups/unit=1 rows/group=2 selection=public | sex | married | n=COUNT(*) L1=2 L2=2 || (married) laplace stats/unit=1 groups/unit=1 rows/group=2 selection=laplace_threshold | sex | married | n=COUNT(*) L1=2 L2=2 || () laplace stats/unit=1 groups/unit=1 rows/group=2 selection=public | sex | married | n=COUNT(*) L1=2 L2=2

# title: GROUP BY GROUPING SETS as listed, () the global total
SELECT sex, educ, COUNT(*) AS n FROM pums GROUP BY GROUPING SETS ((sex), (educ), ());
# result: [(0, None, 879), (1, None, 703), (None, 1, 51), (None, 10, 89), (None, 11, 255), (None, 12, 119), (None, 13, 282), (None, 14, 87), (None, 15, 40), (None, 16, 22), (None, 2, 21), (None, 3, 60), (None, 4, 27), (None, 5, 39), (None, 6, 34), (None, 7, 50), (None, 8, 81), (None, 9, 325), (None, None, 1582)]
# bounding: first_pair (g=1, packed) || first_pair (g=1, packed) || all_pairs
# plan: sets=3 stats/unit=3 || (sex) laplace stats/unit=1 groups/unit=1 rows/group=2 selection=public | sex | educ | n=COUNT(*) L1=2 L2=2 || (educ) laplace stats/unit=1 groups/unit=1 rows/group=2 selection=laplace_threshold | sex | educ | n=COUNT(*) L1=2 L2=2 || () laplace stats/unit=1 groups/unit=1 rows/group=2 selection=public | sex | educ | n=COUNT(*) L1=2 L2=2

# title: GROUPING() is the bit mask of the rolled-up keys
SELECT sex, married, COUNT(*) AS n, GROUPING(sex, married) AS rolled_up FROM pums GROUP BY ROLLUP (sex, married);
# result: [(0, 0, 362, 0), (0, 1, 517, 0), (0, None, 879, 1), (1, 0, 343, 0), (1, 1, 360, 0), (1, None, 703, 1), (None, None, 1582, 3)]
# bounding: first_pair (g=1, packed) || first_pair (g=1, packed) || all_pairs
# plan: sets=3 stats/unit=3 || (sex, married) laplace stats/unit=1 groups/unit=1 rows/group=2 selection=laplace_threshold | sex | married | n=COUNT(*) L1=2 L2=2 | rolled_up || (sex) laplace stats/unit=1 groups/unit=1 rows/group=2 selection=public | sex | married | n=COUNT(*) L1=2 L2=2 | rolled_up || () laplace stats/unit=1 groups/unit=1 rows/group=2 selection=public | sex | married | n=COUNT(*) L1=2 L2=2 | rolled_up

# title: HAVING filters each grouping set's rows
SELECT sex, AVG(age) AS age, GROUPING(sex) AS total FROM pums GROUP BY ROLLUP (sex) HAVING COUNT(*) > 800;
# result: [(0, 43.9772, 0), (None, 44.859, 1)]
# bounding: first_pair (g=1, packed)
# plan: sets=2 summed from (sex) stats/unit=3 || (sex) laplace stats/unit=3 groups/unit=1 rows/group=2 selection=public | sex | age=AVG(age) in [0, 100] L1=100 L2=100 | total | also COUNT(*)

# title: a key crossed with a ROLLUP
SELECT sex, married, COUNT(*) AS n FROM pums GROUP BY sex, ROLLUP (married);
# result: [(0, 0, 362), (0, 1, 517), (0, None, 879), (1, 0, 343), (1, 1, 360), (1, None, 703)]
# bounding: first_pair (g=1, packed) || first_pair (g=1, packed)
# plan: sets=2 stats/unit=2 || (sex, married) laplace stats/unit=1 groups/unit=1 rows/group=2 selection=laplace_threshold | sex | married | n=COUNT(*) L1=2 L2=2 || (sex) laplace stats/unit=1 groups/unit=1 rows/group=2 selection=public | sex | married | n=COUNT(*) L1=2 L2=2

# title: WITH ROLLUP is a ROLLUP of the listed keys
SELECT region, COUNT(*) AS n FROM visits GROUP BY region WITH ROLLUP;
# result: [('east north central', 171), ('mid atlantic', 133), ('mountain', 101), ('new england', 68), ('pacific', 265), ('south atlantic', 158), ('west north central', 89), ('west south central', 71), (None, 1056)]
# bounding: first_pairs_by_window (g=3) || all_pairs
# plan: sets=2 stats/unit=4 || (region) laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | n=COUNT(*) L1=12 L2=6.9282 || () laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | region | n=COUNT(*) L1=4 L2=4

# title: SUM by ROLLUP over a public key
SELECT sex, SUM(income) AS income FROM pums GROUP BY ROLLUP (sex);
# result: [(0, 40110400.0), (1, 17847300.0), (None, 57957700.0)]
# bounding: first_pair (g=1, packed)
# plan: sets=2 summed from (sex) stats/unit=1 || (sex) laplace stats/unit=1 groups/unit=1 rows/group=2 selection=public | sex | income=SUM(income) in [0, 500000] L1=1e+06 L2=1e+06

# note: The counts and sums of the sets over public keys are fitted by least squares so that
# note: they add up (docs/mechanisms.md §14), or, where that has the lower expected error, only
# note: the finest set is measured, at the whole epsilon, and every other set is a sum of its
# note: noisy cells (`sets=k summed from (set)` in the plan line, as in the two cases above);
# note: the exact answers below are each set's own.

# title: consistent_totals = FALSE releases each set as it was measured
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (consistent_totals = FALSE) region, COUNT(*) AS n FROM visits GROUP BY ROLLUP (region);
# result: [('east north central', 171), ('mid atlantic', 133), ('mountain', 101), ('new england', 68), ('pacific', 265), ('south atlantic', 158), ('west north central', 89), ('west south central', 71), (None, 1056)]
# bounding: first_pairs_by_window (g=3) || all_pairs
# plan: sets=2 stats/unit=4 || (region) laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | n=COUNT(*) L1=12 L2=6.9282 || () laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | region | n=COUNT(*) L1=4 L2=4

# title: consistent_totals takes TRUE or FALSE
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (consistent_totals = 'no') region, COUNT(*) AS n FROM visits GROUP BY ROLLUP (region);
# error: UnsupportedQueryError: consistent_totals

# title: consistent_totals without grouping sets is refused
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (consistent_totals = TRUE) region, COUNT(*) AS n FROM visits GROUP BY region;
# error: UnsupportedQueryError: an option of ROLLUP, CUBE and GROUPING SETS

# title: ORDER BY with grouping sets is refused
SELECT region, COUNT(*) FROM visits GROUP BY ROLLUP (region) ORDER BY region;
# error: UnsupportedQueryError: ORDER BY with grouping sets

# title: LIMIT with grouping sets is refused
SELECT region, COUNT(*) FROM visits GROUP BY ROLLUP (region) LIMIT 3;
# error: UnsupportedQueryError: LIMIT with grouping sets

# title: a grouping set listed twice is refused
SELECT region, COUNT(*) FROM visits GROUP BY GROUPING SETS ((region), (region));
# error: UnsupportedQueryError: each grouping set once

# title: a key and a ROLLUP that repeat a set are refused
SELECT region, COUNT(*) FROM visits GROUP BY region, ROLLUP (region);
# error: UnsupportedQueryError: The set (region) comes twice

# title: more than 16 grouping sets are refused
SELECT region, COUNT(*) FROM visits GROUP BY CUBE (region, specialty, age, cost, sex);
# error: UnsupportedQueryError: at most 16 grouping sets

# title: an expression in ROLLUP is refused
SELECT COUNT(*) FROM visits GROUP BY ROLLUP (UPPER(region));
# error: UnsupportedQueryError: Nested ROLLUP/CUBE, expressions and positions are not supported yet

# title: ROLLUP nested in GROUPING SETS is refused
SELECT region, COUNT(*) FROM visits GROUP BY GROUPING SETS (ROLLUP (region));
# error: UnsupportedQueryError: Nested ROLLUP/CUBE

# title: ROLLUP of the privacy unit is refused
SELECT COUNT(*) FROM visits GROUP BY ROLLUP (patient_id);
# error: UnsupportedQueryError: use COUNT(DISTINCT patient_id) to count people instead

# title: GROUPING of a column that is not a key is refused
SELECT region, GROUPING(specialty) AS g, COUNT(*) FROM visits GROUP BY ROLLUP (region);
# error: UnsupportedQueryError: GROUPING(): `specialty` is not supported; allowed: the query's GROUP BY columns

# title: GROUPING without grouping sets is refused
SELECT region, GROUPING(region) AS g, COUNT(*) FROM visits GROUP BY region;
# error: UnsupportedQueryError: `GROUPING(region)` is not supported

# title: GROUP BY ALL
SELECT region, COUNT(*) FROM visits GROUP BY ALL;
# error: UnsupportedQueryError

# title: the same key twice
SELECT region, COUNT(*) FROM visits GROUP BY region, visits.region;
# error: UnsupportedQueryError: each column once

# title: unknown group key
SELECT ward, COUNT(*) FROM visits GROUP BY ward;
# error: CatalogError: column `ward` is not in table 'visits'

# title: column neither grouped nor aggregated
SELECT region, specialty, COUNT(*) FROM visits GROUP BY region;
# error: UnsupportedQueryError: aggregate it (e.g. AVG(specialty)) or add it to GROUP BY

# title: group keys without an aggregate
SELECT region FROM visits GROUP BY region;
# error: UnsupportedQueryError: Private rows cannot be listed

# title: private keys alone are released by truncated-geometric partition selection
SELECT specialty FROM visits GROUP BY specialty;
# result: [('allergy and immunology',), ('anesthesiology',), ('cardiology',), ('cardiothoracic surgery',), ('colorectal surgery',), ('dermatology',), ('emergency medicine',), ('endocrinology',), ('gastroenterology',), ('general practice',), ('general surgery',), ('geriatrics',), ('gynecology',), ('hematology',), ('hepatology',), ('hyperbaric medicine',), ('infectious disease',), ('internal medicine',), ('medical genetics',), ('neonatology',), ('nephrology',), ('neurology',), ('neurosurgery',), ('nuclear medicine',), ('obstetrics',), ('occupational medicine',), ('oncology',), ('ophthalmology',), ('orthopedics',), ('otolaryngology',), ('palliative care',), ('pediatric oncology',), ('pediatrics',), ('physical therapy',), ('plastic surgery',), ('podiatry',), ('psychiatry',), ('psychology',), ('pulmonology',), ('radiology',), ('rheumatology',), ('sleep medicine',), ('sports medicine',), ('toxicology',), ('transplant surgery',), ('tropical medicine',), ('urology',), ('vascular surgery',)]
# bounding: first_pairs_by_window (g=3)
# plan: truncated_geometric stats/unit=3 groups/unit=3 rows/group=4 selection=truncated_geometric | specialty

# title: public keys alone release nothing private and are refused
SELECT region FROM visits GROUP BY region;
# error: UnsupportedQueryError: at least one aggregate, or private GROUP BY keys alone

# title: private keys alone need delta
# delta: 0
SELECT specialty FROM visits GROUP BY specialty;
# error: DeltaNeeded: needs delta > 0

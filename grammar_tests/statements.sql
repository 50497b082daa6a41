# note: Statement shape: one SELECT over one registered private table.

# title: COUNT(*) over the whole table
SELECT COUNT(*) FROM visits;
# result: [(1056,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: keywords and names in any letter case
select Count(*) As n From VISITS Where Age > 30;
# result: [(839,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | n=COUNT(*) L1=4 L2=4

# title: quoted identifiers
SELECT "region", COUNT(*) AS "n" FROM "visits" GROUP BY "region";
# result: [('east north central', 171), ('mid atlantic', 133), ('mountain', 101), ('new england', 68), ('pacific', 265), ('south atlantic', 158), ('west north central', 89), ('west south central', 71)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | n=COUNT(*) L1=12 L2=6.9282

# title: quoted output alias with a space
SELECT COUNT(*) AS "number of visits" FROM visits;
# result: [(1056,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | number of visits=COUNT(*) L1=4 L2=4

# title: table alias qualifies columns
SELECT v.region, COUNT(*) FROM visits v GROUP BY v.region;
# result: [('east north central', 171), ('mid atlantic', 133), ('mountain', 101), ('new england', 68), ('pacific', 265), ('south atlantic', 158), ('west north central', 89), ('west south central', 71)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | COUNT(*) L1=12 L2=6.9282

# title: table alias with AS in WHERE
SELECT COUNT(*) FROM visits AS v WHERE v.cost > 100;
# result: [(764,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: alias qualifier is case-insensitive
SELECT COUNT(*) FROM visits v WHERE V.age > 3;
# result: [(1034,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: columns qualified by the table name
SELECT visits.region, SUM(visits.cost) AS total FROM visits GROUP BY visits.region;
# result: [('east north central', 39095.6), ('mid atlantic', 34476.6), ('mountain', 20340.3), ('new england', 13473.1), ('pacific', 49396.6), ('south atlantic', 29997.8), ('west north central', 19125.0), ('west south central', 14366.3)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=public | region | total=SUM(cost) in [0, 2000] L1=24000 L2=13856.4

# title: quoted qualified column
SELECT COUNT(*) FROM "visits" WHERE "visits"."age" >= 18;
# result: [(971,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | COUNT(*) L1=4 L2=4

# title: comments and a query over several lines
SELECT specialty,   -- a private key
       COUNT(*) AS n /* rows */
FROM visits
WHERE cost > 0
GROUP BY specialty;
# result: [('allergy and immunology', 17), ('anesthesiology', 3), ('cardiology', 46), ('cardiothoracic surgery', 2), ('colorectal surgery', 8), ('dermatology', 49), ('emergency medicine', 181), ('endocrinology', 25), ('gastroenterology', 21), ('general practice', 356), ('general surgery', 16), ('geriatrics', 11), ('gynecology', 43), ('hematology', 12), ('hepatology', 14), ('hyperbaric medicine', 6), ('infectious disease', 15), ('internal medicine', 94), ('medical genetics', 3), ('neonatology', 1), ('nephrology', 15), ('neurology', 15), ('neurosurgery', 9), ('nuclear medicine', 2), ('obstetrics', 32), ('occupational medicine', 8), ('oncology', 21), ('ophthalmology', 27), ('orthopedics', 48), ('otolaryngology', 7), ('palliative care', 7), ('pediatric oncology', 4), ('pediatrics', 70), ('physical therapy', 15), ('plastic surgery', 2), ('podiatry', 2), ('psychiatry', 9), ('psychology', 17), ('pulmonology', 23), ('radiology', 25), ('rheumatology', 9), ('sleep medicine', 6), ('sports medicine', 9), ('toxicology', 1), ('transplant surgery', 5), ('tropical medicine', 2), ('urology', 8), ('vascular surgery', 2)]
# bounding: first_pairs_by_window (g=3)
# plan: laplace stats/unit=3 groups/unit=3 rows/group=4 selection=truncated_geometric | specialty | n=COUNT(*) L1=12 L2=6.9282

# title: DELETE is refused
DELETE FROM visits;
# error: UnsupportedQueryError: DELETE statements are not supported

# title: INSERT is refused
INSERT INTO visits VALUES (1, 'x', 30, 10.0, '2021-01-01', 'pacific');
# error: UnsupportedQueryError: INSERT statements are not supported

# title: UPDATE is refused
UPDATE visits SET cost = 0;
# error: UnsupportedQueryError: UPDATE statements are not supported

# title: CREATE TABLE AS is refused
CREATE TABLE copy AS SELECT * FROM visits;
# error: UnsupportedQueryError: CREATE statements are not supported

# title: DROP TABLE is refused
DROP TABLE visits;
# error: UnsupportedQueryError: DROP statements are not supported

# title: COPY to a file is refused
COPY visits TO 'visits.csv';
# error: UnsupportedQueryError: COPY statements are not supported

# title: ATTACH is refused
ATTACH 'other.duckdb';
# error: UnsupportedQueryError: ATTACH statements are not supported

# title: PRAGMA is refused
PRAGMA table_info('visits');
# error: UnsupportedQueryError: PRAGMA statements are not supported

# title: SET is refused
SET threads = 1;
# error: UnsupportedQueryError: SET statements are not supported

# title: two statements in one call
SELECT COUNT(*) FROM visits; SELECT COUNT(*) FROM pums;
# error: ParseError: expected one SQL statement, got 2

# title: misspelt keyword is a parse error
SELEC COUNT(*) FROM visits;
# error: ParseError: cannot parse the query: `SELEC` (line 1, column 1) does not start a statement: did you mean SELECT?

# title: misspelt clause keyword is named
SELECT region, COUNT(*) FROM visits GRUOP BY region;
# error: ParseError: `GRUOP` (line 1, column 37) is not a keyword here: did you mean GROUP?

# title: misspelt FROM is named
SELECT COUNT(*) FORM visits;
# error: ParseError: `FORM` (line 1, column 17) is not a keyword here: did you mean FROM?

# title: backtick quotes are not DuckDB syntax
SELECT `region`, COUNT(*) FROM visits GROUP BY `region`;
# error: ParseError

# title: UNION of rows is refused
SELECT age FROM pums UNION ALL SELECT age FROM pums;
# error: UnsupportedQueryError: Run each SELECT as its own query

# title: UNION of private rows and a release is refused
SELECT age FROM pums UNION ALL SELECT COUNT(*) FROM pums;
# error: UnsupportedQueryError: private rows beside releases

# title: INTERSECT of rows is refused
SELECT age FROM visits INTERSECT SELECT age FROM visits;
# error: UnsupportedQueryError: set operation

# title: EXCEPT of rows is refused
SELECT age FROM visits EXCEPT SELECT age FROM visits;
# error: UnsupportedQueryError: set operation

# title: comma join is refused
SELECT COUNT(*) FROM visits, pums;
# error: UnsupportedQueryError: JOIN

# title: CROSS JOIN is refused
SELECT COUNT(*) FROM visits CROSS JOIN regions;
# error: UnsupportedQueryError: JOIN

# title: read_csv table function is refused
SELECT COUNT(*) FROM read_csv('datasets/PUMS.csv');
# error: UnsupportedQueryError: register the file with con.register

# title: read_parquet table function is refused
SELECT COUNT(*) FROM read_parquet('visits.parquet');
# error: UnsupportedQueryError: File-reading and other table functions cannot be queried

# title: schema-qualified table is refused
SELECT COUNT(*) FROM main.visits;
# error: UnsupportedQueryError: a table registered with dpsql

# title: a file path in FROM is not a registered table
SELECT COUNT(*) FROM 'datasets/PUMS.csv';
# error: UnsupportedQueryError: register it first

# title: unknown table
SELECT COUNT(*) FROM doctors;
# error: CatalogError: table 'doctors' is not registered with dpsql

# title: public table cannot be queried
SELECT COUNT(*) FROM regions;
# error: UnsupportedQueryError: 'regions' is a public table

# title: SELECT without FROM
SELECT 1;
# error: UnsupportedQueryError: SELECT without FROM

# title: SELECT star
SELECT * FROM visits;
# error: UnsupportedQueryError: Private rows cannot be released

# title: SELECT DISTINCT
SELECT DISTINCT region FROM visits;
# error: UnsupportedQueryError: SELECT DISTINCT

# title: unknown column
SELECT COUNT(diagnosis) FROM visits;
# error: CatalogError: column `diagnosis` is not in table 'visits'

# title: qualifier that is not in FROM
SELECT p.region, COUNT(*) FROM visits v GROUP BY p.region;
# error: UnsupportedQueryError: 'p' is not a table in FROM

# title: QUALIFY without a window function
SELECT region, COUNT(*) AS n FROM visits GROUP BY region QUALIFY n > 1;
# error: UnsupportedQueryError: Without a window function, filter with HAVING

# title: window function over private rows is refused
SELECT COUNT(*) OVER (PARTITION BY region) FROM visits;
# error: UnsupportedQueryError: A window function runs after the noise, on released values only

# title: TABLESAMPLE on the private table is refused
SELECT COUNT(*) FROM visits TABLESAMPLE 10%;
# error: UnsupportedQueryError: TABLESAMPLE

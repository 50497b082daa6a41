# note: Bounded work per row (dpsql/expr/size.py): every text value has a most characters and
# note: every row a most steps, decided from the catalog before any data is read. The text
# note: columns here have the default width, 1024 characters (WorkLimits.default_text_length),
# note: and every value is cut to it when read; WorkLimits allows 65,536 characters per value
# note: and 262,144 steps per row.

# title: a text function and a search within the bounds
SELECT COUNT(*) AS n FROM visits WHERE lower(specialty) LIKE '%card%';
# result: [(48,)]
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | n=COUNT(*) L1=4 L2=4

# title: one replace that grows a text tenfold
SELECT COUNT(*) AS n FROM visits WHERE length(replace(specialty, 'o', 'oooooooooo')) > 20;
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | n=COUNT(*) L1=4 L2=4

# title: replace nested until a text may outgrow max_text_value
SELECT COUNT(*) FROM visits WHERE length(replace(replace(replace(lower(specialty), 'a', 'aaaaaaaaaa'), 'a', 'aaaaaaaaaa'), 'a', 'aaaaaaaaaa')) > 0;
# error: UnsupportedQueryError: may build a text of up to

# title: the analyst's amplifier inside a CASE arm that one person's row reaches
SELECT COUNT(*) FROM visits WHERE CASE WHEN patient_id = 7 AND specialty = 'oncology' THEN length(replace(replace(replace(replace(replace(replace(replace(replace(lower(specialty), 'a', 'aaaaaaaaaa'), 'a', 'aaaaaaaaaa'), 'a', 'aaaaaaaaaa'), 'a', 'aaaaaaaaaa'), 'a', 'aaaaaaaaaa'), 'a', 'aaaaaaaaaa'), 'a', 'aaaaaaaaaa'), 'a', 'aaaaaaaaaa')) > -1 ELSE FALSE END;
# error: UnsupportedQueryError: may build a text of up to

# title: concatenation adds the widths
SELECT COUNT(*) AS n FROM visits WHERE length(specialty || region || specialty) > 30;
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | n=COUNT(*) L1=4 L2=4

# title: a LIKE pattern with several wildcards costs text × pattern steps
SELECT COUNT(*) AS n FROM visits WHERE specialty LIKE '%a%o%o%y%';
# bounding: all_pairs
# plan: laplace stats/unit=1 groups/unit=1 rows/group=4 selection=public | n=COUNT(*) L1=4 L2=4

# title: many searches of one text add up past max_row_work
SELECT COUNT(*) FROM visits WHERE specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%' OR specialty LIKE '%cardiologycardiology%';
# error: UnsupportedQueryError: steps on one row

# title: the work of a subquery's expressions counts too
SELECT COUNT(*) FROM (SELECT patient_id, lower(specialty) || lower(specialty) || lower(specialty) || lower(specialty) AS s FROM visits) AS v WHERE s LIKE '%a%' OR s LIKE '%b%' OR s LIKE '%c%' OR s LIKE '%d%' OR s LIKE '%e%' OR s LIKE '%f%' OR s LIKE '%g%' OR s LIKE '%h%' OR s LIKE '%i%' OR s LIKE '%j%' OR s LIKE '%k%' OR s LIKE '%l%' OR s LIKE '%m%' OR s LIKE '%n%' OR s LIKE '%o%' OR s LIKE '%p%' OR s LIKE '%q%' OR s LIKE '%r%' OR s LIKE '%s%' OR s LIKE '%t%' OR s LIKE '%u%' OR s LIKE '%v%' OR s LIKE '%w%' OR s LIKE '%x%' OR s LIKE '%y%' OR s LIKE '%z%';
# error: UnsupportedQueryError: steps on one row

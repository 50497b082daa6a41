-- SELECT COUNT(*), AVG(x) FROM t
-- bounding: all_pairs: no unit can be in more groups than the limit: every (unit, group) pair is kept
SELECT
  CAST(COALESCE(SUM(__dp_s0), 0) AS BIGINT) AS __dp_s0,
  CAST(COALESCE(SUM(__dp_s1), 0) AS BIGINT) AS __dp_s1,
  CAST(COALESCE(SUM(__dp_s2), 0) AS DOUBLE) AS __dp_s2
FROM (
  SELECT
    __dp_unit,
    LEAST(GREATEST(COUNT(*), 0), 3) AS __dp_s0,
    LEAST(GREATEST(COUNT(__dp_v0), 0), 3) AS __dp_s1,
    CAST(LEAST(
      GREATEST(
        2 * CASE
          WHEN COUNT(__dp_v0) <= 3
          THEN COALESCE(SUM(__dp_v0), 0)
          ELSE CAST(ROUND(CAST(COALESCE(SUM(__dp_v0), 0) AS DOUBLE) * 3 / COUNT(__dp_v0)) AS BIGINT)
        END - 1342177280 * CASE
          WHEN COUNT(__dp_v0) IS NULL OR 3 IS NULL
          THEN NULL
          ELSE LEAST(COUNT(__dp_v0), 3)
        END,
        -4026531840
      ),
      4026531840
    ) AS BIGINT) AS __dp_s2
  FROM (
    SELECT
      pid AS __dp_unit,
      CASE
        WHEN x IS NULL OR ISNAN(x)
        THEN NULL
        ELSE CAST(ROUND(LEAST(GREATEST(CAST(x AS DOUBLE) / 7.450580596923828e-09, 0), 1342177280)) AS BIGINT)
      END AS __dp_v0
    FROM t
    WHERE
      NOT pid IS NULL
  ) AS __dp_r
  GROUP BY
    __dp_unit
) AS __dp_b

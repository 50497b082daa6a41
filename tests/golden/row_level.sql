-- SELECT k, SUM(x), COUNT(*) FROM rows GROUP BY k
-- bounding: row_level: every row is its own privacy unit: clamp its values and aggregate per group
SELECT
  k,
  CAST(COUNT(*) AS BIGINT) AS __dp_s0,
  CAST(COALESCE(
    SUM(
      CASE
        WHEN x IS NULL OR ISNAN(x)
        THEN NULL
        ELSE CAST(ROUND(LEAST(GREATEST(CAST(x AS DOUBLE) / 7.450580596923828e-09, 0), 1342177280)) AS BIGINT)
      END
    ),
    0
  ) AS DOUBLE) AS __dp_s1,
  CAST(COUNT(*) AS BIGINT) AS __dp_s2
FROM rows
GROUP BY
  k

-- SELECT region, COUNT(*), SUM(x) FROM t GROUP BY region
-- bounding: all_pairs: no unit can be in more groups than the limit: every (unit, group) pair is kept
SELECT
  region,
  CAST(COALESCE(SUM(__dp_s0), 0) AS BIGINT) AS __dp_s0,
  CAST(COALESCE(SUM(__dp_s1), 0) AS DOUBLE) AS __dp_s1
FROM (
  SELECT
    __dp_unit,
    region,
    __dp_s0,
    __dp_s1
  FROM (
    SELECT
      __dp_unit,
      region,
      LEAST(GREATEST(COUNT(*), 0), 3) AS __dp_s0,
      CAST(LEAST(
        GREATEST(
          CASE
            WHEN COUNT(__dp_v0) <= 3
            THEN COALESCE(SUM(__dp_v0), 0)
            ELSE CAST(ROUND(CAST(COALESCE(SUM(__dp_v0), 0) AS DOUBLE) * 3 / COUNT(__dp_v0)) AS BIGINT)
          END,
          0
        ),
        4026531840
      ) AS BIGINT) AS __dp_s1
    FROM (
      SELECT
        pid AS __dp_unit,
        region,
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
      __dp_unit,
      region
  ) AS __dp_a
  WHERE
    region IN (
      SELECT
        v
      FROM (VALUES
        ('east'),
        ('west')) AS __dp_d(v)
    )
) AS __dp_b
GROUP BY
  region

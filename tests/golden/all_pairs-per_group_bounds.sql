-- SELECT region, SUM(x, contribution_bounds_per_group => (0, 20)) FROM t GROUP BY region
-- bounding: all_pairs: no unit can be in more groups than the limit: every (unit, group) pair is kept
SELECT
  region,
  CAST(COALESCE(SUM(__dp_s0), 0) AS DOUBLE) AS __dp_s0
FROM (
  SELECT
    __dp_unit,
    region,
    __dp_s0
  FROM (
    SELECT
      __dp_unit,
      region,
      CASE
        WHEN COUNT(__dp_v0) = 0
        THEN 0
        ELSE CAST(LEAST(GREATEST(ROUND(SUM(__dp_v0) / 1.4901161193847656e-08), 0), 1342177280) AS BIGINT)
      END AS __dp_s0
    FROM (
      SELECT
        pid AS __dp_unit,
        region,
        CAST(CASE WHEN x IS NULL OR ISNAN(x) THEN NULL ELSE LEAST(GREATEST(x, 0), 10) END AS DOUBLE) AS __dp_v0
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

-- SELECT region, MEDIAN(x) FROM t GROUP BY region
-- bounding: all_pairs: no unit can be in more groups than the limit: every (unit, group) pair is kept
WITH __dp_kept AS (
  SELECT
    __dp_unit,
    region,
    __dp_h0_values
  FROM (
    SELECT
      __dp_unit,
      region,
      COUNT(__dp_h0_present) AS __dp_h0_values
    FROM (
      SELECT
        pid AS __dp_unit,
        region,
        CASE WHEN x IS NULL OR ISNAN(x) THEN NULL ELSE 1 END AS __dp_h0_present
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
)
SELECT
  __dp_s.*,
  __dp_h0_t.__dp_h0
FROM (
  SELECT
    region
  FROM (
    SELECT
      *
    FROM __dp_kept
  ) AS __dp_b
  GROUP BY
    region
) AS __dp_s
LEFT JOIN (
  SELECT
    region,
    ARRAY_AGG({'b': __dp_bucket, 'w': __dp_w}) FILTER(WHERE
      NOT __dp_bucket IS NULL) AS __dp_h0
  FROM (
    SELECT
      __dp_q.region AS region,
      __dp_q.__dp_bucket AS __dp_bucket,
      CAST(SUM(
        CASE
          WHEN 1048576 IS NULL
          OR (
            3145728 // CASE
              WHEN __dp_v.__dp_h0_values IS NULL OR 1 IS NULL
              THEN NULL
              ELSE GREATEST(__dp_v.__dp_h0_values, 1)
            END
          ) IS NULL
          THEN NULL
          ELSE LEAST(
            1048576,
            3145728 // CASE
              WHEN __dp_v.__dp_h0_values IS NULL OR 1 IS NULL
              THEN NULL
              ELSE GREATEST(__dp_v.__dp_h0_values, 1)
            END
          )
        END
      ) AS BIGINT) AS __dp_w
    FROM (
      SELECT
        *
      FROM (
        SELECT
          pid AS __dp_unit,
          region,
          CASE
            WHEN x IS NULL OR ISNAN(x)
            THEN NULL
            ELSE CAST(FLOOR(LEAST(GREATEST((
              CAST(x AS DOUBLE) - 0
            ) * 102.4, 0), 1023)) AS BIGINT)
          END AS __dp_bucket
        FROM t
        WHERE
          NOT pid IS NULL
      ) AS __dp_hr
    ) AS __dp_q
    INNER JOIN __dp_kept AS __dp_v
      ON __dp_q.__dp_unit = __dp_v.__dp_unit
      AND __dp_q.region IS NOT DISTINCT FROM __dp_v.region
    GROUP BY
      __dp_q.region,
      __dp_q.__dp_bucket
  ) AS __dp_hw
  GROUP BY
    region
) AS __dp_h0_t
  ON __dp_s.region IS NOT DISTINCT FROM __dp_h0_t.region

-- SELECT MEDIAN(x), SUM(x) FROM t
-- bounding: all_pairs (in_rows, compute_once): no unit can be in more groups than the limit: every (unit, group) pair is kept
WITH __dp_kept AS (
  SELECT
    __dp_unit,
    CAST(LEAST(
      GREATEST(
        CASE
          WHEN COUNT(__dp_v0) <= 3
          THEN COALESCE(
            (
              CAST(SUM(CAST(__dp_v0 AS BIGINT) & 65535) AS DECIMAL(38, 0)) + CAST(SUM(SHIFTRIGHT(CAST(__dp_v0 AS BIGINT), 16)) AS DECIMAL(38, 0)) * 65536
            ),
            0
          )
          ELSE CAST(ROUND(
            CAST(COALESCE(
              (
                CAST(SUM(CAST(__dp_v0 AS BIGINT) & 65535) AS DECIMAL(38, 0)) + CAST(SUM(SHIFTRIGHT(CAST(__dp_v0 AS BIGINT), 16)) AS DECIMAL(38, 0)) * 65536
              ),
              0
            ) AS DOUBLE) * 3 / COUNT(__dp_v0)
          ) AS BIGINT)
        END,
        0
      ),
      4026531840
    ) AS BIGINT) AS __dp_s0,
    COUNT(__dp_h0_present) AS __dp_h0_values
  FROM (
    SELECT
      pid AS __dp_unit,
      CASE
        WHEN x IS NULL OR ISNAN(x)
        THEN NULL
        ELSE CAST(CAST(LEAST(GREATEST(CAST(x AS DOUBLE) / 7.450580596923828e-09, 0), 1342177280) AS BIGINT) + CASE
          WHEN ABS(
            LEAST(GREATEST(CAST(x AS DOUBLE) / 7.450580596923828e-09, 0), 1342177280) - CAST(LEAST(GREATEST(CAST(x AS DOUBLE) / 7.450580596923828e-09, 0), 1342177280) AS BIGINT)
          ) >= 0.5
          THEN SIGN(LEAST(GREATEST(CAST(x AS DOUBLE) / 7.450580596923828e-09, 0), 1342177280))
          ELSE 0
        END AS BIGINT)
      END AS __dp_v0,
      CASE WHEN x IS NULL OR ISNAN(x) THEN NULL ELSE 1 END AS __dp_h0_present
    FROM t
    WHERE
      NOT pid IS NULL
  ) AS __dp_r
  GROUP BY
    __dp_unit
)
SELECT
  __dp_s.*,
  __dp_h0_t.__dp_h0
FROM (
  SELECT
    CAST(COALESCE(
      (
        CAST(SUM(CAST(__dp_s0 AS BIGINT) & 65535) AS DECIMAL(38, 0)) + CAST(SUM(SHIFTRIGHT(CAST(__dp_s0 AS BIGINT), 16)) AS DECIMAL(38, 0)) * 65536
      ),
      0
    ) AS DOUBLE) AS __dp_s0
  FROM (
    SELECT
      *
    FROM __dp_kept
  ) AS __dp_b
) AS __dp_s
LEFT JOIN (
  SELECT
    COLLECT_LIST(STRUCT(__dp_bucket AS b, __dp_w AS w)) FILTER(WHERE
      NOT __dp_bucket IS NULL) AS __dp_h0
  FROM (
    SELECT
      __dp_q.__dp_bucket AS __dp_bucket,
      CAST((
        CAST(SUM(
          CAST(LEAST(1048576, 3145728 DIV GREATEST(__dp_q.__dp_h0_values, 1)) AS BIGINT) & 65535
        ) AS DECIMAL(38, 0)) + CAST(SUM(
          SHIFTRIGHT(CAST(LEAST(1048576, 3145728 DIV GREATEST(__dp_q.__dp_h0_values, 1)) AS BIGINT), 16)
        ) AS DECIMAL(38, 0)) * 65536
      ) AS BIGINT) AS __dp_w
    FROM (
      SELECT
        __dp_bucket,
        COUNT(*) OVER (PARTITION BY __dp_unit) AS __dp_h0_values
      FROM (
        SELECT
          *
        FROM (
          SELECT
            pid AS __dp_unit,
            CASE
              WHEN x IS NULL OR ISNAN(x)
              THEN NULL
              ELSE CAST(CASE
                WHEN LEAST(GREATEST((
                  CAST(x AS DOUBLE) - 0
                ) * 102.4, 0), 1023) BETWEEN -4.611686018427388E+18 AND 4.611686018427388e+18
                THEN FLOOR(LEAST(GREATEST((
                  CAST(x AS DOUBLE) - 0
                ) * 102.4, 0), 1023))
                ELSE LEAST(GREATEST((
                  CAST(x AS DOUBLE) - 0
                ) * 102.4, 0), 1023)
              END AS BIGINT)
            END AS __dp_bucket
          FROM t
          WHERE
            NOT pid IS NULL
        ) AS __dp_hr
        WHERE
          NOT __dp_bucket IS NULL
      ) AS __dp_x
    ) AS __dp_q
    GROUP BY
      __dp_q.__dp_bucket
  ) AS __dp_hw
) AS __dp_h0_t
  ON TRUE

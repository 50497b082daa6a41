-- SELECT k, COUNT(*), MEDIAN(x) FROM t GROUP BY k
-- bounding: kept_rows_ranked (g=2, compute_once): quantiles by private groups beside counts alone: each unit's rows in its first g groups, ranked in one window over the rows
WITH __dp_codes AS (
  SELECT
    k,
    CAST(CONV(SUBSTRING(MD5(CONCAT_WS('|', :__dp_salt, 'key', CAST(k AS STRING))), 1, 7), 16, 10) AS BIGINT) AS __dp_code,
    ROW_NUMBER() OVER (ORDER BY k NULLS LAST) AS __dp_grank
  FROM (
    SELECT DISTINCT
      k
    FROM t
    WHERE
      NOT pid IS NULL
  ) AS __dp_d
), __dp_cells AS (
  SELECT
    *
  FROM (
    SELECT
      __dp_grank,
      __dp_h0_bucket,
      CAST(CAST(SUM(
        CAST(CASE WHEN __dp_opens THEN LEAST(GREATEST(__dp_s0, 0), 3) ELSE 0 END AS BIGINT)
      ) AS DECIMAL(38, 0)) AS BIGINT) AS __dp_s0,
      CAST(CAST(SUM(CAST(CASE WHEN __dp_opens THEN 1 ELSE 0 END AS BIGINT)) AS DECIMAL(38, 0)) AS BIGINT) AS __dp_s1,
      CAST((
        CAST(SUM(
          CAST(LEAST(1048576, 3145728 DIV GREATEST(__dp_q.__dp_h0_values, 1)) AS BIGINT) & 65535
        ) AS DECIMAL(38, 0)) + CAST(SUM(
          SHIFTRIGHT(CAST(LEAST(1048576, 3145728 DIV GREATEST(__dp_q.__dp_h0_values, 1)) AS BIGINT), 16)
        ) AS DECIMAL(38, 0)) * 65536
      ) AS BIGINT) AS __dp_h0_weight
    FROM (
      SELECT
        *
      FROM (
        SELECT
          __dp_grank,
          __dp_h0_bucket,
          COUNT(__dp_h0_bucket) OVER (
            PARTITION BY __dp_unit
            ORDER BY __dp_first NULLS LAST
            RANGE BETWEEN CURRENT ROW AND CURRENT ROW
          ) AS __dp_h0_values,
          COUNT(*) OVER (
            PARTITION BY __dp_unit
            ORDER BY __dp_first NULLS LAST
            RANGE BETWEEN CURRENT ROW AND CURRENT ROW
          ) AS __dp_s0,
          ROW_NUMBER() OVER (PARTITION BY __dp_unit ORDER BY __dp_first NULLS LAST) = RANK() OVER (PARTITION BY __dp_unit ORDER BY __dp_first NULLS LAST) AS __dp_opens,
          DENSE_RANK() OVER (PARTITION BY __dp_unit ORDER BY __dp_first NULLS LAST) AS __dp_rank
        FROM (
          SELECT
            *,
            __dp_h * 4294967296 + __dp_grank % 4294967296 AS __dp_first
          FROM (
            SELECT
              *,
              (
                __dp_a * __dp_code + __dp_b
              ) % 2147483647 AS __dp_h
            FROM (
              SELECT
                *,
                (
                  (
                    __dp_a * __dp_a
                  ) % 2147483647 * CAST(:__dp_k4 AS BIGINT) + CAST(:__dp_k5 AS BIGINT)
                ) % 2147483647 AS __dp_b
              FROM (
                SELECT
                  *,
                  (
                    (
                      __dp_x * __dp_x
                    ) % 2147483647 * CAST(:__dp_k2 AS BIGINT) + CAST(:__dp_k3 AS BIGINT)
                  ) % 2147483647 AS __dp_a
                FROM (
                  SELECT
                    *,
                    (
                      (
                        (
                          CAST(__dp_unit AS BIGINT)
                        ) % 2147483647 + 2147483647
                      ) % 2147483647 * CAST(:__dp_k0 AS BIGINT) + CAST(:__dp_k1 AS BIGINT)
                    ) % 2147483647 AS __dp_x
                  FROM (
                    SELECT
                      __dp_r.*,
                      __dp_c.__dp_grank,
                      __dp_c.__dp_code
                    FROM (
                      SELECT
                        pid AS __dp_unit,
                        k,
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
                        END AS __dp_h0_bucket
                      FROM t
                      WHERE
                        NOT pid IS NULL
                    ) AS __dp_r
                    JOIN __dp_codes AS __dp_c
                      ON __dp_r.k IS NOT DISTINCT FROM __dp_c.k
                  ) AS __dp_s0
                ) AS __dp_s1
              ) AS __dp_s2
            ) AS __dp_s3
          ) AS __dp_o
        ) AS __dp_w
      ) AS __dp_k
      WHERE
        __dp_rank BETWEEN 1 AND 2
    ) AS __dp_q
    GROUP BY
      __dp_grank,
      __dp_h0_bucket
  ) AS __dp_m
  WHERE
    RAND() < 2
)
SELECT
  __dp_c.k,
  __dp_z.__dp_s0,
  __dp_z.__dp_s1,
  __dp_z.__dp_h0
FROM (
  SELECT
    __dp_s.*,
    __dp_h0_t.__dp_h0
  FROM (
    SELECT
      __dp_grank,
      CAST(SUM(CAST(__dp_s0 AS DECIMAL(38, 0))) AS BIGINT) AS __dp_s0,
      CAST(SUM(CAST(__dp_s1 AS DECIMAL(38, 0))) AS BIGINT) AS __dp_s1
    FROM __dp_cells
    GROUP BY
      __dp_grank
  ) AS __dp_s
  LEFT JOIN (
    SELECT
      __dp_grank,
      COLLECT_LIST(STRUCT(__dp_bucket AS b, __dp_w AS w)) FILTER(WHERE
        NOT __dp_bucket IS NULL) AS __dp_h0
    FROM (
      SELECT
        __dp_grank,
        __dp_h0_bucket AS __dp_bucket,
        CAST(SUM(CAST(__dp_h0_weight AS DECIMAL(38, 0))) AS BIGINT) AS __dp_w
      FROM __dp_cells
      WHERE
        NOT __dp_h0_bucket IS NULL
      GROUP BY
        __dp_grank,
        __dp_h0_bucket
    ) AS __dp_hw
    GROUP BY
      __dp_grank
  ) AS __dp_h0_t
    ON __dp_s.__dp_grank IS NOT DISTINCT FROM __dp_h0_t.__dp_grank
) AS __dp_z
JOIN __dp_codes AS __dp_c
  ON __dp_z.__dp_grank = __dp_c.__dp_grank

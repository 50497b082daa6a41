-- SELECT k, COUNT(*), SUM(x) FROM capped GROUP BY k
-- bounding: first_pairs_by_window (g=3): several groups per unit, over an integer unit: each unit's first g pairs by a window ranking them in a salted order
SELECT
  k,
  CAST(COALESCE(SUM(CAST(TRUNC(__dp_s0 * __dp_factor) AS BIGINT)), 0) AS BIGINT) AS __dp_s0,
  CAST(COALESCE(SUM(CAST(TRUNC(__dp_s1 * __dp_factor) AS BIGINT)), 0) AS DOUBLE) AS __dp_s1,
  CAST(COUNT(*) AS BIGINT) AS __dp_s2
FROM (
  SELECT
    *,
    LEAST(
      1,
      CAST(4 AS DOUBLE) / SUM(LEAST(GREATEST(__dp_rows, 0), 3)) OVER (PARTITION BY __dp_unit)
    ) AS __dp_factor
  FROM (
    WITH __dp_codes AS (
      SELECT
        UNNEST(__dp_g, max_depth := 2)
      FROM (
        SELECT
          ARRAY_AGG(__dp_q) AS __dp_g
        FROM (
          SELECT
            k,
            CAST('0x' || SUBSTRING(MD5(CONCAT_WS('|', $__dp_salt, 'key', CAST(k AS TEXT))), 1, 7) AS BIGINT) AS __dp_code,
            ROW_NUMBER() OVER (ORDER BY k) AS __dp_grank
          FROM (
            SELECT DISTINCT
              k
            FROM capped
            WHERE
              NOT pid IS NULL
          ) AS __dp_d
        ) AS __dp_q
      ) AS __dp_l
    ), __dp_pairs AS (
      SELECT
        __dp_p.__dp_unit,
        __dp_c.__dp_grank,
        __dp_c.__dp_code,
        __dp_p.__dp_s0,
        __dp_p.__dp_s1,
        __dp_p.__dp_rows
      FROM (
        SELECT
          __dp_unit,
          k,
          LEAST(GREATEST(COUNT(*), 0), 3) * 1048576 AS __dp_s0,
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
          ) AS BIGINT) AS __dp_s1,
          COUNT(*) AS __dp_rows
        FROM (
          SELECT
            pid AS __dp_unit,
            k,
            CASE
              WHEN x IS NULL OR ISNAN(x)
              THEN NULL
              ELSE CAST(ROUND(LEAST(GREATEST(CAST(x AS DOUBLE) / 7.450580596923828e-09, 0), 1342177280)) AS BIGINT)
            END AS __dp_v0
          FROM capped
          WHERE
            NOT pid IS NULL
        ) AS __dp_r
        GROUP BY
          __dp_unit,
          k
      ) AS __dp_p
      JOIN __dp_codes AS __dp_c
        ON __dp_p.k IS NOT DISTINCT FROM __dp_c.k
    )
    SELECT
      __dp_z.__dp_unit,
      __dp_c.k,
      __dp_z.__dp_s0,
      __dp_z.__dp_s1,
      __dp_z.__dp_rows
    FROM (
      SELECT
        __dp_grank,
        __dp_unit,
        __dp_s0,
        __dp_s1,
        __dp_rows
      FROM (
        SELECT
          *,
          ROW_NUMBER() OVER (PARTITION BY __dp_unit ORDER BY __dp_h * 4294967296 + __dp_grank % 4294967296) AS __dp_rank
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
                ) % 2147483647 * CAST($__dp_k4 AS BIGINT) + CAST($__dp_k5 AS BIGINT)
              ) % 2147483647 AS __dp_b
            FROM (
              SELECT
                *,
                (
                  (
                    __dp_x * __dp_x
                  ) % 2147483647 * CAST($__dp_k2 AS BIGINT) + CAST($__dp_k3 AS BIGINT)
                ) % 2147483647 AS __dp_a
              FROM (
                SELECT
                  *,
                  (
                    (
                      (
                        CAST(__dp_unit AS BIGINT)
                      ) % 2147483647 + 2147483647
                    ) % 2147483647 * CAST($__dp_k0 AS BIGINT) + CAST($__dp_k1 AS BIGINT)
                  ) % 2147483647 AS __dp_x
                FROM (
                  SELECT
                    *
                  FROM __dp_pairs AS __dp_p
                ) AS __dp_s0
              ) AS __dp_s1
            ) AS __dp_s2
          ) AS __dp_s3
        ) AS __dp_o
      ) AS __dp_k
      WHERE
        __dp_rank BETWEEN 1 AND 3
    ) AS __dp_z
    JOIN __dp_codes AS __dp_c
      ON __dp_z.__dp_grank = __dp_c.__dp_grank
  ) AS __dp_c
) AS __dp_b
GROUP BY
  k

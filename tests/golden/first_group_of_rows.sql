-- SELECT k, COUNT(*), COUNT(x), COUNT(DISTINCT pid) FROM defaults GROUP BY k
-- bounding: first_group_of_rows (g=1): counts alone at one group per unit: each unit's first group from one aggregate over its rows
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
        FROM defaults
        WHERE
          NOT pid IS NULL
      ) AS __dp_d
    ) AS __dp_q
  ) AS __dp_l
)
SELECT
  k,
  CAST(COALESCE(SUM(__dp_s0), 0) AS BIGINT) AS __dp_s0,
  CAST(COALESCE(SUM(__dp_s1), 0) AS BIGINT) AS __dp_s1,
  CAST(COUNT(*) AS BIGINT) AS __dp_s2
FROM (
  SELECT
    __dp_c.k,
    __dp_z.__dp_s0,
    __dp_z.__dp_s1
  FROM (
    SELECT
      __dp_unit,
      MIN(__dp_first) % 4294967296 AS __dp_grank,
      1 AS __dp_s0,
      CASE
        WHEN MIN(CASE WHEN NOT __dp_v0 IS NULL THEN __dp_first END) = MIN(__dp_first)
        THEN 1
        ELSE 0
      END AS __dp_s1
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
                  __dp_r.*,
                  __dp_c.__dp_grank,
                  __dp_c.__dp_code
                FROM (
                  SELECT
                    pid AS __dp_unit,
                    k,
                    CASE WHEN ISNAN(x) THEN NULL ELSE x END AS __dp_v0
                  FROM defaults
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
    ) AS __dp_k
    GROUP BY
      __dp_unit
  ) AS __dp_z
  JOIN __dp_codes AS __dp_c
    ON __dp_z.__dp_grank = __dp_c.__dp_grank
) AS __dp_b
GROUP BY
  k

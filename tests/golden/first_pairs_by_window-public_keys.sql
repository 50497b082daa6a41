-- SELECT region, k, COUNT(*) FROM wide GROUP BY region, k
-- bounding: first_pairs_by_window (g=2): several groups per unit, over an integer unit: each unit's first g pairs by a window ranking them in a salted order
SELECT
  region,
  k,
  CAST(COALESCE(SUM(__dp_s0), 0) AS BIGINT) AS __dp_s0
FROM (
  WITH __dp_codes AS (
    SELECT
      UNNEST(__dp_g, max_depth := 2)
    FROM (
      SELECT
        ARRAY_AGG(__dp_q) AS __dp_g
      FROM (
        SELECT
          region,
          k,
          CAST('0x' || SUBSTRING(MD5(CONCAT_WS('|', $__dp_salt, 'key', CAST(region AS TEXT), CAST(k AS TEXT))), 1, 7) AS BIGINT) AS __dp_code,
          ROW_NUMBER() OVER (ORDER BY region, k) AS __dp_grank
        FROM (
          SELECT
            region,
            k
          FROM (VALUES
            ('east'),
            ('west'),
            ('north')) AS __dp_v0(region)
          CROSS JOIN (VALUES
            ('a'),
            ('b')) AS __dp_v1(k)
        ) AS __dp_d
      ) AS __dp_q
    ) AS __dp_l
  ), __dp_pairs AS (
    SELECT
      __dp_p.__dp_unit,
      __dp_c.__dp_grank,
      __dp_c.__dp_code,
      __dp_p.__dp_s0
    FROM (
      SELECT
        __dp_unit,
        region,
        k,
        LEAST(GREATEST(COUNT(*), 0), 3) AS __dp_s0
      FROM (
        SELECT
          pid AS __dp_unit,
          region,
          k
        FROM wide
        WHERE
          NOT pid IS NULL
      ) AS __dp_r
      GROUP BY
        __dp_unit,
        region,
        k
    ) AS __dp_p
    JOIN __dp_codes AS __dp_c
      ON __dp_p.region IS NOT DISTINCT FROM __dp_c.region
      AND __dp_p.k IS NOT DISTINCT FROM __dp_c.k
  )
  SELECT
    __dp_z.__dp_unit,
    __dp_c.region,
    __dp_c.k,
    __dp_z.__dp_s0
  FROM (
    SELECT
      __dp_grank,
      __dp_unit,
      __dp_s0
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
      __dp_rank BETWEEN 1 AND 2
  ) AS __dp_z
  JOIN __dp_codes AS __dp_c
    ON __dp_z.__dp_grank = __dp_c.__dp_grank
) AS __dp_b
GROUP BY
  region,
  k

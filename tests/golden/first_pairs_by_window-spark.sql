-- SELECT k, COUNT(*) FROM t GROUP BY k
-- bounding: first_pairs_by_window (g=2, in_rows): several groups per unit, over an integer unit: each unit's first g pairs by a window ranking them in a salted order
WITH __dp_pairs AS (
  SELECT
    __dp_unit,
    k,
    LEAST(GREATEST(COUNT(*), 0), 3) AS __dp_s0
  FROM (
    SELECT
      pid AS __dp_unit,
      k
    FROM t
    WHERE
      NOT pid IS NULL
  ) AS __dp_r
  GROUP BY
    __dp_unit,
    k
)
SELECT
  k,
  CAST(COALESCE(CAST(SUM(CAST(__dp_s0 AS BIGINT)) AS DECIMAL(38, 0)), 0) AS BIGINT) AS __dp_s0,
  CAST(COUNT(*) AS BIGINT) AS __dp_s1
FROM (
  SELECT
    __dp_unit,
    k,
    __dp_s0
  FROM (
    SELECT
      *,
      ROW_NUMBER() OVER (PARTITION BY __dp_unit ORDER BY __dp_h NULLS LAST, k NULLS LAST) AS __dp_rank
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
                *,
                CAST(CONV(SUBSTRING(MD5(CONCAT_WS('|', :__dp_salt, 'key', CAST(k AS STRING))), 1, 7), 16, 10) AS BIGINT) AS __dp_code
              FROM __dp_pairs
            ) AS __dp_s0
          ) AS __dp_s1
        ) AS __dp_s2
      ) AS __dp_s3
    ) AS __dp_o
  ) AS __dp_k
  WHERE
    __dp_rank <= 2
) AS __dp_b
GROUP BY
  k

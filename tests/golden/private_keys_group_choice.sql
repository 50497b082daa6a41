-- SELECT k, COUNT(*) FROM t GROUP BY k
SELECT
  k,
  CAST(COALESCE(SUM(__dp_s0), 0) AS BIGINT) AS __dp_s0,
  CAST(COUNT(*) AS BIGINT) AS __dp_s1
FROM (
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
  ), __dp_heavy AS (
    SELECT
      __dp_unit
    FROM __dp_pairs
    GROUP BY
      __dp_unit
    HAVING
      COUNT(*) > 2
  )
  SELECT
    *
  FROM (
    SELECT
      __dp_unit,
      k,
      __dp_s0
    FROM __dp_pairs
    WHERE
      NOT __dp_unit IN (
        SELECT
          __dp_unit
        FROM __dp_heavy
      )
    UNION ALL
    SELECT
      __dp_unit,
      k,
      __dp_s0
    FROM (
      SELECT
        *,
        ROW_NUMBER() OVER (
          PARTITION BY __dp_unit
          ORDER BY MD5(CONCAT_WS('|', $__dp_salt, CAST(__dp_unit AS TEXT), CAST(k AS TEXT))), k
        ) AS __dp_rank
      FROM __dp_pairs
      WHERE
        __dp_unit IN (
          SELECT
            __dp_unit
          FROM __dp_heavy
        )
    ) AS __dp_k
    WHERE
      __dp_rank <= 2
  ) AS __dp_kept
) AS __dp_b
GROUP BY
  k

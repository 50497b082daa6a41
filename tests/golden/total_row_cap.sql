-- SELECT k, COUNT(*), SUM(x) FROM capped GROUP BY k
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
    WITH __dp_pairs AS (
      SELECT
        __dp_unit,
        k,
        LEAST(GREATEST(COUNT(*), 0), 3) * 1048576 AS __dp_s0,
        LEAST(
          GREATEST(
            CASE
              WHEN COUNT(__dp_v0) <= 3
              THEN COALESCE(SUM(__dp_v0), 0)
              ELSE CAST(ROUND(CAST(COALESCE(SUM(__dp_v0), 0) AS DOUBLE) * 3 / COUNT(__dp_v0)) AS BIGINT)
            END,
            0
          ),
          4026531840
        ) AS __dp_s1,
        COUNT(*) AS __dp_rows
      FROM (
        SELECT
          pid AS __dp_unit,
          k,
          CASE
            WHEN x IS NULL OR ISNAN(x)
            THEN NULL
            ELSE CAST(LEAST(GREATEST(ROUND(CAST(x AS DOUBLE) / 7.450580596923828e-09), 0), 1342177280) AS BIGINT)
          END AS __dp_v0
        FROM capped
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
        COUNT(*) > 3
    )
    SELECT
      *
    FROM (
      SELECT
        __dp_unit,
        k,
        __dp_s0,
        __dp_s1,
        __dp_rows
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
        __dp_s0,
        __dp_s1,
        __dp_rows
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
        __dp_rank <= 3
    ) AS __dp_kept
  ) AS __dp_c
) AS __dp_b
GROUP BY
  k

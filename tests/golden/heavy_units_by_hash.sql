-- SELECT k, COUNT(*), SUM(x) FROM named GROUP BY k
-- bounding: heavy_units_by_hash (g=2): a privacy unit that is not an integer: the units in more than g groups keep the first g of their pairs by a salted MD5
SELECT
  k,
  CAST(COALESCE(SUM(__dp_s0), 0) AS BIGINT) AS __dp_s0,
  CAST(COALESCE(SUM(__dp_s1), 0) AS DOUBLE) AS __dp_s1,
  CAST(COUNT(*) AS BIGINT) AS __dp_s2
FROM (
  WITH __dp_pairs AS (
    SELECT
      __dp_unit,
      k,
      1 AS __dp_s0,
      CAST(LEAST(
        GREATEST(
          CASE
            WHEN COUNT(__dp_v0) <= 1
            THEN COALESCE(SUM(__dp_v0), 0)
            ELSE CAST(ROUND(CAST(COALESCE(SUM(__dp_v0), 0) AS DOUBLE) * 1 / COUNT(__dp_v0)) AS BIGINT)
          END,
          0
        ),
        1342177280
      ) AS BIGINT) AS __dp_s1
    FROM (
      SELECT
        name AS __dp_unit,
        k,
        CASE
          WHEN x IS NULL OR ISNAN(x)
          THEN NULL
          ELSE CAST(ROUND(LEAST(GREATEST(CAST(x AS DOUBLE) / 7.450580596923828e-09, 0), 1342177280)) AS BIGINT)
        END AS __dp_v0
      FROM named
      WHERE
        NOT name IS NULL
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
      __dp_s0,
      __dp_s1
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
      __dp_s1
    FROM (
      SELECT
        *,
        ROW_NUMBER() OVER (
          PARTITION BY __dp_unit
          ORDER BY MD5(CONCAT_WS('|', $__dp_salt, CAST(__dp_unit AS TEXT), CAST(k AS TEXT))), k
        ) AS __dp_rank
      FROM (
        SELECT
          *
        FROM __dp_pairs
        WHERE
          __dp_unit IN (
            SELECT
              __dp_unit
            FROM __dp_heavy
          )
      ) AS __dp_o
    ) AS __dp_k
    WHERE
      __dp_rank <= 2
  ) AS __dp_kept
) AS __dp_b
GROUP BY
  k

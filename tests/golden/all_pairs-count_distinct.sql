-- SELECT region, COUNT(DISTINCT k) FROM t GROUP BY region
-- bounding: all_pairs: no unit can be in more groups than the limit: every (unit, group) pair is kept
WITH __dp_kept AS (
  SELECT
    __dp_unit,
    region
  FROM (
    SELECT
      __dp_unit,
      region
    FROM (
      SELECT
        pid AS __dp_unit,
        region
      FROM (
        SELECT
          "pid",
          CASE WHEN LENGTH("k") > 1024 THEN LEFT("k", 1024) ELSE "k" END AS "k",
          "region",
          "x",
          "n"
        FROM t
      ) AS "t"
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
  __dp_d.*,
  CAST(COALESCE(__dp_s0_t.__dp_s0, 0) AS BIGINT) AS __dp_s0
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
) AS __dp_d
LEFT JOIN (
  SELECT
    __dp_q.region AS region,
    COUNT(DISTINCT __dp_q.__dp_dv) AS __dp_s0
  FROM (
    SELECT
      *,
      ROW_NUMBER() OVER (
        PARTITION BY __dp_unit, region
        ORDER BY MD5(CONCAT_WS('|', $__dp_salt, CAST(__dp_unit AS TEXT), CAST(__dp_dv AS TEXT))), __dp_dv
      ) AS __dp_drank
    FROM (
      SELECT DISTINCT
        __dp_unit,
        region,
        __dp_dv
      FROM (
        SELECT
          pid AS __dp_unit,
          region,
          k AS __dp_dv
        FROM (
          SELECT
            "pid",
            CASE WHEN LENGTH("k") > 1024 THEN LEFT("k", 1024) ELSE "k" END AS "k",
            "region",
            "x",
            "n"
          FROM t
        ) AS "t"
        WHERE
          NOT pid IS NULL
      ) AS __dp_dr
      WHERE
        NOT __dp_dv IS NULL
    ) AS __dp_dt
  ) AS __dp_q
  INNER JOIN __dp_kept AS __dp_k
    ON __dp_q.__dp_unit = __dp_k.__dp_unit
    AND __dp_q.region IS NOT DISTINCT FROM __dp_k.region
  WHERE
    __dp_q.__dp_drank <= 3
  GROUP BY
    __dp_q.region
) AS __dp_s0_t
  ON __dp_d.region IS NOT DISTINCT FROM __dp_s0_t.region

-- SELECT SUM(LEAST(GREATEST(l.w, 0), 5)) FROM t JOIN lookup l ON t.k = l.k
-- bounding: all_pairs: no unit can be in more groups than the limit: every (unit, group) pair is kept
SELECT
  CAST(COALESCE(SUM(__dp_s0), 0) AS DOUBLE) AS __dp_s0
FROM (
  SELECT
    __dp_unit,
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
    ) AS BIGINT) AS __dp_s0
  FROM (
    SELECT
      pid AS __dp_unit,
      CASE
        WHEN CAST(LEAST(GREATEST(CASE WHEN ISNAN(w) THEN NULL ELSE w END, 0), 5) AS DOUBLE) IS NULL
        OR ISNAN(CAST(LEAST(GREATEST(CASE WHEN ISNAN(w) THEN NULL ELSE w END, 0), 5) AS DOUBLE))
        THEN NULL
        ELSE CAST(ROUND(
          LEAST(
            GREATEST(
              CAST(CAST(LEAST(GREATEST(CASE WHEN ISNAN(w) THEN NULL ELSE w END, 0), 5) AS DOUBLE) AS DOUBLE) / 3.725290298461914e-09,
              0
            ),
            1342177280
          )
        ) AS BIGINT)
      END AS __dp_v0
    FROM (
      SELECT
        "t"."pid" AS "pid",
        "t"."k" AS "__dp_j0_k",
        "t"."region" AS "region",
        "t"."x" AS "x",
        "t"."n" AS "n",
        "l"."k" AS "__dp_j1_k",
        "l"."w" AS "w"
      FROM (
        SELECT
          "pid",
          CASE WHEN LENGTH("k") > 1024 THEN LEFT("k", 1024) ELSE "k" END AS "k",
          CASE WHEN LENGTH("region") > 1024 THEN LEFT("region", 1024) ELSE "region" END AS "region",
          "x",
          "n"
        FROM t
      ) AS "t"
      INNER JOIN (
        SELECT
          CASE WHEN LENGTH("k") > 8 THEN LEFT("k", 8) ELSE "k" END AS "k",
          "w"
        FROM lookup
      ) AS "l"
        ON t.k = l.k
    ) AS __dp_q0
    WHERE
      NOT pid IS NULL
  ) AS __dp_r
  GROUP BY
    __dp_unit
) AS __dp_b

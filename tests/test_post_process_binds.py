"""A query whose expressions around its aggregates cannot run over the released values is
refused before anything is charged (found by the fuzzer: ROUND of APPROX_QUANTILES' array)."""

import pytest

import dpsql
from dpsql.datasets import pums_path


def test_rounding_an_array_of_quantiles_is_refused_before_the_charge():
    con = dpsql.connect(budget=dpsql.Budget(epsilon=1.0, delta=1e-6))
    con.register("pums", pums_path(), privacy_unit="pid", bounds={"age": (0, 100)})
    with pytest.raises(dpsql.UnsupportedQueryError, match=r"APPROX_QUANTILES releases an array"):
        con.sql("SELECT ROUND(APPROX_QUANTILES(age, 2), 1) FROM pums", epsilon=0.5)
    assert con.sql("SELECT APPROX_QUANTILES(age, 2)[2] AS m FROM pums", epsilon=1.0).fetchall()

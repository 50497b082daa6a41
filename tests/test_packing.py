"""Bounded integers packed into one BIGINT come back out of it exactly, in the engine."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from sqlglot import exp

from dpsql.rewrite.packing import CAPACITY, packed
from tests.support import BACKEND


@st.composite
def fields_and_values(draw):
    bounds = draw(st.lists(st.one_of(st.integers(0, 10), st.integers(0, 2**61 - 1)),
                           min_size=1, max_size=6))
    rows = draw(st.lists(st.tuples(*(st.one_of(st.sampled_from([-b, 0, b]), st.integers(-b, b))
                                     for b in bounds)), min_size=1, max_size=4))
    return [(f"c{i}", b) for i, b in enumerate(bounds)], rows


@settings(max_examples=60, deadline=None)
@given(fields_and_values())
def test_every_field_comes_back_out_of_its_pack(case):
    """Each pack is a BIGINT in [0, CAPACITY) and gives each field back, at its bounds too;
    every field fits some pack (none here is wider than one)."""
    fields, rows = case
    packs = packed(fields)
    assert [f for p in packs for f in p.fields] == fields
    values = exp.values([tuple(exp.cast(exp.Literal.number(v), "BIGINT") for v in row)
                         for row in rows], alias="v", columns=[name for name, _ in fields])
    coded = exp.select(*(exp.alias_(p.code(), p.name) for p in packs)).from_(values)
    out = exp.select(*(p.field(name, exp.column(p.name)) for p in packs for name, _ in p.fields),
                     *(exp.column(p.name) for p in packs)).from_(coded.subquery("p"))
    got = BACKEND.run_sql(out.sql("duckdb")).to_pylist()
    width = len(fields)
    for row, result in zip(rows, got, strict=True):
        values_out = list(result.values())
        assert values_out[:width] == list(row)
        assert all(0 <= code < CAPACITY for code in values_out[width:])

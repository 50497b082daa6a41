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
    read = [p.field(name, exp.column(p.name)) for p in packs for name, _ in p.fields]
    out = exp.select(*(exp.alias_(r, f"o{i}") for i, r in enumerate(read)),
                     *(exp.column(p.name) for p in packs)).from_(coded.subquery("p"))
    got = BACKEND.run_sql(out.sql("duckdb")).to_pylist()
    width = len(fields)
    for row, result in zip(rows, got, strict=True):
        values_out = list(result.values())
        assert values_out[:width] == list(row)
        assert all(0 <= code < CAPACITY for code in values_out[width:])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 2**40), min_size=1, max_size=5),
       st.lists(st.integers(0, 2**63 - 1), min_size=1, max_size=5))
def test_a_field_read_out_of_any_pack_lies_within_its_bound(bounds, codes):
    """Whatever BIGINT a pack holds (a partial out of its bound wraps, it does not carry
    past it), every field read back out of it is within its own bound."""
    packs = packed([(f"c{i}", b) for i, b in enumerate(bounds)])
    pack = exp.column("p")
    fields = [(p.field(name, pack), bound) for p in packs for name, bound in p.fields]
    table = exp.values([(exp.cast(exp.Literal.number(c), "BIGINT"),) for c in codes],
                       alias="v", columns=["p"])
    out = exp.select(*(exp.alias_(f, f"o{i}") for i, (f, _) in enumerate(fields))).from_(table)
    for row in BACKEND.run_sql(out.sql("duckdb")).to_pylist():
        assert all(-b <= v <= b for v, (_, b) in zip(row.values(), fields, strict=True))

"""dpsql.arrays converts as pyarrow does: same values, same NumPy and Arrow types.

``to_numpy`` is held to ``to_numpy(zero_copy_only=False)`` and ``from_numpy`` to ``pa.array``
on every primitive type, on slices (an offset into the buffer, bits that do not start a
byte), on several chunks and none, with nulls, NaN and extremes; the answers released
through them are checked end to end by the seeded tests (tests/test_end_to_end.py).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from dpsql.arrays import from_numpy, to_numpy

TYPES = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(),
         pa.uint64(), pa.float16(), pa.float32(), pa.float64(), pa.bool_()]


def values_of(arrow: pa.DataType, n: int = 37) -> list:
    """``n`` values of ``arrow`` with its extremes (NaN and infinities for floats)."""
    if pa.types.is_boolean(arrow):
        return [bool(v) for v in np.random.default_rng(1).integers(0, 2, n)]
    if pa.types.is_floating(arrow):
        dtype = np.dtype(f"f{arrow.bit_width // 8}")
        info = np.finfo(dtype)
        extremes = [float(info.min), float(info.max), float(info.tiny), -0.0, np.nan, np.inf]
        return extremes + [float(v) for v in np.linspace(-3, 3, n - len(extremes))]
    dtype = np.dtype(f"{'i' if pa.types.is_signed_integer(arrow) else 'u'}{arrow.bit_width // 8}")
    info = np.iinfo(dtype)
    return [int(info.min), int(info.max)] + [int(v) % int(info.max) for v in range(n - 2)]


def same_arrow(got: pa.Array, want: pa.Array) -> None:
    """The same type, validity and values (NaN and -0.0 included)."""
    got.validate(full=True)
    assert got.type == want.type and got.null_count == want.null_count
    assert repr(got.to_pylist()) == repr(want.to_pylist())


def same(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)  # NaN equals NaN here
    if got.dtype.kind == "f":  # and -0.0 stays -0.0
        assert np.array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("arrow", TYPES, ids=str)
def test_to_numpy_as_pyarrow(arrow):
    array = pa.array(values_of(arrow), type=arrow)
    for column in (array, array.slice(3), array.slice(5, 11), array.slice(9, 0),
                   pa.chunked_array([array.slice(0, 13), array.slice(13)]),
                   pa.chunked_array([array.slice(1, 6), array.slice(0, 0), array.slice(7, 3)]),
                   pa.chunked_array([], type=arrow)):
        same(to_numpy(column), column.to_numpy(zero_copy_only=False))


@pytest.mark.parametrize("arrow", [pa.int64(), pa.float64(), pa.bool_(), pa.string(),
                                   pa.decimal128(38, 0), pa.date32()], ids=str)
def test_nulls_and_other_types_go_through_pyarrow(arrow):
    values = {"string": ["a", None], "decimal128(38, 0)": [1, None], "date32[day]": [0, None],
              "bool": [True, None]}
    column = pa.chunked_array([pa.array(values.get(str(arrow), [1, None]), type=arrow)])
    want = column.to_numpy(zero_copy_only=False)
    got = to_numpy(column)
    assert got.dtype == want.dtype and list(map(str, got)) == list(map(str, want))


def test_a_chunked_array_gives_a_new_array():
    column = pa.chunked_array([pa.array([1, 2, 3])])
    copy = to_numpy(column)
    copy[0] = 9
    assert column.to_pylist() == [1, 2, 3]


@pytest.mark.parametrize("arrow", TYPES, ids=str)
def test_from_numpy_as_pa_array(arrow):
    values = np.asarray(values_of(arrow), dtype=to_numpy(pa.array([], type=arrow)).dtype)
    for view in (values, values[3:], values[::2], values[:0]):
        same_arrow(from_numpy(view), pa.array(view))
        mask = np.arange(len(view)) % 3 == 0
        same_arrow(from_numpy(view, mask=mask), pa.array(view, mask=mask))


@pytest.mark.parametrize("values", [np.array(["a", "b"]), np.array([[1, 2]]),
                                    np.array([1, 2], dtype=">i8"),
                                    np.array(["2024-01-01"], dtype="datetime64[D]")],
                         ids=["text", "2-D", "big-endian", "dates"])
def test_from_numpy_leaves_the_rest_to_pyarrow(values):
    try:
        want = pa.array(values)
    except (pa.ArrowException, ValueError, TypeError) as err:
        with pytest.raises(type(err)):
            from_numpy(values)
        return
    same_arrow(from_numpy(values), want)

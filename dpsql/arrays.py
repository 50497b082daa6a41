"""NumPy arrays from Arrow columns and back, over their buffers: no pandas on the query path.

pyarrow imports pandas, when it is installed, the first time a NumPy array or a Python list
becomes Arrow (``pa.array`` asks its pandas shim whether the object is a pandas one) or an
Arrow column becomes NumPy (``to_numpy`` goes through pyarrow's pandas conversion). That
import costs a one-query process about 0.15 s (docs/benchmarks.md, "Start-up"). The release
stage moves only integers, floats and booleans between the engine and the noise, so it
reads and writes their buffers directly (Arrow's columnar format: a validity bitmap, then
the values; booleans one bit each, least significant first). The values are the same as
pyarrow's conversions; any other column, or one with nulls, goes through pyarrow as before.

>>> import pyarrow as pa
>>> to_numpy(pa.chunked_array([[1, 2], [3]]))
array([1, 2, 3])
>>> from_numpy(np.array([True, False, True])).to_pylist()
[True, False, True]
>>> from_numpy(np.array([0.5, 1.5]), mask=np.array([False, True])).to_pylist()
[0.5, None]
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

PRIMITIVE_KINDS = "iufb"
"""NumPy's kinds with a fixed-width Arrow twin read and written here: signed and unsigned
integers, floats, booleans."""


def to_numpy(column: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """``column.to_numpy(zero_copy_only=False)``, without pandas for primitive columns.

    A ChunkedArray gives a new array; an Array of numbers a read-only view of its buffer,
    as pyarrow's does.

    >>> to_numpy(pa.array([1.5, 2.5]).slice(1))
    array([2.5])
    >>> to_numpy(pa.array([True, False, True, True]).slice(1, 2))
    array([False,  True])
    >>> to_numpy(pa.array([1, None]))  # nulls: pyarrow's conversion (NaN)
    array([ 1., nan])
    >>> to_numpy(pa.chunked_array([], pa.int32()))
    array([], dtype=int32)
    """
    dtype = _numpy_type(column.type)
    if dtype is None or column.null_count:
        return column.to_numpy(zero_copy_only=False)
    if isinstance(column, pa.ChunkedArray):
        parts = [_values(chunk, dtype) for chunk in column.chunks]
        return np.concatenate(parts) if parts else np.empty(0, dtype)
    return _values(column, dtype)


def from_numpy(values: np.ndarray, *, mask: np.ndarray | None = None) -> pa.Array:
    """``pa.array(values, mask=mask)``, without pandas for a 1-D array of primitive values;
    ``mask`` is True where a value is null.

    >>> from_numpy(np.arange(3, dtype=np.int32)).type
    DataType(int32)
    >>> from_numpy(np.array([[1, 2]])[:, 1]).to_pylist()  # a strided view is copied
    [2]
    """
    if values.ndim != 1 or values.dtype.kind not in PRIMITIVE_KINDS \
            or not values.dtype.isnative:
        return pa.array(values, mask=mask)
    data = _bits(values) if values.dtype.kind == "b" else \
        pa.py_buffer(np.ascontiguousarray(values))
    arrow = pa.from_numpy_dtype(values.dtype)
    if mask is None:
        return pa.Array.from_buffers(arrow, len(values), [None, data])
    mask = np.asarray(mask, dtype=bool)
    return pa.Array.from_buffers(arrow, len(values), [_bits(~mask), data],
                                 null_count=int(mask.sum()))


def _numpy_type(arrow: pa.DataType) -> np.dtype | None:
    """The NumPy type pyarrow converts a primitive Arrow type to; None for others."""
    if pa.types.is_boolean(arrow):
        return np.dtype(bool)
    if pa.types.is_signed_integer(arrow):
        return np.dtype(f"i{arrow.bit_width // 8}")
    if pa.types.is_unsigned_integer(arrow):
        return np.dtype(f"u{arrow.bit_width // 8}")
    if pa.types.is_floating(arrow):
        return np.dtype(f"f{arrow.bit_width // 8}")
    return None


def _values(array: pa.Array, dtype: np.dtype) -> np.ndarray:
    """The values of a primitive Array without nulls, from its data buffer."""
    if len(array) == 0:
        return np.empty(0, dtype)
    data = array.buffers()[1]
    if dtype.kind == "b":
        bits = np.unpackbits(np.frombuffer(data, np.uint8), count=array.offset + len(array),
                             bitorder="little")
        return bits[array.offset:].astype(bool)
    return np.frombuffer(data, dtype, count=len(array), offset=array.offset * dtype.itemsize)


def _bits(flags: np.ndarray) -> pa.Buffer:
    """A boolean array as an Arrow bitmap (bit i of byte i // 8, least significant first)."""
    return pa.py_buffer(np.packbits(flags, bitorder="little"))

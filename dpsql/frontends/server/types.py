"""Arrow types as PostgreSQL types: OIDs, text and binary encodings, parameter decoding.

>>> import pyarrow as pa
>>> [pg_type(t).name for t in (pa.int64(), pa.float64(), pa.string(), pa.bool_(), pa.date32())]
['int8', 'float8', 'text', 'bool', 'date']
>>> pg_type(pa.float64()).text(0.1), pg_type(pa.float64()).text(2.0), pg_type(pa.bool_()).text(1)
(b'0.1', b'2', b't')
>>> decode_parameter(b"42", INT8, 0), decode_parameter(b"2024-02-29", DATE, 0)
(42, datetime.date(2024, 2, 29))
"""

from __future__ import annotations

import datetime as dt
import math
import struct
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

import pyarrow as pa

BOOL, BYTEA, INT8, INT2, INT4, TEXT, FLOAT4, FLOAT8 = 16, 17, 20, 21, 23, 25, 700, 701
UNKNOWN, VARCHAR, DATE, TIME, TIMESTAMP, TIMESTAMPTZ, NUMERIC = 705, 1043, 1082, 1083, 1114, \
    1184, 1700
POSTGRES_EPOCH = dt.datetime(2000, 1, 1)
EPOCH_DAY = POSTGRES_EPOCH.date().toordinal()


class ParameterError(ValueError):
    """A bound parameter's bytes do not read as its declared type."""


def _text_float(value: float) -> bytes:
    if math.isnan(value):
        return b"NaN"
    if math.isinf(value):
        return b"Infinity" if value > 0 else b"-Infinity"
    text = repr(float(value))
    return (text[:-2] if text.endswith(".0") else text).encode()  # PostgreSQL writes 2, not 2.0


def _text_time(value: dt.date | dt.time) -> bytes:
    if isinstance(value, dt.datetime):
        text = value.isoformat(" ")
        return (text[:-3] if value.utcoffset() is not None and text.endswith(":00") else
                text).encode()
    return value.isoformat().encode()


def _bytea(value: bytes) -> bytes:
    return b"\\x" + value.hex().encode()


def _binary_numeric(value: Decimal) -> bytes:
    """PostgreSQL's binary NUMERIC: base-10000 digits, weight, sign, display scale."""
    if not value.is_finite():
        return struct.pack("!hhHh", 0, 0, 0xC000, 0)
    sign, digits, exponent = value.as_tuple()
    scale = max(0, -int(exponent))
    text = "".join(map(str, digits)) + "0" * max(0, int(exponent))
    whole, frac = (text[:len(text) - scale] or "0"), text[len(text) - scale:] if scale else ""
    whole = whole.zfill(-(-len(whole) // 4) * 4)
    frac = frac.ljust(-(-len(frac) // 4) * 4, "0")
    groups = [int(whole[i:i + 4]) for i in range(0, len(whole), 4)]
    weight = len(groups) - 1
    groups += [int(frac[i:i + 4]) for i in range(0, len(frac), 4)]
    while groups and groups[0] == 0:
        groups.pop(0)
        weight -= 1
    while groups and groups[-1] == 0:
        groups.pop()
    if not groups:
        weight = 0
    return struct.pack(f"!hhHh{len(groups)}H", len(groups), weight, 0x4000 if sign else 0,
                       scale, *groups)


def _binary_timestamp(value: dt.datetime) -> bytes:
    if value.utcoffset() is not None:
        value = value.astimezone(dt.UTC).replace(tzinfo=None)
    delta = value - POSTGRES_EPOCH
    return struct.pack("!q", (delta.days * 86_400 + delta.seconds) * 1_000_000 +
                       delta.microseconds)


def _binary_time(value: dt.time) -> bytes:
    return struct.pack("!q", ((value.hour * 60 + value.minute) * 60 + value.second) *
                       1_000_000 + value.microsecond)


@dataclass(frozen=True)
class PgType:
    """A PostgreSQL type: name, OID, size, and how one Python value is written."""

    name: str
    oid: int
    size: int
    text: Callable[[Any], bytes]
    binary: Callable[[Any], bytes]

    def encode(self, value: Any, binary: bool) -> bytes | None:
        """A cell in the text (0) or binary (1) format; None stays NULL."""
        if value is None:
            return None
        return self.binary(value) if binary else self.text(value)


def _str(value: Any) -> bytes:
    return str(value).encode("utf-8")


TYPES = {
    "bool": PgType("bool", BOOL, 1, lambda v: b"t" if v else b"f", lambda v: bytes([bool(v)])),
    "int2": PgType("int2", INT2, 2, _str, lambda v: struct.pack("!h", v)),
    "int4": PgType("int4", INT4, 4, _str, lambda v: struct.pack("!i", v)),
    "int8": PgType("int8", INT8, 8, _str, lambda v: struct.pack("!q", v)),
    "float4": PgType("float4", FLOAT4, 4, _text_float, lambda v: struct.pack("!f", v)),
    "float8": PgType("float8", FLOAT8, 8, _text_float, lambda v: struct.pack("!d", v)),
    "numeric": PgType("numeric", NUMERIC, -1, _str, _binary_numeric),
    "text": PgType("text", TEXT, -1, _str, _str),
    "bytea": PgType("bytea", BYTEA, -1, _bytea, bytes),
    "date": PgType("date", DATE, 4, _text_time,
                   lambda v: struct.pack("!i", v.toordinal() - EPOCH_DAY)),
    "time": PgType("time", TIME, 8, _text_time, _binary_time),
    "timestamp": PgType("timestamp", TIMESTAMP, 8, _text_time, _binary_timestamp),
    "timestamptz": PgType("timestamptz", TIMESTAMPTZ, 8, _text_time, _binary_timestamp),
}


def pg_type(arrow: pa.DataType) -> PgType:
    """The PostgreSQL type a column of this Arrow type is sent as (text for the exotic)."""
    types = pa.types
    checks: tuple[tuple[Callable[[pa.DataType], bool], str], ...] = (
        (types.is_boolean, "bool"), (types.is_int8, "int2"), (types.is_int16, "int2"),
        (types.is_uint8, "int2"), (types.is_int32, "int4"), (types.is_uint16, "int4"),
        (types.is_int64, "int8"), (types.is_uint32, "int8"), (types.is_uint64, "numeric"),
        (types.is_float16, "float4"), (types.is_float32, "float4"),
        (types.is_float64, "float8"), (types.is_decimal, "numeric"), (types.is_date, "date"),
        (types.is_time, "time"), (types.is_binary, "bytea"), (types.is_large_binary, "bytea"),
    )
    if types.is_timestamp(arrow):
        return TYPES["timestamptz" if arrow.tz else "timestamp"]
    for check, name in checks:
        if check(arrow):
            return TYPES[name]
    return TYPES["text"]


BY_OID = {t.oid: t for t in TYPES.values()}


def _parse_text(data: str, oid: int) -> Any:
    readers: dict[int, Callable[[str], Any]] = {
        BOOL: _bool, INT2: int, INT4: int, INT8: int, FLOAT4: _float, FLOAT8: _float,
        NUMERIC: Decimal, DATE: dt.date.fromisoformat, TIME: dt.time.fromisoformat,
        TIMESTAMP: dt.datetime.fromisoformat, TIMESTAMPTZ: dt.datetime.fromisoformat,
    }
    return readers.get(oid, str)(data)


def _bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("t", "true", "on", "yes", "1", "y"):
        return True
    if lowered in ("f", "false", "off", "no", "0", "n"):
        return False
    raise ValueError(text)


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(text)
    return value


def _parse_binary(data: bytes, oid: int) -> Any:
    fixed = {BOOL: "!?", INT2: "!h", INT4: "!i", INT8: "!q", FLOAT4: "!f", FLOAT8: "!d"}
    if oid in fixed:
        return struct.unpack(fixed[oid], data)[0]
    if oid == DATE:
        return dt.date.fromordinal(struct.unpack("!i", data)[0] + EPOCH_DAY)
    if oid in (TIMESTAMP, TIMESTAMPTZ):
        return POSTGRES_EPOCH + dt.timedelta(microseconds=struct.unpack("!q", data)[0])
    if oid in (TEXT, VARCHAR, UNKNOWN, 0):
        return data.decode("utf-8")
    raise ValueError(f"binary parameters of type OID {oid} are not read; send them as text")


def decode_parameter(data: bytes | None, oid: int, fmt: int) -> Any:
    """A Bind parameter as a Python value (for dpsql's literal binding); ParameterError if
    its bytes do not read as its type."""
    if data is None:
        return None
    try:
        if fmt == 1:
            return _parse_binary(data, oid)
        return _parse_text(data.decode("utf-8"), oid)
    except (ValueError, struct.error, InvalidOperation, OverflowError, UnicodeDecodeError):
        name = BY_OID[oid].name if oid in BY_OID else f"OID {oid}"
        raise ParameterError(f"a parameter does not read as {name} "
                             f"({'binary' if fmt == 1 else 'text'} format)") from None

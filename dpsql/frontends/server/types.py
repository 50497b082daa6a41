"""Arrow types as PostgreSQL types: OIDs, text and binary encodings, parameter decoding.

>>> import pyarrow as pa
>>> [pg_type(t).name for t in (pa.int64(), pa.float64(), pa.string(), pa.bool_(), pa.date32())]
['int8', 'float8', 'text', 'bool', 'date']
>>> pg_type(pa.float64()).text(0.1), pg_type(pa.float64()).text(2.0), pg_type(pa.bool_()).text(1)
(b'0.1', b'2', b't')
>>> quantiles = pg_type(pa.list_(pa.float64()))
>>> quantiles.name, quantiles.oid, quantiles.text([0.5, 2.0, None])
('float8[]', 1022, b'{0.5,2,NULL}')
>>> pg_type(pa.list_(pa.string())).text(["a b", "", "x"])
b'{"a b","",x}'
>>> decode_parameter(b"42", INT8, 0), decode_parameter(b"2024-02-29", DATE, 0)
(42, datetime.date(2024, 2, 29))
>>> decode_parameter(b"2024-03-01 +00", UNKNOWN, 0)  # pgJDBC's setDate
datetime.date(2024, 3, 1)
"""

from __future__ import annotations

import datetime as dt
import math
import re
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
    """A bound parameter's bytes do not read as its declared type; ``sqlstate`` is 22007
    (invalid_datetime_format) for dates and times, else 22P02 (invalid_text_representation)."""

    def __init__(self, message: str, sqlstate: str) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate


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
    text = ("".join(map(str, digits)) + "0" * max(0, int(exponent))).zfill(scale + 1)
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


ARRAY_OIDS = {"bool": 1000, "bytea": 1001, "int2": 1005, "int4": 1007, "text": 1009,
              "int8": 1016, "float4": 1021, "float8": 1022, "date": 1182, "time": 1183,
              "timestamp": 1115, "timestamptz": 1185, "numeric": 1231}
"""PostgreSQL's OIDs of the one-dimensional arrays of :data:`TYPES` (``pg_type.typarray``)."""

PLAIN_ELEMENT = re.compile(r'[^{}",\\\s]+')


def _array_type(element: PgType) -> PgType:
    """The array of ``element``, as PostgreSQL writes it (array_out, array_send in
    src/backend/utils/adt/arrayfuncs.c): text ``{1,2,NULL}`` with an element quoted when it is
    empty, reads as NULL or holds a brace, quote, comma, backslash or space; binary the
    dimension count, a has-NULL flag, the element OID, length and lower bound 1, then each
    element's length (-1: NULL) and bytes."""

    def text(values: list) -> bytes:
        return b"{" + b",".join(_array_item(element, v) for v in values) + b"}"

    def binary(values: list) -> bytes:
        if not values:
            return struct.pack("!iii", 0, 0, element.oid)
        items = [element.encode(v, True) for v in values]
        return struct.pack("!iiiii", 1, any(i is None for i in items), element.oid,
                           len(items), 1) + b"".join(
            struct.pack("!i", -1) if i is None else struct.pack("!i", len(i)) + i
            for i in items)

    return PgType(element.name + "[]", ARRAY_OIDS[element.name], -1, text, binary)


def _array_item(element: PgType, value: Any) -> bytes:
    if value is None:
        return b"NULL"
    body = element.text(value).decode("utf-8")
    if PLAIN_ELEMENT.fullmatch(body) and body.upper() != "NULL":
        return body.encode("utf-8")
    return ('"' + re.sub(r'(["\\])', r"\\\1", body) + '"').encode("utf-8")


def pg_type(arrow: pa.DataType) -> PgType:
    """The PostgreSQL type a column of this Arrow type is sent as (text for the exotic); a
    list of one of those is its one-dimensional array (APPROX_QUANTILES' ``float8[]``)."""
    types = pa.types
    if types.is_list(arrow) or types.is_large_list(arrow) or types.is_fixed_size_list(arrow):
        element = pg_type(arrow.value_type)
        return _array_type(element) if element.name in ARRAY_OIDS else TYPES["text"]
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


ARRAY_ITEM = re.compile(r'\s*(?:"((?:[^"\\]|\\.)*)"|([^,"{}\s][^,"{}]*?))\s*(?:,|$)')


def parse_array(text: str, element: Callable[[str], Any]) -> list[Any]:
    """A one-dimensional array in PostgreSQL's text form (``{r,"a b",NULL}``) as a list;
    ValueError for any other form (nested arrays, bounds). A parameter of an array type
    stays this text (dpsql binds no arrays); a catalog query's ``= ANY('{r,v}')`` reads it
    (:mod:`.metadata`).

    >>> parse_array('{r,"a b",NULL}', str)
    ['r', 'a b', None]
    """
    body = text.strip()
    if not (body.startswith("{") and body.endswith("}")):
        raise ValueError(text)
    body, items, at = body[1:-1], [], 0
    while at < len(body):
        match = ARRAY_ITEM.match(body, at)
        if match is None or match.end() == at:
            raise ValueError(text)
        quoted, bare = match.groups()
        items.append(None if bare is not None and bare.upper() == "NULL" else
                     element(re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else bare))
        at = match.end()
    return items


def _parse_text(data: str, oid: int) -> Any:
    readers: dict[int, Callable[[str], Any]] = {
        BOOL: _bool, INT2: int, INT4: int, INT8: int, FLOAT4: _float, FLOAT8: _float,
        NUMERIC: Decimal, DATE: _date, TIME: dt.time.fromisoformat,
        TIMESTAMP: _timestamp, TIMESTAMPTZ: dt.datetime.fromisoformat,
        UNKNOWN: _untyped, 0: _untyped,
    }
    return readers.get(oid, str)(data)


ZONED = re.compile(r"(?P<day>\d{4}-\d{2}-\d{2})(?P<time>[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?"
                   r" ?(?P<zone>[+-]\d{2}(?::\d{2}(?::\d{2})?)?|Z)")
"""A date or timestamp followed by its time zone offset, as pgJDBC's ``setDate`` and
``setTimestamp`` send them (``2024-03-01 +00``, ``2024-03-01 00:00:00+00``)."""


def _untyped(text: str) -> Any:
    """A parameter sent without a type: text, except a date or timestamp with a zone offset,
    which is that date or local time, the offset dropped.

    pgJDBC's ``setDate`` and ``setTimestamp`` send the value as text of type "unspecified"
    with the JVM's zone offset appended (PgPreparedStatement.setDate, TimestampUtils.toString),
    leaving the server to type it from its context; PostgreSQL, typing it as ``date`` or
    ``timestamp without time zone``, "silently ignore[s] any time zone indication"
    (PostgreSQL docs, 8.5.1.3). dpsql's columns carry no time zone, so it does the same here;
    compared with a text column, the value is refused as a date would be.
    """
    match = ZONED.fullmatch(text.strip())
    if match is None:
        return text
    if match["time"] is None:
        return dt.date.fromisoformat(match["day"])
    return dt.datetime.fromisoformat(match["day"] + " " + match["time"][1:])


def _date(text: str) -> dt.date:
    """A DATE parameter: ISO text, a zone offset ignored as PostgreSQL does."""
    value = _untyped(text)
    return value if isinstance(value, dt.date) and not isinstance(value, dt.datetime) else \
        dt.date.fromisoformat(text)


def _timestamp(text: str) -> dt.datetime:
    """A TIMESTAMP (without time zone) parameter: ISO text, a zone offset ignored as
    PostgreSQL does."""
    return dt.datetime.fromisoformat(text).replace(tzinfo=None)


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
    if oid == NUMERIC:
        return _numeric(data)
    if oid in (TEXT, VARCHAR, UNKNOWN, 0):
        return data.decode("utf-8")
    raise ValueError(f"binary parameters of type OID {oid} are not read; send them as text")


NUMERIC_SIGNS = {0x0000: 1, 0x4000: -1}
NUMERIC_SPECIAL = {0xC000: "NaN", 0xD000: "Infinity", 0xF000: "-Infinity"}


def _numeric(data: bytes) -> Decimal:
    """PostgreSQL's binary NUMERIC (src/backend/utils/adt/numeric.c, numeric_send): the
    number of base-10000 digits, the weight of the first, the sign, the display scale, then
    the digits. NaN and infinities are refused (SQL has no literal for them here)."""
    count, weight, sign, scale = struct.unpack_from("!hhHh", data)
    digits = struct.unpack_from(f"!{count}H", data, 8)
    if len(data) != 8 + 2 * count or sign not in NUMERIC_SIGNS or \
            any(d > 9999 for d in digits) or scale < 0:
        raise ValueError(NUMERIC_SPECIAL.get(sign, "not a numeric"))
    value = sum((Decimal(d).scaleb(4 * (weight - i)) for i, d in enumerate(digits)),
                Decimal(0))
    return (value * NUMERIC_SIGNS[sign]).quantize(Decimal(1).scaleb(-scale))


FORMS = {DATE: "YYYY-MM-DD", TIMESTAMP: "YYYY-MM-DD HH:MM:SS",
         TIMESTAMPTZ: "YYYY-MM-DD HH:MM:SS+HH", TIME: "HH:MM:SS", BOOL: "true or false",
         NUMERIC: "a finite decimal number", FLOAT4: "a finite number",
         FLOAT8: "a finite number"}
"""How each type's parameters are written, for the message of one that is not."""


def decode_parameter(data: bytes | None, oid: int, fmt: int, number: int = 1) -> Any:
    """Parameter ``$number`` of a Bind as a Python value (for dpsql's literal binding);
    ParameterError if its bytes do not read as its type. A parameter is the analyst's value,
    never the data's, so whether it is refused depends on it alone."""
    if data is None:
        return None
    try:
        if fmt == 1:
            return _parse_binary(data, oid)
        return _parse_text(data.decode("utf-8"), oid)
    except (ValueError, struct.error, InvalidOperation, OverflowError, UnicodeDecodeError):
        raise _unreadable(data, oid, fmt, number) from None


def _unreadable(data: bytes, oid: int, fmt: int, number: int) -> ParameterError:
    name = BY_OID[oid].name if oid in BY_OID else f"OID {oid}"
    shown = f" ({data.decode('utf-8', 'replace')[:40]!r})" if fmt == 0 else ""
    form = f": write it as {FORMS[oid]}" if oid in FORMS and fmt == 0 else \
        ": send it as text" if fmt == 1 else ""
    state = "22007" if oid in (DATE, TIME, TIMESTAMP, TIMESTAMPTZ) else "22P02"
    return ParameterError(f"parameter ${number}{shown} does not read as {name} "
                          f"({'binary' if fmt == 1 else 'text'} format){form}", state)

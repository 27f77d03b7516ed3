"""The JSON writer against bytes that Connect's own JsonConverter (3.4.1 and 4.3.1, schemas disabled)
produced for the same values."""

from __future__ import annotations

import math

import pytest

from control_plane.codecs import json_wire
from control_plane.codecs.json_wire import JsonFloat, dumps, java_double, loads

CONTROL = "".join(chr(i) for i in range(0x20))
JAVA_CONTROL = (
    b"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n\\u000B\\f\\r\\u000E\\u000F"
    b"\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018\\u0019\\u001A\\u001B\\u001C\\u001D\\u001E\\u001F"
)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("plain", b'"plain"'),
        (CONTROL, b'"' + JAVA_CONTROL + b'"'),
        ('"\\/', b'"\\"\\\\/"'),
        ("\x7f\x80é\u2028\u2029\ufeff<>&'", '"\x7f\x80é\u2028\u2029\ufeff<>&\'"'.encode()),
        ("\U0001f600", b'"\\uD83D\\uDE00"'),  # Jackson escapes non-BMP characters as a surrogate pair
        ("\ud800", b'"\\uD800"'),
        (None, b"null"),
        (True, b"true"),
        (False, b"false"),
        (9223372036854775807, b"9223372036854775807"),
        (-2147483648, b"-2147483648"),
        (b"\x01\x02\x03\xff", b'"AQID/w=="'),
        ({"z": 1, "a": [1, "x", None], "e": {}}, b'{"z":1,"a":[1,"x",null],"e":{}}'),
        (["conn", {"filename": "/tmp/x"}], b'["conn",{"filename":"/tmp/x"}]'),
    ],
)
def test_dumps_matches_jackson(value: object, expected: bytes) -> None:
    assert dumps(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1.0, "1.0"),
        (0.1, "0.1"),
        (1e7, "1.0E7"),
        (1e-3, "0.001"),
        (9.999999e-4, "9.999999E-4"),
        (123456789.0, "1.23456789E8"),
        (1e21, "1.0E21"),
        (2e-3, "0.002"),
        (-0.0, "-0.0"),
        (0.0, "0.0"),
        (1.7976931348623157e308, "1.7976931348623157E308"),
        (5e-324, "4.9E-324"),
        (1.2345678901234567e-7, "1.2345678901234566E-7"),
        (1234567.0, "1234567.0"),
        (-3.25e-10, "-3.25E-10"),
        (1.5, "1.5"),
    ],
)
def test_doubles_as_java_double_to_string(value: float, expected: str) -> None:
    assert java_double(value) == expected


def test_non_finite_doubles_are_strings() -> None:
    assert dumps([math.nan, math.inf, -math.inf]) == b'["NaN","Infinity","-Infinity"]'


def test_decoded_floats_keep_their_java_text() -> None:
    # JDK 17 writes 1e23 as 9.999999999999999E22 (not the shortest form); the bytes must survive.
    data, error = loads(b'{"a":9.999999999999999E22,"b":1.0E7}')
    assert error is None and data is not None
    assert isinstance(data["a"], JsonFloat) and data["a"] == 1e23
    assert dumps(data) == b'{"a":9.999999999999999E22,"b":1.0E7}'


def test_non_java_float_text_is_rewritten_as_java_would() -> None:
    data, _ = loads(b"[1e5, 0.50, 1E-7]")
    assert dumps(data) == b"[100000.0,0.5,1.0E-7]"


def test_round_trip_of_escapes() -> None:
    text = CONTROL + '"\\/\x7fé\U0001f600\ud800'
    encoded = dumps({"k": text})
    assert loads(encoded) == ({"k": text}, None)


@pytest.mark.parametrize(
    "data",
    [b"", b"{", b"NaN", b"[Infinity]", b"\xff\xfe", b"{'a':1}", b"[1,]", b"01", b"[" * 100_000, b'{"a":"\x01"}'],
)
def test_loads_never_raises(data: bytes) -> None:
    value, error = loads(data)
    assert value is None and error


def test_dumps_rejects_what_json_cannot_hold() -> None:
    with pytest.raises(TypeError):
        dumps({1: "a"})
    with pytest.raises(TypeError):
        dumps(object())


def test_a_body_read_exactly_is_written_back_with_its_numbers_as_written() -> None:
    """What a create on an older worker sends on (its unknown keys too): orjson alone raises on a
    ``JsonFloat`` and writes ``-0`` as ``0``."""
    body = b'{"x":[{"p":-6.635226186096e+16,"z":-0,"f":1.50,"s":"\\u00e0"}],"initial_state":null,"n":10}'
    value, error = json_wire.loads_exact(body)
    assert error is None
    assert json_wire.dumps_as_read(value) == (
        b'{"x":[{"p":-6.635226186096e+16,"z":-0,"f":1.50,"s":"\xc3\xa0"}],"initial_state":null,"n":10}'
    )

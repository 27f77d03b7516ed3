"""A config read from JSON as Connect's Jackson reads it into ``Map<String, String>``: each number as the text
it was written as. The expected strings are what ``ObjectMapper.readValue(body, LinkedHashMap<String,
String>)`` gives with jackson-databind 2.10.5.1, 2.13.5, 2.21.2 and 2.21.7 (the Jackson of Connect 2.8.2,
3.4.1, 4.3.1 and 4.4); tests/integration/test_plan_apply.py and test_newer_api.py check them against the
workers."""

from __future__ import annotations

import pytest

from control_plane.rules.config_values import as_string, config_map, read_json


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("1.50", "1.50", id="trailing-zero"),
        pytest.param("3.10", "3.10", id="version-pin"),
        pytest.param("1e-7", "1e-7", id="exponent"),
        pytest.param("1E+3", "1E+3", id="exponent-upper-plus"),
        pytest.param("-1E-0", "-1E-0", id="exponent-zero"),
        pytest.param("1.0e10", "1.0e10", id="exponent-fraction"),
        pytest.param("-0", "-0", id="minus-zero"),
        pytest.param("-0.0", "-0.0", id="minus-zero-float"),
        pytest.param("0", "0", id="zero"),
        pytest.param("10000000000000000000000", "10000000000000000000000", id="beyond-long"),
        pytest.param("1e999", "1e999", id="beyond-double"),
        pytest.param("true", "true", id="true"),
        pytest.param("false", "false", id="false"),
        pytest.param("null", None, id="null"),
        pytest.param('"0755"', "0755", id="string"),
    ],
)
def test_a_scalar_is_the_text_jackson_gives_a_string(value: str, expected: str | None) -> None:
    body, error = read_json(f'{{"x": {value} , "y": "z"}}'.encode())
    assert error is None
    assert config_map(body) == {"x": expected, "y": "z"}


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param(b'{"name":5,"config":{}}', "5", id="int"),
        pytest.param(b'{"name": 1.50 ,"config":{}}', "1.50", id="float-as-written"),
        pytest.param(b'{"name":true}', "true", id="true"),
        pytest.param(b'{"name":1,"name":2}', "2", id="last"),
        pytest.param(b'{"name":"s"}', "s", id="string"),
    ],
)
def test_a_scalar_name_reads_as_jackson_coerces_it_into_a_string(body: bytes, expected: str) -> None:
    """CreateConnectorRequest.name, a ``String``: a number or a boolean coerced as in a config."""
    read, _ = read_json(body)
    assert as_string(read["name"]) == expected


def test_a_number_is_still_a_number_to_whoever_reads_one() -> None:
    body, _ = read_json(b'{"a": 5, "b": 1.50, "c": -0}')
    assert body == {"a": 5, "b": 1.5, "c": 0}
    assert isinstance(body["a"], int) and isinstance(body["b"], float)


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b'{"x": NaN}', id="nan"),
        pytest.param(b'{"x": 01}', id="leading-zero"),
        pytest.param(b'{"x": "\\ud800"}', id="lone-surrogate"),
        pytest.param(b"\xff", id="not-utf8"),
        pytest.param(b"", id="empty"),
    ],
)
def test_what_is_not_read(body: bytes) -> None:
    """Not JSON to Jackson's defaults either, or (a lone surrogate) not something the sidecar can write
    back: the caller leaves it to the worker."""
    value, error = read_json(body)
    assert value is None and error


@pytest.mark.parametrize("value", [pytest.param({}, id="object"), pytest.param([1], id="array")])
def test_a_structure_is_no_config_value(value: object) -> None:
    assert config_map({"x": value}) is None

"""The worker properties parser follows java.util.Properties.load; listeners become the sidecar's URL."""

from __future__ import annotations

from pathlib import Path

import pytest

from control_plane.worker_properties import connect_url_from_listeners, parse_properties, read_properties


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("a=1\nb=2\n", {"a": "1", "b": "2"}, id="equals"),
        pytest.param("a:1", {"a": "1"}, id="colon"),
        pytest.param("a 1", {"a": "1"}, id="space"),
        pytest.param("a\t1", {"a": "1"}, id="tab"),
        pytest.param("a   =   1", {"a": "1"}, id="spaces-around-equals"),
        pytest.param("a = = 1", {"a": "= 1"}, id="one-separator-only"),
        pytest.param("a=:1", {"a": ":1"}, id="equals-then-colon"),
        pytest.param("a 1 2 ", {"a": "1 2 "}, id="trailing-space-kept"),
        pytest.param("   a=1", {"a": "1"}, id="leading-space"),
        pytest.param("a", {"a": ""}, id="key-only"),
        pytest.param("a=", {"a": ""}, id="empty-value"),
        pytest.param("=1", {"": "1"}, id="empty-key"),
        pytest.param("a=1=2", {"a": "1=2"}, id="equals-in-value"),
        pytest.param("a=http://h:8083", {"a": "http://h:8083"}, id="colons-in-value"),
        pytest.param("a=1\na=2", {"a": "2"}, id="later-wins"),
        pytest.param("a=1\r\nb=2\r\n", {"a": "1", "b": "2"}, id="crlf"),
        pytest.param("a=1\rb=2", {"a": "1", "b": "2"}, id="cr"),
        pytest.param("", {}, id="empty"),
    ],
)
def test_separators(text: str, expected: dict[str, str]) -> None:
    assert parse_properties(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("# a comment\na=1", {"a": "1"}, id="hash"),
        pytest.param("! a comment\na=1", {"a": "1"}, id="bang"),
        pytest.param("   # indented comment\na=1", {"a": "1"}, id="indented"),
        pytest.param("a=1 # not a comment", {"a": "1 # not a comment"}, id="hash-in-value"),
        pytest.param("#a=1\\\nb=2", {"b": "2"}, id="comment-does-not-continue"),
        pytest.param("\n\n   \n\ta=1\n\n", {"a": "1"}, id="blank-lines"),
    ],
)
def test_comments(text: str, expected: dict[str, str]) -> None:
    assert parse_properties(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("a=1,\\\n    2,\\\n    3", {"a": "1,2,3"}, id="leading-space-of-next-line-dropped"),
        pytest.param("a=1\\\n# not a comment", {"a": "1# not a comment"}, id="hash-after-continuation"),
        pytest.param("a=1\\\n\nb=2", {"a": "1", "b": "2"}, id="blank-line-ends-it"),
        pytest.param("a=1\\\\\nb=2", {"a": "1\\", "b": "2"}, id="even-backslashes-do-not-continue"),
        pytest.param("a=1\\\\\\\n2", {"a": "1\\2"}, id="odd-backslashes-continue"),
        pytest.param("a=1\\", {"a": "1"}, id="at-end-of-file"),
        pytest.param("a\\\n  =1", {"a": "1"}, id="continuation-in-key"),
        pytest.param("a=1\\ \nb=2", {"a": "1 ", "b": "2"}, id="backslash-then-space-does-not-continue"),
        pytest.param("a=1\\\r\n  2", {"a": "12"}, id="crlf"),
    ],
)
def test_continuations(text: str, expected: dict[str, str]) -> None:
    assert parse_properties(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("a=\\t\\n\\r\\f", {"a": "\t\n\r\f"}, id="control"),
        pytest.param("a=\\u00e9t\\u00E9", {"a": "été"}, id="unicode"),
        pytest.param("a=\\x\\y\\\\", {"a": "xy\\"}, id="other-chars-stand-for-themselves"),
        pytest.param("a\\=b=c", {"a=b": "c"}, id="escaped-equals-in-key"),
        pytest.param("a\\:b:c", {"a:b": "c"}, id="escaped-colon-in-key"),
        pytest.param("a\\ b c", {"a b": "c"}, id="escaped-space-in-key"),
        pytest.param("a=\\ \\ x", {"a": "  x"}, id="escaped-leading-space-in-value"),
        pytest.param("a=\\#b", {"a": "#b"}, id="escaped-hash"),
        pytest.param("\\#a=1", {"#a": "1"}, id="escaped-hash-key-is-not-a-comment"),
        pytest.param("a=C:\\\\kafka\\\\config", {"a": "C:\\kafka\\config"}, id="windows-path"),
    ],
)
def test_escapes(text: str, expected: dict[str, str]) -> None:
    assert parse_properties(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("a\fb", {"a": "b"}, id="form-feed-separator"),
        pytest.param("a=1\fb", {"a": "1\fb"}, id="form-feed-in-value"),
        pytest.param("a=1\x0bb", {"a": "1\x0bb"}, id="vertical-tab-in-value"),
        pytest.param("a=caf\x85", {"a": "caf\x85"}, id="latin1-nel-in-value"),
        pytest.param("a=x\x1cy", {"a": "x\x1cy"}, id="file-separator-in-value"),
    ],
)
def test_only_cr_and_lf_end_lines(text: str, expected: dict[str, str]) -> None:
    assert parse_properties(text) == expected


def test_read_properties_reads_latin1(tmp_path: Path) -> None:
    path = tmp_path / "connect-distributed.properties"
    path.write_bytes(b"# worker\nbootstrap.servers=broker:9092\nname=caf\xe9\nuni=\\u20ac\n")
    assert read_properties(path) == {"bootstrap.servers": "broker:9092", "name": "café", "uni": "€"}


def test_a_real_worker_file() -> None:
    text = """\
# Licensed to the Apache Software Foundation (ASF) ...
bootstrap.servers=localhost:9092
group.id=connect-cluster

key.converter=org.apache.kafka.connect.json.JsonConverter
key.converter.schemas.enable=true
offset.storage.topic=connect-offsets
offset.storage.replication.factor=1
#offset.storage.partitions=25
config.storage.topic   connect-configs
status.storage.topic : connect-status
listeners=HTTP://:8083
plugin.path=/usr/share/java,\\
            /opt/connectors
"""
    assert parse_properties(text) == {
        "bootstrap.servers": "localhost:9092",
        "group.id": "connect-cluster",
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "key.converter.schemas.enable": "true",
        "offset.storage.topic": "connect-offsets",
        "offset.storage.replication.factor": "1",
        "config.storage.topic": "connect-configs",
        "status.storage.topic": "connect-status",
        "listeners": "HTTP://:8083",
        "plugin.path": "/usr/share/java,/opt/connectors",
    }


@pytest.mark.parametrize(
    ("listeners", "expected"),
    [
        pytest.param("http://:8083", "http://127.0.0.1:8083", id="empty-host"),
        pytest.param("http://0.0.0.0:8083", "http://127.0.0.1:8083", id="ipv4-wildcard"),
        pytest.param("http://[::]:8083", "http://127.0.0.1:8083", id="ipv6-wildcard"),
        pytest.param("http://connect-1.example:18083", "http://connect-1.example:18083", id="named-host"),
        pytest.param("http://[::1]:8083", "http://[::1]:8083", id="ipv6-host"),
        pytest.param("HTTP://:8083", "http://127.0.0.1:8083", id="upper-case-scheme"),
        pytest.param("https://:8443", "https://127.0.0.1:8443", id="https"),
        pytest.param("https://:8443,http://:8083", "https://127.0.0.1:8443", id="first-wins"),
        pytest.param(" http://:8083 , https://:8443", "http://127.0.0.1:8083", id="spaces"),
        pytest.param("nonsense,http://:8083", "http://127.0.0.1:8083", id="skips-no-scheme"),
        pytest.param("http://host,http://:8083", "http://127.0.0.1:8083", id="skips-no-port"),
        pytest.param("", None, id="empty"),
        pytest.param("http://host", None, id="no-port"),
        pytest.param("localhost:8083", None, id="no-scheme"),
    ],
)
def test_connect_url_from_listeners(listeners: str, expected: str | None) -> None:
    assert connect_url_from_listeners(listeners) == expected

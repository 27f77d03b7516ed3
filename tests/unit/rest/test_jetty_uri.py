"""Jetty 12's check of a request path (control_plane/rest/routing/jetty_uri.py), target by target as the Connect
4.3.1 worker answered each on the test stack (raw sockets): the message on its 400 page, and
whether it refused before reading the method (``/badMessage``) or after (``/badURI``)."""

from __future__ import annotations

import random
import string

import pytest

from control_plane.rest.routing import jetty_uri
from control_plane.rest.routing.jetty_uri import BAD_MESSAGE, UriRefusal, refusal

SEP, SEG, EMPTY = "Ambiguous URI path separator", "Ambiguous URI path segment", "Ambiguous URI empty segment"


@pytest.mark.parametrize(
    ("target", "message"),
    [
        (b"/connectors/xa%2Fb/status", SEP),
        (b"/connectors/..%2Fx/status", SEP),
        (b"/connectors/a%2F..%2F..%2F..%2Fb/status", SEP),
        (b"/connectors/%2E%2E/status", SEG),
        (b"/connectors/%2e/status", SEG),
        (b"/connectors/x/tasks/%2e/status", SEG),
        (b"/connectors/..;a/status", "Ambiguous URI path parameter"),
        (b"/connectors/.;a/status", "Ambiguous URI path parameter"),
        (b"/connectors/a%25b/status", "Ambiguous URI path encoding"),
        (b"/connectors/a%2fb%25/status", f"{SEP}, Ambiguous URI path encoding"),
        (b"/connectors/a%u0041/status", "UTF-16 encoding"),
        (b"/connectors/caf%E9/status", "Bad UTF-8 encoding"),
        (b"/connectors/caf%C3", "Bad UTF-8 encoding"),
        (b"/connectors/%C0%80/status", "Bad UTF-8 encoding"),
        (b"/connectors/%ED%A0%80/status", "Bad UTF-8 encoding"),
        (b"/connectors/a%5Cb/status", "Suspicious Path Character"),
        (b"/connectors/a%01b/status", "Suspicious Path Character"),
        (b"/connectors/a%7Fb/status", "Suspicious Path Character"),
        (b"/connectors/a\\b/status", "Suspicious Path Character, Illegal Path Character"),
        (b'/connectors/a"b/status', "Illegal Path Character"),
        (b"/connectors/a[b]/status", "Illegal Path Character"),
        (b"/connectors/caf\xc3\xa9/status", "Illegal Path Character"),
        (b"/connectors//status", EMPTY),
        (b"//connectors/x/status", EMPTY),
        (b"/connectors/x/status//", EMPTY),
        (b"/connectors/;x/status", EMPTY),
    ],
)
def test_violations_are_named_in_jettys_order(target: bytes, message: str) -> None:
    assert refusal(target) == UriRefusal(message, "/badURI")


@pytest.mark.parametrize(
    "target",
    [
        b"/connectors/a%00b/status",
        b"/connectors/a%ZZb/status",
        b"/connectors/a%2/status",
        b"/connectors/a%/status",
        b"/connectors/a%u00/status",
        b"/..",
        b"/connectors/../..",
        b"/connectors/%2e%2e/%2e%2e/x",
        b"/connectors/caf\xc2\x80/status",
    ],
)
def test_what_jetty_cannot_parse_is_refused_before_the_method(target: bytes) -> None:
    assert refusal(target) == BAD_MESSAGE
    assert BAD_MESSAGE.before_method


@pytest.mark.parametrize(
    "target",
    [
        b"/connectors/x/status/",
        b"/connectors/./status",
        b"/connectors/../status",
        b"/connectors/x/./status",
        b"/connectors/y/../x/status",
        b"/connectors/x;a/../y/status",
        b"/connectors/xa%2E%2E/status",
        b"/connectors/caf%C3%A9/status",
        b"/connectors/a%3Bb;c/status",
        b"/connectors/x;a%E9/status",
        b"/connectors/x/status;a",
        b"/connectors/x/status/;a",
        b"/connectors/x/status%3F",
        b"/connectors;%2e%2e",
    ],
)
def test_what_jetty_takes(target: bytes) -> None:
    assert refusal(target) is None


def test_the_plain_paths_taken_without_the_parse_are_ones_the_parse_takes() -> None:
    """``refusal``'s shortcut (``_PLAIN``): every path it takes, the full parse takes too."""
    rng = random.Random(13)
    first, rest = string.ascii_letters + string.digits + "_~-", string.ascii_letters + string.digits + "._~-"
    paths = ["/connectors/c/status", "/a..b/c.", "/-/~/_", "/x.y.z/a.."]
    for _ in range(2000):
        segments = [
            rng.choice(first) + "".join(rng.choices(rest, k=rng.randrange(0, 6))) for _ in range(rng.randrange(1, 5))
        ]
        paths.append("/" + "/".join(segments))
    for path in paths:
        assert jetty_uri._PLAIN.fullmatch(path.encode()), path
        assert not jetty_uri._Parse(path).violations(), path
    for path in ("/", "/a//b", "/a/", "/./a", "/../a", "/.a", "/a;x", "/a%41", "/a b", "/a\\b"):
        assert not jetty_uri._PLAIN.fullmatch(path.encode()), path

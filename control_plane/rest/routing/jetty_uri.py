"""Jetty 12's check of a request target's path, as Connect 4.4.0's worker applies it to every request before
any resource: ``HttpURI`` (jetty-http 12.0.39) parses an origin-form target from its first ``/`` and notes
its violations, ``UriCompliance.DEFAULT`` (= ``RFC3986``, which Connect's ``RestServer`` keeps) allows none
of them, and ``HttpConnection`` refuses the request with a 400 whose message names them.

Two kinds of refusal, measured on the 4.4.0 worker (scripts/http_probe.py, tests/support/http_cases.py):

- the target cannot be parsed at all (an encoded NUL, a ``%`` not followed by two hex digits, dot segments
  that climb above the root, the character U+0080): Jetty answers before it knows the method, with its
  error page for ``Bad Request`` and the URI ``/badMessage``, whatever the method;
- the target parses with violations: the page names them, in ``UriCompliance.Violation`` order joined by
  ``", "``, with the request's URI (``jaxrs.request_uri``: scheme, host and target; 12.0.34 wrote
  ``/badURI``); as for every error page Jetty writes, only for GET, POST and HEAD
  (an empty 400 otherwise).

The violations (``HttpURI.Mutable.parse``, ``checkSegment``, ``URIUtil.canonicalPath``): an encoded dot
segment (``%2e``, ``.%2e``; a dot segment followed by ``;`` is an ambiguous path parameter), an empty segment
other than the last, an encoded ``/`` or ``%``, ``%uXXXX``, encoded bytes that are not UTF-8, a control
character or ``\\`` (encoded or not), and a literal character outside RFC 3986's ``pchar``. Matrix
parameters (``;...``) are skipped when the path is decoded. The query is not checked.

Written by hand because it must refuse exactly what Jetty 12 refuses, with Jetty's messages, and no Python
URI library applies Jetty's ``UriCompliance`` rules; compared with a real 4.4.0 worker's answers.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass

# UriCompliance.Violation, in declaration order (the order of the message), with its description
SEGMENT = "Ambiguous URI path segment"
EMPTY_SEGMENT = "Ambiguous URI empty segment"
SEPARATOR = "Ambiguous URI path separator"
PARAMETER = "Ambiguous URI path parameter"
ENCODING = "Ambiguous URI path encoding"
UTF16 = "UTF-16 encoding"
BAD_UTF8 = "Bad UTF-8 encoding"
SUSPICIOUS = "Suspicious Path Character"
ILLEGAL = "Illegal Path Character"
ORDER = (SEGMENT, EMPTY_SEGMENT, SEPARATOR, PARAMETER, ENCODING, UTF16, BAD_UTF8, SUSPICIOUS, ILLEGAL)

# HttpURI's index of dot segments (case-insensitive): True always ambiguous, False only before a parameter
_DOT_SEGMENTS = {".": False, "..": False}
_DOT_SEGMENTS |= dict.fromkeys(
    ["%2e", "%u002e", ".%2e", ".%u002e", "%2e.", "%2e%2e", "%2e%u002e", "%u002e.", "%u002e%2e", "%u002e%u002e"], True
)
_PCHAR = frozenset(string.ascii_letters + string.digits + "-._~" + "%" + "!$&'()*+,;=" + ":@")
_HEX = frozenset(string.hexdigits)


def _suspicious(code: int) -> bool:
    return code <= 0x1F or code in (0x5C, 0x7F)


class Unparsable(ValueError):
    """Where Jetty's parser throws: the request is refused before its method is known."""


@dataclass(frozen=True)
class UriRefusal:
    """Jetty 12's 400 for a target: ``message``, and ``/badMessage`` where the parse fails before the method
    (the URI on its page); ``/badURI`` otherwise, where the page names the request's URI."""

    message: str
    uri: str

    @property
    def before_method(self) -> bool:
        return self.uri == "/badMessage"


BAD_MESSAGE = UriRefusal("Bad Request", "/badMessage")


# a path of non-empty segments of unreserved characters, none starting with a dot: nothing for Jetty to
# refuse (no encoding, parameter, dot or empty segment, nor any suspicious or illegal character); the
# usual request's path, taken without the parse
_PLAIN = re.compile(rb"(?:/[A-Za-z0-9_~-][A-Za-z0-9._~-]*)+")


def refusal(target: bytes) -> UriRefusal | None:
    """Jetty 12's refusal of an origin-form ``target`` (path and query, as sent), or None if it takes it."""
    if _PLAIN.fullmatch(target):
        return None
    try:
        found = _Parse(target.decode("utf-8", "replace")).violations()
    except Unparsable:
        return BAD_MESSAGE
    if not found:
        return None
    return UriRefusal(", ".join(v for v in ORDER if v in found), "/badURI")


class _Parse:
    """HttpURI.Mutable.parse from its PATH state (a target starting with ``/``), only what finds violations."""

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self.found: set[str] = set()
        self.empty_segment = False

    def violations(self) -> set[str]:
        uri, path_end = self.uri, len(self.uri)
        segment, encoded, dot, param = 0, False, False, False
        escape, utf16 = 0, False  # hex digits still to read in a %XX (or %uXXXX), and whether it is %u
        value = 0
        i = 0
        while i < len(uri):
            c = uri[i]
            if param:
                if c in "?#":
                    path_end = i
                    break
                if c == "/":
                    encoded, segment, param = True, i + 1, False
            elif escape:
                if escape == 2 and c == "u" and not utf16:
                    self.found.add(UTF16)
                    utf16, escape = True, 4
                else:
                    if c not in _HEX:
                        raise Unparsable("TypeUtil.convertHexDigit")
                    value, escape = value * 16 + int(c, 16), escape - 1
                    if not escape:
                        self._decoded(value)
            elif c == ";":
                self._segment(dot or encoded, segment, i, param=True)
                param = True
            elif c in "?#":
                self._segment(dot or encoded, segment, i, param=False)
                path_end = i
                break
            elif c == "/":
                if i:
                    self._segment(dot or encoded, segment, i, param=False)
                segment = i + 1
            elif c == ".":
                dot |= segment == i
            elif c == "%":
                encoded, utf16, escape, value = True, False, 2, 0
            else:
                if ord(c) == 0x80:
                    raise Unparsable("ArrayIndexOutOfBoundsException in HttpURI's table of path characters")
                if c not in _PCHAR:
                    self.found.add(ILLEGAL)
                if ord(c) < 0x80 and _suspicious(ord(c)):
                    self.found.add(SUSPICIOUS)
            i += 1
        else:
            if not param:
                self._segment(dot or encoded, segment, len(uri), param=False)
        if encoded or dot:
            self._canonical(uri[:path_end])
        return self.found

    def _decoded(self, value: int) -> None:
        if value == 0:
            raise Unparsable("Illegal character in path")
        if value == ord("/"):
            self.found.add(SEPARATOR)
        elif value == ord("%"):
            self.found.add(ENCODING)
        elif value < 0x80 and _suspicious(value):
            self.found.add(SUSPICIOUS)

    def _segment(self, dot_or_encoded: bool, start: int, end: int, *, param: bool) -> None:
        """checkSegment: an empty segment is ambiguous once another follows it; dot segments by the index."""
        if self.empty_segment:
            self.found.add(EMPTY_SEGMENT)
        if end == start:
            if end >= len(self.uri) or self.uri[end] in "#?":
                return
            if not self.empty_segment:
                self.empty_segment = True
                return
        ambiguous = _DOT_SEGMENTS.get(self.uri[start:end].lower()) if dot_or_encoded else None
        if ambiguous is not None:
            if ambiguous:
                self.found.add(SEGMENT)
            if param:
                self.found.add(PARAMETER)

    def _canonical(self, path: str) -> None:
        """URIUtil.canonicalPath: decode (UTF-8, parameters dropped), then normalise the dot segments; bad
        UTF-8 is a violation, an incomplete escape or a path above the root cannot be parsed."""
        decoded = bytearray()
        normal, slash = True, True
        i = 0
        while i < len(path):
            c = path[i]
            if c == "%":
                if i + 2 >= len(path):
                    raise Unparsable("Bad URI % encoding")
                if path[i + 1] == "u":
                    digits = path[i + 2 : i + 6]
                    if len(digits) < 4 or not set(digits) <= _HEX:
                        raise Unparsable("TypeUtil.parseInt")
                    char = chr(int(digits, 16))
                    normal = normal and not (slash and char == ".")
                    decoded += char.encode("utf-8", "surrogatepass")
                    i += 5
                else:
                    code = int(path[i + 1 : i + 3], 16)
                    normal = normal and not (slash and code == ord("."))
                    decoded.append(code)
                    i += 2
            elif c == ";":
                end = path.find("/", i)
                i = len(path) if end < 0 else end
                if end >= 0:
                    decoded += b"/"
            else:
                if c == "." and slash:
                    normal = False
                decoded += c.encode("utf-8")
            slash = c == "/"
            i += 1
        try:
            text = decoded.decode("utf-8")
        except UnicodeDecodeError:
            self.found.add(BAD_UTF8)
            text = decoded.decode("utf-8", "replace")
        if not normal and not _normalisable(text):
            raise Unparsable("Bad URI")


def _normalisable(path: str) -> bool:
    """Whether URIUtil.normalizePath resolves the dot segments without climbing above the root."""
    depth = 0
    for segment in path.split("/")[1:]:
        if segment == "..":
            if depth == 0:
                return False
            depth -= 1
        elif segment != ".":
            depth += 1
    return True


__all__ = ["BAD_MESSAGE", "UriRefusal", "refusal"]

"""The worker's own HTTP stack, for the routes the sidecar answers itself: what Jetty 12 and Jersey in
Connect 4.4.0 answer for the same bytes before (or instead of) the resource method.

``JerseyResource`` matches a path as Jersey does (on the raw path: literal segments compare encoded, so
``/stat%75s`` is not ``/status``; matrix parameters ``;x`` are dropped from every segment; path parameters
are decoded; one trailing slash allowed; an empty segment is not this route) and answers, in the order
measured on the 4.4.0 worker (scripts/http_probe.py, cases in tests/unit/rest/test_http_conformance.py):

1. Jetty's limits (``HttpConfiguration`` defaults, as Connect's ``RestServer`` keeps them): a request
   line over 8200 bytes is 414, a request head over 8192 bytes is 431, with Jetty's HTML error page; and
   Jetty 12's check of the path (jetty_uri.py: encoded ``/``, ``%``, ``\\``, control characters and dot
   segments, empty segments, bad UTF-8, characters outside RFC 3986): its 400, a target it cannot parse
   (``%00``) before the 431, one with violations after it (this route's path is then matched with its
   parameters possibly empty: ``/connectors//status`` is Jetty's 400, here as on the worker);
2. a ``Content-Type`` that is not one media type: 400 (Jetty's error page for GET/POST/HEAD, no body
   otherwise);
3. a method the 4.4.0 resource does not have: 405 ``HTTP 405 Method Not Allowed`` without ``Allow``
   (ConnectExceptionMapper over Jersey's NotAllowedException); ``OPTIONS``: Jersey's own 200 with
   ``Allow`` in its ``HashSet`` order;
4. a ``Content-Type`` outside ``@Consumes(application/json)``: 415 (a resource without ``@Consumes``,
   ``RootResource``, takes any); then an ``Accept`` with a bad ``q``:
   400; an ``Accept`` without a type ``@Produces(application/json)`` satisfies: 406 (``q`` is ignored);
5. where the method reads an entity: a wildcard ``Content-Type``, or none with a body, has no JSON
   reader: 415 (with ``Content-Type: application/json``, the method being chosen by then);
6. an ``{name:int}`` parameter ``Integer.valueOf`` cannot read (`` 0``, ``0_0``, ``2147483648``): 404.

The errors Jersey raises before a method is chosen carry no ``Content-Type``: that is what the worker
sends. Connect 3.4.1 (Jetty 9) differs in places (it takes most of what Jetty 12 refuses in a path: an
encoded ``/`` or ``%``, an empty segment; its limits fall a few bytes apart); on these routes the sidecar
answers as 4.4.0 on every worker. The targets it passes through reach the worker's own Jetty unchanged.

Written by hand because it must answer byte for byte what the worker's Jersey 3 and Jetty 12 answer, and no
Python library does: the worker's answers are the specification, and the integration test
(tests/integration/test_http_conformance.py) compares them with a real 4.4.0 worker's.
"""

from __future__ import annotations

import html
import re
from collections.abc import Collection, Mapping
from urllib.parse import unquote

from starlette.datastructures import Headers
from starlette.responses import Response

from ...codecs.javalang import java_hash_map_order, java_parse_int
from ...domain.cluster.versions import Version
from ..errors import error_body
from ..request.exchange import Exchange, Handler
from . import jetty_uri

JETTY = "12.0.39"  # the Jetty of Connect 4.4.0, named on its error pages
JETTY_12_SINCE = Version((4, 0, 0))  # connect-runtime 4.0.0 moved from Jetty 9.4 to 12.0 (KIP-1032)
MAX_REQUEST_LINE = 8200  # measured on 4.4.0: 8201 bytes and more is 414
MAX_REQUEST_HEAD = 8192  # HttpConfiguration.requestHeaderSize: more is 431
JSON = "application/json"
NO_CACHE = "must-revalidate,no-cache,no-store"  # on Jetty's own error answers

_TOKEN = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_MEDIA_TYPE = re.compile(rf"\s*({_TOKEN})/({_TOKEN})\s*((?:;[^;]*)*)")


def jersey_error(status: int, reason: str, *, typed: bool = False) -> Response:
    """Jersey's exception for ``status`` through ConnectExceptionMapper: ``HTTP {status} {reason}``."""
    return Response(
        error_body(status, f"HTTP {status} {reason}"), status_code=status, media_type=JSON if typed else None
    )


def _jetty_escaped(text: str) -> str:
    """A URI as Jetty 12.0.39's ErrorHandler writes it (measured on Connect 4.4.0): ``&<>"'`` escaped."""
    return html.escape(text).replace("&#x27;", "&apos;")


def jetty_error_page(status: int, message: str, uri: str) -> Response:
    """Jetty 12's ``ErrorHandler`` page, byte for byte."""
    title = f"{status} {html.escape(message, quote=False)}"
    page = (
        '<html>\n<head>\n<meta http-equiv="Content-Type" content="text/html;charset=ISO-8859-1"/>\n'
        f"<title>Error {title}</title>\n</head>\n<body>\n<h2>HTTP ERROR {title}</h2>\n<table>\n"
        f"<tr><th>URI:</th><td>{_jetty_escaped(uri)}</td></tr>\n"
        f"<tr><th>STATUS:</th><td>{status}</td></tr>\n"
        f"<tr><th>MESSAGE:</th><td>{html.escape(message, quote=False)}</td></tr>\n</table>\n"
        f'<hr/><a href="https://jetty.org/">Powered by Jetty:// {JETTY}</a><hr/>\n\n</body>\n</html>\n'
    )
    return Response(
        page.encode("iso-8859-1", "replace"),
        status_code=status,
        headers={"cache-control": NO_CACHE},
        media_type="text/html;charset=iso-8859-1",
    )


def request_uri(exchange: Exchange, headers: Headers) -> str:
    """The request's URI as Jetty 12 names it on an error page of a request it parsed (``Request.getHttpURI``):
    the scheme, the ``Host`` (the local address without one; the scheme's default port left out), the
    target as sent."""
    default = ":443" if exchange.scheme == "https" else ":80"
    host = headers.get("host")
    if host is None and exchange.server is not None:
        address, port = exchange.server
        host = f"[{address}]:{port}" if ":" in address else f"{address}:{port}"
    authority = (host or "").removesuffix(default)
    query = f"?{exchange.query.decode('latin-1')}" if exchange.query else ""
    return f"{exchange.scheme}://{authority}{exchange.raw_path.decode('latin-1')}{query}"


def _bare_400(method: str, uri: str, message: str = "Bad Request") -> Response:
    """Jetty's error page where Jetty writes one (GET, POST, HEAD), an empty 400 otherwise: Jersey's
    response to a header it cannot parse, Jetty's to a path with violations."""
    if method in ("GET", "POST", "HEAD"):
        return jetty_error_page(400, message, uri)
    return _empty_400()


def _empty_400() -> Response:
    return Response(b"", status_code=400, headers={"cache-control": NO_CACHE})


def media_type(text: str) -> tuple[str, str, dict[str, str]] | None:
    """``MediaType.valueOf``: (type, subtype, parameters) lower-cased, or None where Jersey cannot parse."""
    found = _MEDIA_TYPE.fullmatch(text)
    if found is None:
        return None
    params: dict[str, str] = {}
    for part in found.group(3).split(";")[1:]:
        name, eq, value = part.partition("=")
        if part.strip() and not eq:
            return None
        if part.strip():
            params[name.strip().lower()] = value.strip()
    return found.group(1).lower(), found.group(2).lower(), params


def json_compatible(kind: str, subtype: str) -> bool:
    return kind in ("*", "application") and subtype in ("*", "json")


def accepts_json(accept: str) -> bool | None:
    """Jersey's reading of ``Accept`` against ``@Produces(application/json)``: whether any entry fits (its
    ``q`` ignored, a bare ``*`` or ``type`` meaning ``*/*`` and ``type/*``); None where a ``q`` is not a
    number (400)."""
    fits = not accept.strip()
    for entry in accept.split(","):
        name, _, rest = entry.strip().partition(";")
        for param in rest.split(";"):
            key, _, value = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    float(value.strip())
                except ValueError:
                    return None
        kind, _, subtype = name.strip().lower().partition("/")
        if kind == "*" and not subtype:
            subtype = "*"
        fits = fits or json_compatible(kind, subtype or "*")
    return fits


def jersey_allow(methods: Collection[str]) -> list[str]:
    """The methods Jersey lists for ``OPTIONS``: the resource's, HEAD with GET, OPTIONS, in HashSet order."""
    every = {*methods, "OPTIONS", *(("HEAD",) if "GET" in methods else ())}
    return list(java_hash_map_order(dict.fromkeys(sorted(every))))


def _has_body(headers: Headers) -> bool:
    length = headers.get("content-length", "0").strip()
    return "transfer-encoding" in headers or (length.isdigit() and int(length) > 0)


def jetty_refusal(exchange: Exchange) -> Response | None:
    """What Jetty 12 answers before any resource is matched, or None: its limits on the request line and
    head (414, 431), its check of the path (400, ``jetty_uri``), in the order the 4.4.0 worker answers."""
    method, raw = exchange.method, exchange.raw_path
    line, head = _head_size(exchange)
    if line > MAX_REQUEST_LINE:
        return jetty_error_page(414, "URI Too Long", "/badMessage")
    uri = jetty_uri.refusal(raw)
    if uri is not None and uri.before_method:
        return jetty_error_page(400, uri.message, uri.uri)
    if head > MAX_REQUEST_HEAD:
        query = f"?{exchange.query.decode('latin-1')}" if exchange.query else ""
        return jetty_error_page(431, "Request Header Fields Too Large", raw.decode("latin-1") + query)
    if uri is not None:
        return _bare_400(method, request_uri(exchange, Headers(raw=exchange.headers)), uri.message)
    return None


def _head_size(exchange: Exchange) -> tuple[int, int]:
    """(request line, whole head) in bytes, as a client writing ``name: value`` sent them."""
    query = exchange.query
    target = len(exchange.raw_path) + (len(query) + 1 if query else 0)
    line = len(exchange.method) + 1 + target + len(" HTTP/1.1")
    head = line + 2 + sum(len(n) + 2 + len(v) + 2 for n, v in exchange.headers) + 2
    return line, head


def template_segments(template: str) -> list[bytes]:
    """A resource path template (``/connectors/{connector}``) as the segments ``path_params`` matches."""
    return [s.encode() for s in template.strip("/").split("/")]


def path_params(template: list[bytes], raw: bytes) -> dict[str, str] | None:
    """The path parameters of the raw path ``raw`` (still percent-encoded) if it matches the resource
    ``template`` (``template_segments``) as Jersey matches it, else None."""
    segments = raw.split(b"/")
    if segments[0] != b"":
        return None
    segments = segments[1:]
    if len(segments) > 1 and segments[-1] == b"":
        segments = segments[:-1]  # one trailing slash: the same resource
    if len(segments) != len(template):
        return None
    params: dict[str, str] = {}
    for got, want in zip(segments, template, strict=True):
        bare = got.split(b";", 1)[0]  # matrix parameters are not part of the match
        if want.startswith(b"{"):  # empty: Jetty 12 refuses the target (an empty segment before another)
            params[want[1:-1].decode().removesuffix(":int")] = unquote(
                bare.decode("latin-1"), encoding="utf-8", errors="replace"
            )
        elif bare != want:
            return None
    return params


def _negotiation(headers: Headers, content_type: tuple[str, str, dict[str, str]] | None) -> Response | None:
    """Jersey's content negotiation for a method that ``@Consumes`` and ``@Produces`` application/json:
    415 for a ``content_type`` it does not consume, then a 400 for an ``Accept`` it cannot read, 406 for one
    that takes no JSON."""
    if content_type is not None and not json_compatible(*content_type[:2]):
        return jersey_error(415, "Unsupported Media Type")
    acceptable = accepts_json(", ".join(headers.getlist("accept")))
    if acceptable is None:
        return _empty_400()
    if not acceptable:
        return jersey_error(406, "Not Acceptable")
    return None


def negotiation_refusal(exchange: Exchange) -> Response | None:
    """What Connect 4.4.0 answers, before the resource method, to a JSON resource's request whose media types
    it cannot serve (a ``Content-Type`` Jetty cannot parse: its 400; else ``_negotiation``), or None."""
    headers = Headers(raw=exchange.headers)
    types = headers.getlist("content-type")
    content_type = media_type(types[0]) if len(types) == 1 else None
    if types and content_type is None:
        return _bare_400(exchange.method, f"http://{headers.get('host', '')}{exchange.raw_path.decode('latin-1')}")
    return _negotiation(headers, content_type)


class JerseyResource:
    """A Connect resource path the sidecar answers for the methods of ``handlers``; ``resource_methods`` are the
    methods Connect 4.4.0's resource has on it (the others go through to the worker), ``reads_entity`` those
    that read a JSON body; ``consumes_json``: the resource declares ``@Consumes(application/json)``. Built
    from the route table (``rest.routing.routes``) by ``rest.routing.router``."""

    def __init__(
        self,
        path: str,
        handlers: Mapping[str, Handler],
        *,
        resource_methods: Collection[str],
        reads_entity: Collection[str] = (),
        consumes_json: bool = True,
    ) -> None:
        self.path = path
        self.consumes_json = consumes_json
        self.handlers = {**handlers, **({"HEAD": handlers["GET"]} if "GET" in handlers else {})}
        self.resource_methods = frozenset(resource_methods)
        self.allowed = frozenset(jersey_allow(self.resource_methods))
        self.reads_entity = frozenset(reads_entity)
        self._segments = template_segments(path)
        self.int_params = [s[1:-5].decode() for s in self._segments if s.endswith(b":int}")]

    def params(self, raw: bytes) -> dict[str, str] | None:
        """The path parameters of the raw path when it is this resource's, else None."""
        return path_params(self._segments, raw)

    def takes(self, method: str) -> bool:
        """Whether the sidecar answers ``method`` here: a method it serves, one the resource lacks (Jersey's
        405), or OPTIONS (Jersey's own answer); the resource's other methods are the worker's."""
        return method in self.handlers or method not in self.allowed or method == "OPTIONS"

    def refusal(self, exchange: Exchange, params: Mapping[str, str]) -> Response | None:
        """What the worker's HTTP stack answers before the resource method, or None to call it."""
        refused = jetty_refusal(exchange)
        if refused is not None:
            return refused
        method, headers = exchange.method, Headers(raw=exchange.headers)
        types = headers.getlist("content-type")
        content_type = media_type(types[0]) if len(types) == 1 else None
        if types and content_type is None:
            return _bare_400(method, request_uri(exchange, headers))
        if method == "OPTIONS":
            return self._options(headers)
        if method not in self.allowed:
            return jersey_error(405, "Method Not Allowed")
        negotiated = _negotiation(headers, content_type if self.consumes_json else None)
        if negotiated is not None:
            return negotiated
        if method in self.reads_entity:
            wildcard = content_type is not None and "*" in (content_type[0], content_type[1])
            if wildcard or (content_type is None and _has_body(headers)):
                return jersey_error(415, "Unsupported Media Type", typed=True)
        # an ``Integer`` @PathParam that Java cannot parse (" 0", "0_0"): Jersey's 404, the method chosen
        if any(java_parse_int(params[name]) is None for name in self.int_params):
            return jersey_error(404, "Not Found", typed=True)
        return None

    def _options(self, headers: Headers) -> Response:
        """Jersey's OPTIONS: the methods as plain text, or an empty JSON answer to a client asking for JSON."""
        allow = ",".join(jersey_allow(self.resource_methods))
        if JSON in ",".join(headers.getlist("accept")).lower():
            return Response(b"", headers={"allow": allow, "content-type": JSON})
        text = ", ".join(jersey_allow(self.resource_methods)).encode()
        return Response(text, headers={"allow": allow, "content-type": "text/plain"})


__all__ = [
    "JETTY_12_SINCE",
    "JerseyResource",
    "accepts_json",
    "jersey_allow",
    "jersey_error",
    "jetty_error_page",
    "jetty_refusal",
    "media_type",
    "negotiation_refusal",
    "path_params",
    "template_segments",
]

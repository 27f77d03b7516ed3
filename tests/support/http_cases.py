"""Raw HTTP requests to the paths the sidecar answers itself, with what Connect 4.4.0's worker (Jetty
12.0.39 + Jersey) answered them, recorded on the test stack with ``scripts/http_probe.py``.
The unit tests send the bytes to a sidecar; the integration test sends them to the sidecar and to the real
worker and compares; the probe prints all three side by side.

``C`` in a target is a connector name that exists nowhere. ``expected`` is (status, Content-Type or None,
body); None as the body: not checked here (the answer depends on the cluster, the integration test compares
it with the worker's). ``own``: the sidecar answers before any handler, so a unit test can check it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

C = "nope-httpconf"
CACHE = "must-revalidate,no-cache,no-store"


def connect(status: int, reason: str) -> bytes:
    return b'{"error_code":%d,"message":"HTTP %d %s"}' % (status, status, reason.encode())


NOT_FOUND = connect(404, "Not Found")
NOT_ALLOWED = connect(405, "Method Not Allowed")
NOT_ACCEPTABLE = connect(406, "Not Acceptable")
UNSUPPORTED = connect(415, "Unsupported Media Type")


def jetty_page(status: int, message: str, uri: str) -> bytes:
    title = f"{status} {message}"
    return (
        '<html>\n<head>\n<meta http-equiv="Content-Type" content="text/html;charset=ISO-8859-1"/>\n'
        f"<title>Error {title}</title>\n</head>\n<body>\n<h2>HTTP ERROR {title}</h2>\n<table>\n"
        f"<tr><th>URI:</th><td>{uri}</td></tr>\n<tr><th>STATUS:</th><td>{status}</td></tr>\n"
        f"<tr><th>MESSAGE:</th><td>{message}</td></tr>\n</table>\n"
        '<hr/><a href="https://jetty.org/">Powered by Jetty:// 12.0.39</a><hr/>\n\n</body>\n</html>\n'
    ).encode()


def named(target: str) -> str:
    """The request's URI as Jetty 12.0.39 names it on the page of a target it refuses (the Host sent: ``x``)."""
    return f"http://x{target.replace('{c}', C)}"


HTML = "text/html;charset=iso-8859-1"
LONG = "/connectors/" + "a" * (8201 - len("GET /connectors//status HTTP/1.1")) + "/status"  # a line of 8201 bytes


@dataclass(frozen=True)
class Case:
    id: str
    method: str
    target: str
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    expected: tuple[int, str | None, bytes | None] = (200, None, None)
    own: bool = True
    extra: dict[str, str] = field(default_factory=dict)  # response headers the worker sent, to check
    names_worker: bool = False  # the body names the worker behind (GET /: its commit): not compared here

    def request(self, host: str = "x") -> bytes:
        lines = [f"{self.method} {self.target.replace('{c}', C)} HTTP/1.1", f"Host: {host}", "Connection: close"]
        lines += [f"{k}: {v}" for k, v in self.headers]
        if self.body:
            lines.append(f"Content-Length: {len(self.body)}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + self.body


J = (("Content-Type", "application/json"),)
CASES = [
    # task ids: Integer.valueOf on the @PathParam; what it cannot read is Jersey's 404
    Case("task-space", "GET", "/connectors/{c}/tasks/%200/status", expected=(404, "application/json", NOT_FOUND)),
    Case("task-underscore", "GET", "/connectors/{c}/tasks/0_0/status", expected=(404, "application/json", NOT_FOUND)),
    Case(
        "task-overflow", "GET", "/connectors/{c}/tasks/2147483648/status", expected=(404, "application/json", NOT_FOUND)
    ),
    Case("task-x", "GET", "/connectors/{c}/tasks/x/status", expected=(404, "application/json", NOT_FOUND)),
    Case("task-plus", "GET", "/connectors/{c}/tasks/+0/status", expected=(404, "application/json", None), own=False),
    Case("task-00", "GET", "/connectors/{c}/tasks/00/status", expected=(404, "application/json", None), own=False),
    Case("task-minus", "GET", "/connectors/{c}/tasks/-1/status", expected=(404, "application/json", None), own=False),
    # RootResource (GET / and GET /health) declares no @Consumes: it takes any Content-Type
    Case(
        "ct-text-root",
        "GET",
        "/",
        (("Content-Type", "text/plain"),),
        expected=(200, "application/json", None),
        own=False,
        names_worker=True,
    ),
    Case(
        "ct-xml-health",
        "GET",
        "/health",
        (("Content-Type", "application/xml"),),
        expected=(200, "application/json", None),
        own=False,
    ),
    Case(
        "ct-wild-health",
        "GET",
        "/health",
        (("Content-Type", "*/*"),),
        expected=(200, "application/json", None),
        own=False,
    ),
    # Content-Type: @Consumes(application/json) on every method, a body or not
    Case(
        "ct-text-get",
        "GET",
        "/connectors/{c}/status",
        (("Content-Type", "text/plain"),),
        expected=(415, None, UNSUPPORTED),
    ),
    Case(
        "ct-text-put",
        "PUT",
        "/connectors/{c}/stop",
        (("Content-Type", "text/plain"),),
        b"{}",
        expected=(415, None, UNSUPPORTED),
    ),
    Case(
        "ct-xml-patch",
        "PATCH",
        "/connectors/{c}/offsets",
        (("Content-Type", "application/xml"),),
        b"{}",
        expected=(415, None, UNSUPPORTED),
    ),
    Case(
        "ct-vnd-json",
        "GET",
        "/connectors/{c}/status",
        (("Content-Type", "application/vnd.api+json"),),
        expected=(415, None, UNSUPPORTED),
    ),
    Case(
        "ct-none-patch",
        "PATCH",
        "/connectors/{c}/offsets",
        (),
        b'{"offsets":[]}',
        expected=(415, "application/json", UNSUPPORTED),
    ),
    Case(
        "ct-wildcard-patch",
        "PATCH",
        "/connectors/{c}/offsets",
        (("Content-Type", "*/*"),),
        b'{"offsets":[]}',
        expected=(415, "application/json", UNSUPPORTED),
    ),
    Case(
        "ct-charset-patch",
        "PATCH",
        "/connectors/{c}/offsets",
        (("Content-Type", "application/json; charset=utf-8"),),
        b'{"offsets":[]}',
        expected=(400, "application/json", None),
        own=False,
    ),
    Case(
        "ct-none-put-body",
        "PUT",
        "/connectors/{c}/stop",
        (),
        b"{}",
        expected=(404, "application/json", None),
        own=False,
    ),
    Case(
        "ct-garbage-get",
        "GET",
        "/connectors/{c}/status",
        (("Content-Type", "garbage"),),
        expected=(400, HTML, jetty_page(400, "Bad Request", f"http://x/connectors/{C}/status")),
    ),
    Case(
        "ct-garbage-delete",
        "DELETE",
        "/connectors/{c}/offsets",
        (("Content-Type", "garbage"),),
        expected=(400, None, b""),
        extra={"cache-control": CACHE},
    ),
    # Accept: @Produces(application/json); q is ignored
    Case(
        "accept-html", "GET", "/connectors/{c}/status", (("Accept", "text/html"),), expected=(406, None, NOT_ACCEPTABLE)
    ),
    Case("accept-html-list", "GET", "/connectors", (("Accept", "text/html"),), expected=(406, None, NOT_ACCEPTABLE)),
    Case(
        "accept-garbage",
        "GET",
        "/connectors/{c}/status",
        (("Accept", "garbage"),),
        expected=(406, None, NOT_ACCEPTABLE),
    ),
    Case(
        "accept-bad-q",
        "GET",
        "/connectors/{c}/status",
        (("Accept", "application/json;q=abc"),),
        expected=(400, None, b""),
        extra={"cache-control": CACHE},
    ),
    Case(
        "accept-any",
        "GET",
        "/connectors/{c}/status",
        (("Accept", "*/*"),),
        expected=(404, "application/json", None),
        own=False,
    ),
    Case(
        "accept-application",
        "GET",
        "/connectors/{c}/status",
        (("Accept", "application/*"),),
        expected=(404, "application/json", None),
        own=False,
    ),
    Case(
        "accept-json-q0",
        "GET",
        "/connectors/{c}/status",
        (("Accept", "application/json;q=0"),),
        expected=(404, "application/json", None),
        own=False,
    ),
    Case(
        "ct-before-accept",
        "PATCH",
        "/connectors/{c}/offsets",
        (("Content-Type", "text/plain"), ("Accept", "text/html")),
        b"{}",
        expected=(415, None, UNSUPPORTED),
    ),
    Case(
        "accept-stop", "PUT", "/connectors/{c}/stop", (("Accept", "text/html"),), expected=(406, None, NOT_ACCEPTABLE)
    ),
    # methods: 405 without Allow; OPTIONS as Jersey answers it
    Case("post-status", "POST", "/connectors/{c}/status", expected=(405, None, NOT_ALLOWED)),
    Case("trace-status", "TRACE", "/connectors/{c}/status", expected=(405, None, NOT_ALLOWED)),
    Case("post-offsets", "POST", "/connectors/{c}/offsets", expected=(405, None, NOT_ALLOWED)),
    Case("get-stop", "GET", "/connectors/{c}/stop", expected=(405, None, NOT_ALLOWED)),
    Case("head-stop", "HEAD", "/connectors/{c}/stop", expected=(405, None, b"")),
    Case("put-list", "PUT", "/connectors", expected=(405, None, NOT_ALLOWED)),
    Case(
        "options-offsets",
        "OPTIONS",
        "/connectors/{c}/offsets",
        expected=(200, "text/plain", b"HEAD, DELETE, GET, OPTIONS, PATCH"),
        extra={"allow": "HEAD,DELETE,GET,OPTIONS,PATCH"},
    ),
    Case(
        "options-stop",
        "OPTIONS",
        "/connectors/{c}/stop",
        expected=(200, "text/plain", b"OPTIONS, PUT"),
        extra={"allow": "OPTIONS,PUT"},
    ),
    Case(
        "ct-garbage-post",
        "POST",
        "/connectors/{c}/status",
        (("Content-Type", "garbage"),),
        expected=(400, HTML, jetty_page(400, "Bad Request", f"http://x/connectors/{C}/status")),
    ),
    # paths: matched on the raw path, matrix parameters dropped, one trailing slash
    Case("encoded-literal", "GET", "/connectors/{c}/stat%75s", expected=(404, None, NOT_FOUND), own=False),
    Case("matrix-name", "GET", "/connectors/{c};x/status", expected=(404, "application/json", None), own=False),
    Case("matrix-literal", "GET", "/connectors;a/{c}/status;b", expected=(404, "application/json", None), own=False),
    Case("trailing-slash", "GET", "/connectors/{c}/status/", expected=(404, "application/json", None), own=False),
    Case("offsets-slash", "GET", "/connectors/{c}/offsets/", expected=(404, "application/json", None), own=False),
    # Jetty's limits: request line over 8200 bytes, request head over 8192
    Case("uri-too-long", "GET", LONG, expected=(414, HTML, jetty_page(414, "URI Too Long", "/badMessage"))),
    Case(
        "head-too-large",
        "GET",
        "/connectors",
        (("X-Pad", "p" * 8200),),
        expected=(431, HTML, jetty_page(431, "Request Header Fields Too Large", "/connectors")),
    ),
    # Jetty 12's check of the path (UriCompliance DEFAULT): its 400 before any resource, on every route and
    # method; the page for GET, POST and HEAD, an empty 400 otherwise; a target it cannot parse: the page always
    *(
        Case(f"uri-{name}", "GET", target, expected=(400, HTML, jetty_page(400, message, named(target))))
        for name, target, message in [
            ("separator", "/connectors/{c}a%2Fb/status", "Ambiguous URI path separator"),
            ("dot-up-separator", "/connectors/..%2F{c}/status", "Ambiguous URI path separator"),
            ("dot-segment", "/connectors/%2E%2E/status", "Ambiguous URI path segment"),
            ("dot-task", "/connectors/{c}/tasks/%2e/status", "Ambiguous URI path segment"),
            ("dot-parameter", "/connectors/..;x/config", "Ambiguous URI path parameter"),
            ("percent", "/connectors/{c}a%25b/topics", "Ambiguous URI path encoding"),
            ("backslash", "/connectors/{c}a%5Cb/status", "Suspicious Path Character"),
            ("control", "/connectors/{c}a%01b/offsets", "Suspicious Path Character"),
            ("raw-backslash", "/connectors/{c}a\\b/status", "Suspicious Path Character, Illegal Path Character"),
            ("illegal", "/connectors/{c}a|b/status", "Illegal Path Character"),
            ("utf-16", "/connectors/{c}a%u0041/status", "UTF-16 encoding"),
            ("bad-utf-8", "/connectors/{c}caf%E9/status", "Bad UTF-8 encoding"),
            ("truncated-utf-8", "/connectors/{c}caf%C3/config", "Bad UTF-8 encoding"),
            ("empty-name", "/connectors//status", "Ambiguous URI empty segment"),
            ("empty-matrix-name", "/connectors/;x/tasks/0/status", "Ambiguous URI empty segment"),
            ("two", "/connectors/{c}a%2Fb%25/status", "Ambiguous URI path separator, Ambiguous URI path encoding"),
        ]
    ),
    Case("uri-put-stop", "PUT", "/connectors/{c}a%2Fb/stop", expected=(400, None, b"")),
    Case("uri-delete-offsets", "DELETE", "/connectors/{c}a%25b/offsets", expected=(400, None, b"")),
    Case("uri-put-status", "PUT", "/connectors//status", expected=(400, None, b"")),
    Case(
        "uri-post-config",
        "POST",
        "/connectors//config",
        J,
        b"{}",
        expected=(400, HTML, jetty_page(400, "Ambiguous URI empty segment", named("/connectors//config"))),
    ),
    *(
        Case(f"uri-{name}", method, target, expected=(400, HTML, jetty_page(400, "Bad Request", "/badMessage")))
        for name, method, target in [
            ("nul", "GET", "/connectors/{c}a%00b/status"),
            ("nul-put", "PUT", "/connectors/{c}a%00b/stop"),
            ("bad-escape", "GET", "/connectors/{c}a%ZZ/config"),
            ("cut-escape", "DELETE", "/connectors/{c}a%2/offsets"),
        ]
    ),
    # what Jetty 12 takes: literal dot segments (Jersey matches the raw path), an encoded dot inside a name
    Case("uri-dot-name", "GET", "/connectors/./status", expected=(404, "application/json", None), own=False),
    Case(
        "uri-dots-inside", "GET", "/connectors/{c}a%2E%2E/status", expected=(404, "application/json", None), own=False
    ),
    # PATCH offsets bodies, in Connect's order: the binding (500), then no offsets (400), then the connector
    Case("body-empty", "PATCH", "/connectors/{c}/offsets", J, expected=(500, "application/json", None), own=False),
    Case(
        "body-not-json",
        "PATCH",
        "/connectors/{c}/offsets",
        J,
        b"not json",
        expected=(500, "application/json", None),
        own=False,
    ),
    Case(
        "body-array", "PATCH", "/connectors/{c}/offsets", J, b"[]", expected=(500, "application/json", None), own=False
    ),
    Case(
        "body-no-offsets",
        "PATCH",
        "/connectors/{c}/offsets",
        J,
        b"{}",
        expected=(400, "application/json", None),
        own=False,
    ),
    Case(
        "body-offsets-twice",
        "PATCH",
        "/connectors/{c}/offsets",
        J,
        b'{"offsets":[{}],"offsets":[]}',
        expected=(
            500,
            "application/json",
            b'{"error_code":500,"message":"Should never call `set()` on setterless property (\'offsets\') (through '
            b'reference chain: org.apache.kafka.connect.runtime.rest.entities.ConnectorOffsets[\\"offsets\\"])"}',
        ),
        own=False,
    ),
    Case(
        "body-entry-without-keys",
        "PATCH",
        "/connectors/{c}/offsets",
        J,
        b'{"offsets":[{}]}',
        expected=(404, "application/json", None),
        own=False,
    ),
]

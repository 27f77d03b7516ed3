"""Who may do what through the sidecar: a request (method and raw path) classified into an action, the
actions each role may take, and the connectors a principal limited to name patterns may see. Pure; the
one enforcement point is ``rest.steps.access``.

- ``PROBE``: ``/healthz`` and ``/readyz``, open to anyone (kubelet and load balancers carry no token).
- ``READ``: GET and HEAD on Connect's read paths and the sidecar's own (``/metrics`` included).
- ``OPERATE``: pause, resume, restart (connector or task), stop, topics reset.
- ``ADMIN``: everything else: create, delete, config changes, offsets changes, loggers, validate, the
  workers' internal paths, and every method or path not classified above (deny by default).

Paths are classified as Connect's worker reads them: the raw path split at ``/``, matrix parameters
(``;...``) dropped, dot segments resolved as Jetty does, then each segment percent-decoded (a Jersey
``@PathParam``). A path the worker could read in more than one way (an encoded ``/`` or dot segment, an
empty segment, a backslash) is ``ambiguous``: it needs admin, and a principal limited to patterns may not
send it at all.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum, StrEnum
from urllib.parse import unquote


class Role(StrEnum):
    VIEWER = "viewer"
    OPERATOR = "operator"
    ADMIN = "admin"


class Action(StrEnum):
    PROBE = "probe"
    READ = "read"
    OPERATE = "operate"
    ADMIN = "admin"


ALLOWED: dict[Role, frozenset[Action]] = {
    Role.VIEWER: frozenset({Action.PROBE, Action.READ}),
    Role.OPERATOR: frozenset({Action.PROBE, Action.READ, Action.OPERATE}),
    Role.ADMIN: frozenset(Action),
}


class Reach(Enum):
    """What a request touches, for a principal limited to connector-name patterns."""

    CONNECTOR = "connector"  # one connector, named in the path (``Classified.connector``)
    CREATE = "create"  # POST /connectors: the connector is named in the body
    LISTING = "listing"  # an answer listing connectors: filtered to the visible ones
    NONE = "none"  # no connector's data (server info, plugins, the sidecar's settings)
    CLUSTER = "cluster"  # any connector's data, unfiltered, or unknown: refused to a limited principal
    SELECTION = "selection"  # the connectors a selector picks, each checked as its own request (``refusal``)


class Listing(Enum):
    """The shape of a listing answer, for its filter (``filter_listing``)."""

    CONNECTORS = "connectors"  # GET /connectors: a list of names, or with ``expand`` an object by name
    TOPIC_CONNECTORS = (
        "topic-connectors"  # GET /_sidecar/topics/{t}/connectors: {"topic", "connectors", "earlier_configs"}
    )


@dataclass(frozen=True)
class Classified:
    action: Action
    reach: Reach = Reach.CLUSTER
    connector: str | None = None
    listing: Listing | None = None
    configs: bool = False  # the answer may carry connector or task configs (masked below admin)
    creates: bool = False  # may create the connector: a hidden name is refused with 403, not 404
    ambiguous: bool = False

    @property
    def mutating(self) -> bool:
        return self.action in (Action.OPERATE, Action.ADMIN)


READS = frozenset({"GET", "HEAD"})
PROBES = frozenset({("healthz",), ("readyz",)})
_OPERATIONS = {("PUT", "pause"), ("PUT", "resume"), ("POST", "restart"), ("PUT", "stop")}
# per connector subresource answered to GET: (reach, carries configs)
_CONNECTOR_READS = {
    (): True,  # ConnectorInfo, with its config
    ("config",): True,
    ("tasks",): True,  # TaskInfo list: every task's config
    ("tasks-config",): True,
    ("status",): False,
    ("topics",): False,
    ("offsets",): False,
}
# the sidecar's own GET paths that name no connector (``/_sidecar/info`` shows the settings, secrets hidden)
_SIDECAR_PLAIN = frozenset({("capabilities",), ("info",)})
_PLAIN_READS = frozenset({(), ("connector-plugins",), ("health",), ("admin", "loggers")})


def segments(raw_path: str) -> list[str] | None:
    """The decoded segments of a raw path as the worker routes it; None when it is ambiguous."""
    parts = raw_path.split("/")
    if parts[0] != "":
        return None
    out: list[str] = []
    last = len(parts) - 2
    for index, raw in enumerate(parts[1:]):
        bare = raw.split(";", 1)[0]
        if bare in (".", ".."):
            if bare != raw:  # a dot segment with parameters: read differently by Jetty releases
                return None
            if bare == "..":
                if not out:
                    return None
                out.pop()
            continue
        if raw == "":
            if index == last:  # one trailing slash: the same resource
                continue
            return None
        if "\\" in bare:
            return None
        decoded = unquote(bare, errors="strict") if "%" in bare else bare
        if "/" in decoded or "\\" in decoded or decoded in (".", "..") or "\x00" in decoded:
            return None
        out.append(decoded)
    return out


def classify(method: str, raw_path: bytes | str) -> Classified:
    """The action and reach of a request (its raw path, without the query); unknown methods and paths need
    admin (deny by default)."""
    try:
        path = segments(raw_path.decode("utf-8") if isinstance(raw_path, bytes) else raw_path)
    except UnicodeDecodeError:  # bytes that are not UTF-8 (Jetty 12 refuses them)
        path = None
    if path is None:
        return Classified(Action.ADMIN, ambiguous=True)
    if method in READS and tuple(path) in PROBES:
        return Classified(Action.PROBE, Reach.NONE)
    head, rest = (path[0], path[1:]) if path else ("", [])
    if head == "connectors" and rest:
        return _connector(method, rest[0], tuple(rest[1:]))
    if method in READS:
        return _read(path)
    if head == "connectors" and method == "POST":
        return Classified(Action.ADMIN, Reach.CREATE, creates=True)
    if head == "connector-plugins" and len(rest) == 3 and rest[1:] == ["config", "validate"]:
        return Classified(Action.ADMIN, Reach.NONE)
    if (
        head == "_sidecar"
        and method in ("PUT", "DELETE")
        and len(rest) == 3
        and rest[::2] == ["connectors", "auto-restart"]
    ):
        return Classified(Action.OPERATE, Reach.CONNECTOR, rest[1])  # a choice of how it is restarted, as a restart
    if (
        head == "_sidecar"
        and method == "POST"
        and len(rest) == 5
        and rest[::2] == ["connectors", "history", "rollback"]
    ):
        return Classified(Action.ADMIN, Reach.CONNECTOR, rest[1])  # a config write, as PUT /connectors/{c}/config
    if head == "_sidecar" and method == "POST" and rest == ["bulk"]:
        # a read at least (a dry run lists); each connector's action is checked as its own request
        return Classified(Action.READ, Reach.SELECTION)
    return Classified(Action.ADMIN)


def _connector(method: str, name: str, sub: tuple[str, ...]) -> Classified:
    if method in READS:
        if sub in _CONNECTOR_READS:
            return Classified(Action.READ, Reach.CONNECTOR, name, configs=_CONNECTOR_READS[sub])
        if len(sub) == 3 and sub[0] == "tasks" and sub[2] == "status":
            return Classified(Action.READ, Reach.CONNECTOR, name)
        return Classified(Action.ADMIN, Reach.CONNECTOR, name)  # unknown: the worker's 404, for admins
    if len(sub) == 1 and (method, sub[0]) in _OPERATIONS:
        return Classified(Action.OPERATE, Reach.CONNECTOR, name)
    if method == "POST" and len(sub) == 3 and sub[0] == "tasks" and sub[2] == "restart":
        return Classified(Action.OPERATE, Reach.CONNECTOR, name)
    if method == "PUT" and sub == ("topics", "reset"):
        return Classified(Action.OPERATE, Reach.CONNECTOR, name)
    creates = sub == ("config",) and method == "PUT"  # PUT config creates a connector that does not exist
    return Classified(Action.ADMIN, Reach.CONNECTOR, name, configs=sub in ((), ("config",)), creates=creates)


def _read(path: list[str]) -> Classified:
    key = tuple(path)
    if key == ("connectors",):
        return Classified(Action.READ, Reach.LISTING, listing=Listing.CONNECTORS, configs=True)
    if key in _PLAIN_READS or (len(key) == 3 and key[:2] == ("admin", "loggers")):
        return Classified(Action.READ, Reach.NONE)
    if len(key) == 3 and key[0] == "connector-plugins" and key[2] == "config":
        return Classified(Action.READ, Reach.NONE)
    if key[:1] == ("_sidecar",):
        sub = key[1:]
        if sub in _SIDECAR_PLAIN:
            return Classified(Action.READ, Reach.NONE)
        if len(sub) >= 2 and sub[0] == "connectors":
            return Classified(Action.READ, Reach.CONNECTOR, sub[1], configs=True)
        if len(sub) == 3 and sub[0] == "topics" and sub[2] == "connectors":
            return Classified(Action.READ, Reach.LISTING, listing=Listing.TOPIC_CONNECTORS)
        return Classified(Action.READ)  # the sidecar's other reads: status writes, new endpoints
    if key == ("metrics",):
        return Classified(Action.READ)  # names connectors in gauges: not for a limited principal
    return Classified(Action.ADMIN)  # an unknown read: deny by default


@dataclass(frozen=True)
class Principal:
    """Who sent a request: a token's or a user's name, its role, and the connector-name patterns it is
    limited to (``fnmatch`` globs, case-sensitive; None: every connector)."""

    name: str
    role: Role
    patterns: tuple[str, ...] | None = None

    @property
    def limited(self) -> bool:
        return self.patterns is not None

    def may(self, action: Action) -> bool:
        return action in ALLOWED[self.role]

    def sees(self, connector: str) -> bool:
        if self.patterns is None:
            return True
        return "/" not in connector and any(fnmatch.fnmatchcase(connector, p) for p in self.patterns)


ANONYMOUS_ADMIN = Principal("anonymous", Role.ADMIN)  # authentication off: the local default


def refusal(principal: Principal, classified: Classified, method: str, raw_path: str) -> tuple[int, str] | None:
    """The status and message refusing ``principal`` the request ``method raw_path`` classified as
    ``classified``, or None. A limited principal: 403 for what reaches every connector, Connect's 404 for a
    connector it may not see (403 where the request would create it). Then the role: 403 without the action.
    (A create's name is in its body: ``rest.steps.access`` reads it first.)"""
    denied = (403, f"{principal.name} ({principal.role}) may not {method} {raw_path}")
    if principal.limited:
        if classified.reach is Reach.CLUSTER:
            return denied
        name = classified.connector
        if classified.reach is Reach.CONNECTOR and name is not None and not principal.sees(name):
            return denied if classified.creates else (404, f"Connector {name} not found")
    if not principal.may(classified.action):
        return denied
    return None


def filter_listing(listing: Listing, body: object, principal: Principal) -> object:
    """A listing answer with only the connectors ``principal`` sees; other shapes unchanged."""
    if listing is Listing.CONNECTORS:
        if isinstance(body, list):
            return [name for name in body if isinstance(name, str) and principal.sees(name)]
        if isinstance(body, dict):
            return {name: value for name, value in body.items() if principal.sees(name)}
    if listing is Listing.TOPIC_CONNECTORS and isinstance(body, dict) and isinstance(body.get("connectors"), list):
        filtered = {**body, "connectors": _visible(body["connectors"], principal)}
        if isinstance(body.get("earlier_configs"), list):
            filtered["earlier_configs"] = [
                e
                for e in body["earlier_configs"]
                if isinstance(e, dict) and isinstance(e.get("connector"), str) and principal.sees(e["connector"])
            ]
        return filtered
    return body


def _visible(names: Iterable[object], principal: Principal) -> list[object]:
    return [name for name in names if isinstance(name, str) and principal.sees(name)]


__all__ = [
    "ALLOWED",
    "ANONYMOUS_ADMIN",
    "Action",
    "Classified",
    "Listing",
    "Principal",
    "Reach",
    "Role",
    "classify",
    "filter_listing",
    "refusal",
    "segments",
]

"""The steps of a plan, decided without I/O: the connectors the documents describe (``desired_of``), what the
cluster needs to become them (``steps_of``), and the plan's fingerprint.

- **Steps**: per connector ``create``, ``update``, ``unchanged``, or ``delete`` (only with ``prune``: a
  connector no file names; never implied by omission otherwise, as ``kubectl apply --prune``), with the
  key-level diff (``rules.config_diff``: secrets as ``[hidden]``, changed or not, never a digest).
- **No false drift**: both sides are compared as the worker stores them (the config topic, read to its
  end): every value the string Jackson makes of it (``rules.config_values``: ``1.50``, ``1e-7``, ``true``,
  each number's text as written), the ``name`` key the worker adds, key order ignored; provider
  references compared as written, as the worker stores them; secrets compared by value, under the
  planner's key (nothing of them in what is shown).
- **Fingerprint**: a keyed digest (HMAC-SHA256 under the planner's key, which the sidecar holds and the
  plan never carries) of what the plan compared, each named connector's config as the cluster had it (or
  its absence); ``planner`` refuses to apply a plan whose fingerprint is no longer the cluster's. Keyed,
  so that a plan's ``seen`` of a config with a secret in it is no digest a reader could test guesses of
  that secret against.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from ...rules.config_diff import Change, SecretDigests, diff
from ...rules.config_values import Config, config_map
from ..errors import BadRequestError

ACTIONS = ("create", "update", "delete", "unchanged")
ANY = re.compile(".*", re.DOTALL)


@dataclass(frozen=True)
class Desired:
    name: str
    config: Config  # as the worker stores it: strings, and its name
    source: str  # the file (or request item) it came from


def desired_of(document: Any, source: str) -> list[Desired]:
    """The connectors of one document: ``{"name": n, "config": {...}}`` (kcctl apply's and ``POST
    /connectors``'s shape), a flat config with its ``name`` (``PUT /connectors/{c}/config``'s), or a list of
    either; 400 naming ``source`` for anything else."""
    items = document if isinstance(document, list) else [document]
    found = []
    for item in items:
        if not isinstance(item, dict):
            raise BadRequestError(f"{source}: a connector must be an object with a name and a config")
        nested = item.get("config")
        body: dict[str, Any] = nested if isinstance(nested, dict) else item
        config = config_map(body)
        name = item.get("name", body.get("name"))
        if not isinstance(name, str) or not name.strip() or config is None:
            raise BadRequestError(f"{source}: a connector needs a name and a config of strings, numbers or booleans")
        name = name.strip()  # ConnectorsResource.createConnector trims it
        if body is not item and config.get("name", name) != name:  # ConnectorsResource's own check
            raise BadRequestError(f"{source}: connector {name}'s config names another connector ({config['name']})")
        found.append(Desired(name, {**config, "name": name}, source))  # the worker adds its name
    return found


def config_digest(config: Mapping[str, str | None] | None, key: SecretDigests) -> str | None:
    """A keyed digest of one connector's config as the cluster holds it (None: there is none)."""
    if config is None:
        return None
    return key.keyed(b"config\0" + orjson.dumps(dict(config), option=orjson.OPT_SORT_KEYS))


def fingerprint_of(seen: Mapping[str, str | None], key: SecretDigests) -> str:
    """The plan's fingerprint: every connector it compared, with the digest of the config it saw."""
    return key.keyed(b"plan\0" + orjson.dumps(dict(seen), option=orjson.OPT_SORT_KEYS))


@dataclass(frozen=True)
class PlanStep:
    name: str
    action: str
    config: Config | None  # what a create or update writes
    seen: str | None  # the digest of the config the plan compared with (None: absent)
    changes: tuple[Change, ...]
    source: str | None = None
    errors: tuple[str, ...] = ()
    topics: Any = None  # KIP-158: what the worker would create for a create or update (CreationPreview)
    plugins: Any = None  # KIP-891: the version each plugin key resolves to (PluginVersionReport)


def steps_of(
    desired: Sequence[Desired],
    current: Mapping[str, Mapping[str, str | None]],
    digests: SecretDigests,
    *,
    prune: bool,
    prune_matching: re.Pattern[str] = ANY,
) -> list[PlanStep]:
    """What the cluster needs to become ``desired``, connector by connector (sorted by name); with
    ``prune``, the deletion of every connector no document names whose whole name ``prune_matching`` matches."""
    counts = Counter(d.name for d in desired)
    names = set(counts)
    twice = sorted(n for n, seen in counts.items() if seen > 1)
    if twice:
        raise BadRequestError(f"More than one file describes connector(s) {', '.join(twice)}")
    steps = []
    for want in sorted(desired, key=lambda d: d.name):
        have = current.get(want.name)
        before = digests.stored(want.name, have) if have is not None else None
        changes = tuple(diff(before, digests.stored(want.name, want.config)))
        action = "create" if have is None else "update" if changes else "unchanged"
        config = want.config if action != "unchanged" else None
        steps.append(PlanStep(want.name, action, config, config_digest(have, digests), changes, want.source))
    if prune:
        for name in sorted(n for n in set(current) - names if prune_matching.fullmatch(n)):
            changes = tuple(diff(digests.stored(name, current[name]), None))
            steps.append(PlanStep(name, "delete", None, config_digest(current[name], digests), changes))
    return steps


@dataclass(frozen=True)
class Plan:
    fingerprint: str
    prune: bool
    steps: list[PlanStep]

    def summary(self) -> dict[str, int]:
        return {a: sum(s.action == a for s in self.steps) for a in ACTIONS}


__all__ = [
    "ACTIONS",
    "ANY",
    "Desired",
    "Plan",
    "PlanStep",
    "config_digest",
    "desired_of",
    "fingerprint_of",
    "steps_of",
]

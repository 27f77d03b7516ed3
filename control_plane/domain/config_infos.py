"""Connect's validation answer (``rest/entities/ConfigInfos``) and the problems the sidecar adds to it.

Pure functions on the JSON a worker's ``PUT /connector-plugins/{p}/config/validate`` answers:

- ``add_problems`` puts each problem the sidecar found on the entry of its key (``value.errors``, and
  ``value.recommended_values`` when the problem names them), adding an entry for a key the worker did not
  describe, and counts ``error_count`` again, as ``AbstractHerder.generateResult`` counts it;
- ``invalid_config_message`` is the 400 message of a create or update whose validation has errors
  (``AbstractHerder.maybeAddConfigErrors``): every error in the order of the entries.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

ConfigInfos = dict[str, Any]


@dataclass(frozen=True)
class ConfigProblem:
    """A problem of one config key, in the words of the error Connect (or the sidecar) reports."""

    key: str
    message: str
    recommended: tuple[str, ...] | None = None  # replaces the entry's recommended_values when set
    # the newest Connect refuses this itself (a KIP's rule the worker lacks); otherwise a check of the
    # sidecar's own, which the operator may turn into a warning (``config_checks=warn``)
    connect_rule: bool = False


def _entries(infos: Mapping[str, Any]) -> list[dict[str, Any]]:
    configs = infos.get("configs")
    return [c for c in configs if isinstance(c, dict)] if isinstance(configs, list) else []


def error_count(infos: Mapping[str, Any]) -> int:
    """The number of errors of every entry (ConfigInfos.errorCount as generateResult counts it)."""
    return sum(len((c.get("value") or {}).get("errors") or ()) for c in _entries(infos))


_DEFINITION_DEFAULTS: dict[str, Any] = {
    "type": "STRING",
    "required": False,
    "default_value": None,
    "importance": "LOW",
    "documentation": "",
    "group": None,
    "width": "NONE",
    "dependents": [],
    "order": -1,
    "order_in_group": -1,
}


def _new_entry(key: str, value: str | None, like: Mapping[str, Any] | None) -> dict[str, Any]:
    """An entry for a key the worker did not describe, with the fields of the worker's other entries
    (the definition's fields changed across versions: ``order`` became ``order_in_group`` in 4.2)."""
    shown = like.get("definition") if like is not None else None
    fields = list(shown) if isinstance(shown, dict) else [f for f in _DEFINITION_DEFAULTS if f != "order_in_group"]
    definition = {f: key if f in ("name", "display_name") else copy.copy(_DEFINITION_DEFAULTS.get(f)) for f in fields}
    return {
        "definition": definition,
        "value": {"name": key, "value": value, "recommended_values": [], "errors": [], "visible": True},
    }


def add_problems(
    infos: Mapping[str, Any],
    problems: Sequence[ConfigProblem],
    config: Mapping[str, str | None],
    *,
    shown: Iterable[str] = (),
) -> ConfigInfos:
    """A copy of ``infos`` with every problem on the entry of its key (an entry is added, with the value of
    ``config``, for a key the worker did not describe), and ``error_count`` recounted. The entries of the
    ``shown`` keys (hidden from the worker's validation) show their value in ``config``."""
    merged: ConfigInfos = copy.deepcopy(dict(infos))
    entries = _entries(merged)
    by_key = {str((c.get("value") or {}).get("name")): c for c in entries}
    for problem in problems:
        entry = by_key.get(problem.key)
        if entry is None:
            entry = _new_entry(problem.key, config.get(problem.key), entries[0] if entries else None)
            merged.setdefault("configs", []).append(entry)
            entries.append(entry)
            by_key[problem.key] = entry
        value = entry.setdefault("value", {})
        value.setdefault("errors", [])
        if problem.message not in value["errors"]:
            value["errors"].append(problem.message)
        if problem.recommended is not None:
            value["recommended_values"] = list(problem.recommended)
    for key in shown:
        entry = by_key.get(key)
        if entry is not None and key in config:
            entry.setdefault("value", {})["value"] = config[key]
    merged["error_count"] = error_count(merged)
    return merged


VALIDATE_ENDPOINT_HINT = (
    "\nYou can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`"
)


def invalid_config_message(infos: Mapping[str, Any]) -> str:
    """AbstractHerder.maybeAddConfigErrors: the count, then every error of every entry, one per line."""
    lines = [f"Connector configuration is invalid and contains the following {error_count(infos)} error(s):"]
    for entry in _entries(infos):
        lines.extend(str(e) for e in (entry.get("value") or {}).get("errors") or ())
    return "\n".join(lines) + VALIDATE_ENDPOINT_HINT


__all__ = ["ConfigInfos", "ConfigProblem", "add_problems", "error_count", "invalid_config_message"]

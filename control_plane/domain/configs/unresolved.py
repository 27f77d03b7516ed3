"""Validate answers in the 4.4 line's shape: a value the request gave as a config provider reference
(``${provider:path:key}``, KIP-297) is shown as given, not as the worker's config providers resolved it, and
what the worker found wrong with the resolved value is not quoted.

Through 4.3, ``AbstractHerder.validateConnectorConfig`` resolves the request's values with the worker's
``configTransformer`` first and answers with the resolved ones: a secret kept in a provider comes back in
``configs[].value.value``, and in the errors of a value its rules refuse. From 4.4.0 (read in its
connect-runtime jar: ``AbstractHerder.redactResolvedValues``, apache/kafka#23163) the merged answer is
rewritten for every key whose resolved value differs from the one given:

- ``value``: the value as given, the reference itself (also for a ``PASSWORD`` key, which is not
  ``[hidden]`` then);
- ``recommended_values``: none;
- ``errors``: none where the resolved value passed, else the one generic message of ``generic_error``
  (whatever the worker's errors were, however many);
- ``error_count``: counted again over the rewritten answer.

A reference that the worker could not resolve (a provider it does not configure, a key its provider does
not have) stays in the value as written (ConfigTransformer), so 4.4.0 leaves its entry as it is. The
sidecar tells the two apart by the worker's answer: a value that differs from the one given was resolved.
Where the answer cannot tell (a ``PASSWORD`` key, ``[hidden]`` either way) the key is taken as resolved.

Validation inside create, update and PATCH is redacted the same way in 4.4.0 (the 400 lists the generic
errors): the sidecar in front of an older worker validates such a configuration first and refuses it
itself, with the message ``config_infos.invalid_config_message`` builds from the rewritten answer.

4.4.0 also drops the request's own ``config.providers`` and ``config.providers.*`` keys before it validates
(``removeCustomConfigProviders``): no release shows those keys in a validate answer (no connector defines
them), so there is nothing to rewrite.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...rules.config_providers import VARIABLE


def generic_error(name: str) -> str:
    """The one error 4.4.0 shows for a key given as a reference whose resolved value failed validation
    (``AbstractHerder.redactResolvedValues``)."""
    return (
        f"Invalid value for configuration '{name}': the value resolved from the config provider reference failed "
        "validation"
    )


def has_references(config: Mapping[str, Any]) -> bool:
    """Whether a value of ``config`` holds a config provider reference."""
    return any(isinstance(v, str) and VARIABLE.search(v) for v in config.values())


def shown_as_given(infos: Any, config: Mapping[str, Any]) -> Any:
    """A validate answer (ConfigInfos) rewritten as 4.4.0 rewrites it for the keys the request gave as a
    provider reference that the worker resolved."""
    if not isinstance(infos, dict) or not isinstance(configs := infos.get("configs"), list):
        return infos
    given = {k: v for k, v in config.items() if isinstance(v, str) and VARIABLE.search(v)}
    if not given:
        return infos
    out = []
    redacted = False
    for entry in configs:
        value = entry.get("value") if isinstance(entry, dict) else None
        if not isinstance(value, dict):
            out.append(entry)
            continue
        name = value.get("name")
        if isinstance(name, str) and name in given and value.get("value") != given[name]:
            errors = [generic_error(name)] if value.get("errors") else []
            shown = {**value, "value": given[name], "recommended_values": [], "errors": errors}
            entry = {**entry, "value": shown}
            redacted = True
        out.append(entry)
    if not redacted:
        return infos
    return {**infos, "error_count": _error_count(out), "configs": out}


def _error_count(configs: list[Any]) -> int:
    count = 0
    for entry in configs:
        value = entry.get("value") if isinstance(entry, dict) else None
        errors = value.get("errors") if isinstance(value, dict) else None
        count += len(errors) if isinstance(errors, list) else 0
    return count


__all__ = ["VARIABLE", "generic_error", "has_references", "shown_as_given"]

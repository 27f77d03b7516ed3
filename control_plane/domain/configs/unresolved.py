"""Validate answers in the 4.4 line's shape: a value the request gave as a config provider reference
(``${provider:path:key}``, KIP-297) is shown as given, not as the worker's config providers resolved it.

Through 4.3.1, ``AbstractHerder.validateConnectorConfig`` resolves the request's values with the worker's
``configTransformer`` first and answers with the resolved ones: a secret kept in a provider comes back in
``configs[].value.value``. The 4.4 line wraps the merged answer (``mergeConfigInfos``) in
``redactResolvedValues(infos, originalProps, connectorProps)``: found in apache/kafka#23163 ("MINOR: Refactor
Connect validation endpoint logic", merged into trunk in August 2026), the only source reachable here; no
4.4 release or its sources were. What is certain from it: the values shown are the request's own where the
resolved ones differ. What is not: whether 4.4 also rewrites error messages that quote a resolved value
(the sidecar leaves messages as the worker wrote them). The reference syntax is ``ConfigTransformer
.DEFAULT_PATTERN``'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...rules.config_providers import VARIABLE


def shown_as_given(infos: Any, config: Mapping[str, Any]) -> Any:
    """A validate answer (ConfigInfos) whose values are the request's where it gave a provider reference."""
    if not isinstance(infos, dict) or not isinstance(configs := infos.get("configs"), list):
        return infos
    given = {k: v for k, v in config.items() if isinstance(v, str) and VARIABLE.search(v)}
    if not given:
        return infos
    out = []
    for entry in configs:
        value = entry.get("value") if isinstance(entry, dict) else None
        name = value.get("name") if isinstance(value, dict) else None
        if isinstance(name, str) and name in given and value.get("value") != given[name]:  # type: ignore[union-attr]
            entry = {**entry, "value": {**value, "value": given[name]}}  # type: ignore[dict-item]
        out.append(entry)
    return {**infos, "configs": out}


__all__ = ["VARIABLE", "shown_as_given"]

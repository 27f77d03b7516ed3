"""Connect 4.2's shape of a configuration key's definition, in the answers of older workers.

``ConfigKeyInfo`` (``PUT /connector-plugins/{p}/config/validate``: each ``configs[].definition``;
``GET /connector-plugins/{p}/config``: each element) names its position in its group ``order_in_group``
from 4.2 on, ``order`` before, and Jackson writes its fields in a different order. Connect 4.3.1's record
``rest.entities.ConfigKeyInfo`` gives the newest order, used here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import orjson

from ..upstream import UpstreamResponse

# rest.entities.ConfigKeyInfo (4.3.1), in its component order
FIELDS = (
    "name",
    "type",
    "required",
    "default_value",
    "importance",
    "documentation",
    "group",
    "order_in_group",
    "width",
    "display_name",
    "dependents",
)


def newest_definition(definition: Any) -> Any:
    """One definition in 4.2's shape; anything that is not an older definition unchanged."""
    if not isinstance(definition, dict) or "order" not in definition or "order_in_group" in definition:
        return definition
    renamed = {("order_in_group" if k == "order" else k): v for k, v in definition.items()}
    ordered = {k: renamed[k] for k in FIELDS if k in renamed}
    return {**ordered, **{k: v for k, v in renamed.items() if k not in ordered}}


def newest_validation(infos: Any) -> Any:
    """A validate answer (ConfigInfos) with its definitions in 4.2's shape."""
    if not isinstance(infos, dict) or not isinstance(configs := infos.get("configs"), list):
        return infos
    return {
        **infos,
        "configs": [
            {**c, "definition": newest_definition(c["definition"])} if isinstance(c, dict) and "definition" in c else c
            for c in configs
        ],
    }


def newest_plugin_config(definitions: Any) -> Any:
    """A plugin-config answer (a list of ConfigKeyInfo) in 4.2's shape."""
    return [newest_definition(d) for d in definitions] if isinstance(definitions, list) else definitions


def _reshaped(answer: UpstreamResponse, reshape: Any) -> UpstreamResponse:
    if answer.status != 200:
        return answer
    try:
        data = orjson.loads(answer.body)
    except orjson.JSONDecodeError:
        return answer
    return replace(answer, body=orjson.dumps(reshape(data)))


def reshaped(reshape: Callable[[Any], Any]) -> Callable[[UpstreamResponse], UpstreamResponse]:
    """A worker's 200 answer with its JSON reshaped (any other answer unchanged)."""
    return lambda answer: _reshaped(answer, reshape)


def plugin_config_answer(answer: UpstreamResponse) -> UpstreamResponse:
    return _reshaped(answer, newest_plugin_config)


__all__ = [
    "newest_definition",
    "newest_plugin_config",
    "newest_validation",
    "plugin_config_answer",
    "reshaped",
]

"""The documentation's generated references (docs/plugins/references.py): every setting, every endpoint
and every feature is in them, with what the code says; a page asking for an unknown reference fails the
build."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import pytest
from mkdocs.exceptions import PluginError

from control_plane.domain.capabilities import FEATURES
from control_plane.rest.routing.openapi import document
from control_plane.settings import ENV_PREFIX, WORKER_KEYS, Settings
from docs.plugins import references


def test_every_setting_has_a_description_in_the_model() -> None:
    undescribed = [name for name, field in Settings.model_fields.items() if not (field.description or "").strip()]
    assert undescribed == []


def test_the_settings_reference_names_every_setting_with_its_variable_and_worker_property() -> None:
    text = references.settings_reference()
    for name in Settings.model_fields:
        assert f"`{name}`<br>`{ENV_PREFIX}{name.upper()}`" in text
    for worker_key in WORKER_KEYS:
        assert f"worker: `{worker_key}`" in text
    assert (
        "| `port`<br>`CONTROL_PLANE_PORT` | integer ≥ 0 and ≤ 65535 | `8084` | The port the sidecar listens on. |"
        in text
    )


def test_the_settings_are_grouped_in_the_order_of_the_model() -> None:
    groups = references.settings_groups()
    assert [name for _, names in groups for name in names] == list(Settings.model_fields)
    assert groups[0][0] == "The sidecar's HTTP server"


def test_the_endpoints_reference_has_every_operation_of_the_document() -> None:
    text = references.endpoints_reference()
    for path, methods in document()["paths"].items():
        for method in methods:
            assert f"### `{method.upper()} {path}`" in text
    for schema in document()["components"]["schemas"]:
        assert f"### {schema}\n" in text


def test_the_capabilities_table_has_a_row_per_feature_and_a_column_per_version() -> None:
    text = references.capabilities_table(["3.4.1", "4.3.1"])
    header, _, *rows = text.strip().splitlines()
    assert header.endswith("| Connect 3.4.1 | Connect 4.3.1 |")
    assert len(rows) == len(FEATURES)
    stop = next(row for row in rows if "| KIP-875 | 3.5.0 |" in row)
    assert stop.endswith("| **emulated** | native |")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("a | b", "a \\| b", id="plain"),
        pytest.param("`x`", "`x`", id="code"),
        pytest.param("`(^|\\.)a`", "<code>(^&#124;&#92;.)a</code>", id="code-with-a-pipe"),
    ],
)
def test_a_table_cell_keeps_its_pipes(text: str, expected: str) -> None:
    assert references._cell(text) == expected


def test_a_page_is_rendered_with_its_markers_replaced_and_an_unknown_marker_fails() -> None:
    page = cast(Any, SimpleNamespace(file=SimpleNamespace(src_uri="reference/x.md")))
    config, files = cast(Any, None), cast(Any, None)
    rendered = references.on_page_markdown(
        "# S\n\n<!-- generated: settings -->\n", page=page, config=config, files=files
    )
    assert "<!-- generated" not in rendered
    assert f"`{ENV_PREFIX}PORT`" in rendered
    with pytest.raises(PluginError, match="unknown generated reference 'nothing'"):
        references.on_page_markdown("<!-- generated: nothing -->", page=page, config=config, files=files)

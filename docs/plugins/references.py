"""The MkDocs hook that writes the documentation's references from the code, never by hand.

A page asks for a reference with a marker on a line of its own, replaced at build time:

- ``<!-- generated: settings -->``: every field of ``control_plane.settings.Settings``, grouped by the
  ``# -- `` section comments of the class, with its environment variable, the worker property it is
  learned from (``WORKER_KEYS``), its type, default and description (the field's docstring);
- ``<!-- generated: endpoints -->``: every operation of the sidecar's OpenAPI document
  (``control_plane.rest.routing.openapi.document()``) and the schemas they use;
- ``<!-- generated: capabilities 2.8.2 3.4.1 4.4.0 -->``: per feature, what the sidecar decides on each of
  the Connect versions named (``control_plane.domain.capabilities.decide`` with the default settings).

An unknown marker fails the build (``mkdocs build --strict`` runs in ``scripts/check``).
"""

from __future__ import annotations

import html
import inspect
import re
import types
from collections.abc import Callable, Iterator, Mapping
from enum import Enum
from typing import Any, Literal, Union, get_args, get_origin

import annotated_types
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page
from pydantic import SecretStr
from pydantic.fields import FieldInfo

from control_plane.domain.capabilities import FEATURES, Mode, Version, decide
from control_plane.rest.routing.openapi import document
from control_plane.settings import ENV_PREFIX, FIELD_TO_WORKER_KEY, SECURITY_PREFIXES, Settings

MARKER = re.compile(r"^<!-- generated: (?P<name>[a-z]+)(?P<args>[^>]*?) -->$", re.MULTILINE)
SCHEMA_REF = "#/components/schemas/"


def on_page_markdown(markdown: str, /, *, page: Page, config: MkDocsConfig, files: Files) -> str:
    """MkDocs' hook: each marker of the page replaced by the reference it names."""

    def render(match: re.Match[str]) -> str:
        renderer = RENDERERS.get(match["name"])
        if renderer is None:
            raise PluginError(f"{page.file.src_uri}: unknown generated reference {match['name']!r}")
        return renderer(match["args"].split())

    return MARKER.sub(render, markdown)


# -- the settings


def settings_reference(args: list[str] | None = None) -> str:
    """The settings as Markdown: a section per group of the class, a row per field."""
    out: list[str] = []
    for group, names in settings_groups():
        out += [f"## {group}", "", "| Setting | Type | Default | Description |", "|---|---|---|---|"]
        for name in names:
            field = Settings.model_fields[name]
            out.append(f"| {_setting_names(name)} | {_type_of(name, field)} | {_default_of(field)} | {_text(field)} |")
        out.append("")
    return "\n".join(out)


def settings_groups() -> list[tuple[str, list[str]]]:
    """The fields in the order of the class, under the ``# -- `` comment that heads their section."""
    groups: list[tuple[str, list[str]]] = []
    for line in inspect.getsource(Settings).splitlines():
        if heading := re.match(r"    # -- (.+)$", line):
            groups.append((heading[1].rstrip(), []))
        elif (field := re.match(r"    (\w+):", line)) and field[1] in Settings.model_fields:
            if not groups:
                raise ValueError(f"Settings.{field[1]} comes before the first '# -- ' section comment")
            groups[-1][1].append(field[1])
    listed = [name for _, names in groups for name in names]
    if sorted(listed) != sorted(Settings.model_fields):
        raise ValueError(f"fields not found in Settings' source: {set(Settings.model_fields) - set(listed)}")
    return groups


def _setting_names(name: str) -> str:
    cell = f"`{name}`<br>`{ENV_PREFIX}{name.upper()}`"
    worker_key = FIELD_TO_WORKER_KEY.get(name)
    if worker_key:
        cell += f"<br>worker: `{worker_key}`"
    elif name == "kafka_client_properties":
        cell += "<br>worker: " + ", ".join(
            f"`{prefix}*`" if prefix.endswith(".") else f"`{prefix}`" for prefix in SECURITY_PREFIXES
        )
    elif name == "connect_urls":
        cell += "<br>worker: `listeners`"
    return cell


def _type_of(name: str, field: FieldInfo) -> str:
    text = _annotation(field.annotation)
    bounds = [_bound(item) for item in field.metadata]
    text += " " + " and ".join(bound for bound in bounds if bound) if any(bounds) else ""
    unit = next((unit for suffix, unit in UNITS.items() if name.endswith(suffix)), None)
    return f"{text} ({unit})" if unit else text


UNITS = {"_ms": "milliseconds", "_s": "seconds", "_bytes": "bytes"}


def _annotation(annotation: Any) -> str:
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        return " or ".join(_annotation(arg) for arg in get_args(annotation) if arg is not type(None))
    if origin is Literal:
        return "one of " + ", ".join(f"`{value}`" for value in get_args(annotation))
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return "one of " + ", ".join(f"`{member.value}`" for member in annotation)
    if origin is tuple:
        return "comma-separated list"
    if origin is dict:
        return "JSON object"
    names = {str: "string", int: "integer", float: "number", bool: "boolean", SecretStr: "secret string"}
    if annotation in names:
        return names[annotation]
    raise ValueError(f"no documentation name for the type {annotation!r}")


def _bound(item: object) -> str:
    if isinstance(item, annotated_types.Ge):
        return f"≥ {item.ge}"
    if isinstance(item, annotated_types.Gt):
        return f"> {item.gt}"
    if isinstance(item, annotated_types.Le):
        return f"≤ {item.le}"
    if isinstance(item, annotated_types.Lt):
        return f"< {item.lt}"
    return ""


def _default_of(field: FieldInfo) -> str:
    value = field.get_default(call_default_factory=True)
    if value is None:
        return "none"
    if isinstance(value, Enum):
        value = value.value
    if isinstance(value, bool):
        value = str(value).lower()
    if isinstance(value, tuple):
        value = ",".join(value)
    if isinstance(value, dict):
        value = value or "{}"
    return _cell(f"`{value}`")


def _text(field: FieldInfo) -> str:
    if not field.description:
        raise ValueError(f"a settings field has no docstring: {field!r}")
    return _cell(_markdown(field.description))


# -- the endpoints


def endpoints_reference(args: list[str] | None = None) -> str:
    """The OpenAPI document as Markdown: each tag's operations, then the schemas they use."""
    doc = document()
    out: list[str] = []
    for tag in doc["tags"]:
        out += [f"## {tag['description']}", ""]
        for path, method, operation in _operations(doc["paths"]):
            if tag["name"] in operation.get("tags", []):
                out += _operation(path, method, operation)
    out += [
        "## Schemas",
        "",
        "Every answer other than the statuses listed is an `ErrorMessage`, Connect's error shape.",
        "",
    ]
    for name, schema in doc["components"]["schemas"].items():
        out += _schema(name, schema)
    return "\n".join(out)


def _operations(paths: Mapping[str, Mapping[str, Any]]) -> Iterator[tuple[str, str, Mapping[str, Any]]]:
    for path, methods in paths.items():
        for method, operation in methods.items():
            yield path, method.upper(), operation


def _operation(path: str, method: str, operation: Mapping[str, Any]) -> list[str]:
    out = [f"### `{method} {path}`", "", _markdown(operation.get("summary", "")), ""]
    parameters = operation.get("parameters", [])
    if parameters:
        described = any(param.get("description") for param in parameters)
        out += [
            "| Parameter | In | Type |" + (" Description |" if described else ""),
            "|---|---|---|" + ("---|" * described),
        ]
        for param in parameters:
            required = " (required)" if param.get("required") else ""
            row = f"| `{param['name']}`{required} | {param['in']} | {_cell(_schema_type(param['schema']))} |"
            if described:
                row += f" {_cell(_markdown(param.get('description', '')))} |"
            out.append(row)
        out.append("")
    body = operation.get("requestBody")
    if body:
        out += [f"Body: {_content_type(body)}", ""]
    answers = [
        f"`{status}` {_cell(answer['description'])}{': ' + _content_type(answer) if 'content' in answer else ''}"
        for status, answer in operation["responses"].items()
        if status != "default"
    ]
    out += ["Answers: " + "; ".join(answers) + ".", ""]
    return out


def _content_type(part: Mapping[str, Any]) -> str:
    return ", ".join(f"{_schema_type(media['schema'])}" for media in part.get("content", {}).values())


def _schema(name: str, schema: Mapping[str, Any]) -> list[str]:
    out = [f"### {name}", ""]
    if schema.get("description"):
        out += [_markdown(schema["description"]), ""]
    properties: Mapping[str, Any] = schema.get("properties", {})
    if properties:
        required = set(schema.get("required", []))
        described = any(spec.get("description") for spec in properties.values())
        out += ["| Field | Type |" + (" Description |" if described else ""), "|---|---|" + ("---|" * described)]
        for field, spec in properties.items():
            mark = "" if field in required else " (optional)"
            row = f"| `{field}`{mark} | {_cell(_schema_type(spec))} |"
            if described:
                row += f" {_cell(_markdown(spec.get('description', '')))} |"
            out.append(row)
        out.append("")
        if schema.get("additionalProperties"):
            out += ["Other keys are allowed.", ""]
    else:
        out += [f"Type: {_schema_type(schema)}.", ""]
    return out


def _schema_type(schema: Mapping[str, Any]) -> str:
    """A JSON schema as a short phrase, other schemas linked."""
    if "$ref" in schema:
        target = schema["$ref"].removeprefix(SCHEMA_REF)
        return f"[{target}](#{target.lower()})"
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [option for option in schema[key] if option.get("type") != "null"]
            text = " or ".join(_schema_type(option) for option in options)
            return f"{text} or null" if len(options) < len(schema[key]) else text
    if "enum" in schema:
        return "one of " + ", ".join(f"`{value}`" for value in schema["enum"])
    kind = schema.get("type")
    if kind == "array":
        return f"array of {_schema_type(schema.get('items', {}))}"
    if kind == "object":
        values = schema.get("additionalProperties")
        if isinstance(values, Mapping) and values:
            return f"object of {_schema_type(values)}"
        return "object"
    if isinstance(kind, str):
        return kind
    return "any"


# -- the capabilities


def capabilities_table(args: list[str]) -> str:
    """Per feature, the mode the sidecar decides on each version of ``args``, with the default settings."""
    if not args:
        raise ValueError("the capabilities table needs Connect versions: <!-- generated: capabilities 3.4.1 -->")
    versions = [Version.of(arg) for arg in args]
    decisions = [decide(version, {}) for version in versions]
    header = "| Feature | Proposal | Native from | " + " | ".join(f"Connect {v}" for v in versions) + " |"
    out = [header, "|---|---|---|" + "---|" * len(versions)]
    for spec in FEATURES:
        modes = []
        for decided in decisions:
            mode = decided[spec.feature].mode
            modes.append(f"**{mode.value}**" if mode is Mode.EMULATED else mode.value)
        native = str(spec.native_since) if spec.native_since else "no release"
        if spec.sidecar_own:
            native += " (checks: the sidecar's own)"
        summary = _cell(_markdown(spec.summary)).replace("*", "\\*")
        out.append(f"| {summary} | {spec.spec} | {native} | " + " | ".join(modes) + " |")
    return "\n".join(out) + "\n"


# -- Markdown


def _markdown(text: str) -> str:
    """reStructuredText's literals (``x``) as Markdown's, on one line."""
    return " ".join(text.replace("``", "`").split())


def _cell(text: str) -> str:
    """Text that stays in its table cell: a ``|`` escaped; in a code span, where Markdown would show the
    escape, the span written as HTML."""
    return "".join(_cell_part(part) for part in re.split(r"(`[^`]+`)", text))


def _cell_part(part: str) -> str:
    if not (part.startswith("`") and part.endswith("`") and len(part) > 1):
        return part.replace("|", "\\|")
    if "|" not in part:
        return part
    code = html.escape(part[1:-1]).replace("|", "&#124;").replace("\\", "&#92;")
    return f"<code>{code}</code>"


RENDERERS: dict[str, Callable[[list[str]], str]] = {
    "settings": settings_reference,
    "endpoints": endpoints_reference,
    "capabilities": capabilities_table,
}

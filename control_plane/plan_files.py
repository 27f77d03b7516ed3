"""The connector files of ``control-plane plan -f``, read so that every scalar is the text the file has, as
Connect reads a JSON config (``Map<String, String>`` through Jackson: ``rules.config_values``), for JSON
and YAML alike. A typed reading would write back another text than the file's (``3.10`` as ``3.1``, ``on``
as ``true``, ``0755`` as ``493``, ``1.50`` as ``1.5``) and then see drift against what it wrote.

- **JSON**: each number as written (``1.50``, ``1e-7``, ``1E+3``, ``-0``): the text Jackson gives a
  ``String``; ``true``, ``false`` and ``null`` as Jackson reads them (the sidecar's ``config_map``).
- **YAML**: a plain scalar is its text as written, whatever YAML 1.1 would resolve it to (``3.10``, ``on``,
  ``off``, ``yes``, ``0755``, ``1e-7``, ``2026-12-07``); a quoted or block scalar is its value; an
  explicit tag (``!!int 3.10``) changes nothing. ``null``, ``Null``, ``NULL``, ``~`` and an empty value
  are null, as JSON's ``null``: a null config value (a PATCH's removal). Merge keys (``<<: *base``) merge.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from .codecs.json_wire import JsonFloat, JsonInt, loads_exact

SUFFIXES = (".json", ".yaml", ".yml")
_AS_WRITTEN = (
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:timestamp",
    "tag:yaml.org,2002:binary",
)
_KEPT = ("tag:yaml.org,2002:null", "tag:yaml.org,2002:merge")


class TextLoader(yaml.SafeLoader):
    """PyYAML's safe loader with every scalar but null built as its text (``SUFFIXES``' YAML)."""

    def construct_as_written(self, node: yaml.Node) -> str:
        return str(self.construct_scalar(node))  # type: ignore[arg-type]


# only null and merge resolve implicitly: any other plain scalar is a string, its text as written
TextLoader.yaml_implicit_resolvers = {
    first: kept
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    if (kept := [(tag, regexp) for tag, regexp in resolvers if tag in _KEPT])
}
for _tag in _AS_WRITTEN:
    TextLoader.add_constructor(_tag, TextLoader.construct_as_written)


class FileError(Exception):
    """A file that cannot be read, or is neither JSON nor YAML."""


def numbers_as_text(value: Any) -> Any:
    """``value`` with each number read by ``loads_exact`` replaced by its text, as Jackson reads it into a
    ``String`` (the document then goes to the sidecar as JSON, where a number's text would be lost)."""
    if isinstance(value, JsonInt | JsonFloat):
        return value.text
    if isinstance(value, dict):
        return {k: numbers_as_text(v) for k, v in value.items()}
    if isinstance(value, list):
        return [numbers_as_text(v) for v in value]
    return value


def documents_of_file(file: Path) -> list[Any]:
    """The documents of one file, each scalar as written: a JSON file is one, a YAML file each of its
    documents (null ones left out)."""
    try:
        data = file.read_bytes()
        if file.suffix == ".json":
            value, error = loads_exact(data)
            if error is not None:
                raise FileError(f"{file}: {error}")
            documents = [numbers_as_text(value)]
        else:
            documents = list(yaml.load_all(data, Loader=TextLoader))
    except (OSError, yaml.YAMLError) as err:
        raise FileError(f"{file}: {err}") from err
    return [d for d in documents if d is not None]


def files_of(path: Path) -> list[Path]:
    """``path`` itself, or every ``SUFFIXES`` file under it, sorted."""
    files = sorted(p for p in path.rglob("*") if p.suffix in SUFFIXES) if path.is_dir() else [path]
    if not files:
        raise FileError(f"{path}: no {', '.join(SUFFIXES)} file")
    return files


__all__ = ["SUFFIXES", "FileError", "TextLoader", "documents_of_file", "files_of", "numbers_as_text"]

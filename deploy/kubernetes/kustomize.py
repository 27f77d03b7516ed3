"""Renders the kustomizations under deploy/kubernetes/ without kustomize: the subset they use, and only
that (any other field of a kustomization.yaml is refused, so the subset cannot grow unnoticed).

- ``resources``: YAML files and directories holding a kustomization.yaml, in order;
- ``patches``: strategic-merge patches (``- path: file``), each naming its target by kind and name: maps
  merge key by key (``null`` removes one), lists of containers, volumes, env, ports and mounts merge item
  by item on their merge key (as the Kubernetes API's ``patchMergeKey``), an item ``$patch: delete`` removes
  one, other lists are replaced;
- ``images``: ``name`` with ``newName`` and/or ``newTag``, on containers and init containers.

``tests/unit/test_kubernetes_manifests.py`` checks that ``kubectl kustomize`` renders the same objects
wherever kubectl is installed, and validates every object against the Kubernetes JSON schemas.

Usage: ``python deploy/kubernetes/kustomize.py deploy/kubernetes/base`` (``make manifests``).
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import yaml

Object = dict[str, Any]

KNOWN_FIELDS = frozenset({"apiVersion", "kind", "resources", "patches", "images"})
# the Kubernetes API's patchMergeKey of the lists the manifests patch (core/v1 PodSpec, Container, Service)
MERGE_KEYS = {
    "containers": "name",
    "initContainers": "name",
    "volumes": "name",
    "env": "name",
    "volumeMounts": "mountPath",
    "imagePullSecrets": "name",
}


class KustomizeError(ValueError):
    """A kustomization this renderer does not handle, or a patch without a target."""


def render(directory: Path) -> list[Object]:
    """The objects of the kustomization in ``directory``, patched, in the order of its resources."""
    kustomization = yaml.safe_load((directory / "kustomization.yaml").read_text())
    unknown = set(kustomization) - KNOWN_FIELDS
    if unknown:
        raise KustomizeError(f"{directory}/kustomization.yaml: not handled here: {', '.join(sorted(unknown))}")
    objects: list[Object] = []
    for entry in kustomization.get("resources", ()):
        path = directory / entry
        objects.extend(render(path) if path.is_dir() else _load(path))
    for patch in kustomization.get("patches", ()):
        if set(patch) != {"path"}:
            raise KustomizeError(f"{directory}: only `- path:` patches are handled, got {patch}")
        for document in _load(directory / patch["path"]):
            _apply(objects, document, directory / patch["path"])
    for image in kustomization.get("images", ()):
        _set_image(objects, image)
    return objects


def _load(path: Path) -> list[Object]:
    return [document for document in yaml.safe_load_all(path.read_text()) if document]


def _identity(item: Object) -> tuple[str, str]:
    return item["kind"], item["metadata"]["name"]


def _apply(objects: list[Object], patch: Object, source: Path) -> None:
    for i, target in enumerate(objects):
        if _identity(target) == _identity(patch):
            objects[i] = merge(target, patch)
            return
    raise KustomizeError(f"{source}: no {'/'.join(_identity(patch))} to patch")


def merge(target: Any, patch: Any, field: str = "") -> Any:
    """A strategic-merge patch of ``target`` by ``patch`` (a new object; neither is changed)."""
    if isinstance(target, dict) and isinstance(patch, dict):
        merged = copy.deepcopy(target)
        for key, value in patch.items():
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = merge(target[key], value, key) if key in target else copy.deepcopy(value)
        return merged
    if isinstance(target, list) and isinstance(patch, list):
        key = _merge_key(field, target + patch)
        if key is not None:
            return _merge_list(target, patch, key)
    return copy.deepcopy(patch)


def _merge_key(field: str, items: list[Any]) -> str | None:
    if field == "ports":  # a container's ports merge on containerPort, a Service's on port
        return "containerPort" if all("containerPort" in item for item in items) else "port"
    return MERGE_KEYS.get(field)


def _merge_list(target: list[Any], patch: list[Any], key: str) -> list[Any]:
    merged = copy.deepcopy(target)
    for item in patch:
        index = next((i for i, old in enumerate(merged) if old.get(key) == item.get(key)), None)
        if item.get("$patch") == "delete":
            if index is not None:
                del merged[index]
        elif index is None:
            merged.append(copy.deepcopy(item))
        else:
            merged[index] = merge(merged[index], item)
    return merged


def _set_image(objects: list[Object], image: Object) -> None:
    for item in objects:
        spec = item.get("spec", {}).get("template", {}).get("spec", {})
        for container in (*spec.get("containers", ()), *spec.get("initContainers", ())):
            name, _, tag = container["image"].partition(":")
            if name == image["name"]:
                tag = image.get("newTag", tag)
                container["image"] = image.get("newName", name) + (f":{tag}" if tag else "")


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: kustomize.py DIRECTORY", file=sys.stderr)
        return 2
    print(yaml.safe_dump_all(render(Path(argv[0])), sort_keys=False), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

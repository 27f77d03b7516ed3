"""The sidecar's view of each connector's offsets: ``GET {sidecar}/connectors/{c}/offsets`` (KIP-875's
shape, ``{"offsets": [{"partition": {...}, "offset": {...}}]}``), taken once by the driver, in the normal
form the comparison uses. A connector the sidecar does not answer for gets an ``error`` instead.

The one module of spark_jobs that speaks HTTP (see the import contracts in pyproject.toml)."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import quote

import httpx

from .transforms.jsonnorm import normal_json


@dataclass
class SidecarView:
    offsets: list[tuple[str, str, str | None]] = field(default_factory=list)  # connector, partition, offset
    answers: list[tuple[str, str | None]] = field(default_factory=list)  # connector, error


def read_sidecar_view(url: str, timeout_s: float = 30.0) -> SidecarView:
    """Every connector the sidecar lists (``GET {sidecar}/connectors``), then their offsets. A sidecar
    that does not answer the listing gives one answer, ``("*", error)``."""
    try:
        listed = httpx.get(f"{url}/connectors", timeout=timeout_s)
        names = listed.json() if listed.status_code == 200 else []
    except (httpx.HTTPError, ValueError) as err:
        view = SidecarView()
        view.answers.append(("*", f"no answer: {err!r}"))
        return view
    return read_sidecar_offsets(url, sorted(names), timeout_s)


def read_sidecar_offsets(url: str, connectors: list[str], timeout_s: float = 30.0) -> SidecarView:
    view = SidecarView()
    with httpx.Client(base_url=url, timeout=timeout_s) as client:
        for name in connectors:
            try:
                response = client.get(f"/connectors/{quote(name, safe='')}/offsets")
            except httpx.HTTPError as err:
                view.answers.append((name, f"no answer: {err!r}"))
                continue
            if response.status_code != 200:
                view.answers.append((name, f"HTTP {response.status_code}: {response.text[:200]}"))
                continue
            try:
                entries = response.json()["offsets"]
                rows = [
                    (name, normal_json(e["partition"]), None if e.get("offset") is None else normal_json(e["offset"]))
                    for e in entries
                ]
            except (ValueError, KeyError, TypeError) as err:
                view.answers.append((name, f"unexpected answer: {err!r}"))
                continue
            view.answers.append((name, None))
            view.offsets.extend(rows)
    return view

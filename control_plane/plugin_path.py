"""The converters and header converters on a worker's ``plugin.path``, found as Connect's plugin scan finds
them, for workers that do not list them (before 3.2, KIP-769).

Connect (``DelegatingClassLoader``, ``PluginUtils.pluginLocations``) takes each ``plugin.path`` entry as a
directory of plugin locations: each subdirectory (its jars, and its class files as a classpath root) and
each jar directly in it is one location; a jar given as an entry is a location too. Its scan keeps every
concrete class (neither abstract nor an interface, ``PluginUtils.isConcrete``) that is a subtype of
``Converter`` or ``HeaderConverter``. Here each class file's header is read (the constant pool, then its
access flags, superclass and interfaces, JVM spec 4.1) and the subtypes are followed through every class
found, and through Kafka's own converters that a plugin may extend. Nothing is loaded or run: a plugin's
version (``Versioned.version()``) is not known here.
"""

from __future__ import annotations

import asyncio
import logging
import struct
import time
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

CONVERTER = "org.apache.kafka.connect.storage.Converter"
HEADER_CONVERTER = "org.apache.kafka.connect.storage.HeaderConverter"
# Kafka's own converters (connect-api, connect-runtime, connect-json), which a plugin's class may extend
_KAFKA_BOTH = (
    "org.apache.kafka.connect.converters.ByteArrayConverter",
    "org.apache.kafka.connect.converters.NumberConverter",
    "org.apache.kafka.connect.json.JsonConverter",
    "org.apache.kafka.connect.storage.StringConverter",
)
KAFKA_SUPERTYPES: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(_KAFKA_BOTH, (CONVERTER, HEADER_CONVERTER)),
    "org.apache.kafka.connect.storage.SimpleHeaderConverter": (HEADER_CONVERTER,),
}
ACC_INTERFACE, ACC_ABSTRACT = 0x0200, 0x0400
# constant pool entry sizes after the tag (JVM spec 4.4), but Utf8's (a length, then its bytes)
_SIZES = {3: 4, 4: 4, 5: 8, 6: 8, 7: 2, 8: 2, 9: 4, 10: 4, 11: 4, 12: 4, 15: 3, 16: 2, 17: 4, 18: 4, 19: 2, 20: 2}


@dataclass(frozen=True)
class ClassHeader:
    name: str
    concrete: bool
    supertypes: tuple[str, ...]  # the superclass (if any) and the interfaces


def read_class(data: bytes) -> ClassHeader | None:
    """A class file's name, whether it is concrete, and its direct supertypes; None if it is no class file."""
    try:
        if data[:4] != b"\xca\xfe\xba\xbe":
            return None
        count = struct.unpack_from(">H", data, 8)[0]
        utf8: dict[int, str] = {}
        classes: dict[int, int] = {}
        pos, index = 10, 1
        while index < count:
            tag = data[pos]
            if tag == 1:
                length = struct.unpack_from(">H", data, pos + 1)[0]
                utf8[index] = data[pos + 3 : pos + 3 + length].decode("utf-8", "replace")
                pos += 3 + length
            else:
                if tag == 7:
                    classes[index] = struct.unpack_from(">H", data, pos + 1)[0]
                pos += 1 + _SIZES[tag]
            index += 2 if tag in (5, 6) else 1
        flags, this, parent, interfaces = struct.unpack_from(">HHHH", data, pos)
        pos += 8
        refs = [parent, *struct.unpack_from(f">{interfaces}H", data, pos)]

        def name(ref: int) -> str:
            return utf8[classes[ref]].replace("/", ".")

        supertypes = tuple(name(r) for r in refs if r)
        return ClassHeader(name(this), not flags & (ACC_INTERFACE | ACC_ABSTRACT), supertypes)
    except (IndexError, KeyError, struct.error):
        return None


def _locations(entry: Path) -> Iterator[Path]:
    if entry.is_file():
        yield entry
    elif entry.is_dir():
        yield from sorted(p for p in entry.iterdir() if p.is_dir() or p.suffix in (".jar", ".zip"))


def _class_files(location: Path) -> Iterator[bytes]:
    archives = [location] if location.is_file() else sorted(location.rglob("*.jar")) + sorted(location.rglob("*.zip"))
    for archive in archives:
        try:
            with zipfile.ZipFile(archive) as jar:
                for info in jar.infolist():
                    if info.filename.endswith(".class") and not info.filename.startswith("META-INF/"):
                        yield jar.read(info)
        except (OSError, zipfile.BadZipFile) as err:
            log.warning("cannot read %s: %s", archive, err)
    if location.is_dir():
        for path in sorted(location.rglob("*.class")):
            yield path.read_bytes()


@dataclass(frozen=True)
class Converters:
    converters: frozenset[str] = frozenset()
    header_converters: frozenset[str] = frozenset()


def scan(plugin_path: str) -> Converters:
    """The concrete converters and header converters of ``plugin_path`` (comma-separated, as the worker's)."""
    headers: dict[str, ClassHeader] = {}
    for entry in (Path(p.strip()) for p in plugin_path.split(",") if p.strip()):
        for location in _locations(entry):
            for data in _class_files(location):
                header = read_class(data)
                if header is not None:
                    headers.setdefault(header.name, header)
    memo: dict[str, frozenset[str]] = {}

    def ancestors(name: str, seen: frozenset[str] = frozenset()) -> frozenset[str]:
        if name in memo:
            return memo[name]
        direct = headers[name].supertypes if name in headers else KAFKA_SUPERTYPES.get(name, ())
        found = set(direct)
        for parent in direct:
            if parent not in seen:
                found |= ancestors(parent, seen | {name})
        memo[name] = frozenset(found)
        return memo[name]

    concrete = [h.name for h in headers.values() if h.concrete]
    return Converters(
        frozenset(n for n in concrete if CONVERTER in ancestors(n)),
        frozenset(n for n in concrete if HEADER_CONVERTER in ancestors(n)),
    )


class PluginPathScan:
    """:func:`scan` of one ``plugin.path``, in a thread, kept ``refresh_s`` (plugins change when workers
    restart); ``None`` for every call when the path is not known."""

    def __init__(self, plugin_path: str | None, refresh_s: float, monotonic: Callable[[], float] = time.monotonic):
        self._plugin_path = plugin_path
        self._refresh_s = refresh_s
        self._monotonic = monotonic
        self._found: tuple[float, tuple[frozenset[str], frozenset[str]]] | None = None
        self._lock = asyncio.Lock()

    async def __call__(self) -> tuple[frozenset[str], frozenset[str]] | None:
        if not self._plugin_path:
            return None
        async with self._lock:
            if self._found is None or self._monotonic() - self._found[0] > self._refresh_s:
                found = await asyncio.to_thread(scan, self._plugin_path)
                self._found = (self._monotonic(), (found.converters, found.header_converters))
            return self._found[1]


__all__ = ["CONVERTER", "HEADER_CONVERTER", "ClassHeader", "Converters", "PluginPathScan", "read_class", "scan"]

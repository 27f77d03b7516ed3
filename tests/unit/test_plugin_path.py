"""The converters of a plugin.path, found from the class files' headers as Connect's plugin scan finds them."""

from __future__ import annotations

import struct
import zipfile
from pathlib import Path

from control_plane.plugin_path import CONVERTER, HEADER_CONVERTER, PluginPathScan, read_class, scan


def class_file(name: str, parent: str | None, *interfaces: str, flags: int = 0x0021, wide: bool = False) -> bytes:
    """A minimal class file (JVM spec 4.1): its constant pool (a Long first with ``wide``: two slots), access
    flags, this class, superclass, interfaces; no fields, methods or attributes."""
    pool: list[bytes] = []
    if wide:
        pool += [b"\x05" + struct.pack(">q", 42), b""]  # a Long takes two entries

    def klass(n: str) -> int:
        raw = n.replace(".", "/").encode()
        pool.append(b"\x01" + struct.pack(">H", len(raw)) + raw)
        pool.append(b"\x07" + struct.pack(">H", len(pool)))
        return len(pool)

    this = klass(name)
    sup = klass(parent) if parent else 0
    refs = [klass(i) for i in interfaces]
    head = b"\xca\xfe\xba\xbe" + struct.pack(">HHH", 0, 61, len(pool) + 1) + b"".join(pool)
    body = struct.pack(">HHHH", flags, this, sup, len(refs)) + b"".join(struct.pack(">H", r) for r in refs)
    return head + body + struct.pack(">HHH", 0, 0, 0)


def test_a_class_header() -> None:
    header = read_class(class_file("a.Conv", "java.lang.Object", CONVERTER, wide=True))
    assert header is not None
    assert (header.name, header.concrete, header.supertypes) == ("a.Conv", True, ("java.lang.Object", CONVERTER))
    assert read_class(b"not a class") is None
    assert read_class(class_file("a.I", None, flags=0x0601)) is not None  # an interface: no superclass


def test_the_converters_of_a_plugin_path(tmp_path: Path) -> None:
    plugins = tmp_path / "plugins"
    (plugins / "one" / "lib").mkdir(parents=True)
    with zipfile.ZipFile(plugins / "one" / "lib" / "one.jar", "w") as jar:
        jar.writestr("a/Conv.class", class_file("a.Conv", "java.lang.Object", CONVERTER))
        jar.writestr("a/Base.class", class_file("a.Base", "java.lang.Object", HEADER_CONVERTER, flags=0x0421))
        jar.writestr("a/Sub.class", class_file("a.Sub", "a.Base"))
        jar.writestr("a/Iface.class", class_file("a.Iface", "java.lang.Object", CONVERTER, flags=0x0601))
        jar.writestr("a/ViaIface.class", class_file("a.ViaIface", "java.lang.Object", "a.Iface"))
        jar.writestr("a/Other.class", class_file("a.Other", "java.lang.Object"))
        jar.writestr("META-INF/versions/9/a/Conv.class", b"ignored")
    with zipfile.ZipFile(plugins / "two.jar", "w") as jar:  # a jar directly in the entry: a location
        jar.writestr("b/MyJson.class", class_file("b.MyJson", "org.apache.kafka.connect.json.JsonConverter"))
    (plugins / "three" / "c").mkdir(parents=True)  # class files in a plugin directory: a classpath root
    (plugins / "three" / "c" / "Loose.class").write_bytes(class_file("c.Loose", "a.Conv"))
    found = scan(f" {plugins} ,{tmp_path / 'missing'}")
    assert found.converters == {"a.Conv", "a.ViaIface", "b.MyJson", "c.Loose"}
    assert found.header_converters == {"a.Sub", "b.MyJson"}


async def test_the_scan_is_kept(tmp_path: Path) -> None:
    now = [0.0]
    scanned = PluginPathScan(str(tmp_path), refresh_s=60, monotonic=lambda: now[0])
    assert await scanned() == (frozenset(), frozenset())
    (tmp_path / "x.class").write_bytes(class_file("x.Conv", "java.lang.Object", CONVERTER))
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "Conv.class").write_bytes(class_file("d.Conv", "java.lang.Object", CONVERTER))
    assert await scanned() == (frozenset(), frozenset())  # kept
    now[0] = 61.0
    assert await scanned() == (frozenset({"d.Conv"}), frozenset())  # a loose class file is no location
    assert await PluginPathScan(None, refresh_s=60)() is None

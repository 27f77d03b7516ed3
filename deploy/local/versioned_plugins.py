"""The versioned test plugins of ``test-plugins/versioned/`` (KIP-891), built and laid out for ``plugin.path``.

``build(api_classpath)`` compiles the Java sources once per version (``VERSIONS``) against the given
``connect-api`` classpath (the oldest Connect's, so the same jars load on every worker), packs one jar per
version and puts each in a plugin directory of its own:

    <CACHE>/versioned-plugins-<digest>/versioned-1.0.0/versioned-plugins-1.0.0.jar
                                      /versioned-1.1.0/...
                                      /versioned-2.0.0/...

and returns the parent directory, the entry for a worker's ``plugin.path``. The digest covers the sources
and the versions: a second call builds nothing.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import tempfile
from pathlib import Path

SOURCES = Path(__file__).resolve().parent / "test-plugins" / "versioned"
VERSIONS = ("1.0.0", "1.1.0", "2.0.0")
PACKAGE = "org.example.versioned"
CONNECTOR = f"{PACKAGE}.VersionedSourceConnector"
CONVERTER = f"{PACKAGE}.VersionedConverter"
TRANSFORMATION = f"{PACKAGE}.VersionedTransformation"
TOKEN = "@VERSION@"


def _digest() -> str:
    sha = hashlib.sha256(",".join(VERSIONS).encode())
    for path in sorted(p for p in SOURCES.rglob("*") if p.is_file()):
        sha.update(str(path.relative_to(SOURCES)).encode())
        sha.update(path.read_bytes())
    return sha.hexdigest()[:16]


def _build_one(version: str, api_classpath: Path, jar: Path) -> None:
    with tempfile.TemporaryDirectory(prefix=f"versioned-{version}-") as tmp:
        work = Path(tmp)
        src, classes = work / "src", work / "classes"
        shutil.copytree(SOURCES / "src", src)
        for java in src.rglob("*.java"):
            java.write_text(java.read_text().replace(TOKEN, version))
        shutil.copytree(SOURCES / "resources", classes)
        javac = [
            "javac",
            "--release",
            "11",
            "-nowarn",
            "-cp",
            str(api_classpath / "*"),
            "-d",
            str(classes),
            *map(str, sorted(src.rglob("*.java"))),
        ]
        for cmd in (javac, ["jar", "--create", "--file", str(jar), "-C", str(classes), "."]):
            res = subprocess.run(cmd, capture_output=True, text=True)
            if res.returncode != 0:
                raise RuntimeError(f"{cmd[0]} failed for the versioned plugins {version}:\n{res.stdout}{res.stderr}")


def build(api_classpath: Path, cache: Path) -> Path:
    """The ``plugin.path`` entry holding one directory per version (built once per digest of the sources)."""
    home = cache / f"versioned-plugins-{_digest()}"
    if (home / ".complete").exists():
        return home
    shutil.rmtree(home, ignore_errors=True)
    for version in VERSIONS:
        plugin_dir = home / f"versioned-{version}"
        plugin_dir.mkdir(parents=True)
        _build_one(version, api_classpath, plugin_dir / f"versioned-plugins-{version}.jar")
    (home / ".complete").write_text("\n".join(VERSIONS) + "\n")
    return home


__all__ = ["CONNECTOR", "CONVERTER", "TRANSFORMATION", "VERSIONS", "build"]

"""Kafka and Kafka Connect jars from Maven Central, pinned by the poms in ``maven/``.

``resolve(version)`` runs ``mvn dependency:copy-dependencies`` once per pom and caches the result
under ``.stack/cache/kafka-<version>/`` (the Maven repository in ~/.m2 caches the downloads): a second
start downloads nothing and does not even start Maven. ``connect-file`` goes to a plugin directory of
its own, for the worker's ``plugin.path``; everything else is the classpath.

A release whose ``connect-file`` is not on Maven Central (4.4.0) takes the previous one's, and when that
one reads its version from a class the release moved (``AppInfoParser``, in ``common.utils.internals``
from 4.4), the shim of ``compat/`` is compiled into the plugin directory beside it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
POMS = Path(__file__).resolve().parent / "maven"
CACHE = Path(os.environ.get("STACK_CACHE_DIR", ROOT / ".stack" / "cache"))
NEW_VERSION = "4.4.0"  # the newest release: the stack's broker and the parity reference
OLD_VERSION = "3.4.1"  # no KIP-875 (stop, offsets) and no KIP-891 (plugin versions)
# the oldest release that runs on Java 17 against the 4.4.0 broker: no KIP-745 (restart options, 3.0), no
# KIP-769 (plugin listing and config, 3.2) either
OLDEST_VERSION = "2.8.2"
# the previous newest release: its own behaviours (bugs, workarounds) keep tests on workers of their own
PREVIOUS_VERSION = "4.3.1"
VERSIONS = (NEW_VERSION, OLD_VERSION, OLDEST_VERSION, PREVIOUS_VERSION)
COMPAT = Path(__file__).resolve().parent / "compat"
MOVED_APP_INFO = "org/apache/kafka/common/utils/AppInfoParser.class"
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"


@dataclass(frozen=True)
class KafkaJars:
    version: str
    classpath: Path
    plugins: Path


def resolve(version: str) -> KafkaJars:
    pom = POMS / f"kafka-{version}.pom"
    if not pom.exists():
        raise RuntimeError(f"no pom for Kafka {version} in {POMS}")
    home = CACHE / f"kafka-{version}"
    jars = KafkaJars(version, home / "lib", home / "plugins")
    stamp = home / ".pom.sha256"
    digest = hashlib.sha256(pom.read_bytes()).hexdigest()
    if stamp.exists() and stamp.read_text() == digest:
        return jars
    print(f"resolving Kafka {version} jars from Maven Central ...", file=sys.stderr, flush=True)
    shutil.rmtree(home, ignore_errors=True)
    base = ["mvn", "-q", "-B", "-f", str(pom), f"{DEPENDENCY_PLUGIN}:copy-dependencies"]
    for args in (
        [f"-DoutputDirectory={jars.classpath}", "-DexcludeArtifactIds=connect-file"],
        [f"-DoutputDirectory={jars.plugins / 'connect-file'}", "-DincludeArtifactIds=connect-file"],
    ):
        res = subprocess.run([*base, *args], capture_output=True, text=True)
        if res.returncode != 0:
            raise RuntimeError(f"mvn failed for Kafka {version}:\n{res.stdout[-4000:]}\n{res.stderr[-4000:]}")
    _app_info_shim(jars)
    stamp.write_text(digest)
    return jars


def _app_info_shim(jars: KafkaJars) -> None:
    """The ``AppInfoParser`` of ``compat/`` in the connect-file plugin directory, when the release's
    kafka-clients no longer has it where an older connect-file looks for it."""
    (clients,) = jars.classpath.glob("kafka-clients-*.jar")
    with zipfile.ZipFile(clients) as jar:
        if MOVED_APP_INFO in jar.namelist():
            return
    plugin = jars.plugins / "connect-file"
    with tempfile.TemporaryDirectory(prefix="app-info-shim-") as tmp:
        sources = sorted(map(str, COMPAT.rglob("*.java")))
        javac = ["javac", "--release", "11", "-nowarn", "-cp", str(clients), "-d", tmp, *sources]
        for cmd in (javac, ["jar", "--create", "--file", str(plugin / "app-info-shim.jar"), "-C", tmp, "."]):
            res = subprocess.run(cmd, capture_output=True, text=True)
            if res.returncode != 0:
                raise RuntimeError(f"{cmd[0]} failed for the AppInfoParser shim:\n{res.stdout}{res.stderr}")


def main() -> int:
    for version in VERSIONS:
        jars = resolve(version)
        print(f"Kafka {version}: {len(list(jars.classpath.glob('*.jar')))} jars in {jars.classpath}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Connect's own OpenAPI description for each Connect version of the stack, built from its jars.

Kafka generates the description of Connect's REST API at build time (the swagger annotations of
``connect-runtime``'s resource classes, read by its ``connect:runtime:genConnectOpenAPIDocs`` task) and
publishes it with its docs, not in any jar. ``ensure(version)`` does the same here: Maven resolves the
classpath of ``connect-<version>.pom`` (connect-runtime and the swagger reader Kafka's build uses), javac
compiles ``ConnectOpenApi.java``, and java writes ``.stack/openapi/connect-<version>.json``. The result is
cached under a digest of the pom and the Java source: a second run starts neither Maven nor the JVM.

    python deploy/openapi/build.py            # every version (make openapi)
    python deploy/openapi/build.py 3.4.1      # one
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
OUT = Path(os.environ.get("OPENAPI_DIR", ROOT / ".stack" / "openapi"))
SOURCE = HERE / "ConnectOpenApi.java"
VERSIONS = ("4.4.0", "4.3.1", "3.4.1")  # the Connect versions of the local stack (deploy/local/jars.py)
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"


def description_path(version: str) -> Path:
    return OUT / f"connect-{version}.json"


def _run(cmd: list[str], what: str) -> None:
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"{what} failed:\n{res.stdout[-4000:]}\n{res.stderr[-4000:]}")


def has_description(version: str) -> bool:
    """Whether this directory builds Connect ``version``'s description (a pom per version)."""
    return (HERE / f"connect-{version}.pom").exists()


def ensure(version: str) -> Path:
    """The path of Connect ``version``'s description, built first unless the cached one is current."""
    pom = HERE / f"connect-{version}.pom"
    if not pom.exists():
        raise RuntimeError(f"no pom for Connect {version} in {HERE}")
    out = description_path(version)
    stamp = out.with_suffix(".sha256")
    digest = hashlib.sha256(pom.read_bytes() + SOURCE.read_bytes()).hexdigest()
    if out.exists() and stamp.exists() and stamp.read_text() == digest:
        return out
    print(f"generating Connect {version}'s OpenAPI description ...", file=sys.stderr, flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"openapi-{version}-") as tmp:
        cp_file = Path(tmp) / "classpath.txt"
        _run(
            ["mvn", "-q", "-B", "-f", str(pom), f"{DEPENDENCY_PLUGIN}:build-classpath", f"-Dmdep.outputFile={cp_file}"],
            f"mvn (Connect {version})",
        )
        classpath = cp_file.read_text().strip()
        classes = Path(tmp) / "classes"
        _run(["javac", "-d", str(classes), "-cp", classpath, str(SOURCE)], "javac ConnectOpenApi.java")
        tmp_out = Path(tmp) / out.name
        _run(
            ["java", "-cp", f"{classes}{os.pathsep}{classpath}", "ConnectOpenApi", version, str(tmp_out)],
            f"ConnectOpenApi {version}",
        )
        shutil.move(tmp_out, out)
    stamp.write_text(digest)
    return out


def main(argv: list[str]) -> int:
    for version in argv or VERSIONS:
        path = ensure(version)
        print(f"Connect {version}: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Config provider references resolved as the worker resolves them (ConfigTransformer), and said where not."""

from __future__ import annotations

from pathlib import Path

import pytest

from control_plane.rules.config_providers import DIRECTORY, ENV, FILE, ConfigProviders


def providers(tmp: Path, *, environ: dict[str, str] | None = None, **params: str) -> ConfigProviders:
    props = {
        "config.providers": "file, dir,env,vault",
        "config.providers.file.class": FILE,
        "config.providers.dir.class": DIRECTORY,
        "config.providers.env.class": ENV,
        "config.providers.vault.class": "com.example.VaultConfigProvider",
        **{f"config.providers.{k.replace('__', '.')}": v for k, v in params.items()},
    }
    return ConfigProviders.from_worker(props, environ)


def test_file_and_directory_references_are_replaced_in_place(tmp_path: Path) -> None:
    (tmp_path / "kafka.properties").write_text("servers = 127.0.0.1:9092\ngroup=g1\n")
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "topic").write_text("own-offsets")
    resolved = providers(tmp_path).resolve(
        {
            "producer.override.bootstrap.servers": f"${{file:{tmp_path}/kafka.properties:servers}}",
            "consumer.override.group.id": f"pre-${{file:{tmp_path}/kafka.properties:group}}-post",
            "offsets.storage.topic": f"${{dir:{tmp_path}/secrets:topic}}",
            "plain": "x",
            "none": None,
        }
    )
    assert resolved.values == {
        "producer.override.bootstrap.servers": "127.0.0.1:9092",
        "consumer.override.group.id": "pre-g1-post",
        "offsets.storage.topic": "own-offsets",
        "plain": "x",
        "none": None,
    }
    assert resolved.unresolved == {}


def test_what_the_worker_leaves_as_written_stays_as_written(tmp_path: Path) -> None:
    """A provider the worker does not configure, or a key its file lacks: the worker's connector gets the text."""
    (tmp_path / "p").write_text("a=1\n")
    config = {"k1": "${nope:/x:y}", "k2": f"${{file:{tmp_path}/p:missing}}", "k3": f"${{dir:{tmp_path}/none:k}}"}
    resolved = providers(tmp_path).resolve(config)
    assert resolved.values == config
    assert resolved.unresolved == {}


def test_what_the_sidecar_cannot_read_is_unresolved_naming_the_reference(tmp_path: Path) -> None:
    config = {
        "a": f"${{file:{tmp_path}/absent.properties:k}}",
        "b": "${env:BOOTSTRAP}",
        "c": "${vault:secret/kafka:servers}",
    }
    resolved = providers(tmp_path).resolve(config)
    assert resolved.values == config
    assert set(resolved.unresolved) == {"a", "b", "c"}
    assert resolved.unresolved["a"].startswith(f"${{file:{tmp_path}/absent.properties:k}}: the file ")
    assert "not one the sidecar can run" in resolved.unresolved["c"]
    assert (
        resolved.why("x", "b")
        == "b: ${env:BOOTSTRAP}: environment variables are the worker process's, which the sidecar does not see"
    )


def test_environment_variables_when_the_workers_are_known_follow_the_allowlist(tmp_path: Path) -> None:
    known = providers(tmp_path, environ={"BOOT": "h:1", "SECRET": "s"}, env__param__allowlist__pattern="BOO.*")
    resolved = known.resolve({"a": "${env:BOOT}", "b": "${env:SECRET}", "c": "${env:some/path:BOOT}"})
    assert resolved.values == {"a": "h:1", "b": "${env:SECRET}", "c": "${env:some/path:BOOT}"}


@pytest.mark.parametrize(("allowed", "read"), [("{d}", True), ("/elsewhere", False), ("/elsewhere,{d}/", True)])
def test_allowed_paths_limit_what_the_file_provider_reads(tmp_path: Path, allowed: str, read: bool) -> None:
    (tmp_path / "p").write_text("a=1\n")
    resolved = providers(tmp_path, file__param__allowed__paths=allowed.format(d=tmp_path)).resolve(
        {"k": f"${{file:{tmp_path}/../{tmp_path.name}/p:a}}"}
    )
    assert (resolved.values["k"] == "1") is read

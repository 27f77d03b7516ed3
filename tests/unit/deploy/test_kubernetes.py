"""The Kubernetes manifests (deploy/kubernetes/): rendered by ``kubectl kustomize``, every object valid
against the Kubernetes API's JSON schemas (kubernetes-validate), and what they say of the sidecar true of
the sidecar: its settings, its properties file, its probes, its port, its image."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from pathlib import Path

import dockerfile
import kubernetes_validate
import pytest

from control_plane.rest.resources import ops
from control_plane.rest.routing.routes import ROUTES
from control_plane.settings import ENV_PREFIX, Settings, load_settings
from control_plane.worker_properties import parse_properties
from tests.support.kubernetes import BASE, KUBERNETES, STANDALONE, Object, render
from tests.support.paths import ROOT

VARIANTS = [pytest.param(BASE, id="sidecar-in-worker-pod"), pytest.param(STANDALONE, id="standalone")]
# the oldest Kubernetes the manifests claim (every field they use is GA there) and the newest schemas shipped
KUBERNETES_VERSIONS = ["1.29.0", kubernetes_validate.latest_version()]
SIDECAR = "control-plane"


def one(objects: list[Object], kind: str, name: str) -> Object:
    (found,) = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]
    return found


def pod_spec(objects: list[Object], deployment: str) -> Object:
    spec: Object = one(objects, "Deployment", deployment)["spec"]["template"]["spec"]
    return spec


def containers(objects: list[Object]) -> Iterator[tuple[Object, Object]]:
    """Every (pod spec, container) of the rendered Deployments, init containers included."""
    for item in objects:
        if item["kind"] == "Deployment":
            spec = item["spec"]["template"]["spec"]
            for container in (*spec.get("initContainers", ()), *spec["containers"]):
                yield spec, container


def sidecar_of(objects: list[Object]) -> tuple[Object, Object]:
    (found,) = [(spec, c) for spec, c in containers(objects) if c["name"] == SIDECAR]
    return found


def env_of(container: Object) -> dict[str, str]:
    return {e["name"]: e["value"] for e in container.get("env", ()) if "value" in e}


def mounted_volume(container: Object, path: str) -> str:
    """The volume whose mount holds ``path`` in the container."""
    (volume,) = [m["name"] for m in container["volumeMounts"] if path.startswith(m["mountPath"].rstrip("/") + "/")]
    return str(volume)


def port_number(container: Object, port: int | str) -> int:
    if isinstance(port, int):
        return port
    (number,) = [p["containerPort"] for p in container["ports"] if p.get("name") == port]
    return int(number)


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_every_object_is_valid_against_the_kubernetes_schemas(variant: Path, version: str) -> None:
    objects = render(variant)
    assert {o["kind"] for o in objects} == {"ConfigMap", "Deployment", "Service"}
    for item in objects:
        # strict: a field the API does not know (a typo) fails too
        kubernetes_validate.validate(item, version, strict=True)


@pytest.mark.parametrize(
    ("variant", "objects"),
    [
        pytest.param(
            BASE,
            [("ConfigMap", "connect-worker-config"), ("Service", "control-plane"), ("Deployment", "connect")],
            id="sidecar-in-worker-pod",
        ),
        pytest.param(
            STANDALONE,
            [
                ("ConfigMap", "connect-worker-config"),
                ("Service", "connect"),
                ("Service", "control-plane"),
                ("Deployment", "connect"),
                ("Deployment", "control-plane"),
            ],
            id="standalone",
        ),
    ],
)
def test_each_variant_renders_its_objects_once(variant: Path, objects: list[tuple[str, str]]) -> None:
    assert [(o["kind"], o["metadata"]["name"]) for o in render(variant)] == objects


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_variable_of_the_sidecar_is_a_setting(variant: Path) -> None:
    _, sidecar = sidecar_of(render(variant))
    names = [e["name"] for e in sidecar["env"]]
    assert names and all(name.startswith(ENV_PREFIX) for name in names)
    unknown = [name for name in names if name.removeprefix(ENV_PREFIX).lower() not in Settings.model_fields]
    assert not unknown, f"not settings of the sidecar: {unknown}"


@pytest.mark.parametrize("variant", VARIANTS)
def test_several_sidecars_read_every_write_acknowledged_through_another(variant: Path) -> None:
    """Both layouts run several sidecars of one cluster: every one syncs its reads (and waits the window out
    after a write), or none could answer a read at once."""
    _, sidecar = sidecar_of(render(variant))
    assert env_of(sidecar)["CONTROL_PLANE_VIEW_READ_SYNC"] == "always"


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_history_key_comes_from_a_secret_the_manifests_do_not_ship(variant: Path) -> None:
    """Every sidecar of the cluster has the same key of the history's digests and the plans' fingerprints,
    from a Kubernetes Secret: never a value in the manifest, never a Secret rendered with them."""
    objects = render(variant)
    _, sidecar = sidecar_of(objects)
    (key,) = [e for e in sidecar["env"] if e["name"] == f"{ENV_PREFIX}HISTORY_SECRET_KEY"]
    assert key == {
        "name": f"{ENV_PREFIX}HISTORY_SECRET_KEY",
        "valueFrom": {"secretKeyRef": {"name": "control-plane-history", "key": "history-secret-key"}},
    }
    assert not [o for o in objects if o["kind"] == "Secret"]
    guide = (ROOT / "docs" / "deploying" / "kubernetes.md").read_text()
    assert "kubectl create secret generic control-plane-history" in guide and "history-secret-key" in guide


def worker_properties(objects: list[Object], pod_ip: str) -> str:
    """The file the workers' init container writes: the ConfigMap's files in order, then the pod's address."""
    spec = pod_spec(objects, "connect")
    (init,) = spec["initContainers"]
    script = init["command"][-1]
    assert "cat /etc/connect/*.properties > /var/run/connect/connect-distributed.properties" in script
    assert "rest.advertised.host.name=%s" in script and "$POD_IP" in script
    data = one(objects, "ConfigMap", "connect-worker-config")["data"]
    return "".join(data[name] for name in sorted(data)) + f"rest.advertised.host.name={pod_ip}\n"


def test_the_sidecar_in_the_worker_pod_reads_the_workers_file_and_calls_it_on_loopback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    objects = render(BASE)
    spec, sidecar = sidecar_of(objects)
    (connect,) = [c for c in spec["containers"] if c["name"] == "connect"]
    (init,) = spec["initContainers"]
    path = env_of(sidecar)["CONTROL_PLANE_WORKER_PROPERTIES"]
    # one file on one shared volume: written by the init container, read by the worker and the sidecar
    volume = mounted_volume(sidecar, path)
    assert mounted_volume(connect, path) == mounted_volume(init, path) == volume
    assert connect["command"][-1] == path
    assert [v for v in spec["volumes"] if v["name"] == volume] == [{"name": volume, "emptyDir": {}}]
    text = worker_properties(objects, "10.0.0.7")
    props = parse_properties(text)
    assert props["listeners"] == "http://127.0.0.1:8083"  # Connect's REST API not on the pod's address
    # the other workers forward to the leader through its sidecar, which passes the request through
    assert (props["rest.advertised.host.name"], props["rest.advertised.port"]) == ("10.0.0.7", "8084")
    assert props["rest.advertised.port"] == str(port_number(sidecar, "http"))

    (tmp_path / "worker.properties").write_text(text)
    settings = sidecar_settings(sidecar, monkeypatch, tmp_path / "worker.properties")
    assert settings.connect_urls == ("http://127.0.0.1:8083",)
    assert (settings.bootstrap_servers, settings.group_id) == ("kafka:9092", "connect-cluster")
    assert settings.config_storage_topic == "connect-configs" and settings.status_storage_topic == "connect-status"


def test_the_standalone_sidecar_calls_the_workers_through_their_service(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    objects = render(STANDALONE)
    assert all(c["name"] != SIDECAR for c in pod_spec(objects, "connect")["containers"])
    props = parse_properties(worker_properties(objects, "10.0.0.7"))
    assert (props["listeners"], props["rest.advertised.port"]) == ("http://0.0.0.0:8083", "8083")
    spec, sidecar = sidecar_of(objects)
    path = env_of(sidecar)["CONTROL_PLANE_WORKER_PROPERTIES"]
    (volume,) = [v for v in spec["volumes"] if v["name"] == mounted_volume(sidecar, path)]
    assert volume["configMap"]["name"] == "connect-worker-config"
    config = one(objects, "ConfigMap", "connect-worker-config")["data"]
    (tmp_path / "worker.properties").write_text(config[Path(path).name])
    settings = sidecar_settings(sidecar, monkeypatch, tmp_path / "worker.properties")
    service = one(objects, "Service", "connect")
    (port,) = service["spec"]["ports"]
    assert settings.connect_urls == (f"http://connect:{port['port']}",)
    workers = one(objects, "Deployment", "connect")["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= workers.items()
    (connect,) = pod_spec(objects, "connect")["containers"]
    assert port_number(connect, port["targetPort"]) == 8083
    assert settings.bootstrap_servers == "kafka:9092"


def sidecar_settings(sidecar: Object, monkeypatch: pytest.MonkeyPatch, properties: Path) -> Settings:
    """The settings the sidecar resolves from its container's environment (its properties file here)."""
    for name, value in env_of(sidecar).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("CONTROL_PLANE_WORKER_PROPERTIES", str(properties))
    settings = load_settings()
    assert (settings.host, settings.port) == ("0.0.0.0", port_number(sidecar, "http"))
    return settings


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_probes_and_the_service_reach_the_sidecars_own_endpoints(variant: Path) -> None:
    objects = render(variant)
    _, sidecar = sidecar_of(objects)
    routes = {r.path: r.handler for r in ROUTES if r.method == "GET"}
    probes = {name: sidecar[name]["httpGet"] for name in ("livenessProbe", "readinessProbe")}
    assert routes[probes["livenessProbe"]["path"]] is ops.healthz
    assert routes[probes["readinessProbe"]["path"]] is ops.readyz
    port = int(env_of(sidecar)["CONTROL_PLANE_PORT"])
    assert all(port_number(sidecar, probe["port"]) == port for probe in probes.values())
    service = one(objects, "Service", "control-plane")
    (service_port,) = service["spec"]["ports"]
    assert port_number(sidecar, service_port["targetPort"]) == port
    selected = [
        d
        for d in objects
        if d["kind"] == "Deployment"
        and service["spec"]["selector"].items() <= d["spec"]["template"]["metadata"]["labels"].items()
    ]
    assert [pod_spec(objects, d["metadata"]["name"]) for d in selected] == [sidecar_of(objects)[0]]


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_sidecar_runs_as_non_root_on_a_read_only_root_with_resource_requests(variant: Path) -> None:
    _, sidecar = sidecar_of(render(variant))
    security = sidecar["securityContext"]
    assert security["runAsNonRoot"] is True and security["runAsUser"] != 0
    assert security["readOnlyRootFilesystem"] is True and security["allowPrivilegeEscalation"] is False
    assert security["capabilities"]["drop"] == ["ALL"]
    assert mounted_volume(sidecar, "/tmp/x") == "tmp"  # the one place it writes (tempfile)
    assert {"cpu", "memory"} <= sidecar["resources"]["requests"].keys()
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert sidecar["image"] == f"control-plane:{version}"  # the image deploy/kubernetes/Containerfile builds


def test_the_image_definition_is_multi_stage_non_root_and_installs_the_package() -> None:
    # read by the parser docker's own build uses (moby's buildkit), through the `dockerfile` package
    commands = dockerfile.parse_file(str(KUBERNETES / "Containerfile"))
    stages = [i for i, c in enumerate(commands) if c.cmd == "FROM"]
    assert len(stages) == 2 and commands[stages[0]].value[1:] == ("AS", "build")
    final = [(c.cmd, c.value) for c in commands[stages[1] :]]
    _, sidecar = sidecar_of(render(BASE))
    user = sidecar["securityContext"]
    assert ("USER", (f"{user['runAsUser']}:{user['runAsGroup']}",)) in final
    assert ("EXPOSE", (str(port_number(sidecar, "http")),)) in final
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    (entrypoint,) = [c for c in commands[stages[1] :] if c.cmd == "ENTRYPOINT"]
    assert entrypoint.json and entrypoint.value == (next(iter(scripts)),) and sidecar["args"][0] == "serve"
    assert any(
        cmd == "RUN" and re.fullmatch(r"pip install --no-index --find-links /wheels control-plane .*", value[0])
        for cmd, value in final
    )
    copied = [c.value[:-1] for c in commands if c.cmd == "COPY" and not any(f.startswith("--from") for f in c.flags)]
    ignored = (ROOT / ".dockerignore").read_text().splitlines()
    for path in (p for paths in copied for p in paths):  # what the build copies is in its context
        assert (ROOT / path).exists()
        assert {f"!{path}", f"!{path}/"} & set(ignored), path


# -- the overlay patches the base ---------------------------------------------------------------------


def test_the_standalone_overlay_patches_the_base_workers_in_place() -> None:
    """Its patch of the workers' Deployment deletes the sidecar container and adds a readiness probe to
    the worker's, which keeps everything else the base gives it; the sidecar image's tag is set in the
    overlay's objects as in the base's."""
    base, standalone = pod_spec(render(BASE), "connect"), pod_spec(render(STANDALONE), "connect")
    assert [c["name"] for c in base["containers"]] == ["connect", SIDECAR]
    (worker,) = standalone["containers"]
    (base_worker,) = [c for c in base["containers"] if c["name"] == "connect"]
    assert "readinessProbe" not in base_worker
    assert worker == {**base_worker, "readinessProbe": worker["readinessProbe"]}
    assert worker["readinessProbe"]["httpGet"] == {"path": "/", "port": "connect"}
    assert standalone["initContainers"] == base["initContainers"]
    _, sidecar = sidecar_of(render(STANDALONE))
    assert sidecar["image"] == sidecar_of(render(BASE))[1]["image"]


def test_a_kustomization_kubectl_refuses_fails_the_test_with_kubectls_reason(tmp_path: Path) -> None:
    (tmp_path / "kustomization.yaml").write_text("resources: []\npatches:\n  - path: p.yaml\n")
    (tmp_path / "p.yaml").write_text("apiVersion: v1\nkind: Service\nmetadata:\n  name: nobody\n")
    with pytest.raises(pytest.fail.Exception, match=r"kubectl kustomize .* failed:\n.*no resource matches"):
        render(tmp_path)

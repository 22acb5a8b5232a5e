"""deploy/k8s/, checked offline (there is no cluster here): every manifest is valid against
Kubernetes 1.33's schemas (kubernetes-validate, strict: no unknown fields), and it says what
the rest of the project says: the Dockerfile's image, port and user; probes on
/_stcore/health; resources sized from the memory benchmark (docs/PERFORMANCE.md); cookie
affinity and websocket timeouts long enough for a lesson on the Ingress; an HPA on CPU.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
K8S = ROOT / "deploy" / "k8s"
KUBERNETES = "1.33.0"  # the Kubernetes version the manifests are validated against
LESSON_S = 3600  # a websocket held open at least this long (one lesson)
PREFIX = "nginx.ingress.kubernetes.io/"


def _manifests() -> dict[str, dict]:
    """Every resource in deploy/k8s: the replicas' by kind ("Deployment"), the static
    files' (static.yaml) by kind and name ("Deployment/glassbox-static")."""
    found = {}
    for path in sorted(K8S.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc:
                name = doc.get("metadata", {}).get("name", "")
                key = f"{doc['kind']}/{name}" if name.endswith("-static") else doc["kind"]
                assert key not in found, f"two {key}s"
                found[key] = doc | {"_file": path.name}
    return found


M = _manifests()
STATIC = "glassbox-static"


def _mib(quantity: str) -> float:
    units = {"Ki": 1 / 1024, "Mi": 1, "Gi": 1024, "M": 1e6 / 2**20, "G": 1e9 / 2**20}
    number, unit = re.fullmatch(r"([\d.]+)([A-Za-z]*)", quantity).groups()
    return float(number) * units.get(unit, 1 / 2**20)


def _container() -> dict:
    (container,) = M["Deployment"]["spec"]["template"]["spec"]["containers"]
    return container


def test_every_manifest_is_valid_kubernetes() -> None:
    try:
        import kubernetes_validate
    except ImportError:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("CI=true but kubernetes-validate is not installed", pytrace=False)
        pytest.skip("kubernetes-validate is not installed (requirements-dev.txt)")
    for kind, doc in M.items():
        if kind == "Kustomization":
            continue
        resource = {k: v for k, v in doc.items() if k != "_file"}
        kubernetes_validate.validate(resource, KUBERNETES, strict=True)


def test_the_kustomization_lists_every_manifest_and_names_the_image() -> None:
    kustomization = M["Kustomization"]
    files = {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml"}
    assert set(kustomization["resources"]) == files
    images = {i["name"] for i in kustomization["images"]}
    assert _container()["image"].split(":")[0] in images


def test_the_deployment_runs_the_dockerfiles_image() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    port = int(re.search(r"^EXPOSE (\d+)", dockerfile, re.M)[1])
    uid = int(re.search(r"useradd .*--uid (\d+)", dockerfile)[1])
    c = _container()
    assert c["image"].startswith("glassbox")  # docker build -t glassbox . (docs/DEPLOY.md)
    assert [p["containerPort"] for p in c["ports"]] == [port]
    assert f"--server.port={port}" in c["args"] and "--server.address=0.0.0.0" in c["args"]
    assert c["command"][:3] == ["python", "-m", "deploy.replica"]  # the failover patch
    assert (ROOT / "deploy" / "replica.py").is_file() and c["command"][3] == "app.py"
    pod = M["Deployment"]["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsUser"] == uid and pod["securityContext"]["runAsNonRoot"]
    env = {e["name"]: e for e in c["env"]}
    secret = env["STREAMLIT_SERVER_COOKIE_SECRET"]["valueFrom"]["secretKeyRef"]
    assert secret == {"name": "glassbox", "key": "cookie-secret"}  # one secret, every pod
    database = env["GLASSBOX_DATABASE_URL"]["valueFrom"]["secretKeyRef"]
    assert database == {"name": "glassbox", "key": "database-url"}  # one class store
    assert int(env["OMP_NUM_THREADS"]["value"]) == int(c["resources"]["limits"]["cpu"])
    # the join link names the Ingress's host, which students' phones reach
    hosts = [r["host"] for r in M["Ingress"]["spec"]["rules"]]
    assert env["GLASSBOX_PUBLIC_URL"]["value"] == f"https://{hosts[0]}"
    assert M["Deployment"]["spec"]["replicas"] >= 2


def test_probes_ask_streamlits_health_endpoint() -> None:
    c = _container()
    named = {p["name"]: p["containerPort"] for p in c["ports"]}
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        get = c[probe]["httpGet"]
        assert get["path"] == "/_stcore/health", probe
        assert named.get(get["port"], get["port"]) == 8501, probe
    live, start = c["livenessProbe"], c["startupProbe"]
    # A hung pod is restarted within a minute; a cold start (torch) has two.
    assert live["periodSeconds"] * live["failureThreshold"] <= 60
    assert start["periodSeconds"] * start["failureThreshold"] >= 120


def test_resources_are_sized_from_the_memory_benchmark() -> None:
    """Requests at least the memory measured after 30 sessions (docs/DEPLOY.md, from
    bench/bench_browser.py), limits at least PERFORMANCE.md's goal for a replica."""
    deploy = (ROOT / "docs" / "DEPLOY.md").read_text()
    measured = re.search(r"measured (\d+) MiB with\s+every shipped model loaded and (\d+) MiB "
                         r"after 30 sessions", deploy)  # fmt: skip
    assert measured, "DEPLOY.md no longer says what bench_browser measured"
    goal = next(x for x in (ROOT / "docs" / "PERFORMANCE.md").read_text().splitlines()
                if x.startswith("| server memory"))  # fmt: skip
    loaded, per_class = re.search(r"at most (\d+) MiB .*at most \+(\d+) MiB", goal).groups()
    resources = _container()["resources"]
    assert _mib(resources["requests"]["memory"]) >= int(measured[2])  # after 30 sessions
    assert _mib(resources["limits"]["memory"]) >= int(loaded) + int(per_class)
    assert float(resources["requests"]["cpu"]) >= 1  # a rerun is mostly one busy thread


def test_the_service_and_ingress_reach_the_pods() -> None:
    pod_labels = M["Deployment"]["spec"]["template"]["metadata"]["labels"]
    service = M["Service"]["spec"]
    assert service["selector"].items() <= pod_labels.items()
    (port,) = service["ports"]
    assert port["targetPort"] in ("http", 8501)
    (rule,) = M["Ingress"]["spec"]["rules"]
    (path,) = rule["http"]["paths"]
    backend = path["backend"]["service"]
    assert backend["name"] == M["Service"]["metadata"]["name"]
    assert backend["port"]["name"] == port["name"]
    assert M["Ingress"]["spec"]["ingressClassName"] == "nginx"


def test_the_ingress_is_sticky_by_cookie_and_holds_websockets_for_a_lesson() -> None:
    notes = M["Ingress"]["metadata"]["annotations"]
    assert notes[PREFIX + "affinity"] == "cookie"
    assert notes[PREFIX + "session-cookie-name"]
    assert notes[PREFIX + "session-cookie-change-on-failure"] == "true"
    assert int(notes[PREFIX + "session-cookie-max-age"]) >= LESSON_S
    for timeout in ("proxy-read-timeout", "proxy-send-timeout"):
        assert int(notes[PREFIX + timeout]) >= LESSON_S, timeout
    assert _mib(notes[PREFIX + "proxy-body-size"].replace("m", "M")) >= 1  # 1 MB uploads
    assert all(value == str(value) for value in notes.values())  # annotations are strings


def test_the_autoscaler_scales_the_deployment_on_cpu() -> None:
    hpa = M["HorizontalPodAutoscaler"]["spec"]
    assert hpa["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment",
                                     "name": M["Deployment"]["metadata"]["name"]}  # fmt: skip
    (metric,) = hpa["metrics"]
    assert metric["resource"]["name"] == "cpu" and metric["resource"]["target"]["type"] == (
        "Utilization"
    )
    assert 2 <= hpa["minReplicas"] <= M["Deployment"]["spec"]["replicas"] <= hpa["maxReplicas"]
    assert hpa["behavior"]["scaleDown"]["stabilizationWindowSeconds"] >= 600  # not mid-lesson


def test_the_static_files_come_from_their_own_pods() -> None:
    """Streamlit's frontend and the app's static/ from nginx in pods of the replicas' image,
    reached through an Ingress of their own on the same host, at the paths nginx serves
    them from on one machine (deploy/nginx.conf.in), with the same cache headers."""
    import streamlit

    deployment = M[f"Deployment/{STATIC}"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["image"] == _container()["image"]  # the same image
    assert "nginx" in (ROOT / "Dockerfile").read_text().split("apt-get install")[1].split("&&")[0]
    conf = M[f"ConfigMap/{STATIC}"]["data"]["nginx.conf"]
    local = (ROOT / "deploy" / "nginx.conf.in").read_text()
    for path in ("/static/", "/app/static/"):
        assert f"location {path} {{" in conf and f"location {path} {{" in local
    for header in ("public, max-age=31536000, immutable", "public, max-age=86400"):
        assert header in conf and header in local
    python = re.search(r"^FROM python:(\d+\.\d+)", (ROOT / "Dockerfile").read_text(), re.M)[1]
    assert f"/usr/local/lib/python{python}/site-packages/streamlit/static;" in conf
    assert (Path(streamlit.__file__).parent / "static" / "static" / "js").is_dir()
    assert "alias /app/static/;" in conf and (ROOT / "static").is_dir()
    service = M[f"Service/{STATIC}"]["spec"]
    assert service["selector"].items() <= deployment["spec"]["template"]["metadata"][
        "labels"].items()  # fmt: skip
    (rule,) = M[f"Ingress/{STATIC}"]["spec"]["rules"]
    assert rule["host"] == M["Ingress"]["spec"]["rules"][0]["host"]
    paths = {p["path"]: p["backend"]["service"]["name"] for p in rule["http"]["paths"]}
    assert paths == {"/static/": STATIC, "/app/static/": STATIC}

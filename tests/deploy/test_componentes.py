"""The optional Components and the Jobs' overlays, rendered and checked against the settings.

``k8s/componentes/vllm`` serves what ``FICHAS_LLM_URL`` and ``FICHAS_LLM_MODELO`` name, with
room for the workers the overlay allows (docs/despliegue.md, "Capacidad": ``maxReplicaCount`` ×
``FICHAS_CONCURRENCIA`` ≤ ``--max-num-seqs`` × servers); ``k8s/componentes/postgres-cnpg``
makes the database the guide's step 3 asks for, where the NetworkPolicies let the pods reach
it, with ``max_connections`` above the guide's peak; the Jobs' overlays (the audit, the one that
publishes, both with mutual TLS) hold only their Job, so ``kubectl create -k`` twice never meets
an object that exists, and the Job's NetworkPolicy comes with the deployment.
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from harness.kustomize import renderizar, sin_hash

K8S = Path(__file__).resolve().parents[2] / "k8s"
COMPLETA = K8S / "overlays" / "produccion-completa"


def _uno(objetos: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    (objeto,) = [
        o for o in objetos if o["kind"] == kind and sin_hash(o["metadata"]["name"]) == name
    ]
    return objeto


def _vllm_args(objetos: list[dict[str, Any]]) -> list[str]:
    """The words of the vLLM container's ``vllm serve`` command line."""
    (contenedor,) = _uno(objetos, "Deployment", "vllm")["spec"]["template"]["spec"]["containers"]
    return shlex.split(" ".join(contenedor["args"]))


def _opcion(args: list[str], nombre: str) -> str:
    return args[args.index(nombre) + 1]


def test_vllm_sirve_lo_que_nombra_la_configuracion() -> None:
    objetos = renderizar(COMPLETA)
    datos = _uno(objetos, "ConfigMap", "fichas-config")["data"]
    args = _vllm_args(objetos)
    assert _opcion(args, "--served-model-name") == datos["FICHAS_LLM_MODELO"]
    url = urlsplit(datos["FICHAS_LLM_URL"])
    servicio, namespace = url.hostname.split(".")[:2]  # type: ignore[union-attr]
    svc = _uno(objetos, "Service", servicio)
    assert svc["metadata"]["namespace"] == namespace
    assert url.port in {p["port"] for p in svc["spec"]["ports"]}
    assert str(url.port) == _opcion(args, "--port")
    # the workers may reach it, and it lets them in
    salida = _uno(objetos, "NetworkPolicy", "fichas")["spec"]["egress"]
    assert any(
        namespace in r["to"][0].get("namespaceSelector", {}).get("matchLabels", {}).values()
        and any(p["port"] == url.port for p in r.get("ports", []))
        for r in salida
    )
    entrada = _uno(objetos, "NetworkPolicy", "vllm")["spec"]["ingress"]
    origenes = {
        f["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"]
        for r in entrada
        for f in r["from"]
    }
    assert "fichas" in origenes and "monitoring" in origenes


def test_vllm_lee_su_clave_de_un_fichero_y_guarda_los_pesos() -> None:
    objetos = renderizar(COMPLETA)
    pod = _uno(objetos, "Deployment", "vllm")["spec"]["template"]["spec"]
    (contenedor,) = pod["containers"]
    assert not [e for e in contenedor.get("env", []) if "valueFrom" in e]  # no secret as a variable
    volumenes = {v["name"]: v for v in pod["volumes"]}
    montajes = {m["name"]: m["mountPath"] for m in contenedor["volumeMounts"]}
    (item,) = volumenes["api-key"]["secret"]["items"]
    assert f"$(cat {montajes['api-key']}/{item['path']})" in " ".join(contenedor["args"])
    reclamo = volumenes["cache"]["persistentVolumeClaim"]["claimName"]
    assert _uno(objetos, "PersistentVolumeClaim", reclamo)["metadata"]["namespace"] == "vllm"
    hf_home = {e["name"]: e["value"] for e in contenedor["env"]}["HF_HOME"]
    assert hf_home.startswith(montajes["cache"])
    assert contenedor["resources"]["limits"]["nvidia.com/gpu"] == "1"
    monitor = _uno(objetos, "ServiceMonitor", "vllm")
    svc = _uno(objetos, "Service", "vllm")
    assert monitor["spec"]["selector"]["matchLabels"].items() <= svc["metadata"]["labels"].items()
    assert monitor["spec"]["endpoints"][0]["port"] in {p["name"] for p in svc["spec"]["ports"]}


@pytest.mark.parametrize("overlay", ["produccion", "produccion-completa"])
def test_los_workers_caben_en_el_servidor_vllm(overlay: str) -> None:
    """The guide's rule with the rendered values: at most maxReplicaCount × FICHAS_CONCURRENCIA
    requests in flight, at most --max-num-seqs × replicas served at once."""
    objetos = renderizar(K8S / "overlays" / overlay)
    datos = _uno(objetos, "ConfigMap", "fichas-config")["data"]
    maximo = _uno(objetos, "ScaledObject", "fichas")["spec"]["maxReplicaCount"]
    vllm = renderizar(COMPLETA)
    secuencias = int(_opcion(_vllm_args(vllm), "--max-num-seqs"))
    servidores = _uno(vllm, "Deployment", "vllm")["spec"]["replicas"]
    en_vuelo = maximo * int(datos["FICHAS_CONCURRENCIA"])
    assert float(datos["FICHAS_CANDIDATA_PROPORCION"]) == 0  # no candidate by default
    assert en_vuelo <= secuencias * servidores, (maximo, datos["FICHAS_CONCURRENCIA"])


def test_el_cluster_de_postgres_es_el_que_la_guia_pide() -> None:
    objetos = renderizar(COMPLETA)
    cluster = _uno(objetos, "Cluster", "fichas-pg")
    salida = _uno(objetos, "NetworkPolicy", "fichas")["spec"]["egress"][1]
    namespace = salida["to"][0]["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"]
    assert cluster["metadata"]["namespace"] == namespace
    assert salida["ports"][0]["port"] == 5432
    assert cluster["spec"]["bootstrap"]["initdb"] == {"database": "fichas", "owner": "fichas"}
    # the guide's peak with a candidate running: (max + 1) workers × (16 + 4 + 4), 3 app pods × 8,
    # the Job's 4, 3 reserved
    datos = _uno(objetos, "ConfigMap", "fichas-config")["data"]
    maximo = _uno(objetos, "ScaledObject", "fichas")["spec"]["maxReplicaCount"]
    por_worker = min(int(datos["FICHAS_CONCURRENCIA"]), 16) + 4 + 4
    pico = (maximo + 1) * por_worker + 3 * 8 + 4 + 3
    assert int(cluster["spec"]["postgresql"]["parameters"]["max_connections"]) >= pico


JOBS = {
    "overlays/produccion/calibrar": ("fichas-calibrar", "scram", "overlays/produccion"),
    "overlays/calibrar-publicar": ("fichas-calibrar-publicar", "scram", "overlays/produccion"),
    "overlays/produccion-tls-mutuo/calibrar": (
        "fichas-calibrar",
        "tls",
        "overlays/produccion-tls-mutuo",
    ),
    "overlays/produccion-tls-mutuo/calibrar-publicar": (
        "fichas-calibrar-publicar",
        "tls",
        "overlays/produccion-tls-mutuo",
    ),
    "overlays/produccion/operador": ("fichas-operador", "scram", "overlays/produccion"),
    "overlays/produccion-tls-mutuo/operador": (
        "fichas-operador",
        "tls",
        "overlays/produccion-tls-mutuo",
    ),
}


@pytest.mark.parametrize("overlay", sorted(JOBS))
def test_un_overlay_aparte_solo_lleva_su_pod_y_la_configuracion_desplegada(overlay: str) -> None:
    """``kubectl apply -k`` of a Job's or the toolbox's overlay creates only its workload: its
    ConfigMaps are the deployment's, byte for byte and with the same hashed names (apply leaves
    them as they are), and no other object outlives the workload to collide on the next run."""
    nombre, modo, despliegue = JOBS[overlay]
    objetos = renderizar(K8S / overlay)
    desplegados = {
        o["metadata"]["name"]: o for o in renderizar(K8S / despliegue) if o["kind"] == "ConfigMap"
    }
    cargas = [o for o in objetos if o["kind"] in ("Job", "Pod")]
    assert [o["metadata"]["name"] for o in cargas] == [nombre]
    for o in objetos:
        if o["kind"] in ("Job", "Pod"):
            continue
        assert o["kind"] == "ConfigMap", o["kind"]
        if o["metadata"]["name"] == "fichas-operador-kafka":
            continue  # the toolbox's own client.properties
        assert o == desplegados[o["metadata"]["name"]], o["metadata"]["name"]
    pod = cargas[0]["spec"] if cargas[0]["kind"] == "Pod" else cargas[0]["spec"]["template"]["spec"]
    usuario = {v["name"]: v for v in pod["volumes"]}["kafka-usuario"]["secret"]
    claves = {i["key"] for i in usuario["items"]} - {"username"}
    assert claves == ({"password"} if modo == "scram" else {"user.crt", "user.key"})
    if cargas[0]["kind"] == "Job":
        orden = " ".join(pod["containers"][0]["args"])
        assert ("--publicar" in orden) == nombre.endswith("publicar"), orden
        assert re.search(r"--dry-run\b", orden) or "--publicar" in orden


def _lee_la_configuracion(contenedor: dict[str, Any]) -> bool:
    return any("configMapRef" in e for e in contenedor.get("envFrom", []))


def test_un_cambio_de_configuracion_o_de_prompt_despliega_cada_pod(tmp_path: Path) -> None:
    """A value changed, or a prompt file added, gives the ConfigMaps other names: every pod
    template that reads them changes (so Kubernetes rolls it), and every container that loads
    the settings mounts the prompt where its setting points."""
    copia = tmp_path / "k8s"
    shutil.copytree(K8S, copia)
    shutil.copytree(K8S.parent / "deploy" / "grafana", tmp_path / "deploy" / "grafana")
    config = copia / "overlays" / "produccion" / "configuracion"
    antes = _plantillas(K8S)  # the repository's (renders are cached by folder)
    (config / "prompts" / "generador-v2.md").write_text("Escribe la ficha. {criterios}\n")
    kustomization = config / "kustomization.yaml"
    kustomization.write_text(
        kustomization.read_text().replace(
            "    files: []", "    files:\n      - prompts/generador-v2.md"
        )
    )
    parche = config / "patch-configmap.yaml"
    parche.write_text(
        parche.read_text()
        + "  FICHAS_CANDIDATA_PROMPT_GENERADOR_ARCHIVO: /etc/fichas/prompts/generador-v2.md\n"
        + '  FICHAS_CANDIDATA_PROPORCION: "0.1"\n'
    )
    despues = _plantillas(copia)
    assert set(antes) == set(despues) and len(antes) == 4
    for nombre, plantilla in despues.items():
        assert plantilla != antes[nombre], f"{nombre} would not roll"
        volumenes = {v["name"]: v for v in plantilla["volumes"]}
        prompts = volumenes["prompts"]["configMap"]["name"]
        assert sin_hash(prompts) == "fichas-prompts" and prompts != "fichas-prompts"
        for c in [*plantilla.get("initContainers", []), *plantilla["containers"]]:
            if not _lee_la_configuracion(c):
                continue
            montajes = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
            assert montajes.get("/etc/fichas/prompts") == "prompts", f"{nombre}/{c['name']}"
    objetos = renderizar(copia / "overlays" / "produccion")
    (prompts,) = [o for o in objetos if sin_hash(o["metadata"]["name"]) == "fichas-prompts"]
    assert prompts["data"]["generador-v2.md"].startswith("Escribe la ficha.")


def _plantillas(k8s: Path) -> dict[str, dict[str, Any]]:
    """The pod templates of the deployment, the Job and the toolbox, by workload."""
    res = {}
    for carpeta in ("produccion", "produccion/calibrar", "produccion/operador"):
        for o in renderizar(k8s / "overlays" / carpeta):
            if o["kind"] in ("Deployment", "Job"):
                res[o["metadata"]["name"]] = o["spec"]["template"]["spec"]
            elif o["kind"] == "Pod":
                res[o["metadata"]["name"]] = o["spec"]
    return res


def test_la_networkpolicy_del_job_va_con_el_despliegue() -> None:
    objetos = renderizar(K8S / "overlays" / "produccion")
    politica = _uno(objetos, "NetworkPolicy", "fichas-calibrar")
    assert politica["metadata"]["namespace"] == "fichas"
    job = _uno(renderizar(K8S / "overlays" / "produccion" / "calibrar"), "Job", "fichas-calibrar")
    etiquetas = job["spec"]["template"]["metadata"]["labels"]
    assert politica["spec"]["podSelector"]["matchLabels"].items() <= etiquetas.items()


def test_los_runbook_de_las_alertas_cuelgan_de_la_base_del_entorno() -> None:
    """Every alert's runbook_url in the production render is entorno.yaml's runbook-base, then a
    docs file of this repository and a heading of it."""
    objetos = renderizar(K8S / "overlays" / "produccion")
    entorno = (K8S / "overlays" / "produccion" / "entorno" / "entorno.yaml").read_text()
    (base,) = re.findall(r"^  runbook-base: (\S+)$", entorno, flags=re.M)
    reglas = [
        r for g in _uno(objetos, "PrometheusRule", "fichas")["spec"]["groups"] for r in g["rules"]
    ]
    enlaces = [
        r["annotations"]["runbook_url"] for r in reglas if "runbook_url" in r.get("annotations", {})
    ]
    assert len(enlaces) >= 10
    raiz = K8S.parent
    for enlace in enlaces:
        assert enlace.startswith(base + "/docs/"), enlace
        ruta, _, ancla = enlace.removeprefix(base + "/").partition("#")
        titulos = re.findall(r"^#{1,6} (.+)$", (raiz / ruta).read_text(), flags=re.M)
        anclas = {re.sub(r"[^\w\- ]", "", t.lower()).replace(" ", "-") for t in titulos}
        assert ancla in anclas, enlace
    nombres = {r["alert"] for r in reglas}
    assert {"FichasRevisorCaido", "FichasCertificadorSinTitular"} <= nombres

"""The guide's steps work in the order written: each object finds what it names already there.

docs/despliegue.md walks from an empty cluster (with the platform's operators) to "zapatillas
publishes"; its blocks marked ``<!-- runbook: orden -->`` (and operacion.md's, after them) are
read here in document order and played against a model of a cluster: ``kubectl apply|create -k
DIR`` renders DIR with the pinned kustomize and adds its objects in kustomize's order, each
checked for what it needs (its namespace; the Secrets, ConfigMaps and ServiceAccount its pods
mount or read; the Secrets a TriggerAuthentication or an Ingress names; the kinds the platform's
CRDs bring); ``kubectl wait kafkauser … --for=condition=Ready`` is when Strimzi's User Operator
has made each user's Secret in the Kafka namespace, which the copy loop then reads; ``kubectl
create secret`` adds a Secret to a namespace that must exist. Objects of one ``apply`` may name
each other (kustomize puts Namespaces, ServiceAccounts, Secrets and ConfigMaps first, and pods
start after). What the model does not do is run controllers: it checks the order, not the
operators. The same file checks every pod of namespace ``fichas`` against the ``restricted``
Pod Security profile its Namespace enforces.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.kustomize import renderizar

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "docs" / "despliegue.md", REPO / "docs" / "operacion.md"]
MARCA_ORDEN = "<!-- runbook: orden -->"

# What the guide says the cluster has before step 1: the platform's namespaces, the CRDs of
# Strimzi, KEDA and the Prometheus Operator, and the Strimzi cluster's CA Secret.
PLATAFORMA_NS = {"kafka", "postgres", "vllm", "monitoring", "ingress-nginx", "kube-system"}
CRD = {"KafkaTopic", "KafkaUser", "ScaledObject", "TriggerAuthentication", "ServiceMonitor"}
CRD |= {"PrometheusRule"}
NATIVOS = {"Namespace", "ServiceAccount", "ConfigMap", "Secret", "Service", "Deployment", "Job"}
NATIVOS |= {"Pod", "Ingress", "NetworkPolicy", "PodDisruptionBudget"}
PLATAFORMA_SECRETOS = {("kafka", "kafka-cluster-ca-cert")}


@dataclass
class Cluster:
    """The objects a cluster holds, by (kind, namespace, name), and the users Strimzi made."""

    objetos: set[tuple[str, str, str]] = field(default_factory=set)
    listos: set[tuple[str, str]] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.objetos |= {("Namespace", "", n) for n in PLATAFORMA_NS}
        self.objetos |= {("Secret", ns, n) for ns, n in PLATAFORMA_SECRETOS}

    def hay(self, kind: str, ns: str, nombre: str) -> bool:
        return (kind, ns, nombre) in self.objetos

    def aplicar(self, objetos: list[dict[str, Any]], donde: str) -> None:
        """Add ``objetos`` in order; each must find what it names (or find it in this apply)."""
        lote = {_id(o) for o in objetos}
        for objeto in objetos:
            for falta in necesita(objeto):
                assert falta in self.objetos or falta in lote, (
                    f"{donde}: {objeto['kind']} {objeto['metadata']['name']} needs "
                    f"{falta[0]} {falta[1]}/{falta[2]}, which no earlier step created"
                )
            self.objetos.add(_id(objeto))


def _id(objeto: dict[str, Any]) -> tuple[str, str, str]:
    return objeto["kind"], objeto["metadata"].get("namespace", ""), objeto["metadata"]["name"]


def _plantilla(objeto: dict[str, Any]) -> dict[str, Any] | None:
    """The pod spec of a workload (None for anything else)."""
    if objeto["kind"] == "Pod":
        return dict(objeto["spec"])
    if objeto["kind"] in ("Deployment", "Job"):
        return dict(objeto["spec"]["template"]["spec"])
    return None


def necesita(objeto: dict[str, Any]) -> set[tuple[str, str, str]]:
    """What must exist for ``objeto`` to be applied and its pods to start."""
    kind, ns, nombre = _id(objeto)
    faltas: set[tuple[str, str, str]] = set()
    assert kind in NATIVOS | CRD, f"{kind} {nombre}: a kind neither Kubernetes nor the platform has"
    if kind != "Namespace":
        assert ns, f"{kind} {nombre} has no namespace: kubectl would put it in 'default'"
        faltas.add(("Namespace", "", ns))
    pod = _plantilla(objeto)
    if pod is not None:
        faltas.add(("ServiceAccount", ns, pod.get("serviceAccountName", "default")))
        for volumen in pod.get("volumes", []):
            if "secret" in volumen:
                faltas.add(("Secret", ns, volumen["secret"]["secretName"]))
            if "configMap" in volumen:
                faltas.add(("ConfigMap", ns, volumen["configMap"]["name"]))
        for c in [*pod.get("initContainers", []), *pod["containers"]]:
            for origen in c.get("envFrom", []):
                faltas.add(("ConfigMap", ns, origen["configMapRef"]["name"]))
            for var in c.get("env", []):
                ref = var.get("valueFrom", {}).get("secretKeyRef")
                if ref:
                    faltas.add(("Secret", ns, ref["name"]))
    if kind == "TriggerAuthentication":
        faltas |= {("Secret", ns, r["name"]) for r in objeto["spec"]["secretTargetRef"]}
    if kind == "Ingress":
        faltas |= {("Secret", ns, t["secretName"]) for t in objeto["spec"].get("tls", [])}
    if kind == "ScaledObject":
        faltas.add(("Deployment", ns, objeto["spec"]["scaleTargetRef"]["name"]))
        for disparador in objeto["spec"]["triggers"]:
            faltas.add(("TriggerAuthentication", ns, disparador["authenticationRef"]["name"]))
    return faltas


def bloques_de_orden() -> list[tuple[str, int, str]]:
    """The ``orden`` blocks of the guide, then of operacion.md, in order: (doc, line, text)."""
    encontrados = []
    for doc in DOCS:
        lineas = doc.read_text(encoding="utf-8").splitlines()
        for i, linea in enumerate(lineas):
            if linea.strip() == MARCA_ORDEN:
                fin = next(j for j in range(i + 2, len(lineas)) if lineas[j].strip() == "```")
                texto = "\n".join(x.strip() for x in lineas[i + 2 : fin])
                encontrados.append((doc.name, i + 1, texto))
    return encontrados


def kubectls(texto: str) -> list[list[str]]:
    """Every ``kubectl`` invocation of a block, in order: continuations joined, ``for VAR in
    WORDS; do … done`` unrolled, pipes and process substitutions split, comments dropped."""
    texto = re.sub(r"\\\n\s*", " ", texto)
    lineas = [x for x in texto.splitlines() if x.strip() and not x.strip().startswith("#")]
    ordenes: list[str] = []
    i = 0
    while i < len(lineas):
        bucle = re.match(r"for (\w+) in (.+); do$", lineas[i].strip())
        if not bucle:
            ordenes.append(lineas[i])
            i += 1
            continue
        fin = next(j for j in range(i, len(lineas)) if lineas[j].strip() == "done")
        for valor in bucle.group(2).split():
            ordenes += [x.replace(f"${bucle.group(1)}", valor) for x in lineas[i + 1 : fin]]
        i = fin + 1
    partes = []
    for orden in ordenes:
        for trozo in re.split(r"\||<\(|\)", orden):
            palabras = shlex.split(trozo.split(" > ")[0], comments=True) if trozo.strip() else []
            if palabras[:1] == ["kubectl"]:
                partes.append(palabras)
    return partes


def jugar(cluster: Cluster, args: list[str], donde: str) -> None:
    """What one ``kubectl`` invocation does to the model."""
    ns = args[args.index("-n") + 1] if "-n" in args else ""
    resto = [a for i, a in enumerate(args[1:], 1) if a != "-n" and args[i - 1] != "-n"]
    verbo = resto[0]
    if verbo in ("apply", "create") and "-k" in resto:
        carpeta = REPO / resto[resto.index("-k") + 1]
        cluster.aplicar(renderizar(carpeta), f"{donde}: kubectl {verbo} -k {carpeta.name}")
    elif verbo == "apply" and resto[1:] == ["-f", "-"]:
        return  # the Secret of the `create --dry-run=client -o yaml` before the pipe
    elif verbo == "apply" and resto[1] == "-f":
        documentos = yaml.safe_load_all((REPO / resto[2]).read_text(encoding="utf-8"))
        cluster.aplicar([d for d in documentos if d], f"{donde}: kubectl apply -f {resto[2]}")
    elif verbo == "create" and resto[1] == "secret":
        assert cluster.hay("Namespace", "", ns), f"{donde}: namespace {ns} does not exist yet"
        cluster.objetos.add(("Secret", ns, resto[3]))
    elif verbo == "get" and resto[1] == "secret":
        assert cluster.hay("Secret", ns, resto[2]), (
            f"{donde}: Secret {ns}/{resto[2]} does not exist yet (its KafkaUser not Ready?)"
        )
    elif verbo == "wait" and resto[1] in ("kafkauser", "kafkatopic"):
        kind = {"kafkauser": "KafkaUser", "kafkatopic": "KafkaTopic"}[resto[1]]
        hay = [o for o in cluster.objetos if o[0] == kind and o[1] == ns]
        assert hay, f"{donde}: no {kind} in {ns} to wait for"
        if kind == "KafkaUser":  # the User Operator writes each user's Secret once Ready
            cluster.objetos |= {("Secret", ns, nombre) for _, _, nombre in hay}
    elif verbo in ("wait", "rollout", "logs", "delete"):
        objetivos = [a for a in resto[1:] if "/" in a and not a.startswith("-")]
        if verbo == "delete":
            cluster.objetos -= {(k, n, x) for k, n, x in cluster.objetos if x == resto[2]}
            return
        for objetivo in objetivos:
            tipo, _, nombre = objetivo.partition("/")
            kind = {"deploy": "Deployment", "job": "Job", "pod": "Pod"}[tipo]
            assert cluster.hay(kind, ns, nombre), f"{donde}: {kind} {ns}/{nombre} does not exist"
    else:
        raise AssertionError(f"{donde}: kubectl {verbo} is not modelled here: {args}")


def recorrer(bloques: list[tuple[str, int, str]]) -> Cluster:
    """Play the blocks in order on an empty cluster (with the platform)."""
    cluster = Cluster()
    for doc, linea, texto in bloques:
        for args in kubectls(texto):
            jugar(cluster, args, f"{doc}:{linea}")
    return cluster


def test_los_pasos_de_la_guia_funcionan_en_su_orden() -> None:
    bloques = bloques_de_orden()
    assert len(bloques) >= 5, bloques
    cluster = recorrer(bloques)
    for kind, nombre in [("Deployment", "fichas"), ("Deployment", "fichas-revisor")]:
        assert cluster.hay(kind, "fichas", nombre)
    assert cluster.hay("Pod", "fichas", "fichas-operador")


def test_el_orden_de_antes_falla() -> None:
    """The order the guide had (credentials copied before the users exist, the app before its
    Secrets): the model refuses it, so the test above can fail."""
    bloques = bloques_de_orden()
    copia = next(b for b in bloques if "for c in" in b[2])
    resto = [b for b in bloques if b is not copia]
    with pytest.raises(AssertionError, match="does not exist yet"):
        recorrer([copia, *resto])
    aplicar = next(b for b in bloques if "k8s/overlays/produccion\n" in b[2] + "\n")
    with pytest.raises(AssertionError, match="which no earlier step created"):
        recorrer([aplicar])


# ---------------------------------------------------------------- Pod Security: restricted

OVERLAYS = [
    "overlays/produccion",
    "overlays/produccion/calibrar",
    "overlays/produccion/operador",
    "overlays/calibrar-publicar",
    "overlays/produccion-tls-mutuo",
    "overlays/produccion-tls-mutuo/calibrar",
    "overlays/produccion-tls-mutuo/calibrar-publicar",
    "overlays/produccion-tls-mutuo/operador",
]
VOLUMENES_PERMITIDOS = {"configMap", "secret", "emptyDir", "persistentVolumeClaim", "projected"}
VOLUMENES_PERMITIDOS |= {"downwardAPI", "csi", "ephemeral"}


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_cada_pod_cumple_el_perfil_restricted(overlay: str) -> None:
    """What the namespace's ``pod-security.kubernetes.io/enforce: restricted`` admits
    (Kubernetes' Pod Security Standards, "Restricted"), for every pod template rendered."""
    for objeto in renderizar(REPO / "k8s" / overlay):
        pod = _plantilla(objeto)
        if pod is None or objeto["metadata"].get("namespace") != "fichas":
            continue
        nombre = objeto["metadata"]["name"]
        contexto = pod.get("securityContext", {})
        for clave in ("hostNetwork", "hostPID", "hostIPC"):
            assert not pod.get(clave), f"{nombre}: {clave}"
        for volumen in pod.get("volumes", []):
            tipos = set(volumen) - {"name"}
            assert tipos <= VOLUMENES_PERMITIDOS, f"{nombre}: volume {volumen['name']} {tipos}"
        for c in [*pod.get("initContainers", []), *pod["containers"]]:
            propio = c.get("securityContext", {})
            quien = f"{nombre}/{c['name']}"
            assert propio.get("allowPrivilegeEscalation") is False, quien
            assert "ALL" in propio.get("capabilities", {}).get("drop", []), quien
            assert set(propio.get("capabilities", {}).get("add", [])) <= {"NET_BIND_SERVICE"}
            assert not propio.get("privileged"), quien
            assert propio.get("runAsNonRoot", contexto.get("runAsNonRoot")) is True, quien
            assert propio.get("runAsUser", contexto.get("runAsUser", 1)) != 0, quien
            perfil = propio.get("seccompProfile", contexto.get("seccompProfile", {}))
            assert perfil.get("type") in ("RuntimeDefault", "Localhost"), quien


def test_el_namespace_impone_el_perfil() -> None:
    (ns,) = [o for o in renderizar(REPO / "k8s/overlays/produccion") if o["kind"] == "Namespace"]
    etiquetas = ns["metadata"]["labels"]
    assert etiquetas["pod-security.kubernetes.io/enforce"] == "restricted"

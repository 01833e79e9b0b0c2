"""Secrets reach the pods only as files: no container of any rendered folder of k8s/ gets a
secret value in its environment.

An environment variable holding a secret leaks through ``/proc/<pid>/environ``, ``kubectl
describe pod``, crash dumps and every child process; a file of a Secret volume does not, and
the kubelet updates it when the Secret rotates (docs/despliegue.md, "Secretos como ficheros").
For every folder ``kubectl apply -k`` may be given (every Kustomization under k8s/), every
container and init container of every pod template:

- no ``env`` entry takes a Secret's key other than a user name (``secretKeyRef``), and no
  ``envFrom`` takes a whole Secret; ``FICHAS_POSTGRES_DSN`` and ``FICHAS_LLM_API_KEY`` are set
  nowhere (neither the ConfigMap nor ``env``);
- every ``FICHAS_*_ARCHIVO`` it gets (ConfigMap or ``env``) names a file inside a volume it
  mounts; a secret's (the DSN, the LLM key, Kafka's password and private key) inside a Secret
  volume mounted read-only, not readable by others, that holds that key.

The last tests check that the pods that had the DSN and the key still get them, and break a
copy of the render to show that each rule reports what it should.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.kustomize import renderizar, sin_hash
from infra.config import SECRET_FILES

K8S = Path(__file__).resolve().parents[2] / "k8s"
# Every folder someone may apply: each kustomization.yaml that is not a Component.
CARPETAS = sorted(
    k.parent.relative_to(K8S).as_posix()
    for k in K8S.rglob("kustomization.yaml")
    if yaml.safe_load(k.read_text(encoding="utf-8")).get("kind") != "Component"
)
# The one key of a Secret a variable may take: the Kafka user's name (Strimzi's Secret).
NO_SECRETAS = {"username"}
SECRETOS_COMO_VARIABLE = {"FICHAS_POSTGRES_DSN", "FICHAS_LLM_API_KEY"}
DE_UN_SECRETO = {f"FICHAS_{campo.upper()}" for campo in SECRET_FILES} | {
    "FICHAS_KAFKA_CONTRASENA_ARCHIVO",
    "FICHAS_KAFKA_CLAVE_PRIVADA_ARCHIVO",
}
DSN, CLAVE = "FICHAS_POSTGRES_DSN_ARCHIVO", "FICHAS_LLM_API_KEY_ARCHIVO"
PLANTILLAS = {"Deployment", "StatefulSet", "DaemonSet", "Job"}

Objetos = list[dict[str, Any]]


def pods(objetos: Objetos) -> list[tuple[str, dict[str, Any]]]:
    """(``Kind/name``, pod spec) of every pod and pod template in ``objetos``."""
    res = []
    for o in objetos:
        donde = f"{o['kind']}/{o['metadata']['name']}"
        if o["kind"] == "Pod":
            res.append((donde, o["spec"]))
        elif o["kind"] in PLANTILLAS:
            res.append((donde, o["spec"]["template"]["spec"]))
        elif o["kind"] == "CronJob":
            res.append((donde, o["spec"]["jobTemplate"]["spec"]["template"]["spec"]))
    return res


def _datos(objetos: Objetos, respaldo: Objetos) -> dict[str, dict[str, str]]:
    """ConfigMap data by name (generated ones without their hash): the render's own, else the
    deployment's (the calibrar Job's base renders none; it reads the one applied with it)."""
    return {
        sin_hash(o["metadata"]["name"]): o.get("data", {})
        for o in [*respaldo, *objetos]
        if o["kind"] == "ConfigMap"
    }


def entorno(c: dict[str, Any], datos: dict[str, dict[str, str]]) -> dict[str, str]:
    """The container's ``FICHAS_*`` values from its ConfigMaps and plain ``env`` values."""
    res: dict[str, str] = {}
    for fuente in c.get("envFrom", []):
        if "configMapRef" in fuente:
            res.update(datos.get(sin_hash(fuente["configMapRef"]["name"]), {}))
    res.update({e["name"]: e["value"] for e in c.get("env", []) if "value" in e})
    return {k: v for k, v in res.items() if k.startswith("FICHAS_")}


def _fichero(
    variable: str, ruta: str, c: dict[str, Any], volumenes: dict[str, dict[str, Any]]
) -> str | None:
    """Why the file ``ruta`` is not where ``variable`` needs it (None when it is)."""
    for montaje in c.get("volumeMounts", []):
        punto = montaje["mountPath"].rstrip("/")
        if not ruta.startswith(punto + "/"):
            continue
        if variable not in DE_UN_SECRETO:
            return None
        secreto = volumenes[montaje["name"]].get("secret")
        if secreto is None:
            return f"{variable}={ruta}: {punto} is not a Secret volume"
        if not montaje.get("readOnly"):
            return f"{variable}={ruta}: the Secret volume at {punto} is not mounted readOnly"
        if secreto.get("defaultMode", 0o644) & 0o007:
            return f"{variable}={ruta}: the Secret volume at {punto} is readable by others"
        nombre = ruta.removeprefix(punto + "/")
        items = {i["path"] for i in secreto.get("items", [])}
        if items and nombre not in items:
            return f"{variable}={ruta}: the Secret {secreto['secretName']} gives no {nombre}"
        return None
    return f"{variable}={ruta} is in no volume the container mounts"


def problemas(objetos: Objetos, respaldo: Objetos) -> list[str]:
    """Every way a secret reaches a container other than as a file, one line each."""
    datos = _datos(objetos, respaldo)
    lineas = [
        f"ConfigMap/{nombre}: {variable} (a secret) in a ConfigMap"
        for nombre, valores in datos.items()
        for variable in sorted(SECRETOS_COMO_VARIABLE & set(valores))
    ]
    for donde, pod in pods(objetos):
        volumenes = {v["name"]: v for v in pod.get("volumes", [])}
        for c in [*pod.get("initContainers", []), *pod["containers"]]:
            aqui = f"{donde} container {c['name']}"
            for fuente in c.get("envFrom", []):
                if "secretRef" in fuente:
                    lineas.append(f"{aqui}: envFrom the Secret {fuente['secretRef']['name']}")
            for e in c.get("env", []):
                ref = e.get("valueFrom", {}).get("secretKeyRef")
                if ref is not None and ref["key"] not in NO_SECRETAS:
                    lineas.append(f"{aqui}: {e['name']} from the Secret {ref['name']}/{ref['key']}")
                elif e["name"] in SECRETOS_COMO_VARIABLE:
                    lineas.append(f"{aqui}: {e['name']} set as a variable")
            for variable, ruta in sorted(entorno(c, datos).items()):
                if variable.endswith("_ARCHIVO") and ruta:
                    falta = _fichero(variable, ruta, c, volumenes)
                    lineas += [f"{aqui}: {falta}"] if falta else []
    return lineas


@pytest.fixture(scope="module")
def respaldo() -> Objetos:
    """The deployment's render, whose ConfigMaps the Job's and the toolbox's folders read."""
    return renderizar(K8S / "overlays" / "produccion")


@pytest.mark.parametrize("carpeta", CARPETAS)
def test_ningun_contenedor_recibe_un_secreto_en_su_entorno(carpeta: str, respaldo: Objetos):
    assert not problemas(renderizar(K8S / carpeta), respaldo)


def test_se_renderiza_cada_carpeta_con_pods() -> None:
    """The walk above sees the worker, the app, the calibrar Jobs and the toolbox Pod."""
    assert {"base", "overlays/produccion", "overlays/produccion/operador"} <= set(CARPETAS)
    assert {"overlays/calibrar-publicar", "overlays/produccion-tls-mutuo/calibrar"} <= set(CARPETAS)


@pytest.mark.parametrize(
    ("carpeta", "contenedores"),
    [
        ("overlays/produccion", 4),
        ("overlays/produccion/calibrar", 1),
        ("overlays/produccion/operador", 2),
    ],
)
def test_los_pods_que_tenian_el_dsn_y_la_clave_los_leen_de_su_fichero(
    carpeta: str, contenedores: int, respaldo: Objetos
) -> None:
    """The same containers as the secretKeyRefs of before, each with only what it uses: the
    DSN where a store is opened, the LLM key where the model is called."""
    esperado = {
        "Deployment/fichas container migrar": {DSN},
        "Deployment/fichas container worker": {DSN, CLAVE},
        "Deployment/fichas-revisor container migrar": {DSN},
        "Deployment/fichas-revisor container revisor": {DSN},
        "Job/fichas-calibrar container calibrar": {DSN, CLAVE},
        "Pod/fichas-operador container fichas": {CLAVE},
        "Pod/fichas-operador container kafka": set(),
    }
    objetos = renderizar(K8S / carpeta)
    datos = _datos(objetos, respaldo)
    vistos = {
        f"{donde} container {c['name']}": {
            v for v, ruta in entorno(c, datos).items() if v in {DSN, CLAVE} and ruta
        }
        for donde, pod in pods(objetos)
        for c in [*pod.get("initContainers", []), *pod["containers"]]
    }
    assert len(vistos) == contenedores and vistos.items() <= esperado.items()
    for donde, pod in pods(objetos):  # and the Secret's keys they mount are those
        (secreto,) = [
            v["secret"]
            for v in pod["volumes"]
            if v.get("secret", {}).get("secretName") == "fichas-secretos"
        ]
        usadas = set().union(*(vistos[k] for k in vistos if k.startswith(donde + " ")))
        claves = {"postgres-dsn" if v == DSN else "llm-api-key" for v in usadas}
        assert {i["key"] for i in secreto["items"]} == claves, donde


def _worker(objetos: Objetos) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The worker container of the production render, its ``secretos`` volume and its mount."""
    (dep,) = [o for o in objetos if o["kind"] == "Deployment" and o["metadata"]["name"] == "fichas"]
    pod = dep["spec"]["template"]["spec"]
    c = pod["containers"][0]
    (volumen,) = [v for v in pod["volumes"] if v["name"] == "secretos"]
    (montaje,) = [m for m in c["volumeMounts"] if m["name"] == "secretos"]
    return c, volumen, montaje


def _ref(clave: str) -> dict[str, Any]:
    return {"secretKeyRef": {"name": "fichas-secretos", "key": clave}}


AQUI = "Deployment/fichas container worker: "
FICHERO = "FICHAS_LLM_API_KEY_ARCHIVO=/etc/fichas/secretos/llm-api-key"


@pytest.mark.parametrize(
    ("romper", "linea"),
    [
        (
            lambda c, v, m: c["env"].append(
                {"name": "FICHAS_POSTGRES_DSN", "valueFrom": _ref("postgres-dsn")}
            ),
            AQUI + "FICHAS_POSTGRES_DSN from the Secret fichas-secretos/postgres-dsn",
        ),
        (
            lambda c, v, m: c["env"].append({"name": "FICHAS_LLM_API_KEY", "value": "sk-1"}),
            AQUI + "FICHAS_LLM_API_KEY set as a variable",
        ),
        (
            lambda c, v, m: c["envFrom"].append({"secretRef": {"name": "fichas-secretos"}}),
            AQUI + "envFrom the Secret fichas-secretos",
        ),
        (
            lambda c, v, m: m.pop("readOnly"),
            AQUI + FICHERO + ": the Secret volume at /etc/fichas/secretos is not mounted readOnly",
        ),
        (
            lambda c, v, m: v["secret"].update(defaultMode=0o444),
            AQUI + FICHERO + ": the Secret volume at /etc/fichas/secretos is readable by others",
        ),
        (
            lambda c, v, m: v["secret"].update(items=[{"key": "otra", "path": "otra"}]),
            AQUI + FICHERO + ": the Secret fichas-secretos gives no llm-api-key",
        ),
        (
            lambda c, v, m: v.update(emptyDir=v.pop("secret")),
            AQUI + FICHERO + ": /etc/fichas/secretos is not a Secret volume",
        ),
        (
            lambda c, v, m: c["volumeMounts"].remove(m),
            AQUI + FICHERO + " is in no volume the container mounts",
        ),
    ],
    ids=["secretKeyRef", "valor", "envFrom", "escritura", "modo", "clave", "emptyDir", "montaje"],
)
def test_cada_regla_se_detecta_en_una_copia_rota(romper: Any, linea: str, respaldo: Objetos):
    objetos = copy.deepcopy(renderizar(K8S / "overlays" / "produccion"))
    assert not problemas(objetos, respaldo)
    romper(*_worker(objetos))
    assert linea in problemas(objetos, respaldo)
